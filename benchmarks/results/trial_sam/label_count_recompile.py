"""points_only_decoder: does dynamo recompile when only the prompt's label values change
(same shapes)? No pt2bot code. TORCH_LOGS=recompiles python label_count_recompile.py"""
import sys
import torch
sys.path.insert(0, '.')
torch.set_num_threads(1)
import pt2bot_models as pm
m = pm.PromptAndMaskDecoder(use_boxes=False, use_mask=False, multimask_output=False).eval()
c = torch.compile(m, backend='eager')
a = pm.prompt_inputs(3, 4)
with torch.no_grad():
    for labels in ([[1, 1, 1, -1]] * 3, [[0, 1, 1, -1]] * 3, [[0, 0, 1, -1]] * 3, [[0, 0, 0, -1]] * 3):
        a['point_labels'] = torch.tensor(labels)
        print('labels', labels[0], 'label-0 points', int((a['point_labels'] == 0).sum()), flush=True)
        assert all(torch.equal(x, y) for x, y in zip(c(**a), m(**a)))
print('stats', dict(torch._dynamo.utils.counters['stats']))
