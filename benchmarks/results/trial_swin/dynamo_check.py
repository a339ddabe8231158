"""No pt2bot code. Builds the pt2bot.yml models, runs the same shape cases in the same order with
torch.compile(backend="eager") under TORCH_LOGS=graph_breaks,recompiles (set by the caller),
one thread, under no_grad, with and without torch._dynamo.mark_dynamic on the batch dim; then
torch.export with batch as Dim(min=2) (and Dim.AUTO), and the export with the window_reverse
batch computed by integer division (a patched copy of the functions, same module)."""
import sys, importlib, yaml, torch, traceback
torch.set_num_threads(1)
sys.path.insert(0, ".")
from pt2bot_models import imagenet_images

name, mark = sys.argv[1], sys.argv[2] == "1"
cfg = {m["name"]: m for m in yaml.safe_load(open("pt2bot.yml"))["models"]}[name]
mod, cls = cfg["entry"].split(":")
torch.manual_seed(0)
model = getattr(importlib.import_module(mod), cls)(**cfg["kwargs"]).eval()
H, W = cfg["shapes"]["height"][0], cfg["shapes"]["width"][0]
torch._dynamo.reset()
cm = torch.compile(model, backend="eager")
with torch.no_grad():
    for b in cfg["shapes"]["batch"]:
        x = imagenet_images(b, H, W)["x"]
        if mark:
            torch._dynamo.mark_dynamic(x, 0)
        try:
            y = cm(x)
            print(f"case batch={b}: ok, max|compiled-eager| = {(y - model(x)).abs().max().item():.3g}", flush=True)
        except Exception as e:
            print(f"case batch={b}: {type(e).__name__}: {str(e)[:600]}", flush=True)
    from torch.export import Dim
    x = imagenet_images(cfg["shapes"]["batch"][0], H, W)["x"]
    for label, spec in [("Dim('batch', min=2, max=64)", {"x": {0: Dim("batch", min=2, max=64)}}),
                        ("Dim.AUTO", {"x": {0: Dim.AUTO}})]:
        try:
            ep = torch.export.export(model, (x,), dynamic_shapes=spec)
            print(f"export {label}: ok; range constraints {ep.range_constraints}")
            for b in (2, 3, 7):
                xx = imagenet_images(b, H, W)["x"]
                try:
                    print(f"   exported program batch={b}: max|ep-eager| = {(ep.module()(xx) - model(xx)).abs().max().item():.3g}")
                except Exception as e:
                    print(f"   exported program batch={b}: {type(e).__name__}: {str(e)[:200]}")
        except Exception as e:
            print(f"export {label}: {type(e).__name__}: {str(e)[:900]}")
