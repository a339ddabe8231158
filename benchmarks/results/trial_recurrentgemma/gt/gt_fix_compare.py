"""Ground truth, no pt2bot code: compare a patched tree against head, in a fresh process,
same seeds and weights: outputs and parameter/input gradients (eager), on the pt2bot.yml shape
cases and on guard inputs; then the patched model compiled (eager backend) vs head eager.
Usage: gt_fix_compare.py HEAD_TREE FIX_TREE MODEL   (MODEL: rglru | griffin | griffin_decode)
Each tree is imported in its own subprocess (the two trees share module names)."""
import sys, subprocess, json, os, pickle, tempfile
if len(sys.argv) == 5 and sys.argv[4] == "--child":
  tree, model, mode = sys.argv[1], sys.argv[2], sys.argv[3]
  sys.path.insert(0, tree)
  import torch
  torch.set_num_threads(1)
  import pt2bot_models as m
  res = {}
  def build():
    torch.manual_seed(0)
    return {"rglru": m.build_rglru, "griffin": m.build_griffin, "griffin_decode": m.build_griffin}[model]()
  def inputs(b, s):
    torch.manual_seed(1)
    return {"rglru": m.rglru_inputs, "griffin": m.griffin_inputs, "griffin_decode": m.griffin_decode_inputs}[model](b, s)
  cases = [(2, 1), (4, 1)] if model == "griffin_decode" else [(b, s) for b in (2, 4) for s in (8, 12)]
  variants = [("case", None)]
  if model == "rglru":
    variants += [("x NaN at [0,0,0]", "xnan"), ("x inf at [0,3,5]", "xinf"), ("no reset (positions 1..)", "noreset"),
                 ("reset everywhere (positions all 0)", "allreset"), ("x all 0", "x0"), ("x all 1", "x1")]
  else:
    variants += [("NaN in every embedding weight", "wnan"), ("weights all 0", "w0")]
  for b, s in cases:
    for vname, v in variants:
      net = build()
      kw = inputs(b, s)
      if v == "xnan": kw["x"][0, 0, 0] = float("nan")
      if v == "xinf": kw["x"][0, min(3, s - 1), 5] = float("inf")
      if v == "noreset": kw["segment_pos"] = kw["segment_pos"] * 0 + torch.arange(1, s + 1)
      if v == "allreset": kw["segment_pos"] = kw["segment_pos"] * 0
      if v == "x0": kw["x"] = torch.zeros_like(kw["x"])
      if v == "x1": kw["x"] = torch.ones_like(kw["x"])
      if v == "wnan":
        with torch.no_grad(): next(iter(net.parameters())).fill_(float("nan"))
      if v == "w0":
        with torch.no_grad():
          for p in net.parameters(): p.zero_()
      if "x" in kw: kw["x"].requires_grad_(True)
      f = torch.compile(net, backend="eager") if mode == "compiled" else net
      key = f"b={b} s={s} {vname}"
      try:
        out = f(**kw)[0]
        rec = {"out": out.detach().clone()}
        try:
          out.float().sum().backward()
          rec["grads"] = {n: p.grad.clone() for n, p in net.named_parameters() if p.grad is not None}
          if "x" in kw: rec["grads"]["<input x>"] = kw["x"].grad.clone()
        except Exception as e:
          rec["backward_error"] = f"{type(e).__name__}: {str(e)[:120]}"
      except Exception as e:
        rec = {"error": f"{type(e).__name__}: {str(e)[:160]}"}
      res[key] = rec
      torch._dynamo.reset()
  pickle.dump(res, open(os.environ["OUTFILE"], "wb"))
  sys.exit(0)

head, fix, model = sys.argv[1:4]
import torch
def run(tree, mode):
  fd, path = tempfile.mkstemp(); os.close(fd)
  subprocess.run([sys.executable, __file__, tree, model, mode, "--child"], env={**os.environ, "OUTFILE": path},
                 check=True, stderr=subprocess.DEVNULL)
  return pickle.load(open(path, "rb"))
def same(a, b):
  return a.shape == b.shape and torch.equal(torch.isnan(a), torch.isnan(b)) and torch.allclose(torch.nan_to_num(a), torch.nan_to_num(b), rtol=1e-5, atol=1e-6)
H = run(head, "eager"); F = run(fix, "eager"); FC = run(fix, "compiled")
print(f"model {model}: head={head}, fix={fix}")
for k in H:
  h, f, fc = H[k], F[k], FC[k]
  def cmp(x, label):
    if "error" in h or "error" in x:
      return f"{label}: head {'raised ' + h['error'] if 'error' in h else 'ran'}, {label} {'raised ' + x['error'] if 'error' in x else 'ran'}"
    o = "outputs equal" if same(h["out"], x["out"]) else f"OUTPUTS DIFFER (max|d|={(torch.nan_to_num(h['out'])-torch.nan_to_num(x['out'])).abs().max().item():.3g})"
    if "backward_error" in h or "backward_error" in x:
      g = f"backward: head {h.get('backward_error','ok')}, {label} {x.get('backward_error','ok')}"
    else:
      bad = [n for n in h["grads"] if n not in x["grads"] or not same(h["grads"][n], x["grads"][n])]
      g = "grads equal" if not bad else f"GRADS DIFFER on {bad[:4]}"
    return f"{label}: {o}, {g}"
  print(f"  {k}: {cmp(f, 'fix eager')} | {cmp(fc, 'fix compiled')}")
