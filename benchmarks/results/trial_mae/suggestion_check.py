"""Check a posted pt2bot suggestion against the PR's head, with no pt2bot code.

usage (from the MAE checkout): python suggestion_check.py BRANCH REVIEW_JSON
The suggestion block of every review comment that has one replaces lines start_line..line of
BRANCH's models_mae.py (as GitHub applies it). Head and suggestion are imported as separate
modules and run on many inputs: 5 tiny MAE configs (norm_pix_loss both ways), mask ratios
0, 0.25, 0.5, 0.75, 0.9, 0.95, 1.0, batch 1..4; images normal, all zeros, one NaN pixel, one
+inf, one -inf, tiny (1e-30), huge (1e30), negative; weights as built, decoder_pred's bias with
one NaN, one +inf, a NaN and an inf; eager and torch.compile(backend="eager"); the loss, pred
and mask compared bit for bit (NaN equal to NaN) and every parameter's gradient too. Head is run
twice to show it is reproducible (same seed, same draws).
"""
import copy, importlib.util, json, os, re, subprocess, sys, tempfile, itertools
import torch

torch.set_num_threads(1)
torch._dynamo.config.recompile_limit = 10000
torch._dynamo.config.accumulated_recompile_limit = 100000
branch, review = sys.argv[1], sys.argv[2]
root = os.getcwd()
sys.path.insert(0, root)
src = subprocess.check_output(["git", "show", f"{branch}:models_mae.py"], text=True)
lines = src.splitlines(keepends=True)
sugg = list(lines)
comments = json.load(open(review))["comments"]
edits = []
for c in comments:
    m = re.search(r"```suggestion\n(.*?)```", c["body"], re.S)
    if m:
        edits.append((c.get("start_line") or c["line"], c["line"], m.group(1)))
for start, end, text in sorted(edits, reverse=True):
    print(f"suggestion for lines {start}-{end}:\n{''.join(lines[start-1:end])}->\n{text}")
    sugg[start - 1:end] = [text]
tmp = tempfile.mkdtemp()
def load(name, text):
    p = os.path.join(tmp, name + ".py"); open(p, "w").write(text)
    spec = importlib.util.spec_from_file_location(name, p); mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod); return mod
H = load("mae_head", "".join(lines)); S = load("mae_sugg", "".join(sugg))

CONFIGS = [
    dict(img_size=32, patch_size=8, embed_dim=32, depth=2, num_heads=2, decoder_embed_dim=32, decoder_depth=1, decoder_num_heads=2, norm_pix_loss=False),
    dict(img_size=32, patch_size=8, embed_dim=32, depth=1, num_heads=2, decoder_embed_dim=32, decoder_depth=1, decoder_num_heads=2, norm_pix_loss=True),
    dict(img_size=64, patch_size=16, embed_dim=64, depth=1, num_heads=4, decoder_embed_dim=32, decoder_depth=1, decoder_num_heads=2, norm_pix_loss=True),
    dict(img_size=48, patch_size=8, embed_dim=48, depth=1, num_heads=2, decoder_embed_dim=32, decoder_depth=2, decoder_num_heads=4, norm_pix_loss=True),
    dict(img_size=48, patch_size=16, embed_dim=32, depth=1, num_heads=2, decoder_embed_dim=32, decoder_depth=1, decoder_num_heads=2, norm_pix_loss=False),
]
RATIOS = [0.0, 0.25, 0.5, 0.75, 0.9, 0.95, 1.0]
BATCHES = [1, 2, 4]
def images(kind, b, s):
    g = torch.Generator().manual_seed(b * 100 + s)
    x = torch.randn(b, 3, s, s, generator=g)
    if kind == "zeros": x = torch.zeros_like(x)
    elif kind == "nan": x[0, 1, 3, 5] = float("nan")
    elif kind == "inf": x[0, 1, 3, 5] = float("inf")
    elif kind == "-inf": x[-1, 0, 0, 0] = float("-inf")
    elif kind == "tiny": x = x * 1e-30
    elif kind == "huge": x = x * 1e30
    elif kind == "negative": x = -x.abs()
    return x
IMG = ["normal", "zeros", "nan", "inf", "-inf", "tiny", "huge", "negative"]
WEIGHTS = ["as_built", "bias_nan", "bias_inf", "bias_nan_inf"]
def set_weights(m, kind):
    with torch.no_grad():
        if kind in ("bias_nan", "bias_nan_inf"): m.decoder_pred.bias[0] = float("nan")
        if kind in ("bias_inf", "bias_nan_inf"): m.decoder_pred.bias[1] = float("inf")
def same(a, b):
    if a is None or b is None: return a is None and b is None
    return a.shape == b.shape and a.dtype == b.dtype and torch.equal(torch.nan_to_num(a, 1.5, 2.5, -2.5), torch.nan_to_num(b, 1.5, 2.5, -2.5)) and torch.equal(a.isnan(), b.isnan()) and torch.equal(a.isposinf(), b.isposinf()) and torch.equal(a.isneginf(), b.isneginf())
def run(model, fn, x, ratio, grad):
    model.zero_grad(set_to_none=True)
    torch.manual_seed(123)
    with torch.set_grad_enabled(grad):
        loss, pred, mask = fn(x, mask_ratio=ratio)
        if grad and loss.requires_grad: loss.backward()
    grads = {n: (p.grad.clone() if p.grad is not None else None) for n, p in model.named_parameters()} if grad else {}
    return [loss.detach(), pred.detach(), mask.detach()], grads
total = differ = head_unrepro = 0
examples = []
for ci, cfg in enumerate(CONFIGS):
    torch.manual_seed(0); mh = H.MaskedAutoencoderViT(**cfg)
    ms = S.MaskedAutoencoderViT(**cfg); ms.load_state_dict(mh.state_dict())
    for wk in WEIGHTS:
        h, s = copy.deepcopy(mh), copy.deepcopy(ms); set_weights(h, wk); set_weights(s, wk)
        h.train(); s.train()
        for mode in ("eager", "compiled"):
            torch._dynamo.reset()
            fh = h if mode == "eager" else torch.compile(h, backend="eager")
            fs = s if mode == "eager" else torch.compile(s, backend="eager")
            for grad, ratio, b, ik in itertools.product((False, True), RATIOS, BATCHES, IMG):
                x = images(ik, b, cfg["img_size"])
                try:
                    ho, hg = run(h, fh, x, ratio, grad); ho2, hg2 = run(h, fh, x, ratio, grad)
                    herr = None
                except Exception as e:
                    herr = f"{type(e).__name__}: {str(e).splitlines()[0][:120]}"
                try:
                    so, sg = run(s, fs, x, ratio, grad); serr = None
                except Exception as e:
                    serr = f"{type(e).__name__}: {str(e).splitlines()[0][:120]}"
                total += 1
                key = f"cfg{ci} weights={wk} {mode} grad={grad} ratio={ratio} batch={b} images={ik}"
                if herr or serr:
                    if herr != serr:
                        differ += 1; examples.append(f"{key}: head {herr or 'ok'} | suggestion {serr or 'ok'}")
                    continue
                if not all(same(a, c) for a, c in zip(ho, ho2)) or any(not same(hg[k], hg2[k]) for k in hg):
                    head_unrepro += 1; continue
                bad = [n for n, a, c in zip(("loss", "pred", "mask"), ho, so) if not same(a, c)]
                bad += [f"grad {k}" for k in hg if not same(hg[k], sg.get(k))]
                if bad:
                    differ += 1; examples.append(f"{key}: differ in {', '.join(bad[:4])}{' ...' if len(bad) > 4 else ''}")
    print(f"config {ci} done: {total} comparisons so far, {differ} differ", flush=True)
print(f"\n{total} comparisons, {differ} differ, head not reproducible on {head_unrepro}")
for e in examples[:60]: print("  ", e)
