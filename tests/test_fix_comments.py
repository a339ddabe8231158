"""A candidate keeps the comments of the lines it replaces (pt2bot/rules/edits.py
`keep_comments`): a new user's one-click suggestion replaced `if t.max() > 1:` and its block,
whose comment said why the times are scaled, by one `torch.where` line, deleting the comment.
The proof reads the edit's form without them, so a comment changes no verdict."""
from __future__ import annotations

import pytest
from pymodule import load_module

from pt2bot.findings import Finding
from pt2bot.rules import fix_candidates

UNET = """\
import torch
from torch import nn


class Unet(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x, t):
        if t.max() > 1:
            # integer timesteps from the sampler: scale them to [0, 1] as in training
            t = t / 1000
        s = '''
# a line of a string, not a comment
'''
        return self.lin(x) * t[:, None]
"""


def _finding(line: int, col: int, rule: str = "PTC201") -> Finding:
    return Finding(rule=rule, path="unet.py", line=line, col=col, severity="error", message="m")


def test_the_replaced_blocks_comment_goes_before_the_new_lines():
    got = fix_candidates(_finding(11, 11), UNET)
    where = next(c for c in got if "torch.where" in c.lines[-1])
    assert (where.start_line, where.end_line) == (11, 13)
    assert where.lines == (
        "        # integer timesteps from the sampler: scale them to [0, 1] as in training",
        "        t = torch.where(t.max() > 1, t / 1000, t)")
    # an edit of the `if` line alone replaces no comment line, and keeps its lines as they were
    alone = next(c for c in got if c.start_line == c.end_line == 11)
    assert not any(ln.lstrip().startswith("#") for ln in alone.lines)


def test_a_hash_inside_a_string_is_no_comment_and_a_deletion_keeps_none():
    from pt2bot.rules.base import Candidate
    from pt2bot.rules.edits import comment_lines, keep_comments

    assert comment_lines(UNET) == {12}
    lines = UNET.splitlines()
    span = Candidate(code="X", path="unet.py", start_line=14, end_line=16,
                     lines=("        s = ''",), title="t", safe=False)
    assert keep_comments(UNET, span) == span     # line 15 is inside the string
    gone = Candidate(code="X", path="unet.py", start_line=11, end_line=13, lines=(), title="t",
                     safe=False)
    assert keep_comments(UNET, gone) == gone
    assert lines[11].strip().startswith("# integer")


@pytest.mark.torch
def test_a_kept_comment_changes_no_verdict_and_no_evidence(tmp_path):
    import torch

    from pt2bot.testing import verified_fixes

    # the same comment above the `if`, outside what the edit replaces: the same line numbers
    bare = UNET.replace(
        "        if t.max() > 1:\n            # integer timesteps from the sampler: scale them to [0, 1] as in training\n",
        "        # integer timesteps from the sampler: scale them to [0, 1] as in training\n        if t.max() > 1:\n")
    assert bare != UNET
    got = {}
    for name, source in (("commented", UNET), ("bare", bare)):
        root = tmp_path / name
        root.mkdir()
        (root / "pyproject.toml").write_text("")
        (root / f"unet_{name}.py").write_text(source)
        mod = load_module(root / f"unet_{name}.py", prefix=f"fixcomments_{name}")
        torch.manual_seed(0)
        model = mod.Unet().eval()
        # one case takes head's branch (integer timesteps), one does not
        fixes = verified_fixes(model, torch.randn(2, 4), torch.tensor([3.0, 700.0]),
                               user_code=str(root), include_rejected=True)
        got[name] = [(f.title, f.verified, f.evidence or f.reason, f.lines) for f in fixes]
    where = [g for g in got["commented"] if "torch.where" in g[3][-1]]
    assert where and where[0][1], got["commented"]
    assert where[0][3][0].strip().startswith("# integer timesteps")
    # the same candidates, verdicts and evidence, the comment line aside
    assert [(t, v, e, tuple(ln for ln in lines if not ln.lstrip().startswith("#")))
            for t, v, e, lines in got["commented"]] == got["bare"], got
