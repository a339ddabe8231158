"""PR 4: the verified setting `capture_scalar_outputs = True` checked without pt2bot code, in
PR 4's head (cwd): breaks and recompiles (TORCH_LOGS), the attribute the PR stores (type and
value, compiled vs eager), on several inputs, batch 2 and 3, sizes 56/70, and export."""
import itertools, math, sys, torch
torch.set_num_threads(1)
torch._dynamo.config.capture_scalar_outputs = True
sys.path.insert(0, ".")
from dinov2.models.vision_transformer import DinoVisionTransformer
import pt2bot_models as pm
torch.manual_seed(0)
m = DinoVisionTransformer(img_size=56, patch_size=14, embed_dim=48, depth=2, num_heads=2, num_register_tokens=4, block_chunks=0, init_values=1e-5, interpolate_offset=0.0).eval()
c = torch.compile(m, backend="eager")
n = same = 0
with torch.no_grad():
    for b, (h, w), kind in itertools.product((2, 3), ((56, 56), (70, 70), (56, 70)), ("imagenet", "zeros", "nan", "huge")):
        x = pm.imagenet_images(b, h, w)["x"]
        if kind == "zeros": x = torch.zeros_like(x)
        if kind == "nan": x = torch.full_like(x, float("nan"))
        if kind == "huge": x = x * 1e30
        ye = m(x); ve = m.last_cls_norm
        yc = c(x); vc = m.last_cls_norm
        ok = type(ve) is type(vc) and (ve == vc or (isinstance(ve, float) and math.isnan(ve) and math.isnan(vc))) and torch.equal(ye.nan_to_num(), yc.nan_to_num())
        n += 1; same += ok
        print(f"b={b} {h}x{w} {kind}: eager {type(ve).__name__} {ve!r}; compiled {type(vc).__name__} {vc!r}; {'same' if ok else 'DIFFERENT'}", flush=True)
print(f"{same}/{n} same")
try:
    ep = torch.export.export(m, (pm.imagenet_images(2, 56, 56)["x"],))
    print("export (static): OK")
except Exception as e:
    print("export (static):", type(e).__name__, str(e)[:300])
