"""Check a pt2bot suggestion against head, with no pt2bot code.

usage: python suggestion_check.py HEAD_CHECKOUT REVIEW_JSON [--comment N] [--timesteps-extra]
       python suggestion_check.py HEAD_CHECKOUT REPORT_JSON --candidate [--comment N]  (an unposted candidate)
Copies HEAD_CHECKOUT's guided_diffusion/ twice (head; head with the ```suggestion block of the
review's comment N applied to its lines), then runs both in subprocesses (one per variant,
mode) on the same cases and compares every output exactly (NaN == NaN; an exception is
compared by type and message). Models: the configured UNets that reach UNetModel.forward
(unet_cond, unet_ss, superres), each built twice: as guided-diffusion builds it (zero_module
on the out conv and every residual branch: the outputs are all 0 for finite inputs) and
"reinit" (those zeroed weights refilled, seed 0, so outputs depend on the input). Inputs:
batch 1, 3 x res 16, 32 (8 for superres's low_res at 32); x as randn, zeros, NaN everywhere,
one NaN, one +inf, one -inf, tiny (1e-30), huge (1e30), negative (-5); timesteps random in
[0, 1000), 0, 999, and with --timesteps-extra also 1000, 5000, -3 (int64), 1000.0, 999.5 (float).
Modes: eager under no_grad; torch.compile(backend="eager") under no_grad (one compiled
model per model/weights, reused across cases: recompiles as a user gets them); eager with
grad (out.float().sum().backward(): x.grad compared exactly, every parameter's grad as one
sha256 of its exact bytes);
compiled with grad."""
import json, os, re, shutil, subprocess, sys, tempfile

def main():
    head, review = sys.argv[1], sys.argv[2]
    n = int(sys.argv[sys.argv.index("--comment") + 1]) if "--comment" in sys.argv else None
    extra = "--timesteps-extra" in sys.argv
    rv = json.load(open(review))
    if "--candidate" in sys.argv:
        # a candidate the review proved but did not post (report.json's fixes.candidates[N])
        c = rv["fixes"]["candidates"][n or 0]
        block = "\n".join(c["lines"]) + "\n"
        start, end = c["start_line"], c["end_line"]
        print(f"candidate {c['id']} ({c['rule']}): verified={c['verified']}; reason: {c['reason']}")
    else:
        sugg = [c for c in rv["comments"] if "```suggestion" in c["body"]]
        c = sugg[n or 0]
        block = re.search(r"```suggestion\n(.*?)```", c["body"], re.S).group(1)
        start, end = c.get("start_line") or c["line"], c["line"]
    tmp = tempfile.mkdtemp(prefix="sugg_")
    for v in ("head", "sugg"):
        shutil.copytree(os.path.join(head, "guided_diffusion"), os.path.join(tmp, v, "guided_diffusion"))
    p = os.path.join(tmp, "sugg", c["path"])
    lines = open(p).read().split("\n")
    new = block.rstrip("\n").split("\n")
    print(f"comment on {c['path']}:{start}-{end}; replaced:\n  " + "\n  ".join(lines[start - 1:end]) +
          "\nwith:\n  " + "\n  ".join(new), flush=True)
    lines[start - 1:end] = new
    open(p, "w").write("\n".join(lines))
    res = {}
    for v in ("head", "sugg"):
        for mode in ("eager", "compiled", "eager_grad", "compiled_grad"):
            out = os.path.join(tmp, f"{v}_{mode}.pt")
            r = subprocess.run([sys.executable, __file__, "--worker", os.path.join(tmp, v), mode, out,
                                "1" if extra else "0"], capture_output=True, text=True)
            if r.returncode:
                print(f"{v} {mode}: worker failed\n{r.stderr[-3000:]}"); sys.exit(1)
            import torch
            res[(v, mode)] = torch.load(out)
    import torch
    def same(a, b):
        if isinstance(a, str) or isinstance(b, str):
            return a == b
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        return bool(((a == b) | (torch.isnan(a) & torch.isnan(b))).all())
    total = diff = 0
    for mode in ("eager", "compiled", "eager_grad", "compiled_grad"):
        h, s = res[("head", mode)], res[("sugg", mode)]
        md = 0
        kinds = {}
        for key in h:
            total += 1
            ho, so = h[key], s[key]
            ok = (len(ho) == len(so)) and all(same(a, b) for a, b in zip(ho, so))
            if not ok:
                diff += 1; md += 1
                hk = ho[0] if isinstance(ho[0], str) else "tensor"
                sk = so[0] if isinstance(so[0], str) else "tensor"
                k = (hk[:120], sk[:120])
                kinds.setdefault(k, []).append(key)
        print(f"{mode}: {len(h)} cases, {md} differ", flush=True)
        for (hk, sk), keys in kinds.items():
            print(f"  head: {hk!r}\n  sugg: {sk!r}\n  in {len(keys)} case(s), e.g. {keys[:3]}")
    print(f"TOTAL: {total} comparisons, {diff} differ")

def param_grad_digest(m):
    """Every parameter's gradient, exactly, as one sha256 (NaN positions hashed apart, so
    NaN == NaN; a missing gradient hashed as such): a string compared for equality."""
    import hashlib, torch
    h = hashlib.sha256()
    for p in m.parameters():
        if p.grad is None:
            h.update(b"none")
            continue
        g = p.grad.detach()
        nan = torch.isnan(g)
        h.update(nan.numpy().tobytes()); h.update(torch.where(nan, torch.zeros_like(g), g).numpy().tobytes())
    return "param-grads sha256 " + h.hexdigest()


def worker(root, mode, out, extra):
    import torch
    torch.set_num_threads(1)
    sys.path.insert(0, root)
    from guided_diffusion.unet import UNetModel, SuperResModel
    specs = {
     "unet_cond": (UNetModel, dict(image_size=32, in_channels=3, model_channels=32, out_channels=6, num_res_blocks=1,
                   attention_resolutions=[2], channel_mult=[1, 2, 2], num_classes=10, num_head_channels=16)),
     "unet_ss": (UNetModel, dict(image_size=32, in_channels=3, model_channels=64, out_channels=6, num_res_blocks=1,
                 attention_resolutions=[2], channel_mult=[0.5, 1, 2], num_heads=2, use_scale_shift_norm=True,
                 resblock_updown=True, use_new_attention_order=True)),
     "superres": (SuperResModel, dict(image_size=32, in_channels=3, model_channels=32, out_channels=6, num_res_blocks=1,
                 attention_resolutions=[2], channel_mult=[1, 2, 2], num_head_channels=16, use_scale_shift_norm=True,
                 resblock_updown=True)),
    }
    fills = {"randn": None, "zeros": 0.0, "nan": float("nan"), "one_nan": "one_nan", "one_inf": "one_inf",
             "one_neginf": "one_neginf", "tiny": 1e-30, "huge": 1e30, "negative": -5.0}
    ts_kinds = ["random", "0", "999"] + (["1000", "5000", "-3", "f1000.0", "f999.5"] if extra else [])
    grad = mode.endswith("_grad")
    results = {}
    for name, (cls, kw) in specs.items():
        for weights in ("as_built", "reinit"):
            torch.manual_seed(0)
            m = cls(**kw).eval()
            if weights == "reinit":
                g = torch.Generator().manual_seed(1)
                with torch.no_grad():
                    for p in m.parameters():
                        if not p.any():
                            p.copy_(torch.randn(p.shape, generator=g) * 0.05)
            torch._dynamo.reset()
            f = torch.compile(m, backend="eager") if mode.startswith("compiled") else m
            for b in (1, 3):
                for r in (16, 32):
                    for fk, fv in fills.items():
                        for tk in ts_kinds:
                            g = torch.Generator().manual_seed(hash((b, r)) % 1000)
                            x = torch.randn(b, 3, r, r, generator=g)
                            if isinstance(fv, float):
                                x = torch.full_like(x, fv)
                            elif fv == "one_nan":
                                x[0, 0, 0, 0] = float("nan")
                            elif fv == "one_inf":
                                x[-1, 1, 2, 3] = float("inf")
                            elif fv == "one_neginf":
                                x[-1, 1, 2, 3] = float("-inf")
                            if tk == "random":
                                t = torch.randint(0, 1000, (b,), generator=g)
                            elif tk.startswith("f"):
                                t = torch.full((b,), float(tk[1:]))
                            else:
                                t = torch.full((b,), int(tk), dtype=torch.int64)
                            args, kws = [x, t], {}
                            if name == "unet_cond":
                                args.append(torch.randint(0, 10, (b,), generator=g))
                            if name == "superres":
                                kws["low_res"] = torch.rand(b, 3, r // 4, r // 4, generator=g) * 2 - 1
                            key = f"{name}|{weights}|b{b}|r{r}|x={fk}|t={tk}"
                            m.zero_grad(set_to_none=True)
                            try:
                                if grad:
                                    x.requires_grad_(True)
                                    o = f(*args, **kws)
                                    o.float().sum().backward()
                                    res = [o.detach().clone(), x.grad.clone(), param_grad_digest(m)]
                                else:
                                    with torch.no_grad():
                                        o = f(*args, **kws)
                                    res = [o.clone()]
                            except Exception as e:
                                res = [f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"]
                            results[key] = res
    torch.save(results, out)

if __name__ == "__main__":
    if sys.argv[1] == "--worker":
        worker(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5] == "1")
    else:
        main()
