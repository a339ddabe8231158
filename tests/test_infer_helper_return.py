"""The tensor kinds of what a function or method of the same file returns
(pt2bot/analysis/infer.py ModuleContext.helper_return_kind): surely a tensor or not typed at all.
What dynamo does with the typed cases is tested in tests/fixtures/rules/ptc201_helper_return.py
(tests/test_rules_torch.py); here, the cases where a doubt must leave the result untyped."""
from __future__ import annotations

from pt2bot.config import StaticConfig
from pt2bot.static import check_paths

HEAD = "import functools\nimport torch\nimport torch.nn as nn\nfrom other import External\n\n\n"


def findings(tmp_path, body: str) -> list[tuple[int, str]]:
    src = HEAD + body
    (tmp_path / "m.py").write_text(src)
    out = check_paths(str(tmp_path), ["m.py"], StaticConfig(select=("ALL",)), jobs=1)
    lines = src.splitlines()
    return [(lines[f.line - 1].strip(), f.rule) for f in out]


def test_helpers_not_surely_returning_a_tensor_are_untyped(tmp_path):
    body = '''
def gen():
    yield torch.rand(2)
    return torch.rand(2)


def walrus(x):
    if (n := x.sum()) > 0:
        return n
    return x.sum()


def custom(f):
    return f


@custom
def decorated():
    return torch.rand(2)


@torch.no_grad()
def no_grad():
    return torch.rand(2)


@functools.lru_cache(maxsize=None)
def cached():
    return torch.ones(1)


def maybe(p: bool = False):
    b = None
    if p:
        b = torch.rand(1)
    return b


def reset_in_loop(n: int = 3):
    b = torch.rand(1)
    for _ in range(n):
        if n > 5:
            return b
        b = None
    return torch.rand(1)


def ping(n: int = 1):
    if n > 0:
        return pong(n - 1)
    return torch.rand(1)


def pong(n: int = 1):
    return ping(n) + 0.5 if n else 0.5


def param(x):
    return x


def count(x, exact: bool = False):
    n = 0
    if exact:
        return x.sum()
    return n


def matched(mode: str = "a"):
    match mode:
        case "a":
            return torch.rand(1)
    return torch.zeros(1)


def choose(x, p: bool = False):
    return x.sum() if p else 0


class M(nn.Module):
    def forward(self, x):
        a = gen()
        b = walrus(x)
        c = decorated()
        d = no_grad()
        e = cached()
        f = maybe()
        g = reset_in_loop()
        h = pong()
        i = param(x)
        j = choose(x)
        k = count(x)
        m = matched()
        if a.sum() > 0 or b.sum() > 0 or c.sum() > 0:
            x = x + 1
        if d.sum() > 0:
            x = x + 2
        if e.sum() > 0:
            x = x + 3
        if f is None or f.sum() > 0 or g.sum() > 0 or h.sum() > 0:
            x = x + 4
        if i[0] > 0 or j > 0 or k > 0 or m.sum() > 0:
            x = x + 5
        return x
'''
    assert findings(tmp_path, body) == [("if d.sum() > 0:", "PTC201"), ("if e.sum() > 0:", "PTC201")]


def test_methods_are_looked_up_through_this_files_classes(tmp_path):
    body = '''
class Local(nn.Module):
    def noise(self):
        return torch.rand(2)


class FromLocalBase(Local):
    def forward(self, x):
        if self.noise().sum() > 0:
            return x + 1
        return x


class FromExternalBase(External, Local):
    # `External` (another file) may define `noise` and comes first in the MRO
    def forward(self, x):
        if self.noise().sum() > 0:
            return x + 1
        return x


class Overridden(nn.Module):
    def noise(self):
        return torch.rand(2)

    def forward(self, x):
        if self.noise().sum() > 0:
            return x + 1
        return x


class Override(Overridden):
    def noise(self):
        return 0.5


class Shadowed(nn.Module):
    def noise(self):
        return torch.rand(2)

    def forward(self, x, other=None):
        self = other.module    # no longer this module
        if self.noise().sum() > 0:
            return x + 1
        return x
'''
    assert findings(tmp_path, body) == [("if self.noise().sum() > 0:", "PTC201")]


def test_a_helpers_tensor_has_no_sizes_but_its_values_are_tensors(tmp_path):
    # the sizes of what a helper returns are the helper's (torchvision's get_params returns
    # `torch.randperm(4)`): no PTC202/PTC301/PTC303 on them, a branch on their values breaks
    body = '''
def order():
    return torch.randperm(4)


def pair():
    return torch.rand(2), 0.5


class M(nn.Module):
    def forward(self, x):
        idx = order()
        probs, p = pair()
        a, *rest = pair()
        for i in idx:
            x = x + i
        if idx.shape[0] > 2 or idx.size(0) > 2:
            x = x * 2
        for j in range(len(idx)):
            x = x + j
        if probs[0] <= p:
            x = x - 1
        if a.sum() > 0:
            x = x - 2
        return x


class Shadow(nn.Module):
    def forward(self, x, order=None):
        # a parameter named like the helper is not the helper
        if order().sum() > 0:
            x = x + 3
        return x
'''
    assert findings(tmp_path, body) == [("if probs[0] <= p:", "PTC201")]


def test_a_submodule_of_this_file_returns_what_its_forward_surely_returns(tmp_path):
    """flux's autoencoder: `h = self.conv_in(z)` a tensor, then `h = self.mid.block_1(h)`, a
    `ResnetBlock` of the same file held in a plain `nn.Module()` container: the result was
    no longer read as a tensor, and a PR's `if h.abs().max() > 6e4:` after it had no finding."""
    body = '''
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        return self.lin(x)


class Pair(nn.Module):
    def forward(self, x):
        return x, x


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()
        self.pair = Pair()
        self.mid = nn.Module()
        self.mid.block_1 = Block()
        self.mid.norm = nn.LayerNorm(4)
        self.other = External()

    def forward(self, z):
        h = self.block(z)
        if h.abs().max() > 1:
            h = h * 2
        h = self.mid.block_1(h)
        if h.abs().max() > 2:
            h = h * 2
        h = self.mid.norm(h)
        if h.abs().max() > 3:
            h = h * 2
        p = self.pair(h)
        if p:
            h = h * 2
        o = self.other(h)
        if o:
            h = h * 2
        return h
'''
    got = [(line, rule) for line, rule in findings(tmp_path, body) if rule == "PTC201"]
    assert got == [("if h.abs().max() > 1:", "PTC201"), ("if h.abs().max() > 2:", "PTC201"),
                   ("if h.abs().max() > 3:", "PTC201")], got
