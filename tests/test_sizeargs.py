"""Tensor sizes across calls (pt2bot/analysis/sizeargs.py): a PTC307 sink in a helper of another
file whose value is a parameter is flagged when a compiled caller passes a size there (kornia
imgwarp.py:512 <- augmentation/_2d/geometric/affine.py:168), and only then."""
from __future__ import annotations

import textwrap

import pytest

from pt2bot.config import StaticConfig
from pt2bot.rules import select_rules
from pt2bot.static import check_paths
from pt2bot.static.cache import Cache, _well_formed
from pt2bot.static.files import Stats, analyse_file

WARP = """\
    import math
    import torch

    def warp(src, M, dsize, align_corners=True):
        h_out, w_out = dsize
        xs = torch.linspace(-1.0, 1.0, w_out)
        return src * xs

    def sign(x, n):
        return x * math.copysign(1.0, n)

    def rebound(x, n):
        n = 8
        return x * torch.linspace(0.0, 1.0, n)
    """
MODEL = """\
    import torch.nn as nn
    from pkg.warp import warp, sign, rebound

    class Net(nn.Module):
        def __init__(self, n=4):
            super().__init__()
            self.n = n

        def forward(self, x, mask=None):
            _, _, height, width = x.shape
            y = warp(x, None, (height, width))
            y = y + sign(x, self.n) + sign(x, 3) + rebound(x, x.shape[0])
            if mask is not None:
                y = y + sign(x, x.shape[1])
            return y
    """


def write(root, files):
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text))


def findings(root, **kw):
    return check_paths(str(root), [], StaticConfig(select=("ALL",)), **kw)


def test_a_size_passed_from_another_file_makes_the_pending_candidate_a_finding(tmp_path):
    write(tmp_path, {"pkg/__init__.py": "", "pkg/warp.py": WARP, "pkg/model.py": MODEL})
    got = {(f.path, f.line, f.rule): f for f in findings(tmp_path, jobs=1)}
    # linspace(w_out): w_out = dsize[1], and model.py:11 passes (height, width) from x.shape
    f = got.pop(("pkg/warp.py", 6, "PTC307"))
    assert f.condition is None and "pkg/model.py:11 passes `(height, width)`" in f.message
    assert "`dsize` holds tensor sizes" in f.message
    # copysign(1.0, n): constants and `self.n` do not count; x.shape[1] is passed only when a mask is
    g = got.pop(("pkg/warp.py", 10, "PTC307"))
    assert g.condition == "mask is not None" and "pkg/model.py:14 passes `x.shape[1]`" in g.message
    # `rebound` assigns n before its linspace: the parameter is not followed
    assert got == {}


def test_callers_passing_only_constants_and_settings_give_no_finding(tmp_path):
    model = MODEL.replace("(height, width)", "(32, self.n)").replace("rebound(x, x.shape[0])", "x") \
        .replace("sign(x, x.shape[1])", "sign(x, 2)")
    write(tmp_path, {"pkg/__init__.py": "", "pkg/warp.py": WARP, "pkg/model.py": model})
    assert findings(tmp_path, jobs=1) == []


def test_a_caller_that_is_not_compiled_does_not_count(tmp_path):
    script = "from pkg.warp import warp\n\ndef main(x):\n    h, w = x.shape[-2:]\n    return warp(x, None, (h, w))\n"
    write(tmp_path, {"pkg/__init__.py": "", "pkg/warp.py": WARP, "pkg/script.py": script})
    assert findings(tmp_path, jobs=1) == []


@pytest.mark.parametrize("jobs", [1, 2])
def test_the_same_through_worker_processes_and_the_cache(tmp_path, jobs):
    root = tmp_path / "t"
    write(root, {"pkg/__init__.py": "", "pkg/warp.py": WARP, "pkg/model.py": MODEL,
                 **{f"pkg/m{i}.py": "def f(x):\n    return x\n" for i in range(4)}})
    plain = [f.to_dict() for f in findings(root, jobs=1)]
    codes = tuple(r.code for r in select_rules(("ALL",), ()))
    cold = [f.to_dict() for f in findings(root, jobs=jobs, cache=Cache(str(tmp_path / "c"), codes))]
    stats = Stats()
    warm = [f.to_dict() for f in findings(root, jobs=jobs, cache=Cache(str(tmp_path / "c"), codes), stats=stats)]
    # (m0.py..m3.py and pkg/__init__.py hold nothing compiled code can reach: never read)
    assert stats.cached == stats.files - stats.unread == 2 and stats.parsed == 0
    assert warm == cold == plain and len(plain) == 2


def test_the_cache_check_knows_the_new_fields(tmp_path):
    write(tmp_path, {"pkg/__init__.py": "", "pkg/warp.py": WARP, "pkg/model.py": MODEL})
    codes = tuple(r.code for r in select_rules(("ALL",), ()))
    s = analyse_file(str(tmp_path), "pkg/model.py", codes)
    calls = s.functions["Net.forward"].calls
    assert calls.sizes and _well_formed(s, "pkg/model.py")
    calls.sizes[0] = ("line", ())
    assert not _well_formed(s, "pkg/model.py")
    w = analyse_file(str(tmp_path), "pkg/warp.py", codes)
    assert any(c.needs for c in w.candidates) and _well_formed(w, "pkg/warp.py")
    w.candidates[0].needs = ["dsize"]
    assert not _well_formed(w, "pkg/warp.py")


# torchvision transforms/v2/functional/_geometry.py:2037-2039 -> :1983/1985 (held-out truth:
# `Eq(s6, 56)` guarded at the linspace). Measured on torch 2.13.0+cpu and 2.14.1 (backend=eager,
# TORCH_LOGS=recompiles,dynamic, three image sizes): `eval Eq(s53, 60) [guard added]` at
# `linspace(..., steps=ow)`, one compile per size, whether the kernel is called directly or
# handed to a dispatcher by reference as below.
GEO = """\
    import torch

    def _grid(coeffs, ow: int, oh: int, dtype, device):
        x_grid = torch.linspace(0.5, ow - 0.5, steps=ow, device=device, dtype=dtype)
        y_grid = torch.linspace(0.5, oh - 0.5, steps=oh, device=device, dtype=dtype)
        return x_grid[None, :] + y_grid[:, None]

    def perspective_image(image: torch.Tensor, coeffs) -> torch.Tensor:
        oh, ow = image.shape[-2:]
        dtype = image.dtype if torch.is_floating_point(image) else torch.float32
        return image * _grid(coeffs, ow=ow, oh=oh, dtype=dtype, device=image.device)
    """


def test_sizes_unpacked_from_a_shape_slice_are_passed_on_by_keyword(tmp_path):
    direct = ("import torch.nn as nn\nfrom pkg import geo\n\n\nclass P(nn.Module):\n"
              "    def forward(self, x):\n        return geo.perspective_image(x, [0.0])\n")
    write(tmp_path, {"pkg/__init__.py": "", "pkg/geo.py": GEO, "pkg/t.py": direct})
    got = {(f.path, f.line, f.rule): f for f in findings(tmp_path, jobs=1)}
    assert set(got) == {("pkg/geo.py", 4, "PTC307"), ("pkg/geo.py", 5, "PTC307")}
    assert "`ow` holds a tensor size here: pkg/geo.py:11 passes `ow`" in got["pkg/geo.py", 4, "PTC307"].message
    assert "`oh` holds a tensor size here: pkg/geo.py:11 passes `oh`" in got["pkg/geo.py", 5, "PTC307"].message


def test_a_kernel_handed_to_a_dispatcher_by_reference(tmp_path):
    """torchvision v2's `self._call_kernel(F.perspective, inpt, ...)`: the kernel is compiled code
    through the call edge of a function passed by reference (pt2bot/analysis/walk.py
    `_record_passed_functions`), so the sizes it hands on are flagged in the callee."""
    by_ref = ("import torch.nn as nn\nfrom pkg import geo\n\n\nclass P(nn.Module):\n"
              "    def _call_kernel(self, functional, inpt):\n        return functional(inpt, [0.0])\n\n"
              "    def forward(self, x):\n        return self._call_kernel(geo.perspective_image, x)\n")
    write(tmp_path, {"pkg/__init__.py": "", "pkg/geo.py": GEO, "pkg/t.py": by_ref})
    got = {(f.path, f.line, f.rule) for f in findings(tmp_path, jobs=1)}
    assert got == {("pkg/geo.py", 4, "PTC307"), ("pkg/geo.py", 5, "PTC307")}
