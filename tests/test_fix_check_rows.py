"""A check per row is proven on an input where one row of several fails it. openai/CLIP's
`encode_text` with a check that every text holds an end-of-text token,
`(text == eot).any(dim=-1).all()`: the proof filled the whole token tensor with each value a
check may refuse, so no text had the token, and an edit that checks the batch as a whole
(`.any()`) passed every input the evidence named while returning logits where head raised
(a new user's mutant). One row set alone tells them apart."""
from __future__ import annotations

import dataclasses

import pytest

from proofs import break_target, item, offered, one_model, prove, write_repo

TEXT = """\
import torch
from torch import nn


class Text(nn.Module):
    def __init__(self, vocab: int = 50):
        super().__init__()
        self.vocab = vocab
        self.emb = nn.Embedding(vocab, 8)

    def forward(self, text):
        if not (text == self.vocab - 1).any(dim=-1).all():
            raise ValueError("every text needs an end-of-text token")
        return self.emb(text).mean(1)
"""
LINE = 12
# every token the end-of-text one: the texts the model is given hold it
CONFIG = one_model("text", "pkg.text:Text", "[{name: text, shape: [batch, 6], dtype: int64, low: 49, high: 50}]",
                   "{batch: [2, 3]}")
TARGET = break_target("text", "pkg/text.py", LINE, "GB0170", "Data-dependent branching")


@pytest.mark.torch
def test_a_check_of_the_whole_batch_is_refused_where_one_text_lacks_the_token(tmp_path):
    root = write_repo(tmp_path / "repo", {"pkg/text.py": TEXT}, CONFIG)
    [right] = offered(TARGET, TEXT, "_assert_async")
    assert any(".any(dim=-1).all()" in ln for ln in right.lines), right.lines
    wrong = dataclasses.replace(right, lines=tuple(ln.replace(".any(dim=-1).all()", ".any()") for ln in right.lines))
    verdicts = prove(root, "text", [item("wrong", wrong, TEXT, TARGET), item("right", right, TEXT, TARGET)],
                     tmp_path / "work")
    assert verdicts["wrong"]["accepted"] is False, verdicts["wrong"]
    assert verdicts["wrong"]["reason"].startswith("differs from head on an input with values a check may refuse"), \
        verdicts["wrong"]
    assert verdicts["right"]["accepted"] is True, verdicts["right"]
    # head raised on every one (no "head raised on ..." then)
    assert "values a check may refuse (-1, 0, 1e3, 1e6; -1 and 0 in one row of several) injected" in \
        verdicts["right"]["evidence"], verdicts["right"]
