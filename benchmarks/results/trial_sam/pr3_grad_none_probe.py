"""Which parameter gradients differ between PR 3's head and the hand-written torch.where fix, under
the weights that force every IoU to 0.06 (the exit NOT taken)? Reuses suggestion_check.py's
functions. python pr3_grad_none_probe.py (from the checkout)"""
import sys, runpy
sys.argv = ['x', 'early-exit-low-iou', 'segment_anything/modeling/mask_decoder.py',
            '/tmp/fh-sam/out/pr3_hand_fix_review.json']
src = open('/tmp/fh-sam/out/suggestion_check.py').read().split('shapes = [')[0]
g = {}
exec(compile(src, 'suggestion_check_head', 'exec'), g)
import torch
for wk in ('iou_bias0.06', 'iou_bias-1'):
    torch.manual_seed(0)
    h = g['Pipe'](g['H'], True, True, True).eval(); s = g['Pipe'](g['S'], True, True, True).eval()
    sd = g['weights'](h.state_dict(), wk); h.load_state_dict(sd); s.load_state_dict(sd)
    args = g['inputs'](3, 4, 'random', 3004)
    rh = g['run'](h, args, False, True); rs = g['run'](s, args, False, True)
    with torch.no_grad():
        print(wk, 'iou_pred', h(*args)[1][0].tolist())
    names = ['masks', 'iou', 'd emb', 'd mask'] + [n for n, _ in h.named_parameters()]
    for n, a, b in zip(names, rh, rs):
        if not g['same'](a, b):
            print('  differs:', n, 'head', None if a is None else f'tensor max|.|={a.abs().max().item():.3g}',
                  '| fix', None if b is None else f'tensor max|.|={b.abs().max().item():.3g}')
