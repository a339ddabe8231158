"""Plain-torch repro (no pt2bot code) of what PTC201's verified edit of otloss's calibration_error
(otloss/utils.py:46, `if not torch.compiler.is_compiling() and mask.sum() == 0: continue`,
verified by realcode_proof_heldout43_matrix.json on ot_calibration_eval, "GB0170 gone, uncovers
GB0036 at otloss/utils.py:48") leaves. heldout43_rerun.log finds it equal to head on 112 of 112
with the same 14 logged breaks (46 -> 48): dynamo still skips calibration_error's frame, at the
boolean selection `confidences[mask]` of line 48, so the edit's compiled path never runs. Here:
head and the edit, eager and compiled (torch.compile(backend="eager")), one thread, on softmax
outputs whose low bins are empty, with and without torch's own hint for that GB0036
(`torch._dynamo.config.capture_dynamic_output_shape_ops = True`), which makes the frame compile:
then the edit's compiled code takes the mean of an empty selection (NaN) and adds 0 * NaN.

    /work/venvs/realcode/bin/python benchmarks/results/heldout43_ece_repro.py > benchmarks/results/heldout43_ece_repro.log 2>&1
"""
import inspect

import torch

torch.set_num_threads(1)
import otloss.utils as U  # noqa: E402

src = inspect.getsource(U.calibration_error)
line = "        if mask.sum() == 0:\n"
assert src.count(line) == 1
ns_h, ns_p = {"torch": torch, "Tensor": torch.Tensor}, {"torch": torch, "Tensor": torch.Tensor}
exec(src, ns_h)
exec(src.replace(line, "        if not torch.compiler.is_compiling() and mask.sum() == 0:\n"), ns_p)
head, edited = ns_h["calibration_error"], ns_p["calibration_error"]

print("torch", torch.__version__)
g = torch.Generator().manual_seed(0)
probs = torch.softmax(torch.randn(24, 5, generator=g) * 3.0, -1)
labels = torch.randint(0, 5, (24,), generator=g)
conf = probs.max(-1).values
print("empty bins of 10:", [i for i in range(10) if not ((conf > i / 10) & (conf <= (i + 1) / 10)).any()])
for setting in (False, True):
    torch._dynamo.config.capture_dynamic_output_shape_ops = setting
    for name, fn in (("head", head), ("edited", edited)):
        torch._dynamo.reset()
        c = torch.compile(fn, backend="eager")
        e = fn(probs, labels, n_bins=10)
        o = c(probs, labels, n_bins=10)
        ex = torch._dynamo.explain(fn)(probs, labels, n_bins=10)
        print(f"capture_dynamic_output_shape_ops={setting!s:<5} {name:<6} eager {e.item():.6f}  compiled {o.item():.6f}  "
              f"(explain: {ex.graph_count} graphs, {ex.graph_break_count} breaks)")
