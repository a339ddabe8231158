"""Tensors inside list, tuple or dict inputs: a decoder's KV caches.

gemma_pytorch's `forward(..., kv_caches, ...)` takes a list of (key, value) cache pairs whose
batch is the ids' batch, and writes into them. pt2bot marked only the top-level tensors
dynamic, so where a marked key met the static cache dynamo pinned the batch: "the code
specialises batch to 2 at gemma/model.py:296 (`mark_dynamic` raises there)", a claim about
pt2bot's inputs, not gemma's code; its export gave the list `None`, which torch refuses ("
`inputs['kv_caches']` is a list, but `dynamic_shapes['kv_caches']` is not"), and its
paste-ready `dynamic_shapes` left the list and a `None` argument out, which torch refuses too.
A tensor inside such an input now has its dims found by path (`kv_caches[0][1]`), is marked in
the matrix, and is given its input's structure, type for type, in every export and in the
paste-ready code.
"""
from __future__ import annotations

import collections
import enum
import json

import pytest

from pt2bot.cli import main
from pt2bot.smoke.export import as_called_spec
from pt2bot.smoke.inputs import CaseInputs, infer_dims, layout, nest_spec

DEC = """\
import torch
from torch import nn


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(32, 8)
        self.k = nn.Linear(8, 8)
        self.v = nn.Linear(8, 8)

    def forward(self, ids, positions, kv_caches, temperature=None):
        h = self.emb(ids)
        for k_cache, v_cache in kv_caches:
            k_cache.index_copy_(1, positions, self.k(h))
            v_cache.index_copy_(1, positions, self.v(h))
            att = torch.softmax(h @ k_cache.transpose(1, 2), dim=-1)
            h = h + att @ v_cache
        return h


def make(batch, seq):
    g = torch.Generator().manual_seed(batch * 10 + seq)
    caches = [(torch.zeros(batch, 16, 8), torch.zeros(batch, 16, 8)) for _ in range(2)]
    return {"ids": torch.randint(0, 32, (batch, seq), generator=g), "positions": torch.arange(seq),
            "kv_caches": caches, "temperature": None}
"""

CONFIG = """\
version: 1
models:
  - name: dec
    entry: pkg.dec:Decoder
    inputs: {entry: pkg.dec:make}
    shapes: {batch: [2, 3], seq: [4, 6]}
    dynamic: [batch, seq]
run: {backend: eager, latency: false}
"""


def test_nested_tensors_get_their_dims_by_path_and_their_structure_back():
    import torch

    def case(b: int) -> CaseInputs:
        return CaseInputs({"batch": b}, (torch.zeros(b, 3),), {
            "caches": [(torch.zeros(b, 5), torch.zeros(b, 5))], "freqs": {"local": torch.zeros(7)},
            "t": None}, {}, ("x",))

    cases = [case(2), case(3)]
    infer_dims(cases, ["x", "caches", "freqs", "t"])
    assert cases[0].dims == {"x": {0: "batch"}, "caches[0][0]": {0: "batch"}, "caches[0][1]": {0: "batch"}}
    flat = {"x": {0: "B"}, "caches": None, "freqs": None, "t": None,
            "caches[0][0]": {0: "B"}, "caches[0][1]": None}
    c = cases[0]
    assert as_called_spec(flat, c.args, c.kwargs) == {
        "x": {0: "B"}, "caches": [({0: "B"}, None)], "freqs": {"local": None}, "t": None}
    assert layout(c.kwargs["caches"]) == {"list": [{"tuple": ["tensor", "tensor"]}]}
    # a dict keyed by an enum (gemma's `freqs_cis`): its own keys for torch, their text in the code
    import enum

    class Kind(enum.Enum):
        GLOBAL = 1

    # a named tuple's spec is one of its kind: torch refuses a plain tuple there
    import collections

    Pair = collections.namedtuple("Pair", "k v")
    assert nest_spec({"p": None, "p[0]": {0: "B"}}, {"p": Pair(torch.zeros(2), torch.zeros(2))}) == {
        "p": Pair({0: "B"}, None)} and type(nest_spec({"p[0]": None}, {"p": Pair(1, 2)})["p"]) is Pair
    keyed = {"f": {Kind.GLOBAL: torch.zeros(2)}}
    assert nest_spec({"f": None, "f[Kind.GLOBAL]": {0: "B"}}, keyed) == {"f": {Kind.GLOBAL: {0: "B"}}}
    assert layout(keyed["f"]) == {"dict": {"Kind.GLOBAL": "tensor"}, "exprs": ["Kind.GLOBAL"]}
    from pt2bot.smoke.advice import advice_code

    entry = {"name": "batch", "min": None, "max": None, "multiple_of": None}
    code = advice_code({"f[Kind.GLOBAL]": {"0": entry}}, None, None, {"f": layout(keyed["f"]), "t": None})
    assert "dynamic_shapes = {'f': {Kind.GLOBAL: {0: batch}}, 't': None}" in code["python"]
    # a spec of tensors only is kept as it is; a nested one is not nested again
    assert as_called_spec({"x": {0: "B"}}, c.args, {}) == {"x": {0: "B"}}
    nested = nest_spec(flat, c.named())
    assert as_called_spec(nested, c.args, c.kwargs) == nested


@pytest.mark.torch
def test_a_decoder_with_kv_caches_compiles_once_exports_and_its_advice_runs(tmp_path, monkeypatch):
    import torch

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "dec.py").write_text(DEC)
    (tmp_path / "pt2bot.yml").write_text(CONFIG)
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "results.json"
    assert main(["run", "--config", str(tmp_path / "pt2bot.yml"), "--out", str(out)]) == 0
    [m] = json.loads(out.read_text())["models"]
    assert m["status"] == "ok"
    assert m["recompiles"]["compiles"] == 1 and not m["specialized"]
    assert m["export"]["ok"] is True
    advice = m["shape_advice"]
    assert advice["export"]["ok"] is True
    code = advice["code"]["python"]
    assert "'kv_caches': [({0: batch}, {0: batch}), ({0: batch}, {0: batch})]" in code
    assert "'temperature': None" in code
    # pasted as the README says: the model, its example inputs, then the block
    monkeypatch.syspath_prepend(str(tmp_path))
    from pkg.dec import Decoder, make

    kwargs = make(3, 6)
    scope = {"torch": torch, "model": Decoder(), "args": (), "kwargs": kwargs}
    exec(code, scope)
    ep = scope["ep"]
    again = make(2, 4)
    assert ep.module()(**make(2, 4)).shape == Decoder()(**again).shape


class Kind(enum.Enum):
    GLOBAL = 1


Pair = collections.namedtuple("Pair", "k v")


@pytest.mark.torch
def test_the_pasted_spec_imports_a_named_tuple_and_an_enum_and_exports():
    """A named tuple input's spec was pasted as a plain tuple, which torch refuses (its own
    export built the named tuple), and an enum-keyed dict's keys were written as
    `Kind.GLOBAL` with no import of `Kind`. The pasted block now imports both; run here as a
    user pastes it, it exports."""
    import torch

    from pt2bot.smoke.advice import advice_code

    class M(torch.nn.Module):
        def forward(self, p, f):
            return p.k + p.v + f[Kind.GLOBAL]

    kwargs = {"p": Pair(torch.zeros(3, 2), torch.zeros(3, 2)), "f": {Kind.GLOBAL: torch.zeros(3, 2)}}
    entry = {"name": "batch", "min": None, "max": None, "multiple_of": None}
    spec = {"p[0]": {"0": entry}, "p[1]": {"0": entry}, "f[Kind.GLOBAL]": {"0": entry}}
    assert layout(kwargs["p"]) == {"tuple": ["tensor", "tensor"], "class": f"{__name__}:Pair"}
    code = advice_code(spec, None, None, {n: layout(v) for n, v in kwargs.items()})["python"]
    assert f"from {__name__} import Kind\nfrom {__name__} import Pair\n" in code, code
    assert "dynamic_shapes = {'p': Pair({0: batch}, {0: batch}), 'f': {Kind.GLOBAL: {0: batch}}}" in code
    scope = {"torch": torch, "model": M(), "args": (), "kwargs": kwargs}
    exec(code, scope)
    # exported with the batch symbolic (torch 2.13 cannot make a module of a program guarded on
    # an enum-keyed dict: its guard code writes `f[<Kind.GLOBAL: 1>]`, so it is not called here)
    assert len(scope["ep"].range_constraints) == 1

    class N(torch.nn.Module):
        def forward(self, p):
            return p.k * p.v

    one = {"p": kwargs["p"]}
    code = advice_code({"p[0]": {"0": entry}, "p[1]": {"0": entry}}, None, None,
                       {"p": layout(one["p"])})["python"]
    scope = {"torch": torch, "model": N(), "args": (), "kwargs": one}
    exec(code, scope)
    five = Pair(torch.rand(5, 2), torch.rand(5, 2))
    assert torch.equal(scope["ep"].module()(p=five), N()(five))
