"""The hand edit of pyro/distributions/rejector.py:72-74 (heldout18_hand_edits.json: the
`if accept.any():` block written as `x.copy_(torch.where(accept, proposed_x, x))`), called
directly, head against patched: a Rejector for a standard normal truncated to x > lower, eager and
compiled (backend="eager"), for lower bounds whose acceptance rate falls from 50 % to 0.13 %.

    /work/venvs/realcode/bin/python benchmarks/results/heldout18_hand_rejector.py \\
        > benchmarks/results/heldout18_hand_rejector.log
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def side(pkg: str) -> None:
    sys.path.insert(0, pkg)
    import torch
    torch.set_num_threads(1)
    import pyro.distributions as dist
    assert os.path.realpath(dist.__file__).startswith(os.path.realpath(pkg))

    def sample(loc, lower):  # noqa: ANN001, ANN202
        propose = dist.Normal(loc, torch.ones_like(loc))

        def acc(v):  # noqa: ANN001, ANN202
            return torch.where(v > lower, torch.zeros_like(v), torch.full_like(v, -float("inf")))
        return dist.Rejector(propose, acc, propose.cdf(lower).neg().log1p()).rsample()

    for lower_v in (0.0, 1.5, 2.5, 3.0):
        loc, lower = torch.zeros(4), torch.full((4,), lower_v)
        for mode in ("eager", "compiled"):
            torch._dynamo.reset()
            f = torch.compile(sample, backend="eager") if mode == "compiled" else sample
            torch.manual_seed(1)
            t0 = time.time()
            try:
                r = f"ok {[round(v, 6) for v in f(loc, lower).tolist()]}"
            except Exception as e:   # noqa: BLE001 - a raise is a result
                r = f"raises {type(e).__name__}: {str(e).splitlines()[0][:70]}"
            print(f"lower {lower_v} {mode}: {r} ({time.time() - t0:.1f} s)", flush=True)


def main() -> int:
    if sys.argv[1:2] == ["--side"]:
        side(sys.argv[2])
        return 0
    sys.path.insert(0, HERE)
    from heldout18_rerun import make_copy
    c = json.load(open(os.path.join(HERE, "heldout18_hand_edits.json")))["models"][
        "pyro-ppl:rejector_truncated"]["candidates"][0]
    work = tempfile.mkdtemp(prefix="h18rej_")
    print(f"edit {c['path']}:{c['start_line']}-{c['end_line']}:\n    " + "\n    ".join(c["lines"]))
    for label, cand in (("head", None), ("patched", c)):
        d = make_copy("pyro", cand, os.path.join(work, label))
        p = subprocess.run([sys.executable, __file__, "--side", d], capture_output=True, text=True,
                           env=dict(os.environ, PYTHONWARNINGS="ignore"), timeout=900)
        print(f"== {label}\n{p.stdout}{p.stderr[-800:] if p.returncode else ''}", end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
