"""Ground truth for trial_heldout42 with no pt2bot code: each model file is imported in a fresh
process (this script re-invoked), built with seed 0 (weights and buffers as built), one thread,
torch.compile(backend='eager') with TORCH_LOGS=graph_breaks,recompiles captured.

  python truth_check.py claims FILE...        breaks, recompiles, export per file (batch 4 then 8, batch
                                              marked dynamic as pt2bot.yml's `dynamic: [batch]`)
  python truth_check.py setting NAME FILE     the same with torch._dynamo.config.NAME = True, and the
                                              compiled outputs against eager (edge inputs)
  python truth_check.py fix HEAD FIX          FIX against HEAD, eager and compiled, on edge inputs,
                                              with and without gradients; outputs and buffers equal
"""
import importlib.util, json, os, subprocess, sys

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
    for b in (4, 8, 1, 16, 3):
        cases.append((f"rand_b{b}", torch.randn(b, 16, generator=g), torch.randint(0, 8, (b,), generator=g)))
    x = torch.randn(6, 16, generator=g)
    y = torch.randint(0, 8, (6,), generator=g)
    cases += [("x_nan", x.clone().fill_(float("nan")), y), ("x_inf", x.clone().fill_(float("inf")), y),
              ("x_ninf", x.clone().fill_(float("-inf")), y),
              ("x_one_nan", torch.where(torch.arange(6)[:, None] == 2, float("nan"), x), y),
              ("x_zero", torch.zeros_like(x), y), ("x_1e30", x * 1e30, y),
              ("y_all_same", x, torch.full((6,), 3)), ("y_all_max", x, torch.full((6,), 7)),
              ("y_all_0", x, torch.zeros(6, dtype=torch.long)), ("y_every_class", torch.randn(8, 16, generator=g), torch.arange(8)),
              ("empty_batch", torch.zeros(0, 16), torch.zeros(0, dtype=torch.long))]
    return cases


def side(path, setting, grad, out):
    import torch, torch._dynamo
    torch.set_num_threads(1)
    if setting:
        setattr(torch._dynamo.config, setting, True)
    mod = load(path)
    torch.manual_seed(0)
    m = mod.LongTailClassifier()
    sd = {k: v.clone() for k, v in m.state_dict().items()}
    res = {}
    cm = torch.compile(m, backend="eager")
    for name, x, y in inputs():
        for kind in ("eager", "compiled"):
            m.load_state_dict(sd)
            xx = x.clone().requires_grad_(grad)
            try:
                with torch.set_grad_enabled(grad):
                    loss, logits = (m if kind == "eager" else cm)(xx, y)
                r = {"loss": loss.detach(), "logits": logits.detach(),
                     "buffers": {k: v.clone() for k, v in m.state_dict().items() if not k.startswith("net.")}}
                if grad:
                    gl = torch.nan_to_num(loss, 0.0, 0.0, 0.0) + torch.nan_to_num(logits, 0.0, 0.0, 0.0).sum()
                    gs = torch.autograd.grad(gl, [xx] + list(m.net.parameters()), allow_unused=True)
                    r["grads"] = [None if t is None else t.detach() for t in gs]
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
    m = mod.LongTailClassifier()
    cm = torch.compile(m, backend="eager")
    g = torch.Generator().manual_seed(0)
    for b in (4, 8):
        x, y = torch.randn(b, 16, generator=g), torch.randint(0, 8, (b,), generator=g)
        torch._dynamo.mark_dynamic(x, 0); torch._dynamo.mark_dynamic(y, 0)
        with torch.no_grad():
            cm(x, y)
    x, y = torch.randn(4, 16), torch.randint(0, 8, (4,))
    try:
        torch.export.export(m, (x, y), dynamic_shapes=({0: torch.export.Dim("batch")}, {0: torch.export.Dim("batch")}))
        print("EXPORT ok", flush=True)
    except Exception as e:
        print("EXPORT fails:", type(e).__name__, str(e).splitlines()[0][:200], flush=True)


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


def run_sub(args, env_extra=None):
    env = dict(os.environ, OMP_NUM_THREADS="1", **(env_extra or {}))
    return subprocess.run([sys.executable, __file__] + args, capture_output=True, text=True, env=env)


def main():
    cmd = sys.argv[1]
    if cmd == "_claims":
        claims(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else ""); return
    if cmd == "_side":
        side(*sys.argv[2:4], sys.argv[4] == "1", sys.argv[5]); return
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
                o = f"/tmp/t42_side_{os.getpid()}_{len(outs)}.pt"
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
                    print(f"   grad={grad} {key[0]:<14} {key[1]:<8} {'equal' if ok else 'DIFFER'}  head: {ea or 'ok'} | other: {eb or 'ok'}")
            # compiled against eager on the other side
            for name in sorted({k[0] for k in hb}):
                ce = eq(hb[(name, "eager")], hb[(name, "compiled")])
                if not ce:
                    print(f"   grad={grad} {name:<14} other side compiled != its eager")
        print(f"{cmd} {os.path.basename(a)} vs {os.path.basename(b)} {sb}: {same} of {tot} equal")


if __name__ == "__main__":
    main()
