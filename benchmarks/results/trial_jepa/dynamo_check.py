"""Check pt2bot's breaks/recompiles/export against dynamo itself. No pt2bot code.
usage: TORCH_LOGS=graph_breaks,recompiles python dynamo_check.py MODEL MARK(0|1|2) [EXPORT]
(0: no marks, 1: mark_dynamic, 2: maybe_mark_dynamic)
Runs in the jepa checkout (cwd). Eager backend, one thread, the same cases in the same order
as pt2bot.yml; MARK=1 marks the declared dynamic dims with torch._dynamo.mark_dynamic."""
import sys, itertools, re, torch, yaml, importlib
torch.set_num_threads(1)
sys.path.insert(0, '.')
cfg = yaml.safe_load(open('pt2bot.yml'))
name, mode = sys.argv[1], sys.argv[2]
mark = mode in ('1', '2')  # 1: mark_dynamic, 2: maybe_mark_dynamic (weak, as pt2bot measures)
do_export = len(sys.argv) > 3
spec = [m for m in cfg['models'] if m['name'] == name][0]
def imp(e):
    mod, attr = e.split(':'); return getattr(importlib.import_module(mod), attr)
torch.manual_seed(0)
model = imp(spec['entry'])(**spec.get('kwargs', {})).eval()
fac = imp(spec['inputs']['entry'])
if 'cases' in spec:
    cases = spec['cases']
else:
    keys = list(spec['shapes']); cases = [dict(zip(keys, v)) for v in itertools.product(*[spec['shapes'][k] for k in keys])]
dyn = spec.get('dynamic', [])
def dims_of(case, inp):
    # tensor axis -> dim name, where the size equals the dim's value (unique among varying dims)
    out = {}
    varying = [d for d in cases[0] if len({c[d] for c in cases}) > 1]
    for k, t in inp.items():
        for ax in range(t.dim()):
            hits = [d for d in varying if all(fac(**c)[k].shape[ax] == c[d] for c in cases)]
            if len(hits) == 1: out.setdefault(k, {})[ax] = hits[0]
    return out
dims = dims_of(cases[0], fac(**cases[0]))
print('dims', dims, flush=True)
cnt = torch._dynamo.utils.counters
torch._dynamo.config.recompile_limit = 64
compiled = torch.compile(model, backend='eager')
with torch.no_grad():
    for c in cases:
        inp = fac(**c)
        if mark:
            for k, axes in dims.items():
                for ax, d in axes.items():
                    if d in dyn: (torch._dynamo.mark_dynamic if mode == '1' else torch._dynamo.maybe_mark_dynamic)(inp[k], ax)
        print('CASE', c, flush=True)
        try:
            out = compiled(**inp); ref = model(**fac(**c))
            print('  equal:', torch.equal(out, ref), flush=True)
        except Exception as e:
            print('  RAISED', type(e).__name__, str(e).splitlines()[0][:300], flush=True)
print('unique_graph_breaks', len(cnt['graph_break']), dict(cnt['graph_break']) if len(cnt['graph_break'])<10 else '')
print('frames compiled', dict(cnt['stats']))
if do_export:
    from torch.export import Dim
    inp = fac(**cases[0])
    ds = {k: {ax: Dim(d, min=2) if d == 'batch' else Dim(d) for ax, d in axes.items() if d in dyn} for k, axes in dims.items()}
    ds = {k: ds.get(k) for k in inp}
    for label, dshapes in (('declared', ds), ('batch only', {k: ({ax: Dim('batch', min=2) for ax, d in dims.get(k, {}).items() if d == 'batch'} or None) for k in inp}), ('AUTO', {k: ({ax: Dim.AUTO for ax in dims.get(k, {})} or None) for k in inp})):
        try:
            ep = torch.export.export(model, (), inp, dynamic_shapes=dshapes)
            res = []
            for c in cases:
                i2 = fac(**c)
                try:
                    res.append(torch.equal(ep.module()(**i2), model(**i2)))
                except Exception as e:
                    res.append(type(e).__name__ + ': ' + str(e).splitlines()[0][:150])
            print('EXPORT', label, 'OK', res)
        except Exception as e:
            msg = str(e)
            print('EXPORT', label, 'FAIL', type(e).__name__, msg[:600].replace('\n', ' | '))
