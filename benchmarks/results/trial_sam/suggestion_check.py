"""Check a posted ```suggestion of a pt2bot review against head, with no pt2bot code.

python suggestion_check.py BRANCH FILE REVIEW_JSON   (from the segment-anything checkout)

Copies head's `segment_anything/` package twice (as packages sa_head and sa_sugg), applies each
suggestion block of REVIEW_JSON (on FILE) to sa_sugg's copy, builds the prompt encoder + mask
decoder pipeline of pt2bot_models.PromptAndMaskDecoder from each package with the same weights and
compares outputs and gradients exactly (NaN where NaN) over shapes, input kinds and weight sets,
eager and torch.compile(backend="eager"). Head is run twice: a difference counts as one where head
is reproducible only when head's two runs agree."""
import copy, json, os, re, shutil, subprocess, sys, tempfile, importlib
import torch
torch.set_num_threads(1)
import torch._dynamo
torch._dynamo.config.cache_size_limit = 256
torch._dynamo.config.accumulated_cache_size_limit = 4096

branch, relfile, review = sys.argv[1:4]
tmp = tempfile.mkdtemp(prefix='sugg_')
files = subprocess.run(['git', 'ls-tree', '-r', '--name-only', branch, 'segment_anything'],
                       capture_output=True, text=True, check=True).stdout.split()
for pkg in ('sa_head', 'sa_sugg'):
    for f in files:
        dst = os.path.join(tmp, pkg, f[len('segment_anything/'):])
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        with open(dst, 'wb') as fh:
            src = subprocess.run(['git', 'show', f'{branch}:{f}'], capture_output=True, check=True).stdout
            fh.write(src.replace(b'from segment_anything', b'from ' + pkg.encode()))

comments = json.load(open(review))['comments']
target = os.path.join(tmp, 'sa_sugg', relfile[len('segment_anything/'):])
lines = open(target).read().split('\n')
applied = 0
for c in sorted(comments, key=lambda c: -c['line']):
    m = re.search(r'```suggestion\n(.*?)```', c['body'], re.S)
    if not m or c['path'] != relfile:
        continue
    start = c.get('start_line') or c['line']
    new = m.group(1).rstrip('\n').split('\n')
    print(f'applying suggestion on {relfile}:{start}-{c["line"]}:')
    print('  - ' + '\n  - '.join(lines[start - 1:c['line']]))
    print('  + ' + '\n  + '.join(new))
    lines[start - 1:c['line']] = new
    applied += 1
open(target, 'w').write('\n'.join(lines))
assert applied, 'no suggestion block'
sys.path.insert(0, tmp)
H = importlib.import_module('sa_head.modeling')
S = importlib.import_module('sa_sugg.modeling')

EMBED, EMB_HW, IMG = 32, 8, 128


class Pipe(torch.nn.Module):
    def __init__(self, M, use_boxes, use_mask, multimask):
        super().__init__()
        self.use_boxes, self.use_mask, self.multimask = use_boxes, use_mask, multimask
        self.pe = M.PromptEncoder(embed_dim=EMBED, image_embedding_size=(EMB_HW, EMB_HW),
                                  input_image_size=(IMG, IMG), mask_in_chans=8)
        self.md = M.MaskDecoder(transformer_dim=EMBED, transformer=M.TwoWayTransformer(
            depth=2, embedding_dim=EMBED, num_heads=2, mlp_dim=64),
            num_multimask_outputs=3, iou_head_depth=2, iou_head_hidden_dim=32)

    def forward(self, emb, coords, labels, boxes, mask):
        sp, de = self.pe(points=(coords, labels), boxes=boxes if self.use_boxes else None,
                         masks=mask if self.use_mask else None)
        return self.md(emb, self.pe.get_dense_pe(), sp, de, self.multimask)


def inputs(b, p, kind, seed):
    g = torch.Generator().manual_seed(seed)
    coords = torch.rand(b, p, 2, generator=g) * (IMG - 1)
    labels = torch.randint(0, 2, (b, p), generator=g)
    if p > 1:
        labels[:, -1] = -1
    xy0 = torch.rand(b, 2, generator=g) * (IMG / 2)
    boxes = torch.cat([xy0, xy0 + IMG / 4 + torch.rand(b, 2, generator=g) * (IMG / 4)], 1)
    mask = torch.randn(b, 1, 4 * EMB_HW, 4 * EMB_HW, generator=g) * 5
    emb = torch.randn(1, EMBED, EMB_HW, EMB_HW, generator=g)
    if kind == 'zeros':
        emb, mask = emb * 0, mask * 0
    elif kind == 'negative':
        emb, mask = -emb.abs(), -mask.abs()
    elif kind == 'tiny':
        emb, mask = emb * 1e-30, mask * 1e-30
    elif kind == 'huge':
        emb, mask = emb * 1e30, mask * 1e30
    elif kind == 'emb_x1e3':
        emb = emb * 1e3
    elif kind in ('mask_nan_p0', 'mask_inf_p0', 'mask_ninf_p0'):
        mask[0, 0, 3, 5] = {'mask_nan_p0': float('nan'), 'mask_inf_p0': float('inf'),
                            'mask_ninf_p0': float('-inf')}[kind]
    elif kind == 'emb_nan':
        emb[0, 0, 2, 2] = float('nan')
    elif kind == 'emb_inf':
        emb[0, 0, 2, 2] = float('inf')
    elif kind == 'coords_neg_huge':
        coords = -coords * 1e6
    return [emb, coords, labels, boxes, mask]


def weights(base_sd, wkind):
    sd = copy.deepcopy(base_sd)
    if wkind == 'zero':
        sd = {k: torch.zeros_like(v) for k, v in sd.items()}
    elif wkind.startswith('hyper_x'):
        f = float(wkind[len('hyper_x'):])
        for k in sd:
            if 'output_hypernetworks_mlps' in k and 'layers.2' in k:
                sd[k] = sd[k] * f
    elif wkind.startswith('iou_bias'):
        f = float(wkind[len('iou_bias'):])
        for k in sd:
            if k.endswith('iou_prediction_head.layers.1.bias'):
                sd[k] = torch.full_like(sd[k], f)
            elif k.endswith('iou_prediction_head.layers.1.weight'):
                sd[k] = sd[k] * 0
    return sd


NONE_AS_ZERO = os.environ.get('NONE_AS_ZERO') == '1'   # a parameter gradient None equals one of zeros


def same(a, b):
    if NONE_AS_ZERO and (a is None) != (b is None):
        t = a if a is not None else b
        return bool((t == 0).all())
    if a is None or b is None:
        return a is None and b is None
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return bool(((a == b) | (torch.isnan(a) & torch.isnan(b))).all())


def run(model, args, compiled, grad):
    args = [a.clone() for a in args]
    if grad:
        args[0].requires_grad_(True)
        args[4].requires_grad_(True)
    fn = torch.compile(model, backend='eager') if compiled else model
    with torch.set_grad_enabled(grad):
        masks, iou = fn(*args)
        res = [masks.detach(), iou.detach()]
        if grad:
            (masks.sum() + iou.sum()).backward()
            res += [args[0].grad, args[4].grad] + [p.grad.clone() if p.grad is not None else None
                                                  for p in model.parameters()]
            model.zero_grad(set_to_none=True)
    return res


shapes = [(1, 1), (3, 4), (2, 7)]
kinds = ['random', 'zeros', 'negative', 'tiny', 'huge', 'emb_x1e3', 'mask_nan_p0', 'mask_inf_p0',
         'mask_ninf_p0', 'emb_nan', 'emb_inf', 'coords_neg_huge']
wkinds = ['built', 'zero', 'hyper_x1e5', 'iou_bias-1', 'iou_bias0.06']
variants = [(True, True, True), (False, False, False)]
total = diff = diff_repro = 0
examples = []
for var in variants:
    torch._dynamo.reset()
    torch.manual_seed(0)
    h = Pipe(H, *var).eval()
    s = Pipe(S, *var).eval()
    base_sd = copy.deepcopy(h.state_dict())
    taken = []
    for wk in wkinds:
        print(f'progress: variant={var} weights={wk} results so far {total}, differing {diff}', flush=True)
        sd = weights(base_sd, wk)   # always from the built weights
        h.load_state_dict(sd)
        s.load_state_dict(sd)
        with torch.no_grad():
            mx = [h(*inputs(b, p, 'random', 1000 * b + p)) for (b, p) in shapes]
        print(f'  head on random inputs: max|mask logit| {max(m.abs().max().item() for m, _ in mx):.3g}, '
              f'max iou_pred {max(i.max().item() for _, i in mx):.3g}', flush=True)
        for (b, p) in shapes:
            for k in kinds:
                args = inputs(b, p, k, 1000 * b + p)
                for compiled in (False, True):
                    for grad in (False, True):
                        rh = run(h, args, compiled, grad)
                        rh2 = run(h, args, compiled, grad)
                        rs = run(s, args, compiled, grad)
                        total += 1
                        eq = all(same(x, y) for x, y in zip(rh, rs))
                        if not eq:
                            diff += 1
                            repro = all(same(x, y) for x, y in zip(rh, rh2))
                            diff_repro += repro
                            which = [i for i, (x, y) in enumerate(zip(rh, rs)) if not same(x, y)]
                            if len(examples) < 40:
                                d = (rh[0] - rs[0]).abs()
                                examples.append(f'variant={var} weights={wk} shape={(b, p)} input={k} '
                                                f'compiled={compiled} grad={grad} head_repro={repro} '
                                                f'differing results (0 masks, 1 iou, 2 d emb, 3 d mask, 4+ params)={which[:6]} '
                                                f'max|dmasks|={d[~torch.isnan(d)].max().item() if (~torch.isnan(d)).any() else "nan"}')
print('\n'.join(examples))
print(f'RESULT: {total - diff} of {total} equal; {diff} differ, {diff_repro} of them where head is reproducible')
