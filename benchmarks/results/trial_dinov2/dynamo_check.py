"""Check pt2bot's run against dynamo directly (no pt2bot code): eager backend, one thread,
TORCH_LOGS=graph_breaks,recompiles set by the caller. Usage: dynamo_check.py MODEL MARK
(MARK 1: mark_dynamic on the dims pt2bot.yml declares dynamic). Then torch.export with x
positional and those dims dynamic."""
import sys, itertools, torch
torch.set_num_threads(1)
sys.path.insert(0, ".")
import pt2bot_models as pm
from dinov2.models.vision_transformer import DinoVisionTransformer, vit_small
from torch.export import Dim

name, mark = sys.argv[1], sys.argv[2] == "1"
CFG = {
  "vit_p14_reg4": (lambda: DinoVisionTransformer(img_size=56, patch_size=14, embed_dim=48, depth=2, num_heads=2, num_register_tokens=4, ffn_layer="mlp", block_chunks=0, init_values=1e-5, interpolate_offset=0.0), [2, 3], [56, 70], [56, 70], (0, 2, 3)),
  "vit_p8_swiglu_offset": (lambda: DinoVisionTransformer(img_size=32, patch_size=8, embed_dim=64, depth=2, num_heads=4, ffn_layer="swiglufused", block_chunks=0, init_values=1e-5), [2, 3], [32, 48], [32, 48], (0, 2, 3)),
  "vit_small_28": (lambda: vit_small(patch_size=14, img_size=28, num_register_tokens=4, block_chunks=0, init_values=1e-5), [2, 3], [28, 42], [28], (0,)),
}
if name == "vit_p14_masks":
    torch.manual_seed(0)
    m = pm.FeaturesWithMasks(img_size=56, patch_size=14, embed_dim=48, depth=2, num_heads=2, num_register_tokens=0, block_chunks=0, interpolate_offset=0.0).eval()
    c = torch.compile(m, backend="eager")
    with torch.no_grad():
        for b in (2, 3):
            inp = pm.images_and_masks_p14(b, 56, 56)
            if mark:
                torch._dynamo.mark_dynamic(inp["x"], 0); torch._dynamo.mark_dynamic(inp["masks"], 0)
            print(f"case b={b}: equal={torch.equal(c(**inp), m(**inp))}", flush=True)
        inp = pm.images_and_masks_p14(2, 56, 56)
        try:
            torch.export.export(m, (), inp, dynamic_shapes={"x": {0: Dim("batch")}, "masks": {0: Dim("batch")}})
            print("export batch dynamic: OK")
        except Exception as ex:
            print(f"export batch dynamic: {type(ex).__name__}: {str(ex)[:400]}")
    sys.exit(0)
build, B, H, W, dyn = CFG[name]
torch.manual_seed(0)
m = build().eval()
c = torch.compile(m, backend="eager")
with torch.no_grad():
    for b, h, w in itertools.product(B, H, W):
        x = pm.imagenet_images(b, h, w)["x"]
        if mark:
            for d in dyn:
                torch._dynamo.mark_dynamic(x, d)
        try:
            y = c(x); e = m(x)
            print(f"case b={b} h={h} w={w}: equal={torch.equal(y, e)}", flush=True)
        except Exception as ex:
            print(f"case b={b} h={h} w={w}: {type(ex).__name__}: {str(ex).splitlines()[0][:300]}", flush=True)
    x = pm.imagenet_images(B[0], H[0], W[0])["x"]
    names = {0: "batch", 2: "height", 3: "width"}
    for spec in ("declared", "AUTO"):
        ds = {"args": ({d: (Dim(names[d]) if spec == "declared" else Dim.AUTO) for d in dyn},)}
        try:
            ep = torch.export.export(m, (x,), dynamic_shapes=ds)
            print(f"export positional x, {spec}: OK; range_constraints:", ep.range_constraints, flush=True)
            for b, h, w in itertools.product(B, H, W):
                xx = pm.imagenet_images(b, h, w)["x"]
                try:
                    print(f"  ep b={b} h={h} w={w}: equal={torch.equal(ep.module()(xx), m(xx))}")
                except Exception as ex:
                    print(f"  ep b={b} h={h} w={w}: {type(ex).__name__}: {str(ex).splitlines()[0][:200]}")
        except Exception as ex:
            print(f"export positional x, {spec}: {type(ex).__name__}: {str(ex)[:1500]}", flush=True)
    # pt2bot's way: x as a keyword into forward(*args, is_training=False, **kwargs)
    try:
        torch.export.export(m, (), {"x": x}, dynamic_shapes={"x": {0: Dim("batch")}})
        print("export kwargs x, dynamic_shapes={'x': ...}: OK")
    except Exception as ex:
        print(f"export kwargs x, dynamic_shapes={{'x': ...}}: {type(ex).__name__}: {str(ex).splitlines()[0][:300]}")
    try:
        ep = torch.export.export(m, (), {"x": x}, dynamic_shapes={"kwargs": {"x": {0: Dim("batch")}}})
        print("export kwargs x, dynamic_shapes={'kwargs': {'x': ...}}: OK")
    except Exception as ex:
        print(f"export kwargs x, dynamic_shapes={{'kwargs': ...}}: {type(ex).__name__}: {str(ex)[:600]}")
