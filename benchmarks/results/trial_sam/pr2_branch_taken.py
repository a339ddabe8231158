"""Which of suggestion_check.py's inputs and weights take PR 2's clamp branch (masks.abs().max() > 1e4):
main's MaskDecoder returns the logits before PR 2's lines. Run from the checkout on main."""
import sys
import torch
sys.path.insert(0, '.')
torch.set_num_threads(1)
import pt2bot_models as pm
torch.manual_seed(0)
m = pm.PromptAndMaskDecoder().eval()
sd = {k: v.clone() for k, v in m.state_dict().items()}
for wk, f in (('built', 1.0), ('hyper_x1e5', 1e5)):
    s2 = {k: (v * f if 'output_hypernetworks_mlps' in k and 'layers.2' in k else v) for k, v in sd.items()}
    m.load_state_dict(s2)
    for b, p in ((1, 1), (3, 4), (2, 7)):
        a = pm.prompt_inputs(b, p)
        with torch.no_grad():
            masks, _ = m(**a)
            a2 = dict(a); a2['mask_input'] = a['mask_input'].clone(); a2['mask_input'][0, 0, 3, 5] = float('nan')
            masks2, _ = m(**a2)
        mx2 = masks2.abs().max()
        print(f'weights={wk} shape={(b, p)}: max|logit|={masks.abs().max().item():.3g} branch taken: {bool(masks.abs().max() > 1e4)}; '
              f'with NaN in prompt 0 mask: max={mx2.item()}, prompts 1.. max={masks2[1:].abs().max().item() if b > 1 else None}')
