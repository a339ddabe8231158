"""Ground truth for trial_heldout44 with no pt2bot code: each model file is imported in a fresh
process (this script re-invoked), SoftLabelClassifier built with seed 0 (weights as built), one
thread, in training mode as pt2bot.yml's `train: true` builds it, torch.compile(backend='eager')
with TORCH_LOGS=graph_breaks,recompiles captured. Before every compared call torch, numpy and
Python's random are seeded alike (the augmentations draw from them).

  python truth_check.py claims FILE [SETTING]  breaks, graphs, recompiles, export: batch 2 then 4 at
                                               32x32 (pt2bot.yml's matrix), batch marked dynamic
  python truth_check.py steps FILE [SETTING]   a training loop: 12 calls at batch 4, the generators
                                               NOT reseeded (as a real loop): recompiles and whether
                                               dynamo hit its recompile limit
  python truth_check.py fixfile HEAD FIX       FIX eager and compiled against HEAD eager, fresh
                                               processes, on the same 16 inputs, with and without
                                               gradients
  python truth_check.py fix FILE SETTING       FILE compiled with torch._dynamo.config.SETTING = True
                                               against FILE eager (no setting), fresh processes, on
                                               16 inputs, with and without gradients
"""
import importlib.util, os, random, re, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))


def load(path):
    spec = importlib.util.spec_from_file_location("m_" + os.path.basename(path)[:-3], path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def seed(s=0):
    import numpy, torch
    torch.manual_seed(s); random.seed(s); numpy.random.seed(s)


def build(path, setting):
    import torch
    torch.set_num_threads(1)
    if setting:
        setattr(torch._dynamo.config, setting, True)
    mod = load(path)
    torch.manual_seed(0)
    return mod.SoftLabelClassifier().train()


def onehot(b, g):
    import torch
    return torch.nn.functional.one_hot(torch.randint(0, 4, (b,), generator=g), 4).float()


def claims(path, setting=""):
    import torch
    from torch._dynamo.utils import counters
    m = build(path, setting)
    cm = torch.compile(m, backend="eager")
    g = torch.Generator().manual_seed(0)
    for b in (2, 4):
        x, t = torch.rand(b, 3, 32, 32, generator=g), onehot(b, g)
        seed()
        try:
            xx, tt = x.clone(), t.clone()
            torch._dynamo.mark_dynamic(xx, 0); torch._dynamo.mark_dynamic(tt, 0)
            cm(xx, tt)
            print(f"batch {b} marked dynamic: ran", flush=True)
        except Exception as e:
            print(f"batch {b} marked dynamic: {type(e).__name__}: {str(e).splitlines()[0][:160]}", flush=True)
            xx, tt = x.clone(), t.clone()
            torch._dynamo.maybe_mark_dynamic(xx, 0); torch._dynamo.maybe_mark_dynamic(tt, 0)
            seed()
            cm(xx, tt)
            print(f"batch {b} marked weakly (maybe_mark_dynamic): ran", flush=True)
    print("graph_break counter", sum(counters["graph_break"].values()), flush=True)
    torch._dynamo.reset()
    seed()
    ex = torch._dynamo.explain(m)(torch.rand(4, 3, 32, 32), onehot(4, g))
    print(f"explain: {ex.graph_count} graphs, {ex.graph_break_count} breaks, ops {[len(gm.graph.nodes) for gm in ex.graphs]}", flush=True)
    seed()
    try:
        torch.export.export(m, (torch.rand(4, 3, 32, 32), onehot(4, g)),
                            dynamic_shapes=({0: torch.export.Dim("batch")}, {0: torch.export.Dim("batch")}))
        print("EXPORT ok", flush=True)
    except Exception as e:
        print("EXPORT fails:", type(e).__name__, str(e).splitlines()[0][:200], flush=True)


def steps(path, setting=""):
    import torch
    m = build(path, setting)
    cm = torch.compile(m, backend="eager")
    opt = torch.optim.SGD(m.parameters(), lr=0.01)
    g = torch.Generator().manual_seed(0)
    seed()
    for i in range(12):
        x, t = torch.rand(4, 3, 32, 32, generator=g), onehot(4, g)
        loss, _ = cm(x, t)
        opt.zero_grad(); loss.backward(); opt.step()
        print(f"step {i}: loss {loss.item():.6f}", flush=True)


def inputs():
    import torch
    g = torch.Generator().manual_seed(1)
    cases = [(f"rand_b{b}", torch.rand(b, 3, 32, 32, generator=g), onehot(b, g)) for b in (2, 4, 1, 8, 3)]
    x, t = torch.rand(4, 3, 32, 32, generator=g), onehot(4, g)
    soft = torch.softmax(torch.randn(4, 4, generator=g), -1)
    nanx = x.clone(); nanx[0, 0, 3, 3] = float("nan")
    infx = x.clone(); infx[1, 2, 5, 5] = float("inf")
    cases += [("x_zero", torch.zeros_like(x), t), ("x_one", torch.ones_like(x), t), ("x_x50", x * 50, t),
              ("x_neg", -x, t), ("x_one_nan", nanx, t), ("x_one_inf", infx, t), ("t_soft", x, soft),
              ("t_zero", x, torch.zeros_like(t)), ("t_nan", x, t.clone().fill_(float("nan"))),
              ("x_16px", torch.rand(4, 3, 16, 16, generator=g), t), ("empty_batch", torch.zeros(0, 3, 32, 32), torch.zeros(0, 4))]
    return cases


def side(path, setting, kind, grad, out):
    import torch
    m = build(path, setting)
    sd = {k: v.clone() for k, v in m.state_dict().items()}
    f = m if kind == "eager" else torch.compile(m, backend="eager")
    res = {}
    for i, (name, x, t) in enumerate(inputs()):
        m.load_state_dict(sd)
        xx = x.clone().requires_grad_(grad)
        seed(100 + i)
        try:
            with torch.set_grad_enabled(grad):
                loss, logits = f(xx, t.clone())
            r = {"loss": loss.detach(), "logits": logits.detach()}
            if grad:
                gl = torch.nan_to_num(loss, 0.0, 0.0, 0.0) + torch.nan_to_num(logits, 0.0, 0.0, 0.0).sum()
                gs = torch.autograd.grad(gl, [xx] + list(m.parameters()), allow_unused=True)
                r["grads"] = [None if v is None else v.detach() for v in gs]
        except Exception as e:
            r = {"error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"}
        res[name] = r
    torch.save(res, out)


def same(a, b):
    import torch
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if a is None or isinstance(a, str):
        return a == b
    return a.shape == b.shape and a.dtype == b.dtype and torch.equal(torch.isnan(a), torch.isnan(b)) and \
        torch.equal(torch.nan_to_num(a, 0.0), torch.nan_to_num(b, 0.0))


def sub(args, logs="graph_breaks,recompiles"):
    env = dict(os.environ, TORCH_LOGS=logs)
    p = subprocess.run([sys.executable, __file__] + args, env=env, capture_output=True, text=True)
    return p.stdout, p.stderr


def summarise_log(err):
    sites = re.findall(r"Graph break in user code at (\S+)", err)
    rec = re.findall(r"Recompiling function (\S+) in (\S+)", err)
    limit = [l for l in err.splitlines() if "recompile_limit" in l or "cache_size_limit" in l]
    short = [s.split("site-packages/")[-1].replace(HERE + "/", "") for s in sites]
    counts = {}
    for s in short:
        counts[s] = counts.get(s, 0) + 1
    return counts, len(rec), limit[:3]


def main():
    import torch
    cmd = sys.argv[1]
    if cmd == "_side":
        side(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5] == "1", sys.argv[6]); return
    if cmd == "_claims":
        claims(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else ""); return
    if cmd == "_steps":
        steps(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else ""); return
    if cmd in ("claims", "steps"):
        setting = sys.argv[3] if len(sys.argv) > 3 else ""
        out, err = sub(["_" + cmd, sys.argv[2], setting])
        counts, nrec, limit = summarise_log(err)
        print(f"== {cmd} {os.path.basename(sys.argv[2])} {setting or '(no setting)'}")
        print(out.rstrip())
        print(f"logged graph breaks by site: {counts}")
        print(f"'Recompiling function' lines: {nrec}; recompile-limit lines: {limit}")
        errs = [l for l in err.splitlines() if l.startswith("Traceback") or "Error" in l.split(":")[0]]
        if errs:
            print("stderr errors:", errs[:3])
        return
    if cmd == "fixfile":
        head, fix = sys.argv[2], sys.argv[3]
        tmp = "/tmp/t44out/_sides"; os.makedirs(tmp, exist_ok=True)
        print(f"== fixfile {os.path.basename(fix)} against {os.path.basename(head)}'s eager")
        tot = eq = 0
        for grad in (0, 1):
            files = {}
            for who, path, kind in (("head_eager", head, "eager"), ("head_compiled", head, "compiled"),
                                    ("fix_eager", fix, "eager"), ("fix_compiled", fix, "compiled")):
                o = os.path.join(tmp, f"ff_{who}_{grad}.pt")
                _, err = sub(["_side", path, "", kind, str(grad), o])
                files[who] = torch.load(o)
                if who.endswith("compiled"):
                    counts, nrec, limit = summarise_log(err)
                    print(f"  grad={grad} {who}: logged breaks {sum(counts.values())} {counts}; recompiles {nrec}; limit lines {len(limit)}")
            for name in files["head_eager"]:
                for who in ("head_compiled", "fix_eager", "fix_compiled"):
                    tot += 1
                    ok = same(files["head_eager"][name], files[who][name])
                    eq += ok
                    if not ok:
                        print(f"  DIFFER grad={grad} {name} {who}")
        print(f"  {eq} of {tot} equal to head's eager")
        return
    if cmd == "fix":
        path, setting = sys.argv[2], sys.argv[3]
        tmp = "/tmp/t44out/_sides"; os.makedirs(tmp, exist_ok=True)
        print(f"== fix {os.path.basename(path)}: compiled with {setting} against eager without it")
        tot = eq = 0
        for grad in (0, 1):
            files = {}
            for who, st, kind in (("head_eager", "", "eager"), ("head_compiled", "", "compiled"),
                                  ("set_eager", setting, "eager"), ("set_compiled", setting, "compiled")):
                o = os.path.join(tmp, f"{who}_{grad}.pt")
                _, err = sub(["_side", path, st, kind, str(grad), o])
                files[who] = torch.load(o)
                if who.endswith("compiled"):
                    counts, nrec, limit = summarise_log(err)
                    print(f"  grad={grad} {who}: logged breaks {sum(counts.values())} {counts}; recompiles {nrec}; limit lines {len(limit)}")
            for name in files["head_eager"]:
                for who in ("head_compiled", "set_eager", "set_compiled"):
                    tot += 1
                    ok = same(files["head_eager"][name], files[who][name])
                    eq += ok
                    if not ok:
                        a, b = files["head_eager"][name], files[who][name]
                        if "error" in a or "error" in b:
                            d = f"head eager {a.get('error', 'ok')} / {who} {b.get('error', 'ok')}"
                        else:
                            d = f"loss |d| {(a['loss'] - b['loss']).abs().max().item():.3g}, logits |d| {(a['logits'] - b['logits']).abs().max().item():.3g}"
                        print(f"  DIFFER grad={grad} {name} {who}: {d}")
        print(f"  {eq} of {tot} equal to head's eager")


if __name__ == "__main__":
    main()
