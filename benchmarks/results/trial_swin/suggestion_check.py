"""Checks every ```suggestion block of a pt2bot review.json against the PR's head, with no pt2bot
code. Usage: python suggestion_check.py SWIN_REPO HEAD_REF REVIEW_JSON MODEL_NAME... > log

For each suggestion: two copies of the repository at HEAD_REF (git archive), the block applied
to one (lines start_line..line replaced), then sc_worker (below, the same file run as a worker)
runs both in separate processes on the named pt2bot.yml models (built with the same seed), on
many inputs and in four modes (eager; torch.compile(backend="eager"), one compiled model reused
over all cases; eager with gradients; compiled with gradients), and a model variant whose head
bias holds a NaN and one whose head bias holds +inf. Outputs and gradients are compared exactly
(bit patterns, NaN equal to NaN), exceptions by type and first line of the message.
"""
import hashlib, io, json, os, re, subprocess, sys, tarfile, tempfile

MODES = ("eager", "compiled", "eager_grad", "compiled_grad")


def worker(root, out_path, names):
    sys.path.insert(0, root)
    os.chdir(root)
    import importlib, yaml, torch
    torch.set_num_threads(1)
    from pt2bot_models import imagenet_images
    cfgs = {m["name"]: m for m in yaml.safe_load(open("pt2bot.yml"))["models"]}
    results = {}

    def digest(t):
        if t is None:
            return None
        t = t.detach().contiguous()
        return f"{tuple(t.shape)} {t.dtype} " + hashlib.sha256(t.numpy().tobytes()).hexdigest()[:16]

    def inputs(b, H, W):
        base = imagenet_images(b, H, W)["x"]
        g = torch.Generator().manual_seed(b)
        cases = {"imagenet": base, "randn": torch.randn(b, 3, H, W, generator=g),
                 "zeros": torch.zeros(b, 3, H, W), "all_nan": torch.full((b, 3, H, W), float("nan")),
                 "tiny": torch.full((b, 3, H, W), 1e-30), "huge": torch.full((b, 3, H, W), 1e30),
                 "negative": torch.full((b, 3, H, W), -5.0), "max_float": torch.full((b, 3, H, W), 3.4e38)}
        for label, v in (("one_nan", float("nan")), ("one_pinf", float("inf")), ("one_ninf", float("-inf"))):
            x = base.clone(); x[b - 1, 1, H // 2, W // 3] = v; cases[label] = x
        x = base.clone(); x[0] = float("nan"); cases["nan_first_row"] = x
        return cases

    for name in names:
        cfg = cfgs[name]
        mod, cls = cfg["entry"].split(":")
        H, W = cfg["shapes"]["height"][0], cfg["shapes"]["width"][0]
        for variant in ("plain", "head_bias_nan", "head_bias_inf"):
            torch.manual_seed(0)
            model = getattr(importlib.import_module(mod), cls)(**cfg["kwargs"]).eval()
            if variant != "plain":
                with torch.no_grad():
                    model.head.bias[3] = float("nan") if variant == "head_bias_nan" else float("inf")
            for mode in MODES:
                torch._dynamo.reset()
                f = torch.compile(model, backend="eager") if mode.startswith("compiled") else model
                grad = mode.endswith("grad")
                for b in (1, 2, 3, 5):
                    for label, x in inputs(b, H, W).items():
                        key = f"{name}|{variant}|{mode}|b={b}|{label}"
                        model.zero_grad(set_to_none=True)
                        x = x.clone().requires_grad_(grad)
                        try:
                            with torch.set_grad_enabled(grad):
                                y = f(x)
                                if grad:
                                    y.sum().backward()
                            rec = {"out": digest(y)}
                            if grad:
                                rec["x_grad"] = digest(x.grad)
                                h = hashlib.sha256()
                                for pn, p in model.named_parameters():
                                    h.update(pn.encode()); h.update((digest(p.grad) or "none").encode())
                                rec["param_grads"] = h.hexdigest()[:16]
                            results[key] = rec
                        except Exception as e:
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
                    msgs.setdefault((side, k.split("|")[2], res[side][k]["raised"], res[side][k]["msg"]), 0)
                    msgs[(side, k.split("|")[2], res[side][k]["raised"], res[side][k]["msg"])] += 1
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
