"""Check pt2bot run's breaks and recompiles against dynamo itself (no pt2bot code).
Run from the segment-anything checkout:
  TORCH_LOGS=graph_breaks,recompiles python dynamo_check.py MODEL [--mark]"""
import sys
import torch
torch.set_num_threads(1)
sys.path.insert(0, '.')
import pt2bot_models as pm
from segment_anything.modeling import ImageEncoderViT

which = sys.argv[1]
mark = '--mark' in sys.argv
torch.manual_seed(0)


def run(m, cases):
    c = torch.compile(m, backend='eager')
    with torch.no_grad():
        for name, kw, dims in cases:
            if mark:
                for t, ds in dims:
                    for d in ds:
                        torch._dynamo.mark_dynamic(kw[t], d)
            print('case', name, flush=True)
            out = c(**kw)
            ref = m(**kw)
            out = out if isinstance(out, tuple) else (out,)
            ref = ref if isinstance(ref, tuple) else (ref,)
            assert all(torch.equal(a, b) for a, b in zip(out, ref))


if which in ('vit_relpos_64', 'vit_abs_128'):
    size = 64 if which == 'vit_relpos_64' else 128
    m = ImageEncoderViT(img_size=size, patch_size=16, embed_dim=32 if size == 64 else 64, depth=2,
                        num_heads=2, out_chans=32, window_size=3, global_attn_indexes=[1],
                        use_rel_pos=size == 64).eval()
    run(m, [(f'b={b}', {'x': torch.randn(b, 3, size, size)}, [('x', (0,))]) for b in (1, 2)])
elif which in ('prompt_mask_decoder', 'points_only_decoder'):
    full = which == 'prompt_mask_decoder'
    m = pm.PromptAndMaskDecoder(use_boxes=full, use_mask=full, multimask_output=full).eval()
    cases = []
    for b in (1, 3):
        for p in (1, 4):
            kw = pm.prompt_inputs(b, p)
            cases.append((f'b={b} p={p}', kw, [('point_coords', (0, 1)), ('point_labels', (0, 1)),
                                               ('boxes', (0,)), ('mask_input', (0,))]))
    run(m, cases)
elif which == 'resize_longest_side':
    m = pm.ResizeTorch(64).eval()
    cases = []
    for b in (1, 2):
        for h in (48, 80):
            for w in (64, 100):
                cases.append((f'b={b} h={h} w={w}', {'image': torch.rand(b, 3, h, w), 'coords': torch.rand(b, 2, 2) * 40},
                              [('image', (0, 2, 3)), ('coords', (0,))]))
    run(m, cases)
print('done', dict(torch._dynamo.utils.counters['stats']))
