"""Per variant of ActivityHD (no pt2bot code): compiled once, called on batches 2, 4, 8, 16, 2, 4
(uniform readings in [0, 1], weights as built), as serving calls it. Counts the graphs a counting
backend is given (each compile or recompile of a frame gives one), and says per call whether the
compiled model raised; then the same calls with inductor, raise or ok per call, and whether the
outputs equal eager's."""
import importlib.util
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
VARIANTS = ["model_base.py", "model_clip_out_of_range.py", "model_clip_out_of_range_c0.py",
            "model_clip_out_of_range_hand.py", "model_reject_unknown.py",
            "model_reject_unknown_fix.py"]


def load(fname):
    spec = importlib.util.spec_from_file_location(fname[:-3], os.path.join(HERE, fname))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.ActivityHD


def plain(o):
    o = o if isinstance(o, tuple) else (o,)
    return tuple(t.as_subclass(torch.Tensor) for t in o)


def main():
    torch.set_num_threads(1)
    sizes = (2, 4, 8, 16, 2, 4)
    g = torch.Generator().manual_seed(3)
    xs = [torch.rand(b, 16, generator=g) for b in sizes]
    for v in VARIANTS:
        cls = load(v)
        torch.manual_seed(0)
        m = cls(dim=256).eval()
        with torch.no_grad():
            ref = [plain(m(x)) for x in xs]
        n_graphs = [0]

        def counting(gm, example_inputs):
            n_graphs[0] += 1
            return gm.forward

        torch._dynamo.reset()
        cm = torch.compile(m, backend=counting)
        per = []
        with torch.no_grad():
            for x, r in zip(xs, ref):
                before = n_graphs[0]
                out = plain(cm(x))
                eq = all(torch.equal(a, b) for a, b in zip(out, r))
                per.append(f"b{x.shape[0]}:+{n_graphs[0] - before}{'' if eq else '(differs)'}")
        print(f"{v:34s} eager backend: {n_graphs[0]:2d} graphs compiled over the 6 calls  " + " ".join(per))
        torch._dynamo.reset()
        cm = torch.compile(m)
        res = []
        with torch.no_grad():
            for x, r in zip(xs, ref):
                try:
                    out = plain(cm(x))
                    res.append(f"b{x.shape[0]}:" + ("ok" if all(torch.allclose(a.float(), b.float(), atol=1e-5) for a, b in zip(out, r)) else "differs"))
                except Exception as e:  # noqa: BLE001
                    res.append(f"b{x.shape[0]}:raise {type(e).__name__}")
                    first = str(e).splitlines()[0][:110]
        print(f"{'':34s} inductor: " + " ".join(res) + (f"  [{first}]" if any('raise' in r for r in res) else ""))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
