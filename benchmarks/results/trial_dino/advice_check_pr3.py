"""PR3's shape advice (height, width = 8*Dim, min 1): does the exported program run the matrix? (no pt2bot code)
Run on the check-image-size branch."""
import sys, torch
torch.set_num_threads(1)
sys.path.insert(0, '.')
import vision_transformer as vits
from torch.export import Dim
torch.manual_seed(0)
m = vits.VisionTransformer(img_size=[32], patch_size=8, embed_dim=32, depth=2, num_heads=2).eval()
batch = Dim('batch'); _h = Dim('_height', min=1); _w = Dim('_width', min=1)
ds = {'x': {0: batch, 2: 8 * _h, 3: 8 * _w}}
for ex in [(2, 3, 16, 16), (2, 3, 16, 32)]:
    x = torch.randn(ex)
    try:
        ep = torch.export.export(m, (), {'x': x}, dynamic_shapes=ds)
    except Exception as e:
        print('example', ex, 'export fails:', type(e).__name__, str(e).splitlines()[0]); continue
    print('example', ex, 'exports')
    for b in (2, 4):
        for h in (16, 32):
            for w in (16, 32):
                xx = torch.randn(b, 3, h, w)
                try:
                    ok = torch.allclose(ep.module()(x=xx), m(xx), atol=1e-6)
                    print('   ', (b, h, w), 'runs, equal to eager:', ok)
                except Exception as e:
                    print('   ', (b, h, w), 'fails:', type(e).__name__, str(e).splitlines()[0][:120])
