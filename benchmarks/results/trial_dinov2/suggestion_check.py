"""Check a suggestion pt2bot posted as verified, with no pt2bot code.

usage: suggestion_check.py BRANCH FILE START END REVIEW_JSON   (driver)
       suggestion_check.py --run TREE OUT.pkl                  (worker; one variant)

The driver extracts BRANCH twice with `git archive`, replaces lines START..END of FILE in one copy
with the ```suggestion block of REVIEW_JSON, runs head and suggestion in separate processes on the
same inputs and compares every result exactly (output bytes, exception type and first line, the
input's gradient, every parameter's gradient, None vs a tensor counted as a difference)."""
import hashlib, itertools, json, os, pickle, re, subprocess, sys

MODES = ["eager", "compiled", "eager_grad", "compiled_grad"]


def digest(t):
    import torch
    if t is None:
        return "None"
    t = t.detach().contiguous()
    return f"{tuple(t.shape)} {t.dtype} " + hashlib.sha256(t.cpu().numpy().tobytes()).hexdigest()[:16]


def worker(tree, out_path):
    sys.path.insert(0, tree)
    os.environ["XFORMERS_DISABLED"] = "1"
    import torch
    torch.set_num_threads(1)
    torch._dynamo.config.recompile_limit = 10000  # every case compiled, none left to eager
    torch._dynamo.config.accumulated_recompile_limit = 100000
    from dinov2.models.vision_transformer import DinoVisionTransformer
    MEAN = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)
    STD = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1)

    def build(variant):
        torch.manual_seed(0)
        m = DinoVisionTransformer(img_size=56, patch_size=14, embed_dim=48, depth=2, num_heads=2,
                                  num_register_tokens=variant["reg"], block_chunks=0,
                                  init_values=1e-5, interpolate_offset=0.0).eval()
        with torch.no_grad():
            m.mask_token.normal_()  # DINOv2 inits it to zeros; a trained one is not
            if variant["mask_token"] == "nan":
                m.mask_token.fill_(float("nan"))
        return m

    def images(b, h, w, kind):
        g = torch.Generator().manual_seed(100 * b + h + w)
        px = torch.rand(b, 3, h, w, generator=g)
        x = (px - MEAN) / STD
        if kind == "imagenet": return x
        if kind == "zeros": return torch.zeros(b, 3, h, w)
        if kind == "nan": return torch.full((b, 3, h, w), float("nan"))
        if kind == "one_nan": x = x.clone(); x[0, 0, 0, 0] = float("nan"); return x
        if kind == "inf": x = x.clone(); x[-1, 1, 3, 3] = float("inf"); return x
        if kind == "-inf": x = x.clone(); x[0, 2, 5, 5] = float("-inf"); return x
        if kind == "tiny": return x * 1e-30
        if kind == "huge": return x * 1e30
        if kind == "negative": return -5.0 * torch.ones(b, 3, h, w)
        raise ValueError(kind)

    def masks(b, n, kind):
        g = torch.Generator().manual_seed(b * 7 + n)
        if kind == "none": return None
        if kind == "random": return torch.rand(b, n, generator=g) < 0.3
        if kind == "all_false": return torch.zeros(b, n, dtype=torch.bool)
        if kind == "all_true": return torch.ones(b, n, dtype=torch.bool)
        if kind == "one": m = torch.zeros(b, n, dtype=torch.bool); m[-1, 0] = True; return m
        if kind == "one_row_false": m = torch.rand(b, n, generator=g) < 0.5; m[0] = False; return m
        raise ValueError(kind)

    res = {}
    variants = [{"reg": r, "mask_token": mt} for r in (0, 4) for mt in ("randn", "nan")]
    for variant, mode in itertools.product(variants, MODES):
        m = build(variant)
        fn = m.forward_features
        if mode.startswith("compiled"):
            fn = torch.compile(m.forward_features, backend="eager")
        for b, (h, w), xk, mk in itertools.product(
                (1, 3), ((56, 56), (70, 56)),
                ("imagenet", "zeros", "nan", "one_nan", "inf", "-inf", "tiny", "huge", "negative"),
                ("none", "random", "all_false", "all_true", "one", "one_row_false")):
            key = (variant["reg"], variant["mask_token"], mode, b, h, w, xk, mk)
            x = images(b, h, w, xk)
            mask = masks(b, (h // 14) * (w // 14), mk)
            grad = mode.endswith("grad")
            for p in m.parameters(): p.grad = None
            x = x.clone().requires_grad_(grad)
            try:
                with torch.set_grad_enabled(grad):
                    out = fn(x, mask)
                    r = {k: digest(v) for k, v in out.items() if torch.is_tensor(v)}
                    if grad:
                        loss = out["x_norm_patchtokens"].float().sum() + out["x_norm_clstoken"].sum()
                        loss.backward()
                        r["grad_x"] = digest(x.grad)
                        for n, p in m.named_parameters():
                            r["grad_" + n] = digest(p.grad)
                res[key] = r
            except Exception as e:
                res[key] = {"exception": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"}
    pickle.dump(res, open(out_path, "wb"))


def driver(branch, path, start, end, review):
    rev = json.load(open(review))
    blocks = [re.search(r"```suggestion\n(.*?)```", c["body"], re.S) for c in rev["comments"]]
    blocks = [b.group(1) for b in blocks if b]
    assert len(blocks) == 1, f"{len(blocks)} suggestion blocks"
    base = "/tmp/fh-dinov2/sc/" + branch
    for v in ("head", "sugg"):
        d = f"{base}/{v}"
        subprocess.run(f"rm -rf {d} && mkdir -p {d} && git -C /tmp/fh-dinov2/dinov2 archive {branch} | tar -x -C {d}", shell=True, check=True)
    f = f"{base}/sugg/{path}"
    lines = open(f).read().split("\n")
    print("replacing lines", start, "-", end, ":\n" + "\n".join(lines[start - 1:end]))
    print("with:\n" + blocks[0])
    lines[start - 1:end] = blocks[0].rstrip("\n").split("\n")
    open(f, "w").write("\n".join(lines))
    procs = {v: subprocess.Popen([sys.executable, __file__, "--run", f"{base}/{v}", f"{base}/{v}.pkl"]) for v in ("head", "sugg")}
    for p in procs.values():
        assert p.wait() == 0
    head = pickle.load(open(f"{base}/head.pkl", "rb"))
    sugg = pickle.load(open(f"{base}/sugg.pkl", "rb"))
    assert head.keys() == sugg.keys()
    ndiff, nraise, per_mode = 0, 0, {}
    for k in sorted(head, key=str):
        nraise += "exception" in head[k]
        if head[k] != sugg[k]:
            ndiff += 1
            per_mode[k[2]] = per_mode.get(k[2], 0) + 1
            dk = sorted(set(head[k]) | set(sugg[k]))
            diffs = {f: (head[k].get(f), sugg[k].get(f)) for f in dk if head[k].get(f) != sugg[k].get(f)}
            print("DIFF", k, diffs)
    print(f"{len(head)} comparisons, {ndiff} differ ({per_mode}); head raised in {nraise}")


if __name__ == "__main__":
    if sys.argv[1] == "--run":
        worker(sys.argv[2], sys.argv[3])
    else:
        driver(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
