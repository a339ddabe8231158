"""PR 3 with the hand-written torch.where fix: graph breaks (dynamo's own log) and torch.export
with batch and points dynamic (no pt2bot code). Run from the segment-anything checkout on branch
early-exit-low-iou: TORCH_LOGS=graph_breaks python pr3_hand_fix_compile_check.py"""
import re, sys
import torch
sys.path.insert(0, ".")
torch.set_num_threads(1)
p = 'segment_anything/modeling/mask_decoder.py'
src = open(p).read()
fixed = src.replace("""        if (iou_pred < 0.05).all():
            return torch.full_like(masks, -1e4), iou_pred
""", """        masks = torch.where((iou_pred < 0.05).all(), torch.full_like(masks, -1e4), masks)
""")
assert fixed != src
import segment_anything.modeling.mask_decoder as md
exec(compile(fixed, md.__file__, 'exec'), md.__dict__)   # MaskDecoder with the fix
sys.path.insert(0, '.')
import pt2bot_models as pm
pm.MaskDecoder = md.MaskDecoder
from torch.export import Dim
for kw in ({}, {'use_boxes': False, 'use_mask': False, 'multimask_output': False}):
    torch._dynamo.reset()
    m = pm.PromptAndMaskDecoder(**kw).eval()
    c = torch.compile(m, backend='eager')
    with torch.no_grad():
        for b, n in ((2, 2), (3, 4)):
            a = pm.prompt_inputs(b, n)
            assert all(torch.equal(x, y) for x, y in zip(c(**a), m(**a)))
    a = pm.prompt_inputs(2, 2)
    B, N = Dim('batch'), Dim('points')
    ds = {'image_embeddings': None, 'point_coords': {0: B, 1: N}, 'point_labels': {0: B, 1: N},
          'boxes': {0: B}, 'mask_input': {0: B}}
    try:
        ep = torch.export.export(m, (), a, dynamic_shapes=ds)
        a3 = pm.prompt_inputs(3, 4)
        ok = all(torch.equal(x, y) for x, y in zip(ep.module()(**a3), m(**a3)))
        print(kw, 'export ok; exported program equal on batch 3, points 4:', ok)
    except Exception as e:
        print(kw, 'export fails:', type(e).__name__, str(e).splitlines()[0][:200])
print('stats', dict(torch._dynamo.utils.counters['stats']))
