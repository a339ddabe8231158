"""Where unpatched tntorch:tucker_tt_compress stops agreeing with itself across processes, with no
pt2bot code: the model (models.py, seed 0, eval mode, one thread) runs its first case in two
processes under a TorchDispatchMode that logs every aten op with the float sum of its outputs and
the shape, stride and address mod 64 of its tensor inputs; the first op whose output differs is
printed with the op before it, from both runs.

    /work/venvs/realcode/bin/python benchmarks/results/heldout19_lstsq_trace.py \
        2>/dev/null > benchmarks/results/heldout19_lstsq_trace.log
"""
import os
import subprocess
import sys

REAL = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "real_code")


def trace() -> None:
    sys.path.insert(0, REAL)
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    torch.set_num_threads(1)
    import models

    class Log(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()
            self.lines: list[str] = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN204
            out = func(*args, **(kwargs or {}))
            outs = out if isinstance(out, (tuple, list)) else [out]
            sums = [repr(float(o.double().sum())) if isinstance(o, torch.Tensor) and o.is_floating_point()
                    and o.numel() else None for o in outs]
            ins = [(tuple(a.shape), a.stride(), a.data_ptr() % 64) for a in args if isinstance(a, torch.Tensor)]
            self.lines.append(f"{func} outputs {sums} || inputs {ins}")
            return out

    sp = models.by_key()["tntorch:tucker_tt_compress"]
    torch.manual_seed(0)
    model, cases = sp.build()
    model.eval()
    torch.manual_seed(1)
    with torch.no_grad(), Log() as log:
        model(*cases[0][0])
    print("\n".join(log.lines))


if __name__ == "__main__":
    if sys.argv[1:] == ["--trace"]:
        trace()
        raise SystemExit(0)
    runs = [subprocess.run([sys.executable, __file__, "--trace"], capture_output=True, text=True,
                           check=True).stdout.splitlines() for _ in range(2)]
    print(f"ops logged: {len(runs[0])} and {len(runs[1])}")
    for i, (a, b) in enumerate(zip(runs[0], runs[1])):
        if a.split(" || ")[0] != b.split(" || ")[0]:
            print(f"first op whose outputs differ: #{i}")
            for r, lines in enumerate(runs):
                print(f"run {r + 1}:")
                for ln in lines[max(0, i - 1):i + 1]:
                    print("   ", ln)
            break
    else:
        print("the two runs agree on every op")
