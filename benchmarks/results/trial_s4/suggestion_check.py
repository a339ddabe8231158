"""Check every ```suggestion block a pt2bot review posted, against the PR's head, with no pt2bot code.

usage: python suggestion_check.py BRANCH REVIEW_JSON   (cwd: a tree of main: models/, src/, pt2bot_models.py;
       S4_GIT=the S4 checkout, read with git show)
Each suggestion replaces lines start_line..line of its comment's path on BRANCH (as GitHub
applies it). Head and suggestion are loaded as separate module copies (s4.py or s4d.py; for
s4d.py, example.py's S4Model from pt2bot_models.py is rebuilt on each copy) and run on:
  models: S4Block dplr / diag, l_max None / 32, bidirectional both ways, transposed both ways;
          FFTConv alone; S4D transposed both ways; S4Model 1 and 2 layers (prenorm)
  weights: as built; the kernel's step size with one NaN; with one +inf (a non-finite kernel);
  batch 1, 3; seq 1, 2, 16, 33 (past l_max 32), 64, 100
  values: normal, zeros, one NaN, one +inf, one -inf, tiny (1e-30), huge (1e30), negative
  eager and torch.compile(backend="eager"), outputs and every gradient (input and parameters)
Compared bit for bit (NaN equal to NaN, +0.0 equal to -0.0 as torch.equal does). Models whose
forward mutates state (the DPLR kernel caches C~ and l_kernel) are built fresh, with one seed,
for each of head, head again, suggestion, and the compiled pair, and fed the same sequence.
"""
import importlib.util, itertools, json, os, re, subprocess, sys, tempfile, time, warnings
warnings.filterwarnings("ignore")
import logging; logging.disable(logging.WARNING)
import torch
torch.set_num_threads(1)
torch._dynamo.config.recompile_limit = 100000
torch._dynamo.config.accumulated_recompile_limit = 1000000
branch, review = sys.argv[1], sys.argv[2]
root = os.getcwd(); sys.path.insert(0, root)
comments = [c for c in json.load(open(review))["comments"] if "```suggestion" in c["body"]]
assert comments, "no suggestion posted"
paths = {c["path"] for c in comments}
assert len(paths) == 1, paths
path = paths.pop()
src = subprocess.check_output(["git", "-C", os.environ.get("S4_GIT", "."), "show", f"{branch}:{path}"], text=True)
lines = src.splitlines(keepends=True); sugg = list(lines)
edits = []
for c in comments:
    m = re.search(r"```suggestion\n(.*?)```", c["body"], re.S)
    edits.append((c.get("start_line") or c["line"], c["line"], m.group(1)))
for start, end, text in sorted(edits, reverse=True):
    print(f"suggestion for {path} lines {start}-{end}:\n{''.join(lines[start-1:end])}->\n{text}", flush=True)
    sugg[start - 1:end] = [text]
tmp = tempfile.mkdtemp()
def load(name, text):
    p = os.path.join(tmp, name + ".py"); open(p, "w").write(text)
    spec = importlib.util.spec_from_file_location(name, p); mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod; spec.loader.exec_module(mod); return mod
H = load("s4_head", "".join(lines)); S = load("s4_sugg", "".join(sugg))
models_src = open("pt2bot_models.py").read()
def s4model_mod(tag, modname):
    return load(f"pm_{tag}", models_src.replace("from models.s4.s4d import S4D", f"from {modname} import S4D"))
if path.endswith("s4d.py"):
    PM = {"head": s4model_mod("head", "s4_head"), "sugg": s4model_mod("sugg", "s4_sugg")}

def builders(mod, tag):
    if path.endswith("s4.py"):
        B = {
         "S4Block dplr T": (lambda: mod.S4Block(16, d_state=8, mode="dplr", transposed=True), "BHL", 16),
         "S4Block dplr lmax32 bi F": (lambda: mod.S4Block(8, d_state=4, mode="dplr", l_max=32, bidirectional=True, transposed=False), "BLH", 8),
         "S4Block diag bi F": (lambda: mod.S4Block(32, d_state=16, mode="diag", bidirectional=True, transposed=False), "BLH", 32),
         "S4Block diag lmax32 T": (lambda: mod.S4Block(16, d_state=8, mode="diag", l_max=32, transposed=True), "BHL", 16),
         "FFTConv diag T": (lambda: mod.FFTConv(8, d_state=4, mode="diag", transposed=True), "BHL", 8),
        }
    else:
        B = {
         "S4D T": (lambda: mod.S4D(16, d_state=8, transposed=True), "BHL", 16),
         "S4D F": (lambda: mod.S4D(8, d_state=4, transposed=False), "BLH", 8),
         "S4Model 1": (lambda: PM[tag].S4Model(3, 10, 16, 1, 0.0), "BLH", 3),
         "S4Model 2 prenorm": (lambda: PM[tag].S4Model(1, 10, 32, 2, 0.0, True), "BLH", 1),
        }
    return B

def dt_param(model):
    for n, p in model.named_parameters():
        if n.endswith("inv_dt") or n.endswith("log_dt"): return n, p
    raise KeyError
def corrupt(model, kind):
    if kind == "as built": return
    n, p = dt_param(model)
    with torch.no_grad(): p.view(-1)[0] = float("nan") if kind == "dt NaN" else float("inf")

def inputs(layout, H, b, L, kind):
    g = torch.Generator().manual_seed(b * 1000 + L)
    x = torch.randn(b, H, L, generator=g) if layout == "BHL" else torch.randn(b, L, H, generator=g)
    if kind == "zeros": x = torch.zeros_like(x)
    elif kind == "nan": x.view(-1)[x.numel() // 2] = float("nan")
    elif kind == "inf": x.view(-1)[x.numel() // 2] = float("inf")
    elif kind == "-inf": x.view(-1)[-1] = float("-inf")
    elif kind == "tiny": x = x * 1e-30
    elif kind == "huge": x = x * 1e30
    elif kind == "negative": x = -x.abs()
    return x

def same(a, b):
    if a is None or b is None: return a is None and b is None
    if a.shape != b.shape or a.dtype != b.dtype: return False
    na, nb = torch.isnan(a), torch.isnan(b)
    return torch.equal(na, nb) and torch.equal(a[~na], b[~nb])

def run(model, fn, x, w):
    x = x.clone().requires_grad_(True)
    for p in model.parameters(): p.grad = None
    y = fn(x); y = y[0] if isinstance(y, tuple) else y
    (y * w[: y.numel()].view_as(y)).sum().backward()
    grads = [x.grad] + [p.grad for p in model.parameters()]
    return [y.detach()] + grads

BATCH, SEQ = [1, 3], [1, 2, 16, 33, 64, 100]
VALUES = ["normal", "zeros", "nan", "inf", "-inf", "tiny", "huge", "negative"]
WEIGHTS = ["as built", "dt NaN", "dt +inf"]
t0 = time.time(); n = diff = notrepro = 0; lines_out = []
w = torch.randn(1 << 16, generator=torch.Generator().manual_seed(7))
for name in builders(H, "head"):
    for wk in WEIGHTS:
        inst = {}
        for tag, mod in [("head", H), ("head2", H), ("sugg", S), ("head_c", H), ("sugg_c", S)]:
            mk, layout, dim = builders(mod, "sugg" if tag.startswith("sugg") else "head")[name]
            torch.manual_seed(0); m = mk().eval(); corrupt(m, wk)
            fn = torch.compile(m, backend="eager") if tag.endswith("_c") else m
            inst[tag] = (m, fn)
        torch._dynamo.reset()
        for b, L, vk in itertools.product(BATCH, SEQ, VALUES):
            x = inputs(layout, dim, b, L, vk)
            res = {}
            for tag, (m, fn) in inst.items():
                try: res[tag] = run(m, fn, x, w)
                except Exception as e: res[tag] = f"{type(e).__name__}: {str(e).splitlines()[0][:120]}"
            def eq(a, c):
                A, C = res[a], res[c]
                if isinstance(A, str) or isinstance(C, str): return A == C
                return all(same(u, v) for u, v in zip(A, C))
            repro = eq("head", "head2")
            for a, c, mode in [("head", "sugg", "eager"), ("head_c", "sugg_c", "compiled")]:
                n += 1
                if not repro: notrepro += 1
                if not eq(a, c):
                    diff += 1
                    A, C = res[a], res[c]
                    detail = A if isinstance(A, str) else f"out max|d|={((A[0]-C[0]).abs().nan_to_num(0).max().item() if A[0].shape == C[0].shape else 'shape')} head finite={bool(torch.isfinite(A[0]).all())} sugg finite={bool(torch.isfinite(C[0]).all()) if not isinstance(C, str) else C}"
                    msg = f"DIFF {name} | {wk} | batch={b} seq={L} {vk} | {mode} | head reproducible={repro} | {detail}"
                    print(msg, flush=True)
    print(f"-- {name}: done, {n} comparisons so far, {diff} differ, {time.time()-t0:.0f} s", flush=True)
print(f"TOTAL {n} comparisons, {diff} differ, head not reproducible on {notrepro}; {time.time()-t0:.0f} s")
