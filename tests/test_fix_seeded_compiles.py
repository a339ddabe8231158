"""The proof's compiled calls start from the same random state as its eager calls (torch's
generator seeded before each, pt2bot/smoke/verify.py `_fresh`). They did not: a model that
draws random numbers in forward (torchvision's random transforms) was compiled from whatever
state the steps before had left, which differ between head and a candidate (a candidate runs
guard inputs and gradients first). The break pass and the shape matrix could then take other
random branches for the candidate than for head, and its compiled outputs were never comparable
with the eager ones.
"""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from pt2bot.smoke.inputs import CaseInputs, remember_state  # noqa: E402
from pt2bot.smoke.location import RepoPaths  # noqa: E402
from pt2bot.smoke.verify import _seeded_forward, measure_state  # noqa: E402


class Jitter(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.lin(x) + torch.rand(x.shape[0], 4)


@pytest.mark.parametrize("phases", [["breaks", "matrix"], ["matrix"]])
def test_compiled_calls_draw_what_the_eager_calls_drew(tmp_path, phases):
    model = Jitter()
    paths = RepoPaths(str(tmp_path))
    cases = [CaseInputs(shape={"batch": b}, args=(torch.randn(b, 4),), kwargs={}) for b in (2, 3)]
    remember_state(model)
    with torch.no_grad():
        outs = [_seeded_forward(model, c, paths) for c in cases]
    torch.rand(5)   # another step drew numbers in between (a candidate's guard inputs)
    got = measure_state(model, cases, outs, {}, {"backend": "eager"}, paths, phases)
    assert [a["match"] for a in got["accuracy"]] == [True, True], got["accuracy"]
