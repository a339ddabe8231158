"""Ground truth for trial_heldout43 with no pt2bot code: each model file is imported in a fresh
process (this script re-invoked), built with seed 0 (weights as built), one thread, in training
mode as pt2bot.yml's `train: true` builds it, torch.compile(backend='eager') with
TORCH_LOGS=graph_breaks,recompiles captured.

  python truth_check.py claims FILE...        breaks, recompiles, export per file (batch 2 then 4,
                                              batch marked dynamic as pt2bot.yml's `dynamic: [batch]`)
  python truth_check.py setting NAME FILE     the same with torch._dynamo.config.NAME = True, and the
                                              other side's results against the file's own (edge inputs)
  python truth_check.py fix HEAD FIX          FIX against HEAD, eager and compiled, on edge inputs,
                                              with and without gradients; outputs and gradients equal
  python truth_check.py time HEAD FIX...      per-call time of each file's compiled model (warm), batch 4
"""
import importlib.util, json, os, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))


def load(path):
    spec = importlib.util.spec_from_file_location("m_" + os.path.basename(path)[:-3], path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def inputs():
    import torch
    g = torch.Generator().manual_seed(1)
    cases = []
    for b in (2, 4, 1, 8, 3):
        cases.append((f"rand_b{b}", torch.randn(b, 8, generator=g), torch.randn(b, 6, 3, generator=g)))
    z = torch.randn(4, 8, generator=g)
    t = torch.randn(4, 6, 3, generator=g)
    cases += [("z_zero", torch.zeros_like(z), t), ("z_x10", z * 10, t), ("z_x50", z * 50, t),
              ("t_x20", z, t * 20), ("t_zero", z, torch.zeros_like(t)),
              ("z_nan", z.clone().fill_(float("nan")), t), ("t_one_nan", z, torch.where(torch.arange(6)[None, :, None] == 2, float("nan"), t)),
              ("t_inf", z, t.clone().fill_(float("inf"))), ("z_1e30", z * 1e30, t),
              ("t_same_point", z, t[:, :1].expand(4, 6, 3).clone()),
              ("empty_batch", torch.zeros(0, 8), torch.zeros(0, 6, 3))]
    return cases


def side(path, setting, grad, out):
    import torch, torch._dynamo
    torch.set_num_threads(1)
    if setting:
        setattr(torch._dynamo.config, setting, True)
    mod = load(path)
    torch.manual_seed(0)
    m = mod.CloudDecoder().train()
    sd = {k: v.clone() for k, v in m.state_dict().items()}
    res = {}
    cm = torch.compile(m, backend="eager")
    for name, z, t in inputs():
        for kind in ("eager", "compiled"):
            m.load_state_dict(sd)
            zz = z.clone().requires_grad_(grad)
            try:
                with torch.set_grad_enabled(grad):
                    loss, pts = (m if kind == "eager" else cm)(zz, t.clone())
                r = {"loss": loss.detach(), "points": pts.detach()}
                if grad:
                    gl = torch.nan_to_num(loss, 0.0, 0.0, 0.0) + torch.nan_to_num(pts, 0.0, 0.0, 0.0).sum()
                    gs = torch.autograd.grad(gl, [zz] + list(m.net.parameters()), allow_unused=True)
                    r["grads"] = [None if x is None else x.detach() for x in gs]
            except Exception as e:
                r = {"error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"}
            res[(name, kind)] = r
    torch.save(res, out)


def claims(path, setting=""):
    import torch, torch._dynamo
    torch.set_num_threads(1)
    if setting:
        setattr(torch._dynamo.config, setting, True)
    mod = load(path)
    torch.manual_seed(0)
    m = mod.CloudDecoder().train()
    cm = torch.compile(m, backend="eager")
    g = torch.Generator().manual_seed(0)
    for b in (2, 4):
        z, t = torch.randn(b, 8, generator=g), torch.randn(b, 6, 3, generator=g)
        torch._dynamo.mark_dynamic(z, 0); torch._dynamo.mark_dynamic(t, 0)
        try:
            cm(z, t)
            print(f"batch {b} marked dynamic: ran", flush=True)
        except Exception as e:
            print(f"batch {b} marked dynamic: {type(e).__name__}: {str(e).splitlines()[0][:160]}", flush=True)
            z, t = z.clone(), t.clone()
            torch._dynamo.maybe_mark_dynamic(z, 0); torch._dynamo.maybe_mark_dynamic(t, 0)
            cm(z, t)
            print(f"batch {b} marked weakly (maybe_mark_dynamic): ran", flush=True)
    z, t = torch.randn(4, 8), torch.randn(4, 6, 3)
    try:
        torch.export.export(m, (z, t), dynamic_shapes=({0: torch.export.Dim("batch")}, {0: torch.export.Dim("batch")}))
        print("EXPORT ok", flush=True)
    except Exception as e:
        print("EXPORT fails:", type(e).__name__, str(e).splitlines()[0][:200], flush=True)


def timing(path, out):
    import torch
    torch.set_num_threads(1)
    mod = load(path)
    torch.manual_seed(0)
    m = mod.CloudDecoder().train()
    cm = torch.compile(m, backend="eager")
    g = torch.Generator().manual_seed(0)
    z, t = torch.randn(4, 8, generator=g), torch.randn(4, 6, 3, generator=g)
    res = {}
    for kind, f in (("eager", m), ("compiled", cm)):
        for _ in range(3):
            f(z, t)
        ts = []
        for _ in range(20):
            t0 = time.perf_counter(); loss, _ = f(z, t); loss.backward(); ts.append(time.perf_counter() - t0)
        ts.sort()
        res[kind] = ts[len(ts) // 2]
    json.dump(res, open(out, "w"))


def summarize_log(text):
    import re
    sites = re.findall(r"Graph break(?: \(user stack suppressed due to duplicate graph break\))? in user code at (\S+)", text)
    reasons = re.findall(r"Graph Break Reason: (.{0,90})", text)
    rec = len(re.findall(r"Recompiling function", text))
    return sites, reasons, rec


def eq(a, b):
    import torch
    if type(a) != type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(eq(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(eq(x, y) for x, y in zip(a, b))
    if isinstance(a, torch.Tensor):
        return a.dtype == b.dtype and a.shape == b.shape and torch.equal(torch.isnan(a), torch.isnan(b)) and torch.equal(torch.nan_to_num(a, 0.0, 1e300, -1e300) if a.is_floating_point() else a, torch.nan_to_num(b, 0.0, 1e300, -1e300) if b.is_floating_point() else b)
    return a == b


def maxdiff(a, b):
    import torch
    if isinstance(a, dict) and isinstance(b, dict):
        return max([maxdiff(a[k], b[k]) for k in a if k in b] or [0.0])
    if isinstance(a, list) and isinstance(b, list):
        return max([maxdiff(x, y) for x, y in zip(a, b)] or [0.0])
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.shape == b.shape and a.numel():
        d = (torch.nan_to_num(a.double(), 0.0, 0.0, 0.0) - torch.nan_to_num(b.double(), 0.0, 0.0, 0.0)).abs().max().item()
        return d
    return 0.0


def run_sub(args, env_extra=None):
    env = dict(os.environ, OMP_NUM_THREADS="1", **(env_extra or {}))
    return subprocess.run([sys.executable, __file__] + args, capture_output=True, text=True, env=env)


def main():
    cmd = sys.argv[1]
    if cmd == "_claims":
        claims(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else ""); return
    if cmd == "_side":
        side(*sys.argv[2:4], sys.argv[4] == "1", sys.argv[5]); return
    if cmd == "_time":
        timing(sys.argv[2], sys.argv[3]); return
    if cmd == "time":
        for f in sys.argv[2:]:
            o = f"/tmp/t43_time_{os.getpid()}.json"
            p = run_sub(["_time", os.path.abspath(f), o])
            if p.returncode:
                print(p.stderr[-2000:]); continue
            r = json.load(open(o)); os.remove(o)
            print(f"== {os.path.basename(f)}: median of 20 calls (forward + backward, batch 4, one thread): eager {r['eager'] * 1e3:.2f} ms, compiled {r['compiled'] * 1e3:.2f} ms")
        return
    if cmd in ("claims", "setting"):
        setting = sys.argv[2] if cmd == "setting" else ""
        files = sys.argv[3:] if cmd == "setting" else sys.argv[2:]
        for f in files:
            p = run_sub(["_claims", os.path.abspath(f), setting], {"TORCH_LOGS": "graph_breaks,recompiles"})
            sites, reasons, rec = summarize_log(p.stderr)
            print(f"== {os.path.basename(f)} setting={setting or '-'}: {len(sites)} logged graph break(s) at {sorted(set(s.replace('/work/venvs/realcode/lib/python3.11/site-packages/', '') for s in sites))}; recompiles {rec}; rc {p.returncode}")
            for r in reasons:
                print("   reason:", r)
            print("  ", p.stdout.strip().replace("\n", "\n   "))
            if p.returncode:
                print(p.stderr[-1500:])
        if cmd == "claims":
            return
    if cmd in ("setting", "fix"):
        if cmd == "setting":
            a, b, sa, sb = files[0], files[0], "", setting
        else:
            a, b, sa, sb = sys.argv[2], sys.argv[3], "", ""
        tot = same = 0
        for grad in ("0", "1"):
            outs = []
            for f, s in ((a, sa), (b, sb)):
                o = f"/tmp/t43_side_{os.getpid()}_{len(outs)}.pt"
                p = run_sub(["_side", os.path.abspath(f), s, grad, o])
                if p.returncode:
                    print(p.stderr[-2000:]); sys.exit(2)
                import torch
                outs.append(torch.load(o, weights_only=False)); os.remove(o)
            ha, hb = outs
            for key in ha:
                tot += 1
                ok = eq(ha[key], hb[key])
                same += ok
                ea = ha[key].get("error"); eb = hb[key].get("error")
                if not ok or ea or eb:
                    md = "" if ok else f" max|diff| {maxdiff(ha[key], hb[key]):.3g}"
                    print(f"   grad={grad} {key[0]:<14} {key[1]:<8} {'equal' if ok else 'DIFFER'}{md}  head: {ea or 'ok'} | other: {eb or 'ok'}")
            for name in sorted({k[0] for k in hb}):
                if not eq(hb[(name, "eager")], hb[(name, "compiled")]):
                    print(f"   grad={grad} {name:<14} other side compiled != its eager")
                if not eq(ha[(name, "eager")], ha[(name, "compiled")]):
                    print(f"   grad={grad} {name:<14} head compiled != its eager")
        print(f"{cmd} {os.path.basename(a)} vs {os.path.basename(b)} {sb}: {same} of {tot} equal")


if __name__ == "__main__":
    main()
