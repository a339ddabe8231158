"""PR 2 of trial_heldout34 (the empty-scene early return): the review posted no fix and advised
`torch.cond(z.abs().pow(2).mean() < self.min_energy, early, rest, ())`. This runs head
(model_empty_scene.py), that torch.cond written as advised (model_empty_scene_cond.py) and a
torch.where over the computed logits (model_empty_scene_where.py), with no pt2bot code: eval and
training mode, eager, compiled (backend eager, fullgraph=False and True) and torch.export, on a
normal map, an empty scene (zeros) and a batch whose one map is empty; outputs and BatchNorm
running statistics compared with head's exactly."""
import importlib.util, sys, warnings
import torch
warnings.simplefilter("ignore")
torch.set_num_threads(1)


def load(path):
    name = path[:-3]
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    sys.modules[name] = m   # torch.cond looks the module of its branches up
    spec.loader.exec_module(m)
    return m


g = torch.Generator().manual_seed(3)
base = torch.randn(2, 2, 16, 12, generator=g, dtype=torch.cfloat)
ins = {"normal": base, "empty_scene": torch.zeros_like(base),
       "one_map_empty": torch.cat([torch.zeros_like(base[:1]), base[1:]]),
       "noise_1e-4": 1e-4 * base}


def run(path, train, how):
    mod = load(path)
    out = {}
    for name, z in ins.items():
        torch.manual_seed(0)
        m = mod.RangeDopplerNet().train(train)
        try:
            if how == "eager":
                y = m(z)
            elif how == "export":
                ep = torch.export.export(m, (z,))
                y = ep.module()(z)
            else:
                torch._dynamo.reset()
                y = torch.compile(m, backend="eager", fullgraph=(how == "fullgraph"))(z)
            out[name] = ("ok", y.detach(), {k: v.clone() for k, v in m.state_dict().items()})
        except Exception as e:  # noqa: BLE001
            out[name] = ("raise", f"{type(e).__name__}: {str(e).splitlines()[0][:160]}")
    return out


for train in (False, True):
    for how in ("eager", "compiled", "fullgraph", "export"):
        h = run("model_empty_scene.py", train, "eager")   # head's eager result is the reference
        for path in ("model_empty_scene.py", "model_empty_scene_cond.py", "model_empty_scene_where.py"):
            r = run(path, train, how)
            row = []
            for name in ins:
                a, b = h[name], r[name]
                if b[0] == "raise":
                    row.append(f"{name}: raises {b[1]}")
                else:
                    o = torch.equal(a[1], b[1])
                    s = all(torch.equal(a[2][k], b[2][k]) for k in a[2]) if how != "export" else "n/a (export copies the module)"
                    row.append(f"{name}: output {'=' if o else '!='} head eager, BN state {'=' if s is True else s if s != False else '!='}")
            print(f"[{'train' if train else 'eval'}] {how:9s} {path}:\n    " + "\n    ".join(row), flush=True)
