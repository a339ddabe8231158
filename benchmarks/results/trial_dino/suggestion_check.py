"""Independent re-run of pt2bot's verified suggestions on dino (no pt2bot code).

For each review.json given: take head's file from the PR branch, apply the ```suggestion
block to a copy (the comment's start_line..line replaced by the block), import both copies
as separate modules, build the same tiny models with the same weights, and compare head with
the suggestion exactly (bitwise, NaN where NaN) on many inputs: several shapes; random,
zeros, negative, tiny, huge values; NaN / inf / -inf in one pixel of one image; and weight
sets that make attention logits overflow 1e4 (the case the PR's comment is about); eager and
torch.compile(backend="eager"); outputs and gradients (input and parameters).

usage (from the dino checkout, one thread):
  python suggestion_check.py BRANCH FILE REVIEW_JSON
"""
import copy, importlib.util, json, os, re, subprocess, sys, tempfile, traceback
import torch

torch.set_num_threads(1)
branch, relfile, review = sys.argv[1], sys.argv[2], sys.argv[3]
dino = os.getcwd()
sys.path.insert(0, dino)  # for `utils`
import utils  # noqa: E402  (dino's utils: trunc_normal_, MultiCropWrapper)

head_src = subprocess.run(['git', 'show', f'{branch}:{relfile}'], capture_output=True, text=True,
                          check=True).stdout
comments = [c for c in json.load(open(review))['comments'] if '```suggestion' in c['body']]
assert comments, 'no suggestion in ' + review
tmp = tempfile.mkdtemp(prefix='sugg_')
mods = {}


def load(name, src):
    p = os.path.join(tmp, name + '.py')
    open(p, 'w').write(src)
    spec = importlib.util.spec_from_file_location(name, p)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def apply(src, c):
    block = re.search(r'```suggestion\n(.*?)```', c['body'], re.S).group(1)
    lines = src.splitlines(keepends=True)
    start = c.get('start_line') or c['line']
    return ''.join(lines[:start - 1]) + block + ''.join(lines[c['line']:])


mods['head'] = load('vt_head', head_src)
for i, c in enumerate(comments):
    s = apply(head_src, c)
    print(f'suggestion {i}: lines {c.get("start_line") or c["line"]}-{c["line"]} of {relfile} ->')
    print(re.search(r'```suggestion\n(.*?)```', c['body'], re.S).group(1))
    mods[f'sugg{i}'] = load(f'vt_sugg{i}', s)


def build(mod, weights):
    torch.manual_seed(0)
    m = mod.VisionTransformer(img_size=[32], patch_size=8, embed_dim=32, depth=2, num_heads=2).eval()
    with torch.no_grad():
        if weights == 'big_logits':      # attention logits of order 1e5..1e6 (fp16-like overflow)
            for b in m.blocks:
                b.norm1.weight.fill_(3e3)
        elif weights == 'big_logits_block1':   # only the second block overflows
            m.blocks[1].norm1.weight.fill_(3e3)
        elif weights == 'zeros':
            for p in m.parameters():
                p.zero_()
        elif weights == 'inf_pos':       # an inf in the position table
            m.pos_embed[0, 3, 0] = float('inf')
        elif weights == 'nan_pos':
            m.pos_embed[0, 3, 0] = float('nan')
    return m


def make_input(kind, shape, g):
    b, c, h, w = shape
    x = torch.randn(shape, generator=g)
    if kind == 'zeros': x = torch.zeros(shape)
    elif kind == 'negative': x = -x.abs() - 1
    elif kind == 'tiny': x = x * 1e-30
    elif kind == 'huge': x = x * 1e30
    elif kind == 'nan_img0': x[0, 0, 0, 0] = float('nan')
    elif kind == 'inf_img0': x[0, 0, 0, 0] = float('inf')
    elif kind == 'neginf_img0': x[0, 0, 0, 0] = float('-inf')
    elif kind == 'nan_img0_huge_img1':
        x[0, 0, 0, 0] = float('nan'); x[1:] *= 1e6
    return x


def same(a, b):
    if isinstance(a, Exception) or isinstance(b, Exception):
        return type(a) is type(b)
    if a is None or b is None:
        return a is b
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    na, nb = torch.isnan(a), torch.isnan(b)
    return bool(torch.equal(na, nb) and torch.equal(a[~na], b[~nb]))


def run(model, fn, x, grad):
    try:
        if not grad:
            with torch.no_grad():
                return (fn(x),)
        model.zero_grad(set_to_none=True)
        xx = x.clone().requires_grad_(True)
        out = fn(xx)
        out.float().sum().backward()
        return (out.detach(), xx.grad) + tuple(p.grad for p in model.parameters())
    except Exception as e:  # noqa: BLE001
        return (e,)


shapes = [(2, 3, 32, 32), (2, 3, 16, 16), (4, 3, 16, 32), (3, 3, 24, 24)]
kinds = ['randn', 'zeros', 'negative', 'tiny', 'huge', 'nan_img0', 'inf_img0', 'neginf_img0',
         'nan_img0_huge_img1']
weight_sets = ['init', 'big_logits', 'big_logits_block1', 'zeros', 'inf_pos', 'nan_pos']
total = diff = 0
head_unrepro = 0
for ws in weight_sets:
    models = {k: build(m, ws) for k, m in mods.items()}
    for k in models:   # identical weights (built from the same seed; copied to be sure)
        models[k].load_state_dict(models['head'].state_dict())
    compiled = {k: torch.compile(m, backend='eager') for k, m in models.items()}
    for shape in shapes:
        for kind in kinds:
            g = torch.Generator().manual_seed(1)
            x = make_input(kind, shape, g)
            for mode in ('eager', 'compiled'):
                for grad in (False, True):
                    fns = models if mode == 'eager' else compiled
                    h = run(models['head'], fns['head'], x, grad)
                    h2 = run(models['head'], fns['head'], x, grad)
                    repro = all(same(a, b) for a, b in zip(h, h2))
                    if not repro:
                        head_unrepro += 1
                    for k in mods:
                        if k == 'head':
                            continue
                        s = run(models[k], fns[k], x, grad)
                        total += 1
                        ok = len(s) == len(h) and all(same(a, b) for a, b in zip(h, s))
                        if not ok:
                            diff += 1
                            ho, so = h[0], s[0]
                            detail = ''
                            if isinstance(ho, torch.Tensor) and isinstance(so, torch.Tensor):
                                fin = torch.isfinite(ho) & torch.isfinite(so)
                                d = (ho - so).abs()[fin]
                                rows = [i for i in range(ho.shape[0]) if not same(ho[i], so[i])]
                                detail = (f'output rows differing {rows}; max |diff| on finite '
                                          f'{d.max().item() if d.numel() else 0:.3g}; head finite '
                                          f'{bool(torch.isfinite(ho).all())}')
                            else:
                                detail = f'head {ho!r:.80} / sugg {so!r:.80}'
                            print(f'DIFF {k} weights={ws} shape={shape} input={kind} {mode} '
                                  f'grad={grad} head_reproducible={repro}: {detail}', flush=True)
print(f'\n{total - diff} of {total} results equal, {diff} differ; head not reproducible on '
      f'{head_unrepro} (result sets where head twice differed)')
