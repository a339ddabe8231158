"""What hand1 (heldout25_hand_edits.json) changes that heldout25_rerun.py cannot see: the rerun
compares output values and the gradients of inputs and parameters, and detaches the outputs. hand1
keeps norse's `state.v.requires_grad = True` out of compiled code, so there the initial voltage is
no leaf that requires grad. Where nothing else in the layer requires grad (norse's LIF has no
nn.Parameter: its LIFParameters are plain tensors), eager head's output requires grad through that
leaf and compiled hand1's does not; a `.backward()` a user calls on it then works in eager and
raises when compiled. Head compiled cannot be compared: it graph-breaks and runs the assignment in
eager, so it requires grad too.

    /work/venvs/realcode/bin/python benchmarks/results/heldout25_requires_grad_check.py \
        > benchmarks/results/heldout25_requires_grad_check.log
"""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import heldout25_rerun as R  # noqa: E402  (the harness's make_copy: no pt2bot code)

HERE = os.path.dirname(os.path.abspath(__file__))
SIDE = r'''
import sys, torch
sys.path.insert(0, sys.argv[1])
import norse.torch as norse
assert norse.__file__.startswith(sys.argv[1]), norse.__file__
torch.manual_seed(0)
x = torch.rand(5, 3, 4) * 3.0           # [time, batch, features], no gradient
for mode in ("eager", "compiled"):
    torch._dynamo.reset()
    lif = norse.LIF()
    fn = torch.compile(lif, backend="eager") if mode == "compiled" else lif
    z, s = fn(x)
    msg = "ok"
    try:
        z.sum().backward()
    except RuntimeError as e:
        msg = "RuntimeError: " + str(e).splitlines()[0]
    print(f"{sys.argv[2]} {mode}: spikes {int(z.sum())}, output requires_grad {z.requires_grad}, "
          f"final voltage requires_grad {s.v.requires_grad}; z.sum().backward(): {msg}")
'''


def main() -> None:
    with open(os.path.join(HERE, "heldout25_hand_edits.json")) as f:
        hand1 = json.load(f)["models"]["norse:poisson_lif_mlp"]["candidates"][0]
    import subprocess
    work = tempfile.mkdtemp(prefix="h25rg_")
    for name, cand in (("head", None), ("hand1", hand1)):
        d = R.make_copy("norse", cand, os.path.join(work, name))
        p = subprocess.run([sys.executable, "-c", SIDE, d, name], capture_output=True, text=True,
                           env=dict(os.environ, PYTHONWARNINGS="ignore"))
        sys.stdout.write(p.stdout)
        if p.returncode:
            sys.stdout.write(p.stderr[-2000:])


if __name__ == "__main__":
    main()
