"""No pt2bot code. Where does export specialise batch in SwinTransformer, and does an integer
B in window_reverse (the same value for every valid input) let batch be dynamic?"""
import sys, torch, logging
sys.path.insert(0, ".")
import models.swin_transformer as st, models.swin_transformer_v2 as st2, models.swin_mlp as sm
from pt2bot_models import imagenet_images
from torch.export import Dim

def window_reverse_int(windows, window_size, H, W):
    B = windows.shape[0] // ((H // window_size) * (W // window_size))
    x = windows.view(B, H // window_size, W // window_size, window_size, window_size, -1)
    x = x.permute(0, 1, 3, 2, 4, 5).contiguous().view(B, H, W, -1)
    return x

for label, mod, ctor, kw, res in [
    ("SwinTransformer w7", st, st.SwinTransformer, dict(img_size=56, embed_dim=24, depths=[2, 2], num_heads=[2, 4], window_size=7, num_classes=10), 56),
    ("SwinTransformerV2 w8", st2, st2.SwinTransformerV2, dict(img_size=64, embed_dim=24, depths=[2, 2], num_heads=[2, 4], window_size=8, num_classes=10), 64),
    ("SwinMLP w7", sm, sm.SwinMLP, dict(img_size=56, embed_dim=24, depths=[2, 2], num_heads=[2, 4], window_size=7, num_classes=10), 56)]:
    torch.manual_seed(0)
    m = ctor(**kw).eval()
    orig = mod.window_reverse
    for variant in ("original", "integer B"):
        mod.window_reverse = orig if variant == "original" else window_reverse_int
        x = imagenet_images(2, res, res)["x"]
        try:
            ep = torch.export.export(m, (x,), dynamic_shapes={"x": {0: Dim("batch", min=2, max=64)}})
            outs = []
            for b in (2, 3, 7, 64):
                xx = imagenet_images(b, res, res)["x"]
                with torch.no_grad():
                    mod.window_reverse = orig
                    ref = m(xx)
                outs.append(f"b={b}: equal={torch.equal(ep.module()(xx), ref)}")
            print(f"{label} [{variant}]: export ok with batch Dim(2..64); " + ", ".join(outs))
        except Exception as e:
            print(f"{label} [{variant}]: {type(e).__name__}: {str(e).splitlines()[0][:200]} / {str(e).splitlines()[1][:200]}")
    mod.window_reverse = orig
