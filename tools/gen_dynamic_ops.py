"""Development-time: the data-dependent operators of the installed torch, for PTC304.

torch tags its own ATen operators whose output *shape* depends on the data
(`torch.Tag.dynamic_output_shape`: nonzero, bincount, unique, masked_select, ...) or whose
output is a Python value read from the data (`torch.Tag.data_dependent_output`: equal,
allclose, item). This script reads those tags from every registered `aten::` overload and
writes pt2bot/data/dynamic_output_ops.json, which `pt2bot check` reads (no torch import).

The tags name ATen overloads, not Python spellings, and some hold only for some arguments,
so each tagged overload must be listed in `REVIEWED` below with how Python code calls it:
`index.Tensor` is `x[idx]` and data-dependent only when `idx` is a boolean mask (the
subscript check of PTC304 handles it); `repeat_interleave.Tensor` only when `repeats` is a
tensor. A tagged overload missing from `REVIEWED` (a new
torch tagged a new operator) fails the script, so it is reviewed before it ships. Re-run after
moving the development torch:

    .venv/bin/python tools/gen_dynamic_ops.py
"""
from __future__ import annotations

import json
import os
import sys
from typing import Any

OUT = os.path.join(os.path.dirname(__file__), "..", "pt2bot", "data", "dynamic_output_ops.json")
TAGS = ("dynamic_output_shape", "data_dependent_output")

# aten overload -> how Python spells it. `functions`: dotted names; `methods`: Tensor method
# names; `when`: the argument condition under which the op is data-dependent (see
# pt2bot/rules/dynamic_output_shape.py); `gb`: the graph break torch 2.13 reports (measured
# on CPU with backend="eager", tests/fixtures/rules/ptc304_*.py); `rule: null` = reported by
# another rule, listed so that the review is complete.
_SHAPE = "GB0036"
REVIEWED: dict[str, dict[str, Any]] = {
    "nonzero.default": {"functions": ["torch.nonzero"], "methods": ["nonzero"], "gb": _SHAPE},
    "nonzero.out": {"same_as": "nonzero.default"},
    "argwhere.default": {"functions": ["torch.argwhere"], "methods": ["argwhere"], "gb": _SHAPE},
    "masked_select.default": {"functions": ["torch.masked_select"], "methods": ["masked_select"], "gb": _SHAPE},
    "masked_select.out": {"same_as": "masked_select.default"},
    "_unique.default": {"functions": ["torch.unique"], "methods": ["unique"], "gb": _SHAPE},
    "_unique2.default": {"same_as": "_unique.default"},
    "unique_dim.default": {"same_as": "_unique.default"},
    "unique_consecutive.default": {"functions": ["torch.unique_consecutive"], "methods": ["unique_consecutive"],
                                   "gb": _SHAPE},
    "unique_dim_consecutive.default": {"same_as": "unique_consecutive.default"},
    "bincount.default": {"functions": ["torch.bincount"], "methods": ["bincount"], "gb": _SHAPE},
    # repeat_interleave(x, repeats) dispatches to this overload only when `repeats` is a tensor
    "repeat_interleave.Tensor": {"functions": ["torch.repeat_interleave"], "methods": ["repeat_interleave"],
                                 "when": "repeats_tensor", "gb": _SHAPE},
    # Tagged, measured breaking on torch 2.13 (one_hot GB0246, lstsq/ctc_loss GB0036,
    # equal/allclose GB0033), but NOT captured under fullgraph=True, which PTC304's message
    # promises (Rule.fullgraph_captures): left out until a rule can say the truth about them.
    "one_hot.default": {"rule": None, "note": "F.one_hot without num_classes; GB0246; fullgraph does not capture"},
    "linalg_lstsq.default": {"rule": None, "note": "torch.linalg.lstsq; GB0036; fullgraph does not capture"},
    "linalg_lstsq.out": {"same_as": "linalg_lstsq.default"},
    "_ctc_loss.default": {"rule": None, "note": "F.ctc_loss; GB0036; fullgraph does not capture"},
    "_ctc_loss.Tensor": {"same_as": "_ctc_loss.default"},
    "equal.default": {"rule": None, "note": "torch.equal; GB0033; fullgraph does not capture"},
    "allclose.default": {"rule": None, "note": "torch.allclose; GB0033; fullgraph does not capture"},
    # x[idx]: data-dependent only for a boolean mask `idx` (the subscript check of PTC304)
    "index.Tensor": {"rule": None, "note": "x[mask] with a boolean mask: PTC304's subscript check"},
    # Tensor.item() and what calls it: PTC101 (.item()) and PTC104 (int()/float()/bool())
    "item.default": {"rule": None, "note": "PTC101 / PTC104"},
    "_local_scalar_dense.default": {"rule": None, "note": "PTC101 / PTC104 (what .item() calls)"},
}
# Spellings that reach a tagged overload through a decomposition torch does not tag itself.
EXTRA = {
    "torch.where": {"op": "nonzero.default", "when": "one_arg", "gb": _SHAPE},
}


def tagged_ops() -> dict[str, list[str]]:
    import torch

    out: dict[str, list[str]] = {}
    for full in torch._C._dispatch_get_all_op_names():
        ns, _, rest = full.partition("::")
        if ns != "aten":
            continue
        name, _, overload = rest.partition(".")
        try:
            op = getattr(getattr(torch.ops.aten, name), overload or "default")
        except (AttributeError, RuntimeError):
            continue
        tags = sorted(t.name for t in op.tags if t.name in TAGS)
        if tags:
            out[f"{name}.{overload or 'default'}"] = tags
    return dict(sorted(out.items()))


def build(tagged: dict[str, list[str]]) -> dict[str, Any]:
    missing = sorted(set(tagged) - set(REVIEWED))
    if missing:
        raise SystemExit(f"torch tags operators nobody reviewed: {missing}; add them to REVIEWED in "
                         f"{os.path.basename(__file__)} (how Python spells them, and when)")
    functions: dict[str, dict[str, Any]] = {}
    methods: dict[str, dict[str, Any]] = {}
    for op in tagged:
        entry = REVIEWED[op]
        entry = REVIEWED[entry["same_as"]] if "same_as" in entry else entry
        if entry.get("rule", "PTC304") is None:
            continue
        for table, key in ((functions, "functions"), (methods, "methods")):
            for spelling in entry.get(key, ()):
                row = table.setdefault(spelling, {"ops": [], "when": entry.get("when"), "gb": entry["gb"]})
                row["ops"].append(op)
    for spelling, extra in EXTRA.items():
        if extra["op"] in tagged:
            functions[spelling] = {"ops": [extra["op"]], "when": extra["when"], "gb": extra["gb"]}
    import importlib.metadata as md
    return {"torch": md.version("torch"), "generated_by": "tools/gen_dynamic_ops.py", "tagged": tagged,
            "functions": dict(sorted(functions.items())), "methods": dict(sorted(methods.items()))}


def main() -> int:
    data = build(tagged_ops())
    stale = sorted(op for op in REVIEWED if op not in data["tagged"])
    with open(OUT, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=1, sort_keys=True)
        fh.write("\n")
    print(f"{os.path.normpath(OUT)}: {len(data['tagged'])} tagged overloads from torch {data['torch']}, "
          f"{len(data['functions'])} functions, {len(data['methods'])} methods"
          + (f"; reviewed but no longer tagged: {stale}" if stale else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
