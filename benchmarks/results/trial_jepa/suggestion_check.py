"""Re-check a suggestion that pt2bot posted as verified, with no pt2bot code.

usage: python suggestion_check.py PR REVIEW_JSON BRANCH JEPA_REPO
  Extracts BRANCH (the PR's head) twice with `git archive`, replaces the comment's lines
  [start_line, line] in one copy with the ```suggestion block, runs both copies in separate
  processes over many inputs and compares every result exactly (outputs by bytes, gradients by
  bytes with None distinct from zeros, exceptions by type and first line).
Modes: eager, torch.compile(backend="eager") (one compiled model reused, recompile limit
raised so no case falls back to eager), and both with gradients (of the float inputs and of
every parameter).
"""
import io, json, os, re, subprocess, sys, tarfile, zlib

PR_MODELS = {
    # PR 2 (apply_masks index check): the two configured models that call apply_masks
    "pr2": ["vit_masks", "predictor"],
    # PR 3 (NaN check in AttentiveClassifier.forward)
    "pr3": ["attentive_classifier", "video_classifier"],
}
FILLS = ["normal", "zeros", "nan_all", "nan_one", "inf_one", "ninf_one", "tiny", "huge", "negative"]
MODES = ["eager", "compiled", "eager_grad", "compiled_grad"]


def fill(t, how, g):
    import torch
    t = t.clone()
    if how == "normal":
        return t
    if how == "zeros":
        return torch.zeros_like(t)
    if how == "nan_all":
        return torch.full_like(t, float("nan"))
    flat = t.view(-1)
    i = int(torch.randint(0, flat.numel(), (1,), generator=g))
    if how == "nan_one":
        flat[i] = float("nan"); return t
    if how == "inf_one":
        flat[i] = float("inf"); return t
    if how == "ninf_one":
        flat[i] = float("-inf"); return t
    if how == "tiny":
        return t * 1e-30
    if how == "huge":
        return t * 1e30
    if how == "negative":
        return -5.0 - t.abs()
    raise ValueError(how)


def kept(b, n, k, g):
    import torch
    return torch.stack([torch.randperm(n, generator=g)[:k].sort().values for _ in range(b)])


def cases(model_name):
    """(label, builder of the inputs dict) for one model."""
    import torch
    out = []
    if model_name == "vit_masks":
        from pt2bot_models import _clips
        for b in (1, 3):
            for mk in ("keep1", "keep5", "keep9", "keep_all", "dup", "two_masks", "oob_n", "neg1", "huge_idx"):
                for f in FILLS:
                    def make(b=b, mk=mk, f=f):
                        g = torch.Generator().manual_seed(zlib.crc32(repr((b, mk, f)).encode()))
                        x = fill(_clips(b, 4, 64), f, g)
                        if mk == "keep1": m = kept(b, 32, 1, g)
                        elif mk == "keep5": m = kept(b, 32, 5, g)
                        elif mk == "keep9": m = kept(b, 32, 9, g)
                        elif mk == "keep_all": m = torch.arange(32).expand(b, 32).clone()
                        elif mk == "dup": m = torch.zeros(b, 6, dtype=torch.long)
                        elif mk == "two_masks": m = [kept(b, 32, 5, g), kept(b, 32, 5, g)]
                        elif mk == "oob_n": m = kept(b, 32, 5, g); m[-1, -1] = 32
                        elif mk == "neg1": m = kept(b, 32, 5, g); m[0, 0] = -1
                        elif mk == "huge_idx": m = kept(b, 32, 5, g); m[0, 2] = 10**6
                        return {"x": x, "masks": m}
                    out.append((f"b{b}/{mk}/{f}", make))
    elif model_name == "predictor":
        for b in (1, 3):
            for mk in ("keep1", "keep6", "keep31", "ctx_all", "oob_ctx", "neg_tgt"):
                for f in FILLS:
                    def make(b=b, mk=mk, f=f):
                        g = torch.Generator().manual_seed(zlib.crc32(repr((b, mk, f, 1)).encode()))
                        keep = {"keep1": 1, "keep6": 6, "keep31": 31, "ctx_all": 32, "oob_ctx": 6, "neg_tgt": 6}[mk]
                        ctx, tgt = [], []
                        for _ in range(b):
                            p = torch.randperm(32, generator=g)
                            ctx.append(p[:keep].sort().values)
                            tgt.append((p[keep:] if keep < 32 else p[:8]).sort().values)
                        mc, mt = torch.stack(ctx), torch.stack(tgt)
                        if mk == "oob_ctx": mc[0, -1] = 40
                        if mk == "neg_tgt": mt[-1, 0] = -3
                        return {"ctxt": fill(torch.randn(b, keep, 32, generator=g), f, g),
                                "tgt": fill(torch.randn(b, mt.shape[1], 32, generator=g), f, g),
                                "masks_ctxt": mc, "masks_tgt": mt}
                    out.append((f"b{b}/{mk}/{f}", make))
    elif model_name == "attentive_classifier":
        for b in (1, 3):
            for seq in (1, 16, 72):
                for f in FILLS:
                    def make(b=b, seq=seq, f=f):
                        g = torch.Generator().manual_seed(zlib.crc32(repr((b, seq, f)).encode()))
                        x = torch.nn.functional.layer_norm(torch.randn(b, seq, 48, generator=g), (48,))
                        return {"x": fill(x, f, g)}
                    out.append((f"b{b}/seq{seq}/{f}", make))
    elif model_name == "video_classifier":
        from pt2bot_models import _clips
        for b in (1, 3):
            for size in (32, 48):
                for f in FILLS:
                    def make(b=b, size=size, f=f):
                        g = torch.Generator().manual_seed(zlib.crc32(repr((b, size, f)).encode()))
                        return {"x": fill(_clips(b, 4, size), f, g)}
                    out.append((f"b{b}/s{size}/{f}", make))
    return out


def build(model_name, weights):
    import torch
    torch.manual_seed(0)
    if model_name == "vit_masks":
        from src.models.vision_transformer import VisionTransformer
        m = VisionTransformer(img_size=64, patch_size=16, num_frames=4, tubelet_size=2, embed_dim=32,
                              depth=1, num_heads=4, uniform_power=False)
    elif model_name == "predictor":
        from src.models.predictor import VisionTransformerPredictor
        m = VisionTransformerPredictor(img_size=64, patch_size=16, num_frames=4, tubelet_size=2,
                                       embed_dim=32, predictor_embed_dim=32, depth=1, num_heads=2,
                                       use_mask_tokens=True, num_mask_tokens=2, uniform_power=True,
                                       zero_init_mask_tokens=(weights != "randn_mask_tokens"))
    elif model_name == "attentive_classifier":
        from src.models.attentive_pooler import AttentiveClassifier
        m = AttentiveClassifier(embed_dim=48, num_heads=2, depth=2, num_classes=10)
    elif model_name == "video_classifier":
        from pt2bot_models import VideoClassifier
        m = VideoClassifier(img_size=32, patch_size=8, num_frames=4, embed_dim=32, depth=1,
                            num_heads=2, num_classes=10)
    if weights == "nan_query" and hasattr(m, "pooler"):
        with torch.no_grad():
            m.pooler.query_tokens.fill_(float("nan"))
    return m.eval()


def digest(obj):
    import torch, hashlib
    if obj is None:
        return "None"
    if isinstance(obj, (list, tuple)):
        return "[" + ",".join(digest(o) for o in obj) + "]"
    if isinstance(obj, torch.Tensor):
        t = obj.detach().contiguous()
        return f"{tuple(t.shape)}:{t.dtype}:" + hashlib.sha256(t.numpy().tobytes()).hexdigest()[:16]
    return repr(obj)


def run(pr, out_path):
    """In a copy of the tree (cwd): every case, every mode; write {key: digest}."""
    import warnings; warnings.filterwarnings("ignore")
    import torch
    sys.path.insert(0, os.getcwd())
    torch.set_num_threads(1)
    torch._dynamo.config.recompile_limit = 10**6
    torch._dynamo.config.accumulated_recompile_limit = 10**6
    res = {}
    weight_kinds = {"pr2": ["init", "randn_mask_tokens"], "pr3": ["init", "nan_query"]}[pr]
    for model_name in PR_MODELS[pr]:
        for w in weight_kinds:
            if w == "randn_mask_tokens" and model_name != "predictor":
                continue
            model = build(model_name, w)
            torch._dynamo.reset()
            compiled = torch.compile(model, backend="eager")
            for label, make in cases(model_name):
                for mode in MODES:
                    key = f"{model_name}/{w}/{label}/{mode}"
                    inp = make()
                    fn = compiled if mode.startswith("compiled") else model
                    grad = mode.endswith("grad")
                    model.zero_grad(set_to_none=True)
                    if grad:
                        for k, v in inp.items():
                            if isinstance(v, torch.Tensor) and v.is_floating_point(): v.requires_grad_(True)
                    try:
                        with torch.set_grad_enabled(grad):
                            out = fn(**inp)
                            r = "out=" + digest(out)
                            if grad:
                                outs = out if isinstance(out, (list, tuple)) else [out]
                                s = sum(o.sum() for o in outs)
                                s.backward()
                                r += " | in_grads=" + digest([v.grad for v in inp.values() if isinstance(v, torch.Tensor) and v.is_floating_point()])
                                r += " | p_grads=" + digest([p.grad for _, p in model.named_parameters()])
                    except Exception as e:  # noqa: BLE001
                        r = f"raised {type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"
                    res[key] = r
    json.dump(res, open(out_path, "w"), indent=0)


def apply_suggestion(src_dir, comment):
    body = comment["body"]
    m = re.search(r"```suggestion\n(.*?)```", body, re.S)
    sugg = m.group(1)
    path = os.path.join(src_dir, comment["path"])
    lines = open(path).read().split("\n")
    start, end = comment.get("start_line") or comment["line"], comment["line"]
    new = lines[: start - 1] + sugg.rstrip("\n").split("\n") + lines[end:]
    open(path, "w").write("\n".join(new))
    return start, end, sugg


def main():
    if sys.argv[1] == "--run":
        run(sys.argv[2], sys.argv[3]); return
    pr, review, branch, repo = sys.argv[1:5]
    work = f"/tmp/fh-jepa/sc/{pr}"
    subprocess.run(["rm", "-rf", work], check=True)
    comments = [c for c in json.load(open(review))["comments"] if "```suggestion" in c["body"]]
    assert len(comments) == 1, len(comments)
    for side in ("head", "sugg"):
        d = f"{work}/{side}"; os.makedirs(d)
        tar = subprocess.run(["git", "-C", repo, "archive", branch], check=True, capture_output=True).stdout
        tarfile.open(fileobj=io.BytesIO(tar)).extractall(d)
    start, end, sugg = apply_suggestion(f"{work}/sugg", comments[0])
    print(f"{pr}: {branch} ({subprocess.run(['git','-C',repo,'rev-parse','--short',branch],capture_output=True,text=True).stdout.strip()}), "
          f"{comments[0]['path']} lines {start}-{end} replaced by:\n{sugg}")
    print(subprocess.run(["diff", "-u", f"{work}/head/{comments[0]['path']}", f"{work}/sugg/{comments[0]['path']}"],
                         capture_output=True, text=True).stdout)
    results = {}
    for side in ("head", "head_again", "sugg"):
        d = f"{work}/{'head' if side.startswith('head') else side}"
        outp = f"{work}/{side}.json"
        p = subprocess.run([sys.executable, os.path.abspath(__file__), "--run", pr, outp], cwd=d,
                           capture_output=True, text=True)
        if p.returncode:
            print(side, "FAILED", p.stderr[-3000:]); sys.exit(1)
        results[side] = json.load(open(outp))
    h, h2, s = results["head"], results["head_again"], results["sugg"]
    unstable = [k for k in h if h[k] != h2[k]]
    print(f"comparisons: {len(h)}; head not reproducible on {len(unstable)}")
    for k in unstable[:20]:
        print("  UNSTABLE", k, "|", h[k][:120], "|", h2[k][:120])
    diff = [k for k in h if h[k] != s[k]]
    raised = sum(1 for k in h if h[k].startswith("raised"))
    print(f"head raised in {raised}; differ: {len(diff)} (of them head reproducible: {len([k for k in diff if k not in unstable])})")
    kinds = {}
    for k in diff:
        kind = (h[k][:60] if h[k].startswith("raised") else "value") + "  vs  " + (s[k][:60] if s[k].startswith("raised") else "value")
        mode = k.rsplit("/", 1)[1]
        kinds.setdefault((kind, mode), []).append(k)
    for (kind, mode), ks in sorted(kinds.items()):
        print(f"  {len(ks):5d}  [{mode}]  {kind}   e.g. {ks[0]}")
    for k in diff[:40]:
        print("  DIFF", k, "\n     head:", h[k][:300], "\n     sugg:", s[k][:300])


if __name__ == "__main__":
    main()
