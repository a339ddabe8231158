"""Checks every ```suggestion block of a pt2bot review.json against the PR's head, with no pt2bot
code. Usage: python suggestion_check.py DETR_REPO HEAD_REF REVIEW_JSON MODEL_NAME... > log

For each suggestion: two copies of the repository at HEAD_REF (git archive), the block applied to
one (lines start_line..line replaced), then the worker (this file with --worker) runs both in
separate processes on the named pt2bot.yml models (built from pt2bot_models.py with the same seed),
in three variants (as built; a NaN, and +inf, in one channel of the last backbone
FrozenBatchNorm2d's bias, so the features DETR checks carry it), in four modes (eager;
torch.compile(backend="eager"), one compiled model reused over all cases; eager with gradients;
compiled with gradients), batch 1, 2, 3, two image sizes, on many inputs (ImageNet-normalised,
randn, zeros, all NaN, one NaN / +inf / -inf pixel, the first image NaN, 1e-30, 1e30, -5,
3.4e38; for the NestedTensor model also a mask that is all padding and one with no padding).
Outputs (every tensor of the output dict, aux outputs included) and gradients (the input's, every
parameter's) are compared by their exact bytes; exceptions by type and first line of the message.
"""
import hashlib, io, json, os, re, subprocess, sys, tarfile, tempfile

MODES = ("eager", "compiled", "eager_grad", "compiled_grad")


def worker(root, out_path, names):
    sys.path.insert(0, root)
    os.chdir(root)
    import importlib, yaml, torch
    torch.set_num_threads(1)
    cfgs = {m["name"]: m for m in yaml.safe_load(open("pt2bot.yml"))["models"]}
    results = {}

    def digest(t):
        if t is None:
            return None
        t = t.detach().contiguous()
        return f"{tuple(t.shape)} {t.dtype} " + hashlib.sha256(t.numpy().tobytes()).hexdigest()[:16]

    def value_cases(base):
        g = torch.Generator().manual_seed(base.shape[0])
        full = lambda v: torch.full_like(base, v)  # noqa: E731
        cases = {"imagenet": base, "randn": torch.randn(base.shape, generator=g), "zeros": full(0.0),
                 "all_nan": full(float("nan")), "tiny": full(1e-30), "huge": full(1e30),
                 "negative": full(-5.0), "max_float": full(3.4e38)}
        b, _, H, W = base.shape
        for label, v in (("one_nan", float("nan")), ("one_pinf", float("inf")), ("one_ninf", float("-inf"))):
            x = base.clone(); x[b - 1, 1, H // 2, W // 3] = v; cases[label] = x
        x = base.clone(); x[0] = float("nan"); cases["nan_first_image"] = x
        return cases

    def inputs(factory, b, H, W):
        made = factory(batch=b, height=H, width=W)
        out = {}
        if "samples" in made:
            for label, x in value_cases(made["samples"]).items():
                out[label] = {"samples": x}
        else:
            imgs, mask = made["images"], made["mask"]
            for label, x in value_cases(imgs).items():
                out[label] = {"images": x * (~mask)[:, None], "mask": mask}
            out["mask_all_padding"] = {"images": imgs, "mask": torch.ones_like(mask)}
            out["mask_no_padding"] = {"images": imgs, "mask": torch.zeros_like(mask)}
        return out

    for name in names:
        cfg = cfgs[name]
        mod, attr = cfg["entry"].split(":")
        fmod, fattr = cfg["inputs"]["entry"].split(":")
        factory = getattr(importlib.import_module(fmod), fattr)
        for variant in ("plain", "feat_nan", "feat_inf"):
            torch.manual_seed(0)
            model = getattr(importlib.import_module(mod), attr)(**cfg["kwargs"]).eval()
            if variant != "plain":
                bns = [m for n, m in model.named_modules() if type(m).__name__ == "FrozenBatchNorm2d"]
                bns[-1].bias[3] = float("nan") if variant == "feat_nan" else float("inf")
            for mode in MODES:
                torch._dynamo.reset()
                f = torch.compile(model, backend="eager") if mode.startswith("compiled") else model
                grad = mode.endswith("grad")
                for b in (1, 2, 3):
                    for (H, W) in ((64, 64), (64, 96)):
                        for label, kw in inputs(factory, b, H, W).items():
                            key = f"{name}|{variant}|{mode}|b={b}|{H}x{W}|{label}"
                            model.zero_grad(set_to_none=True)
                            kw = {k: (v.clone().requires_grad_(grad) if v.is_floating_point() else v.clone())
                                  for k, v in kw.items()}
                            try:
                                with torch.set_grad_enabled(grad):
                                    y = f(**kw)
                                    leaves = [t for t in torch.utils._pytree.tree_leaves(y) if torch.is_tensor(t)]
                                    if grad:
                                        sum(t.sum() for t in leaves).backward()
                                rec = {"out": [digest(t) for t in leaves]}
                                if grad:
                                    rec["x_grad"] = [digest(v.grad) for v in kw.values() if v.is_floating_point()]
                                    h = hashlib.sha256()
                                    for pn, p in model.named_parameters():
                                        h.update(pn.encode()); h.update((digest(p.grad) or "none").encode())
                                    rec["param_grads"] = h.hexdigest()[:16]
                                results[key] = rec
                            except Exception as e:  # noqa: BLE001
                                results[key] = {"raised": type(e).__name__,
                                                "msg": (str(e).strip().splitlines() or [""])[0][:200]}
    json.dump(results, open(out_path, "w"), indent=0, sort_keys=True)


def main():
    repo, ref, review, names = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    comments = json.load(open(review))["comments"]
    blocks = [(c, m.group(1)) for c in comments
              for m in [re.search(r"```suggestion\n(.*?)```", c["body"], re.S)] if m]
    print(f"{review}: {len(blocks)} suggestion block(s)")
    for c, block in blocks:
        start, end = c.get("start_line") or c["line"], c["line"]
        tmp = tempfile.mkdtemp(prefix="sc_")
        tar = subprocess.run(["git", "-C", repo, "archive", ref], capture_output=True, check=True).stdout
        for side in ("head", "sugg"):
            tarfile.open(fileobj=io.BytesIO(tar)).extractall(os.path.join(tmp, side))
        p = os.path.join(tmp, "sugg", c["path"])
        lines = open(p).read().split("\n")
        print(f"--- {c['path']} lines {start}-{end} replaced:")
        for l in lines[start - 1:end]:
            print("  - " + l)
        new = block.rstrip("\n").split("\n")
        for l in new:
            print("  + " + l)
        lines[start - 1:end] = new
        open(p, "w").write("\n".join(lines))
        res = {}
        for side in ("head", "sugg"):
            out = os.path.join(tmp, f"{side}.json")
            r = subprocess.run([sys.executable, "-W", "ignore", __file__, "--worker", os.path.join(tmp, side), out, *names],
                               capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
            if r.returncode:
                print(side, "worker failed:", r.stderr[-3000:]); sys.exit(1)
            res[side] = json.load(open(out))
        keys = sorted(res["head"])
        assert keys == sorted(res["sugg"])
        differ = [k for k in keys if res["head"][k] != res["sugg"][k]]
        raised = sum("raised" in res["head"][k] for k in keys)
        print(f"comparisons: {len(keys)}; differ: {len(differ)}; head raised in {raised}")
        for mode in MODES:
            ks = [k for k in keys if k.split("|")[2] == mode]
            print(f"  {mode}: {len(ks)} cases, {sum(k in differ for k in ks)} differ, head raised in "
                  f"{sum('raised' in res['head'][k] for k in ks)}, suggestion raised in {sum('raised' in res['sugg'][k] for k in ks)}")
        msgs = {}
        for side in ("head", "sugg"):
            for k in keys:
                if "raised" in res[side][k]:
                    key = (side, k.split("|")[2], res[side][k]["raised"], res[side][k]["msg"])
                    msgs[key] = msgs.get(key, 0) + 1
        for (side, mode, t, m), n in sorted(msgs.items()):
            print(f"  {side} {mode}: {n} x {t}: {m}")
        for k in differ[:40]:
            print(f"DIFF {k}\n   head: {res['head'][k]}\n   sugg: {res['sugg'][k]}")
        if len(differ) > 40:
            print(f"... {len(differ) - 40} more")


if __name__ == "__main__":
    if sys.argv[1] == "--worker":
        worker(sys.argv[2], sys.argv[3], sys.argv[4:])
    else:
        main()
