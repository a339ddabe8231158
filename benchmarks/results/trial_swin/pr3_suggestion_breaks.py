"""No pt2bot code. PR 3's suggestion applied (cwd = the patched copy): breaks and recompiles under
torch.compile(backend="eager") with batch marked dynamic, then torch.export with batch Dim and
batch static; and whether _assert_async is what raises in compiled code."""
import sys, torch
torch.set_num_threads(1)
sys.path.insert(0, ".")
from models.swin_transformer import SwinTransformer
from pt2bot_models import imagenet_images
from torch.export import Dim
torch.manual_seed(0)
m = SwinTransformer(img_size=56, patch_size=4, in_chans=3, num_classes=10, embed_dim=24, depths=[2, 2],
                    num_heads=[2, 4], window_size=7, drop_path_rate=0.0).eval()
cm = torch.compile(m, backend="eager")
with torch.no_grad():
    for b in (2, 3, 5):
        x = imagenet_images(b, 56, 56)["x"]; torch._dynamo.mark_dynamic(x, 0)
        print(b, torch.equal(cm(x), m(x)))
    x = imagenet_images(3, 56, 56)["x"]; x[1, 0, 3, 3] = float("nan")
    try:
        cm(x)
    except Exception as e:
        import traceback; tb = traceback.extract_tb(e.__traceback__)
        print("NaN input, compiled:", type(e).__name__, str(e)[:100], "| raised from", tb[-1].filename.split('/')[-1], tb[-1].lineno, tb[-1].line)
x = imagenet_images(2, 56, 56)["x"]
for label, spec in [("batch Dim", {"x": {0: Dim("batch", min=2, max=64)}}), ("static", None)]:
    try:
        ep = torch.export.export(m, (x,), dynamic_shapes=spec)
        print("export", label, "ok;", "aten._assert_async" in str(ep.graph))
    except Exception as e:
        print("export", label, type(e).__name__, str(e).splitlines()[0][:150])
