"""Check pt2bot run's breaks and recompiles against dynamo itself (no pt2bot code).
Run from the dino checkout: TORCH_LOGS=graph_breaks,recompiles python dynamo_check.py MODEL"""
import sys
import torch
torch.set_num_threads(1)
sys.path.insert(0, '.')
import vision_transformer as vits
import pt2bot_models

which = sys.argv[1]
torch.manual_seed(0)
if which == 'vit':
    m = vits.VisionTransformer(img_size=[32], patch_size=8, embed_dim=32, depth=2, num_heads=2).eval()
    c = torch.compile(m, backend='eager')
    mark = '--mark' in sys.argv
    with torch.no_grad():
        for b in (2, 4):
            for h in (16, 32):
                for w in (16, 32):
                    x = torch.randn(b, 3, h, w)
                    if mark:
                        for d in (0, 2, 3):
                            torch._dynamo.mark_dynamic(x, d)
                    print(f'case b={b} h={h} w={w}', flush=True)
                    out = c(x)
                    assert torch.equal(out, m(x))
elif which == 'multicrop':
    m = pt2bot_models.tiny_multicrop().eval()
    c = torch.compile(m, backend='eager')
    with torch.no_grad():
        for b in (2, 4):
            x = pt2bot_models.multicrop_inputs(b, 32, 16)['x']
            print(f'case b={b}', flush=True)
            out = c(x)
            assert torch.equal(out, m(x))
print('done', torch._dynamo.utils.counters['stats'])
