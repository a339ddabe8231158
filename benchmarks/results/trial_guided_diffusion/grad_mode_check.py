"""Does the always-on CheckpointFunction in AttentionBlock (nn.checkpoint(..., True), unet.py:297)
break the graph when the model is compiled with autograd on (a training step), where pt2bot's
default smoke run (no_grad) sees one graph? No pt2bot code; eager backend, one thread."""
import sys, torch
torch.set_num_threads(1)
sys.path.insert(0, ".")
from guided_diffusion.unet import UNetModel
torch.manual_seed(0)
m = UNetModel(image_size=32, in_channels=3, model_channels=32, out_channels=6, num_res_blocks=1,
              attention_resolutions=[2], channel_mult=[1, 2, 2], num_classes=10, num_head_channels=16)
for mode in ("no_grad", "grad"):
    torch._dynamo.reset()
    ex = torch._dynamo.explain  # not used for the verdict; counts come from TORCH_LOGS below
    c = torch.compile(m, backend="eager")
    x = torch.randn(2, 3, 16, 16); t = torch.randint(0, 1000, (2,)); y = torch.randint(0, 10, (2,))
    print(f"--- {mode}", flush=True)
    if mode == "no_grad":
        with torch.no_grad():
            out = c(x, t, y)
    else:
        out = c(x, t, y)
        out.float().pow(2).mean().backward()
    print(f"{mode}: ran, out {tuple(out.shape)}", flush=True)
