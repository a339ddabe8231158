"""The recipes for a tensor where Python needs a number, a size or a fill value
(pt2bot/rules/size_fixes.py): on source text here, on real torch (the break gone, the same
outputs) in tests/test_fix_sizes_torch.py, and through the proof worker, which refuses the
wrong variants, in tests/test_fix_proof_sizes.py."""
from __future__ import annotations

import textwrap

import pytest

from pt2bot.fixes import break_findings, gather
from pt2bot.rules import apply_candidate, fix_candidates
from tests.test_fixes import findings_in, fixed

HEAD = """\
import torch


@torch.compile
def f(x, m):
{body}
"""


def stand_in_candidates(src: str, line: int, gb: str = "GB0033"):
    """The candidates of the stand-in findings at a break dynamo recorded on `line`."""
    t = {"kind": "break", "model": "m", "path": "m.py", "line": line, "gb": gb}
    out = {}
    for f in break_findings(t, src, {}):
        for c in fix_candidates(f, src):
            out.setdefault((c.start_line, c.end_line, c.lines), c)
    return sorted(out.values(), key=lambda c: c.rank)


# --- a tensor of sizes reduced to one number ---------------------------------------------------

@pytest.mark.parametrize("code,body,want", [
    ("PTC104", "    n = int(torch.prod(torch.tensor(x.shape[1:])))\n    return x.view(-1, n)",
     "    n = x.shape[1:].numel()"),
    ("PTC101", "    n = torch.tensor(x.size()[1:]).prod().item()\n    return x.view(-1, n)",
     "    n = x.size()[1:].numel()"),
    ("PTC101", "    n = torch.tensor([x.shape[1], x.shape[2]], dtype=torch.long).sum().item()\n"
               "    return x.new_zeros(n)",
     "    n = (x.shape[1] + x.shape[2])"),
    ("PTC104", "    return x.new_zeros(int(torch.tensor(x.shape).amax()))",
     "    return x.new_zeros(max(x.shape))"),
    # sizes unpacked from a shape are ints
    ("PTC104", "    b, h, w = x.shape\n    n = int(torch.tensor([h, w]).prod())\n    return x.view(b, n)",
     "    n = (h * w)"),
])
def test_a_size_through_a_tensor_becomes_the_python_int(tmp_path, code, body, want):
    src, fs = findings_in(tmp_path, HEAD.format(body=body), code)
    (f,) = fs
    sizes = [c for c in fix_candidates(f, src) if "from the sizes" in c.title]
    assert [c.lines for c in sizes] == [(want,)] and not sizes[0].safe
    fixed(src, sizes[0])


MACE = """\
import torch


class Contraction(torch.nn.Module):
    def forward(self, x):
        out = x * 2
        resize_shape = torch.prod(torch.tensor(out.shape[1:]))
        return out.view(out.shape[0], resize_shape)
"""


def test_a_size_tensor_a_view_reads_is_computed_from_the_sizes_or_inferred():
    """No rule flags `out.view(out.shape[0], resize_shape)`; dynamo's GB0033 there brings
    PTC104's recipes: the assignment as an int (first), and `-1` in the view with the
    assignment gone (second: `-1` cannot be inferred when another dim is 0)."""
    numel, inferred = stand_in_candidates(MACE, 8)
    assert (numel.start_line, numel.end_line, numel.lines) == \
        (7, 7, ("        resize_shape = out.shape[1:].numel()",))
    assert (inferred.start_line, inferred.end_line, inferred.lines) == \
        (7, 8, ("        return out.view(out.shape[0], -1)",))
    assert numel.rank < inferred.rank
    for c in (numel, inferred):
        fixed(MACE, c)


@pytest.mark.parametrize("body,minus_one", [
    # read once more after the view: the int is still right, `-1` would drop the assignment
    ("    r = torch.prod(torch.tensor(x.shape[1:]))\n    y = x.view(x.shape[0], r)\n    return y * r", False),
    # a `-1` among the view's sizes already
    ("    r = torch.prod(torch.tensor(x.shape[1:]))\n    return x.view(-1, r)", False),
    # not the next statement
    ("    r = torch.prod(torch.tensor(x.shape[1:]))\n    x = x + 1\n    return x.view(x.shape[0], r)", False),
    ("    r = torch.tensor(x.shape[1:]).prod()\n    return x.reshape(x.shape[0], r)", True),
])
def test_minus_one_only_for_the_one_read_of_a_view_right_after(body, minus_one):
    src = HEAD.format(body=body)
    line = next(i for i, ln in enumerate(src.splitlines(), 1) if "view(" in ln or "reshape(" in ln)
    cands = stand_in_candidates(src, line)
    assert any("from the sizes" in c.title for c in cands)
    assert any("-1" in c.title for c in cands) is minus_one


@pytest.mark.parametrize("body", [
    # the name is used as a tensor: an int has no `.float()`
    "    r = torch.prod(torch.tensor(x.shape[1:]))\n    return x.view(x.shape[0], r) * r.float()",
    # a float tensor of the sizes: its product is a float
    "    r = torch.prod(torch.tensor(x.shape[1:], dtype=torch.float32))\n    return x.view(x.shape[0], r)",
    # made of the input's values, not of sizes
    "    r = torch.prod(torch.tensor(m))\n    return x.view(x.shape[0], r)",
    # a product over one dim of a tensor of sizes is no single number
    "    r = torch.tensor([x.shape]).prod(0)\n    return x.view(x.shape[0], r)",
    # assigned twice
    "    r = torch.prod(torch.tensor(x.shape[1:]))\n    r = r + 0\n    return x.view(x.shape[0], r)",
    # `max` is not the builtin in the function
    "    max = torch.maximum\n    r = torch.tensor(x.shape).max()\n    return x.new_zeros(r)",
])
def test_sizes_that_may_differ_get_no_size_candidate(body):
    src = HEAD.format(body=body)
    line = len(src.splitlines())
    assert not any("from the sizes" in c.title or "-1" in c.title for c in stand_in_candidates(src, line))


# --- a fill value that is a tensor ----------------------------------------------------------------

@pytest.mark.parametrize("line,want", [
    ("out = x.new_full(size, fill)", "out = x.new_empty(size).fill_(fill)"),
    ("out = x.new_full((n, 4), m.min() - 1, dtype=torch.float64)",
     "out = x.new_empty((n, 4), dtype=torch.float64).fill_(m.min() - 1)"),
    ("out = x.new_full(size=[n], fill_value=fill)", "out = x.new_empty([n]).fill_(fill)"),
    ("out = torch.full_like(x, fill, device=x.device)", "out = torch.empty_like(x, device=x.device).fill_(fill)"),
    ("out = self.buf.new_full([n], fill) * 2", "out = self.buf.new_empty([n]).fill_(fill) * 2"),
])
def test_a_tensor_fill_value_is_filled_in_place(line, want):
    src = textwrap.dedent(f"""\
        import torch


        def g(self, x, m, n, size):
            fill = m.min() - 1
            {line}
            return out
        """)
    (c,) = [c for c in stand_in_candidates(src, 6) if "fill" in c.title]
    assert c.lines == ("    " + want,) and (c.start_line, c.end_line) == (6, 6)
    fixed(src, c)


@pytest.mark.parametrize("line", [
    "out = x.new_full(size, -1.5)",           # a number: nothing to read back
    "out = x.new_full(size, True)",
    "out = x.new_full(*size, fill)",           # arguments dynamo would unpack: not rewritten
    "out = torch.new_full(x, fill)",           # not the method
    "out = x.full_like(fill)",                 # not torch's function
    "out = x.new_full(size, fill, **kw)",
])
def test_fill_values_without_a_candidate(line):
    src = textwrap.dedent(f"""\
        import torch


        def g(x, m, size, kw):
            fill = m.min() - 1
            {line}
            return out
        """)
    assert not [c for c in stand_in_candidates(src, 6) if "fill" in c.title]


# --- `.item()` whose value feeds a fill -------------------------------------------------------

SORT = """\
import torch


@torch.compile
def pool(x, size):
    fill_value = x.min().item() - 1
    y = x * 2
    out = x.new_full(size, fill_value)
    return out.sum() + y - fill_value
"""


def test_an_item_feeding_a_fill_is_kept_with_the_fill_rewritten(tmp_path):
    """Dropping `.item()` alone moves the break to `new_full` (GB0033); the candidate spans
    from the `.item()` to the fill, the lines between kept, the arithmetic read left as it is."""
    src, fs = findings_in(tmp_path, SORT, "PTC101")
    (f,) = fs
    (c,) = [c for c in fix_candidates(f, src) if ".fill_()" in c.title]
    assert (c.start_line, c.end_line) == (6, 8)
    assert c.lines == ("    fill_value = x.min() - 1", "    y = x * 2",
                       "    out = x.new_empty(size).fill_(fill_value)")
    assert fixed(src, c).endswith("    return out.sum() + y - fill_value\n")
    # keeping the tensor alone is not offered: `new_full` needs a number
    assert not [c for c in fix_candidates(f, src) if c.title.startswith("keep the tensor: drop `.item()`")
                and c.end_line == 6]


@pytest.mark.parametrize("use", [
    "out = x.new_full(size, fill_value)\n    return out[:int(fill_value)]",   # also read as a number
    "out = x.new_full(size, fill_value)\n    fill_value = 0\n    return out",  # assigned again
    "return x.new_full(size, fill_value).sum() + len([fill_value])",
])
def test_an_item_with_other_reads_gets_no_fill_candidate(tmp_path, use):
    src, fs = findings_in(tmp_path, HEAD.replace("def f(x, m):", "def f(x, size):").format(
        body=f"    fill_value = x.min().item() - 1\n    {use}"), "PTC101")
    assert fs and not [c for f in fs for c in fix_candidates(f, src) if ".fill_()" in c.title]


@pytest.mark.parametrize("use,want", [
    ("return x.masked_fill(x > 0, v)", "    v = x.min() - 1"),
    ("return torch.full((2, 3), v)", "    v = x.min() - 1"),
    ("y = x.clone()\n    y.fill_(v)\n    return y", "    v = x.min() - 1"),
    ("return x.index_fill(0, torch.tensor([0]), value=v)", "    v = x.min() - 1"),
])
def test_fill_values_that_take_a_tensor_keep_it(tmp_path, use, want):
    """These calls keep a 0-d tensor fill value in the graph (torch 2.13), so a `.item()` that
    only feeds them is dropped as for arithmetic."""
    src, fs = findings_in(tmp_path, HEAD.format(body=f"    v = x.min().item() - 1\n    {use}"), "PTC101")
    (f,) = fs
    keep = [c for c in fix_candidates(f, src) if c.title.startswith("keep the tensor")]
    assert keep and keep[0].lines == (want,)


def test_a_fill_value_of_new_full_is_no_arithmetic_read(tmp_path):
    """`x.new_full(size, v * 2)`: `v` is an operand of arithmetic, but the result is a fill value
    `new_full` reads back; the plain keep-the-tensor edit would move the break there."""
    src, fs = findings_in(tmp_path, HEAD.replace("def f(x, m):", "def f(x, size):").format(
        body="    v = x.min().item()\n    return x.new_full(size, v * 2)"), "PTC101")
    (f,) = fs
    assert not [c for c in fix_candidates(f, src) if c.title.startswith("keep the tensor: drop `.item()` (")]


def test_the_gb0033_target_of_a_review_gets_the_fill_candidate(tmp_path):
    """Through `gather`, as a review runs it: the break's line has no finding."""
    src = textwrap.dedent("""\
        import torch


        def dense(x, fill, size):
            out = x.new_full(size, fill)
            return out
        """)
    (tmp_path / "m.py").write_text(src)
    t = {"kind": "break", "model": "m", "path": "m.py", "line": 5, "gb": "GB0033",
         "gb_type": "Data dependent operator"}
    proposals, why = gather([t], [], str(tmp_path), None)
    assert why == {} and [p.cand.lines for p in proposals] == [("    out = x.new_empty(size).fill_(fill)",)]
    assert proposals[0].cand.code == "PTC104"
    assert apply_candidate(src, proposals[0].cand) == proposals[0].patched


@pytest.mark.parametrize("body,want", [
    ("    r = torch.prod(torch.tensor(x.shape[1:]))\n    return x.view(x.shape[0], r)", "    r = x.shape[1:].numel()"),
    ("    fill = x.min() - 1\n    return x.new_full([4, 2], fill)", "    return x.new_empty([4, 2]).fill_(fill)"),
])
def test_the_finding_on_a_size_or_fill_argument_offers_the_recipe(tmp_path, body, want):
    """PTC104 flags the tensor argument itself (`pt2bot check` sees it without a run); its
    recipes are the same as at a GB0033 break."""
    src, fs = findings_in(tmp_path, HEAD.format(body=body), "PTC104")
    (f,) = fs
    assert f.gb == "GB0033" and f.line == len(src.splitlines())
    assert want in [c.lines[0] for c in fix_candidates(f, src)]


# --- an `int()` whose number becomes a size -----------------------------------------------------

# torch_geometric 2.8.1 utils/_scatter.py: the number of segments, read off the index, is a size
SCATTER = """\
import torch


@torch.compile
def scatter(src, index, dim_size=None):
    if dim_size is None:
        dim_size = int(index.max()) + 1 if index.numel() > 0 else 0
    size = src.size()[:0] + (dim_size, ) + src.size()[1:]
    return src.new_zeros(size).index_add_(0, index, src)
"""


@pytest.mark.parametrize("use, offered", [
    ("    size = src.size()[:0] + (dim_size, ) + src.size()[1:]", False),   # a size: keeps no tensor
    ("    size = src.size()", True),                                        # `dim_size` read nowhere
])
def test_a_number_made_in_a_conditional_expression_is_kept_only_where_a_tensor_can_follow(tmp_path, use, offered):
    """`int(index.max()) + 1 if index.numel() > 0 else 0` is a Python number in head; kept as a
    tensor, a later size read of it breaks again (GB0033) or fails to trace. The keep-the-tensor
    edit was offered and refused by the proof on three torch_geometric models."""
    text = SCATTER.replace("    size = src.size()[:0] + (dim_size, ) + src.size()[1:]", use)
    src, fs = findings_in(tmp_path, text, "PTC104")
    (f,) = fs
    keep = [c for c in fix_candidates(f, src) if c.title.startswith("keep the tensor")]
    assert bool(keep) is offered, keep
    if offered:
        assert keep[0].lines == ("        dim_size = index.max().long() + 1 if index.numel() > 0 else 0",)


NUMEL = """\
import numpy


def numel_of(shape_tuple):
    \"\"\"Compute number of elements from shape.\"\"\"
    return int(numpy.prod(shape_tuple))


def patches(x, kernel_size):
    return x.reshape(x.shape[0], numel_of(kernel_size), -1)
"""


def _numel_candidates(src: str) -> list:
    target = {"kind": "break", "model": "m", "path": "m.py", "line": 6, "gb": "GB0033",
              "gb_type": "Data dependent operator"}
    found = {c.lines: c for f in break_findings(target, src, {}) for c in fix_candidates(f, src)}
    return list(found.values())


def test_numpy_s_product_of_a_parameter_is_a_loop_without_an_import():
    # unfoldNd's `return int(numpy.prod(shape_tuple))`, in a file that binds no `torch` or
    # `math`: a loop over Python numbers, in the lines of the statement's hunk
    [c] = _numel_candidates(NUMEL)
    assert (c.start_line, c.end_line) == (6, 6)
    assert c.lines == ("    numel = 1", "    for size in shape_tuple:", "        numel *= size",
                       "    return int(numel)")
    assert c.title == "the product as a loop over Python numbers, not through numpy"


def test_numpy_s_product_is_math_prod_where_the_file_imports_math():
    src = NUMEL.replace("import numpy\n", "import math\nimport numpy").replace(
        "    \"\"\"Compute number of elements from shape.\"\"\"\n", "\n")
    assert src.splitlines()[5] == "    return int(numpy.prod(shape_tuple))"
    [c] = _numel_candidates(src)
    assert c.lines == ("    return math.prod(shape_tuple)",)


@pytest.mark.torch
def test_the_loop_traces_and_gives_the_same_int():
    import torch

    [c] = _numel_candidates(NUMEL)
    before, after = {}, {}
    exec(compile(NUMEL, "before", "exec"), before)
    exec(compile(apply_candidate(NUMEL, c), "after", "exec"), after)
    x = torch.randn(2, 3 * 3 * 3, 5)
    for k in ((3, 3, 3), (27,), ()):
        want = before["numel_of"](k)
        got = after["numel_of"](k)
        assert got == want and type(got) is type(want)
    from torch._dynamo.utils import counters

    breaks = {}
    for side, ns in (("before", before), ("after", after)):
        torch._dynamo.reset()
        counters.clear()
        out = torch.compile(ns["patches"], backend="eager")(x, (3, 3, 3))
        assert torch.equal(out, before["patches"](x, (3, 3, 3)))
        breaks[side] = sum(counters["graph_break"].values())
    torch._dynamo.reset()
    assert breaks["before"] >= 1 and breaks["after"] == 0, breaks


# complextorch's wFM convolution: the products are made at the top of `forward` and read as
# sizes lines later, where dynamo breaks (GB0033 at the view)
UNFOLDED = """\
import numpy as np
import torch
from torch import nn


class Unfolded(nn.Module):
    def __init__(self, kernel_size=(2, 2)):
        super().__init__()
        self.kernel_size = kernel_size
        self.unfold = nn.Unfold(kernel_size, stride=kernel_size)

    def forward(self, x):
        b, c, h, w = x.shape
        prod_kernel_size = np.prod(self.kernel_size)
        blocks = (h // self.kernel_size[0], w // self.kernel_size[1])
        L = np.prod(blocks)  # blocks per image
        t = self.unfold(x).view(b, c, prod_kernel_size, L)
        return t.mean(2) * L
"""
VIEW = 17


def _view_candidates(src: str, line: int = VIEW) -> list:
    target = {"kind": "break", "model": "unfolded", "path": "pkg/unfolded.py", "line": line,
              "gb": "GB0033", "gb_type": "Data dependent operator"}
    found = {c.lines: c for f in break_findings(target, src, {}) for c in fix_candidates(f, src)}
    return list(found.values())


def test_products_made_earlier_are_python_ints_where_the_size_is_read():
    assert UNFOLDED.splitlines()[VIEW - 1].strip().startswith("t = self.unfold(x).view(")
    [c] = _view_candidates(UNFOLDED)
    assert (c.start_line, c.end_line) == (14, 16)
    assert c.lines == ("        prod_kernel_size = 1", "        for size in self.kernel_size:",
                       "            prod_kernel_size *= size",
                       "        blocks = (h // self.kernel_size[0], w // self.kernel_size[1])",
                       "        L = 1  # blocks per image", "        for size in blocks:", "            L *= size")
    with_math = UNFOLDED.replace("from torch import nn\n\n", "from torch import nn\nimport math\n")
    [m] = _view_candidates(with_math)
    assert m.lines == ("        prod_kernel_size = math.prod(self.kernel_size)",
                       "        blocks = (h // self.kernel_size[0], w // self.kernel_size[1])",
                       "        L = math.prod(blocks)  # blocks per image")
    # a name bound twice is not this recipe's: the other product still is
    [one] = _view_candidates(UNFOLDED.replace("        t = self", "        L = L + 0\n        t = self"), VIEW + 1)
    assert (one.start_line, one.end_line) == (14, 14) and one.lines[0] == "        prod_kernel_size = 1"


@pytest.mark.torch
def test_the_proof_verifies_the_products_as_python_ints(tmp_path):
    from proofs import break_target, item, one_model, prove, write_repo

    [c] = _view_candidates(UNFOLDED)
    root = write_repo(tmp_path / "repo", {"pkg/unfolded.py": UNFOLDED},
                      one_model("unfolded", "pkg.unfolded:Unfolded", "[{name: x, shape: [batch, 3, 4, 6]}]",
                                "{batch: [1, 3]}"))
    target = break_target("unfolded", "pkg/unfolded.py", VIEW, "GB0033", "Data dependent operator")
    verdict = prove(root, "unfolded", [item("c0", c, UNFOLDED, target)], tmp_path / "work")["c0"]
    assert verdict["accepted"], verdict
    assert verdict["evidence"].startswith("GB0033 gone"), verdict


def test_a_break_on_a_line_that_only_closes_brackets_is_anchored_at_the_call():
    # dynamo names the `)` of a parenthesised chain (complextorch's wFM convolutions): the
    # call that ends last by that line is the anchor, and its statement gets the recipe
    src = UNFOLDED.replace("        t = self.unfold(x).view(b, c, prod_kernel_size, L)\n",
                           "        t = (\n            self.unfold(x)\n            .view(b, c, prod_kernel_size, L)\n        )\n")
    assert src.splitlines()[VIEW + 2].strip() == ")"
    [c] = _view_candidates(src, VIEW + 3)
    assert (c.start_line, c.end_line) == (14, 16)
