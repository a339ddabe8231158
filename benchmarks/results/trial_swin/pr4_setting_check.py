"""No pt2bot code. PR 4 (log-logit-scale) head: what the PR's attribute self.last_logit_scale holds
after a call, eager vs torch.compile(backend="eager") with and without
torch._dynamo.config.capture_scalar_outputs = True (pt2bot's "Verified setting"); breaks and
recompiles are in the TORCH_LOGS output around each section."""
import sys, torch
torch.set_num_threads(1)
sys.path.insert(0, ".")
import models.swin_transformer_v2 as st2
from pt2bot_models import imagenet_images

def build():
    torch.manual_seed(0)
    m = st2.SwinTransformerV2(img_size=64, patch_size=4, in_chans=3, num_classes=10, embed_dim=24,
                              depths=[2, 2], num_heads=[2, 4], window_size=8, drop_path_rate=0.0).eval()
    # different logit scales per layer so that the values differ; one above the clamp (log 100)
    with torch.no_grad():
        for i, layer in enumerate(m.layers):
            for j, blk in enumerate(layer.blocks):
                blk.attn.logit_scale.fill_(1.0 + i + 0.5 * j)
        m.layers[1].blocks[1].attn.logit_scale[0] = 6.0
    return m

def scales(m):
    return [(type(b.attn.last_logit_scale).__name__, b.attn.last_logit_scale) for l in m.layers for b in l.blocks]

for setting in (False, True):
    torch._dynamo.reset()
    torch._dynamo.config.capture_scalar_outputs = setting
    m = build()
    ref = build()
    cm = torch.compile(m, backend="eager")
    print(f"\n=== capture_scalar_outputs = {setting}", flush=True)
    for b in (2, 3, 5):
        x = imagenet_images(b, 64, 64)["x"]
        with torch.no_grad():
            y, r = cm(x), ref(x)
        print(f"batch {b}: outputs equal: {torch.equal(y, r)}", flush=True)
        print(f"   eager    last_logit_scale: {scales(ref)}")
        print(f"   compiled last_logit_scale: {scales(m)}", flush=True)
        print(f"   equal: {scales(ref) == scales(m)}")
