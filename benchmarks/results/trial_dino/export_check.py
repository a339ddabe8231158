"""Export the tiny ViT with dynamic batch/height/width; where are the guards made? (no pt2bot code)"""
import sys, torch
torch.set_num_threads(1)
sys.path.insert(0, '.')
import vision_transformer as vits
from torch.export import Dim
torch.manual_seed(0)
m = vits.VisionTransformer(img_size=[32], patch_size=8, embed_dim=32, depth=2, num_heads=2).eval()
x = torch.randn(2, 3, 16, 16)
specs = {
  'batch,height,width (min 16)': {'x': {0: Dim('batch'), 2: Dim('height', min=16), 3: Dim('width', min=16)}},
  "pt2bot's advice (min 8)": {'x': {0: Dim('batch'), 2: Dim('height', min=8), 3: Dim('width', min=8)}},
  'batch only': {'x': {0: Dim('batch')}},
}
for name, ds in specs.items():
    try:
        ep = torch.export.export(m, (), {'x': x}, dynamic_shapes=ds)
        print(name, '-> exports', flush=True)
        for b, h, w in [(2, 16, 16), (4, 16, 16), (3, 16, 16)]:
            xx = torch.randn(b, 3, h, w)
            print('   ', (b, h, w), torch.allclose(ep.module()(x=xx), m(xx), atol=1e-6))
    except Exception as e:
        print(name, '-> fails:', type(e).__name__, str(e).splitlines()[0][:200])
        print('   ', '\n    '.join(l for l in str(e).splitlines()[1:8]))
