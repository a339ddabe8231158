"""Check a posted ```suggestion of a pt2bot review against head, with no pt2bot code.

python suggestion_check.py BRANCH REVIEW_JSON   (from the CLIP checkout; one thread)

Copies BRANCH's clip/ package twice, as packages clip_head and clip_sugg, applies every
```suggestion block of REVIEW_JSON to clip_sugg (on the comment's path and lines), builds the same
tiny CLIP models from each with the same weights (ViT 32/ctx 16, ViT 64/ctx 77, ModifiedResNet
64/ctx 16) and compares CLIP.forward bitwise (NaN where NaN, the same exception type and message
where head raises) over: shapes (images x texts) 1x2, 3x5, 2x1; image kinds random, zeros,
negative, 1e-30, 1e30, NaN/inf/-inf in image 0; text kinds as clip.tokenize makes them, a row
without end-of-text, all rows without, the end-of-text at position 1, all padding; weight sets as
built, logit_scale = log(200) (exp 200: a clamp at 100 taken), log(100) (the boundary),
log(1e-3), NaN, +inf, -inf, all weights zero; eager and torch.compile(backend="eager"); without
grad and with grad (outputs, the image gradient and every parameter's gradient).
Head runs twice: a difference counts as reproducible only where head's two runs agree."""
import copy, itertools, json, math, os, re, shutil, subprocess, sys, tempfile
import torch
torch.set_num_threads(1)
torch._dynamo.config.cache_size_limit = 256
torch._dynamo.config.accumulated_cache_size_limit = 4096

branch, review = sys.argv[1], sys.argv[2]
tmp = tempfile.mkdtemp(prefix="clipsugg")
for pkg in ("clip_head", "clip_sugg"):
    os.makedirs(f"{tmp}/{pkg}")
    files = subprocess.check_output(["git", "ls-tree", "--name-only", f"{branch}", "clip/"], text=True).split()
    for f in files:
        if f.endswith(".py"):
            src = subprocess.check_output(["git", "show", f"{branch}:{f}"], text=True)
            open(f"{tmp}/{pkg}/{os.path.basename(f)}", "w").write(src)
    # the package __init__ imports clip.clip (torchvision, the tokenizer): only model.py is needed
    open(f"{tmp}/{pkg}/__init__.py", "w").write("")

rev = json.load(open(review))
applied = 0
for c in rev["comments"]:
    m = re.search(r"```suggestion\n(.*?)```", c["body"], re.S)
    if not m:
        continue
    path = c["path"]
    assert path.startswith("clip/"), path
    target = f"{tmp}/clip_sugg/{os.path.basename(path)}"
    lines = open(target).read().split("\n")
    start = c.get("start_line") or c["line"]
    print(f"applying suggestion on {path}:{start}-{c['line']}:")
    print("  head:      " + "\n  head:      ".join(lines[start - 1:c["line"]]))
    new = m.group(1).rstrip("\n").split("\n")
    print("  suggested: " + "\n  suggested: ".join(new))
    lines[start - 1:c["line"]] = new
    open(target, "w").write("\n".join(lines))
    applied += 1
assert applied, "no suggestion block in the review"
sys.path.insert(0, tmp)
import clip_head.model as H
import clip_sugg.model as S

VOCAB = 320
SOT, EOT = VOCAB - 2, VOCAB - 1
CFGS = {
    "vit32_ctx16": dict(image_resolution=32, context_length=16, vision_layers=2, vision_width=64, vision_patch_size=16),
    "vit64_ctx77": dict(image_resolution=64, context_length=77, vision_layers=2, vision_width=64, vision_patch_size=16),
    "rn64_ctx16": dict(image_resolution=64, context_length=16, vision_layers=(1, 1, 1, 1), vision_width=16, vision_patch_size=None),
}
COMMON = dict(embed_dim=32, vocab_size=VOCAB, transformer_width=64, transformer_heads=2, transformer_layers=2)


def tokens(n, ctx, kind, seed):
    g = torch.Generator().manual_seed(seed)
    out = torch.zeros(n, ctx, dtype=torch.int64)
    for i in range(n):
        k = ctx - 2 if i == n - 1 else int(torch.randint(1, ctx - 2, (1,), generator=g))
        out[i, 0] = SOT
        out[i, 1:k + 1] = torch.randint(1, VOCAB - 2, (k,), generator=g)
        out[i, k + 1] = EOT
    if kind == "no_eot_row0":
        out[0][out[0] == EOT] = 5
    elif kind == "no_eot_all":
        out[out == EOT] = 5
    elif kind == "eot_at_1":
        out[:, 1] = EOT; out[:, 2:] = 0
    elif kind == "all_padding":
        out.zero_()
    return out


def image(b, res, kind, seed):
    x = torch.randn(b, 3, res, res, generator=torch.Generator().manual_seed(seed))
    if kind == "zeros": x = torch.zeros_like(x)
    elif kind == "negative": x = -x.abs()
    elif kind == "tiny": x = x * 1e-30
    elif kind == "huge": x = x * 1e30
    elif kind in ("nan0", "inf0", "ninf0"):
        x[0, :, :2, :2] = {"nan0": float("nan"), "inf0": float("inf"), "ninf0": float("-inf")}[kind]
    return x


def weights(model, kind, seed):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        # ModifiedResNet zero-initialises every bn3.weight: give them values
        for n, p in model.named_parameters():
            if n.endswith("bn3.weight"):
                p.copy_(torch.randn(p.shape, generator=g) * 0.2)
        ls = {"as_built": None, "ls_200": math.log(200), "ls_100": math.log(100), "ls_small": math.log(1e-3),
              "ls_nan": float("nan"), "ls_inf": float("inf"), "ls_ninf": float("-inf")}.get(kind)
        if ls is not None:
            model.logit_scale.fill_(ls)
        if kind == "zero_weights":
            for p in model.parameters():
                p.zero_()
    return model


def same(a, b):
    if a is None or b is None:
        return a is None and b is None
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return bool(torch.equal(torch.nan_to_num(a, nan=1.2345), torch.nan_to_num(b, nan=1.2345))
                and torch.equal(a.isnan(), b.isnan()))


def run(model, fn, img, txt, grad):
    model.zero_grad(set_to_none=True)
    img = img.clone().requires_grad_(grad)
    try:
        with torch.set_grad_enabled(grad):
            out = fn(img, txt)
            res = [o.detach().clone() for o in out]
            if grad:
                g = torch.Generator().manual_seed(7)
                loss = sum((o * torch.randn(o.shape, generator=g)).sum() for o in out)
                loss.backward()
                res.append(None if img.grad is None else img.grad.clone())
                res += [None if p.grad is None else p.grad.clone() for p in model.parameters()]
        return ("ok", res)
    except Exception as e:
        return ("raise", f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")


def compare(r1, r2):
    if r1[0] != r2[0]:
        return False
    if r1[0] == "raise":
        return r1[1] == r2[1]
    return len(r1[1]) == len(r2[1]) and all(same(a, b) for a, b in zip(r1[1], r2[1]))


SHAPES = [(1, 2), (3, 5), (2, 1)]
IMGS = ["random", "zeros", "negative", "tiny", "huge", "nan0", "inf0", "ninf0"]
TXTS = ["tokenize", "no_eot_row0", "no_eot_all", "eot_at_1", "all_padding"]
WSETS = ["as_built", "ls_200", "ls_100", "ls_small", "ls_nan", "ls_inf", "ls_ninf", "zero_weights"]

# a subset per PR (the run's time on 2 shared cores): WSETS=a,b TXTS=c,d IMGS=e,f
for _v in ("WSETS", "TXTS", "IMGS"):
    if os.environ.get(_v):
        globals()[_v] = os.environ[_v].split(",")
if os.environ.get("QUICK"):
    SHAPES, IMGS, TXTS, WSETS = SHAPES[:1], IMGS[:2], TXTS[:2], WSETS[:2]
    CFGS = dict(list(CFGS.items())[:1])
total = equal = repro_diff = nonrepro = 0
diffs = []
for cname, cfg in CFGS.items():
    for wset in WSETS:
        torch.manual_seed(0)
        mh = weights(H.CLIP(**cfg, **COMMON).eval(), wset, 1)
        ms = S.CLIP(**cfg, **COMMON).eval()
        ms.load_state_dict(mh.state_dict())
        scale = mh.logit_scale.exp().item()
        for compiled in (False, True):
            torch._dynamo.reset()
            fh = torch.compile(mh, backend="eager") if compiled else mh
            fs = torch.compile(ms, backend="eager") if compiled else ms
            for (b, t), ik, tk, grad in itertools.product(SHAPES, IMGS, TXTS, (False, True)):
                img = image(b, cfg["image_resolution"], ik, seed=b * 10 + t)
                txt = tokens(t, cfg["context_length"], tk, seed=b * 10 + t)
                rh1 = run(mh, fh, img, txt, grad)
                rh2 = run(mh, fh, img, txt, grad)
                rs = run(ms, fs, img, txt, grad)
                total += 1
                if compare(rh1, rs):
                    equal += 1
                    continue
                repro = compare(rh1, rh2)
                repro_diff += repro; nonrepro += (not repro)
                what = rh1[1] if rh1[0] == "raise" else "outputs"
                whats = rs[1] if rs[0] == "raise" else "outputs"
                if rh1[0] == "ok" and rs[0] == "ok":
                    idx = [i for i, (x, y) in enumerate(zip(rh1[1], rs[1])) if not same(x, y)]
                    whats = f"differ at result index {idx[:6]}{'...' if len(idx) > 6 else ''} (0,1 logits; 2 image grad; 3+ params)"
                    if idx and idx[0] < 2 and rh1[1][idx[0]] is not None:
                        a, s2 = rh1[1][idx[0]], rs[1][idx[0]]
                        whats += f"; head {a.flatten()[:3].tolist()} vs suggestion {s2.flatten()[:3].tolist()}"
                diffs.append(f"{cname} w={wset} (exp(logit_scale)={scale:.4g}) compiled={compiled} grad={grad} "
                             f"shape={b}x{t} image={ik} text={tk}: reproducible={repro}; head: {what} | suggestion: {whats}")
        print(f"{cname} w={wset} (exp(logit_scale)={scale:.4g}): {total} results so far, {equal} equal", flush=True)

print()
for d in diffs[:80]:
    print("DIFF", d)
if len(diffs) > 80:
    print(f"... {len(diffs) - 80} more")
print(f"\n{equal} of {total} equal; {repro_diff} differ where head is reproducible, {nonrepro} where head itself is not")
