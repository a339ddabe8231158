"""coco_readme_xt (the benchmark's spec, from the installed coco-lm-pytorch) compiled with backend
"eager" and torch._dynamo.config.capture_dynamic_output_shape_ops = True, as the proof tried it and
refused it ("no result within 60 s"): the wall time of each call, case 0 then case 1, with and without
gradients, one thread; no pt2bot code."""
import sys, time, warnings
sys.path.insert(0, "/work/h38/benchmarks/real_code")
warnings.filterwarnings("ignore")
import torch
torch.set_num_threads(1)
import models
setting = sys.argv[1] == "on"
torch._dynamo.config.capture_dynamic_output_shape_ops = setting
sp = models.by_key()["coco-lm-pytorch:coco_readme_xt"]
torch.manual_seed(0)
m, cases = sp.build(); m.eval()
f = torch.compile(m, backend="eager")
print("setting", setting)
for grad in (False, True):
    for i, (a, kw) in enumerate(cases):
        torch.manual_seed(1)
        t = time.perf_counter()
        with torch.enable_grad() if grad else torch.no_grad():
            out = f(*a, **kw)
        print(f"  case{i} {'grad' if grad else 'nograd'}: {time.perf_counter() - t:.1f} s, loss {float(out):.6f}", flush=True)
