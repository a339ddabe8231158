"""`pt2bot init`: write a starting pt2bot.yml for a repository.

Discovery is static (the AST of every .py file; nothing is imported): the `nn.Module`
subclasses (directly, through torch's module classes, or through other classes of the repo)
that define or inherit a `forward`. The files are those `pt2bot check` reads, less tests, docs
and virtual environments; what a name refers to (imports, relative imports, re-exports, star
imports) and which classes are modules is the analysis engine's answer, as in `pt2bot check`
(pt2bot/analysis/graph.py). For each, the constructor's required arguments get small guessed
values by name (`dim` → 32, `depth` → 2, `num_tokens` → 100, ...), and the input of
`forward`'s first parameter is inferred from the first layer it goes through (`self.layer(x)`,
through `nn.Sequential`, conditional expressions and the repo's own module classes, up to
three levels deep):

    nn.Embedding(n, d)  → int64 ids [batch, seq] in [0, n)
    nn.Conv2d(c, ...)   → [batch, c, height, width]   (height = width = image_size or 32)
    nn.Conv1d(c, ...)   → [batch, c, length]
    nn.Linear(d, ...)   → [batch, d]

When no first layer is recognised, constructor names are the fallback (`image_size` and
`channels` → an image; `num_tokens`/`vocab_size` → ids; `dim` → [batch, seq, dim]), said
in a comment. What could not be inferred (a required constructor argument without a guess,
another required forward argument, no input at all) is written as a commented-out entry
with the reason. Classes that other found classes build in their constructors are listed
as building blocks in a comment, not proposed.

The text is validated with the project's config loader (pt2bot.configfile.load_config) before
it is written; an existing pt2bot.yml is never overwritten without `--force`. `--check`
runs each proposed model once (the smoke run's "breaks" phase, in its own worker process:
the model is built and every shape case runs eagerly) and keeps the entries that ran; the
others are commented out with the error.
"""
from __future__ import annotations

import ast
import datetime
import os
import re
import tempfile
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from pt2bot.analysis.graph import Index
from pt2bot.analysis.infer import ModuleContext, Rules
from pt2bot.analysis.model import FileSummary, dotted, import_bindings, import_name
from pt2bot.analysis.walk import skeleton_module
from pt2bot.errors import UserError
from pt2bot.jsonio import atomic_write_bytes
from pt2bot.static.discover import discover_files, warn
from pt2bot.static.files import TOO_DEEP, parse_source, read_source

CONFIG_NAME = "pt2bot.yml"
SCHEMA_LINE = ("# yaml-language-server: $schema=https://raw.githubusercontent.com/<owner>/"
               "pt2bot/main/pt2bot/schemas/pt2bot.schema.json")
_MAX_DEPTH = 3

# Small values that make a model build and run fast on a CPU; consistent with each other
# (dim divisible by heads, dim_head * heads == dim, image_size divisible by patch_size).
GUESSES: dict[str, int] = {}
for _names, _value in (
        (("dim", "d_model", "hidden_dim", "hidden_size", "embed_dim", "emb_dim", "n_embd",
          "width", "in_features", "dim_in", "in_dim", "input_dim", "d_in", "n_embed"), 32),
        (("depth", "n_layer", "n_layers", "num_layers", "layers", "num_blocks"), 2),
        (("heads", "n_head", "n_heads", "num_heads", "nhead", "num_attention_heads"), 2),
        (("dim_head", "head_dim", "d_head"), 16),
        (("mlp_dim", "ff_dim", "dim_ff", "d_ff", "hidden", "ffn_dim", "intermediate_size",
          "hidden_features"), 64),
        (("num_tokens", "vocab", "vocab_size", "n_vocab", "num_embeddings", "n_tokens"), 100),
        (("seq_len", "max_seq_len", "block_size", "max_len", "context_length", "n_ctx",
          "max_length", "num_patches"), 16),
        (("image_size", "img_size", "image_height", "image_width"), 32),
        (("patch_size", "patch", "patch_height", "patch_width"), 8),
        (("channels", "in_channels", "in_chans", "num_channels", "in_ch"), 3),
        (("num_classes", "n_classes", "classes", "out_features", "dim_out", "out_dim",
          "output_dim", "d_out", "num_labels"), 10)):
    for _n in _names:
        GUESSES[_n] = _value
_TOKENS = ("num_tokens", "vocab_size", "vocab", "n_vocab", "num_embeddings", "n_tokens")
_SEQ = ("seq_len", "max_seq_len", "block_size", "max_len", "context_length", "n_ctx",
        "max_length")
_IMAGE = ("image_size", "img_size")
_CHANNELS = ("channels", "in_channels", "in_chans", "num_channels")
_DIMS = ("dim", "d_model", "hidden_dim", "hidden_size", "embed_dim", "n_embd", "emb_dim")


# --------------------------------------------------------------------------- data

@dataclass(frozen=True)
class Param:
    name: str
    required: bool
    default: Any = None            # the literal default, when it evaluates
    positional_only: bool = False


@dataclass(frozen=True)
class InputGuess:
    name: str | None               # forward() parameter (None: positional)
    shape: tuple[str | int, ...]
    dtype: str = "float32"
    high: int | None = None


@dataclass(frozen=True)
class Proposal:
    """One model entry: live when `problems` is empty, else written commented out."""
    name: str
    entry: str                     # "pkg.mod:Class"
    path: str
    line: int
    kwargs: dict[str, Any] = field(default_factory=dict)
    guessed: tuple[str, ...] = ()  # kwargs whose values are guesses
    inputs: tuple[InputGuess, ...] = ()
    shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)
    dynamic: tuple[str, ...] = ()
    how: str = ""                  # how the input was inferred (for the comment)
    problems: tuple[str, ...] = ()


@dataclass
class _Class:
    module: str
    name: str
    path: str
    node: ast.ClassDef
    names: ModuleContext       # its module's names (imports, top-level defs) as the engine reads them

    @property
    def qualname(self) -> str:
        return f"{self.module}.{self.name}"

    def method(self, name: str) -> ast.FunctionDef | None:
        for n in self.node.body:
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name:
                return n  # type: ignore[return-value]
        return None


# --------------------------------------------------------------------------- discovery

# Directories with code in them but no model to propose; beside them, init skips what
# `pt2bot check` skips (pt2bot.static.discover.SKIP_DIRS, hidden directories) and every
# directory holding a `pyvenv.cfg` (a virtual environment, whatever its name).
NO_MODEL_DIRS = frozenset({"env", "tests", "test", "docs", "doc", "benchmarks"})


def iter_sources(root: str, note: Callable[[str], None] = warn) -> Iterator[tuple[str, str]]:
    """(repo-relative path, the path Python imports it by) of each Python file worth looking
    at: the files `pt2bot check` would read, less tests, docs and virtual environments. In a
    src layout (src/ without an `__init__.py`) a file is imported by its path below src/."""
    root = os.path.abspath(root)
    src_layout = not os.path.isfile(os.path.join(root, "src", "__init__.py"))
    venv: dict[str, bool] = {}

    def in_venv(dirs: list[str]) -> bool:
        for i in range(1, len(dirs) + 1):
            d = "/".join(dirs[:i])
            if d not in venv:
                venv[d] = os.path.isfile(os.path.join(root, d, "pyvenv.cfg"))
            if venv[d]:
                return True
        return False

    if not os.path.isdir(root):
        raise UserError(f"{root}: no such directory")
    for rel in discover_files(root, ["."], note=note):   # (".": the root's own name may hold `[` or `*`)
        *dirs, name = rel.split("/")
        if (name.startswith(("test_", "conftest", "setup.")) or name.endswith("_test.py")
                or NO_MODEL_DIRS.intersection(dirs) or in_venv(dirs)):
            continue
        path = rel[len("src/"):] if src_layout and dirs[:1] == ["src"] else rel
        if import_name(path):
            yield rel, path


class RepoClasses:
    """The repository's classes: the analysis engine's index of the tree (pt2bot.analysis.graph,
    as `pt2bot check` uses it: names through imports and re-exports, which classes are
    `nn.Module`s, torch's private bases included, methods through base classes) and each
    class's AST, where init reads constructors and first layers."""

    def __init__(self, root: str, note: Callable[[str], None] = warn) -> None:
        """`note`: where a skipped file is said (a located line, as `pt2bot check`'s PTC000)."""
        self.root = os.path.abspath(root)
        self.classes: dict[str, _Class] = {}
        self._local_imports: dict[ast.FunctionDef, dict[str, str]] = {}
        summaries: list[FileSummary] = []
        no_rules = Rules({}, [])
        for rel, path in iter_sources(self.root, note):
            data = read_source(self.root, rel)     # (a regular file: discover_files saw to it)
            tree = parse_source(data, rel)         # the check's guard: unreadable, unparsable, too deep
            if not isinstance(tree, ast.Module):
                note(f"{rel}:{tree[0]}: skipped: {tree[2]}")
                continue
            assert isinstance(data, bytes)
            try:
                # (the skeleton names the module after the path it is given: the import path)
                summary, live = skeleton_module(path, tree, data.decode("utf-8", "replace").splitlines(),
                                                no_rules, scan_module_code=False)
            except RecursionError:
                note(f"{rel}:{TOO_DEEP[0]}: skipped: {TOO_DEEP[2]}")
                continue
            summary.path = rel
            summaries.append(summary)
            for node in tree.body:
                if isinstance(node, ast.ClassDef):
                    self.classes[f"{summary.module}.{node.name}"] = _Class(
                        summary.module, node.name, rel, node, live.mod)
        self.index = Index.build(summaries)

    def resolve(self, expr: ast.AST, where: _Class, fn: ast.FunctionDef) -> str | None:
        """A name or attribute chain in method `fn` of class `where` → its qualified name, through
        re-exports too. The method's own imports count (`from timm.layers import RotaryEmbeddingMixed`
        inside a constructor), then its module's names."""
        local = self._local_imports.get(fn)
        if local is None:
            package = where.module if where.path.endswith("__init__.py") else where.module.rpartition(".")[0]
            local = self._local_imports[fn] = {
                name: target for node in ast.walk(fn) if isinstance(node, (ast.Import, ast.ImportFrom))
                for name, target in import_bindings(node, package)}
        name = dotted(expr)
        head, _, rest = (name or "").partition(".")
        if head in local:
            name = f"{local[head]}.{rest}" if rest else local[head]
        else:
            name = where.names.resolve(expr)
        return self.index.canonical(name) if name else None

    def is_module(self, qualname: str) -> bool:
        return self.index.is_module_class(qualname)

    def find_method(self, c: _Class, name: str) -> tuple[_Class, ast.FunctionDef] | None:
        """The method as the class inherits it, through the repo's classes."""
        found = self.index.method(c.qualname, name)
        owner = self.classes.get(found[:-len(name) - 1]) if found else None
        node = owner.method(name) if owner else None
        return (owner, node) if owner and node else None


# --------------------------------------------------------------------------- evaluation

_UNKNOWN = object()


def _eval(expr: ast.AST | None, env: dict[str, Any]) -> Any:
    """Literals, names from `env`, + - * // and tuples; anything else is _UNKNOWN."""
    if expr is None:
        return _UNKNOWN
    if isinstance(expr, ast.Constant):
        return expr.value
    if isinstance(expr, ast.Name):
        return env.get(expr.id, _UNKNOWN)
    if isinstance(expr, ast.Tuple):
        items = [_eval(e, env) for e in expr.elts]
        return _UNKNOWN if any(i is _UNKNOWN for i in items) else tuple(items)
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
        v = _eval(expr.operand, env)
        return -v if isinstance(v, (int, float)) else _UNKNOWN
    if isinstance(expr, ast.BinOp):
        a, b = _eval(expr.left, env), _eval(expr.right, env)
        if not (isinstance(a, int) and isinstance(b, int)):
            return _UNKNOWN
        ops: dict[type, Callable[[int, int], int]] = {
            ast.Add: lambda x, y: x + y, ast.Sub: lambda x, y: x - y,
            ast.Mult: lambda x, y: x * y, ast.FloorDiv: lambda x, y: x // y if y else 0}
        fn = ops.get(type(expr.op))
        return fn(a, b) if fn else _UNKNOWN
    return _UNKNOWN


def init_params(fn: ast.FunctionDef | None, skip_self: bool = True) -> list[Param]:
    if fn is None:
        return []
    a = fn.args
    pos = [*a.posonlyargs, *a.args]
    defaults: list[ast.AST | None] = [None] * (len(pos) - len(a.defaults)) + list(a.defaults)
    out = []
    for i, (arg, d) in enumerate(zip(pos, defaults)):
        if skip_self and i == 0:
            continue
        out.append(Param(arg.arg, d is None, None if d is None else _eval(d, {}),
                         positional_only=i < len(a.posonlyargs)))
    for arg, d in zip(a.kwonlyargs, a.kw_defaults):
        out.append(Param(arg.arg, d is None, None if d is None else _eval(d, {})))
    return out


# --------------------------------------------------------------------------- inference

@dataclass
class _Infer:
    index: RepoClasses
    needed: dict[str, int] = field(default_factory=dict)   # top-level kwargs to set

    def first_layer(self, c: _Class, env: dict[str, Any], depth: int = 0,
                    top: bool = True) -> tuple[InputGuess, str] | None:
        """The input of forward's first parameter from the first layer it goes through."""
        found = self.index.find_method(c, "forward")
        if found is None or depth > _MAX_DEPTH:
            return None
        owner, fwd = found
        params = init_params(fwd)
        if not params:
            return None
        x = params[0].name
        call = _first_consumer(fwd, x)
        if call is None:
            return None
        attr = _self_attr(call.func)
        if attr is None:
            return None
        init = self.index.find_method(c, "__init__")
        if init is None:
            return None
        assigned, local = _assignments(init[1])
        expr = assigned.get(attr)
        if expr is None:
            return None
        return self.layer(expr, env, local, init, depth, top)

    def layer(self, expr: ast.AST, env: dict[str, Any], local: dict[str, ast.AST],
              where: tuple[_Class, ast.FunctionDef], depth: int,
              top: bool) -> tuple[InputGuess, str] | None:
        """The input a layer built by `expr` takes (`where`: the constructor `expr` is in)."""
        if isinstance(expr, ast.IfExp):
            return (self.layer(expr.body, env, local, where, depth, top)
                    or self.layer(expr.orelse, env, local, where, depth, top))
        if isinstance(expr, ast.Name) and expr.id in local:
            return self.layer(local.pop(expr.id), env, local, where, depth, top)
        if not isinstance(expr, ast.Call):
            return None
        q = self.index.resolve(expr.func, *where) or ""
        kind = q.rsplit(".", 1)[-1] if q.startswith("torch.nn.") else None
        first = expr.args[0] if expr.args else None
        if kind == "Sequential" and expr.args:
            return self.layer(expr.args[0], env, local, where, depth, top)
        if kind in ("Embedding", "Conv2d", "Conv1d", "Linear"):
            if first is None:
                first = next((k.value for k in expr.keywords
                              if k.arg in ("num_embeddings", "in_channels", "in_features")),
                             None)
            v = self.value(first, env, top)
            if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
                return None
            if kind == "Embedding":
                return InputGuess(None, ("batch", "seq"), "int64", v), f"nn.Embedding({v}, ...)"
            if kind == "Conv2d":
                return (InputGuess(None, ("batch", v, "height", "width")),
                        f"nn.Conv2d({v}, ...)")
            if kind == "Conv1d":
                return InputGuess(None, ("batch", v, "length")), f"nn.Conv1d({v}, ...)"
            return InputGuess(None, ("batch", v)), f"nn.Linear({v}, ...)"
        sub = self.index.classes.get(q)
        if sub is not None and self.index.is_module(q) and depth < _MAX_DEPTH:
            sub_env = self.bind(sub, expr, env, top)
            got = self.first_layer(sub, sub_env, depth + 1, top=False)
            if got:
                return got[0], f"{got[1]} in {sub.name}"
        return None

    def value(self, expr: ast.AST | None, env: dict[str, Any], top: bool) -> Any:
        """Evaluate; a top-level constructor argument that is None gets a guess (and is
        then passed as a kwarg: `num_tokens=None` means "no embedding" in many models)."""
        v = _eval(expr, env)
        if v is None and top and isinstance(expr, ast.Name) and expr.id in GUESSES:
            self.needed[expr.id] = GUESSES[expr.id]
            env[expr.id] = GUESSES[expr.id]
            return GUESSES[expr.id]
        return v

    def bind(self, sub: _Class, call: ast.Call, env: dict[str, Any], top: bool) -> dict[str, Any]:
        init = self.index.find_method(sub, "__init__")
        params = init_params(init[1] if init else None)
        out = {p.name: p.default for p in params if not p.required}
        for p, a in zip([p for p in params if not p.name.startswith("*")], call.args):
            out[p.name] = self.value(a, env, top)
        for k in call.keywords:
            if k.arg:
                out[k.arg] = self.value(k.value, env, top)
        return {k: v for k, v in out.items() if v is not _UNKNOWN}


def _self_attr(expr: ast.AST) -> str | None:
    if (isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name)
            and expr.value.id == "self"):
        return expr.attr
    return None


def _first_consumer(fn: ast.FunctionDef, name: str) -> ast.Call | None:
    """The first `self.layer(name, ...)` call in statement order, while `name` still holds
    the input (other calls on it, like `torch.tanh(x)`, are passed over; once `name` is
    reassigned, e.g. `x = x.view(...)`, its shape is no longer the input's)."""
    for stmt in fn.body:
        for node in ast.walk(stmt):
            if (isinstance(node, ast.Call) and _self_attr(node.func) and node.args
                    and isinstance(node.args[0], ast.Name) and node.args[0].id == name):
                return node
        targets = (stmt.targets if isinstance(stmt, ast.Assign) else
                   [stmt.target] if isinstance(stmt, (ast.AugAssign, ast.AnnAssign)) else [])
        if any(isinstance(n, ast.Name) and n.id == name for t in targets for n in ast.walk(t)):
            return None
    return None


def _assignments(init: ast.FunctionDef) -> tuple[dict[str, ast.AST], dict[str, ast.AST]]:
    """`self.attr = expr` (the last one wins, as at run time) and local `name = expr`."""
    attrs: dict[str, ast.AST] = {}
    local: dict[str, ast.AST] = {}
    for node in ast.walk(init):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                attr = _self_attr(t)
                if attr:
                    # `self.ff1 = Scale(0.5, PreNorm(dim, self.ff1))`: keep the first real layer
                    refers_back = any(_self_attr(n) == attr for n in ast.walk(node.value))
                    if not (refers_back and attr in attrs):
                        attrs[attr] = node.value
                elif isinstance(t, ast.Name):
                    local[t.id] = node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            attr = _self_attr(node.target)
            if attr:
                attrs[attr] = node.value
    return attrs, local


# Mixed-case names of model families and layers: one word each, not split at every capital
# (`LLaMA` is not `l_la_ma`). Matched case-sensitively where a word starts, longest first.
_KNOWN_WORDS = tuple(sorted((
    "LLaMA", "LoRA", "QLoRA", "DoRA", "MoE", "ViT", "DeiT", "BEiT", "RoBERTa", "DeBERTa",
    "ConvNeXt", "XLNet", "NeoX", "SwiGLU", "GeGLU", "ReLU", "GeLU", "SiLU", "RoPE", "ALiBi"),
    key=len, reverse=True))
# One word of CamelCase: an acronym before a capitalised word (the `MLP` of `MLPVision`), an
# acronym with its digits (`GPT2`, `T5`), a word with its digits (`Conv2d`), or digits.
_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]+[0-9]*(?![a-z])|[A-Z]?[a-z]+(?:[0-9]+[a-z]*)*"
                   r"|[0-9]+")


def _snake(name: str) -> str:
    """TinyEncoder → tiny_encoder, TinyMLP → tiny_mlp, SimpleViT → simple_vit,
    gMLPVision → g_mlp_vision, LoRALinear → lora_linear, LLaMAMoE → llama_moe, GPT → gpt,
    GPT2LMHead → gpt2_lm_head: acronyms stay whole."""
    words: list[str] = []
    for part in re.split(r"[^A-Za-z0-9]+", name):
        i = 0
        while i < len(part):
            known = next((w for w in _KNOWN_WORDS if part.startswith(w, i)
                          and not part[i + len(w):i + len(w) + 1].islower()), None)
            m = None if known else _WORD.match(part, i)
            word = known or (m.group(0) if m else part[i])
            words.append(word.lower())
            i += len(word)
    return "_".join(w for w in words if w) or "model"


def _unique_names(models: list[Proposal]) -> list[Proposal]:
    """Every proposal with a name of its own. Classes of one name in several modules (a
    library's `GPT` in model.py, lora.py, adapter.py) are each named by as little of their
    module as tells them apart (`lora_gpt`, `llm_model_gpt` beside `other_model_gpt`): a
    counter (`gpt_4`) would say nothing about which is which. A counter is left for what
    the module cannot tell apart (two classes of one name in one module)."""
    groups: dict[str, list[int]] = {}
    for k, p in enumerate(models):
        groups.setdefault(p.name, []).append(k)
    names = [p.name for p in models]
    for base, members in groups.items():
        if len(members) < 2:
            continue
        parts = {k: [_snake(x) for x in models[k].entry.partition(":")[0].split(".")]
                 for k in members}
        for k in members:
            mine = parts[k]
            for n in range(1, len(mine) + 1):
                if all(parts[o][-n:] != mine[-n:] for o in members if o != k):
                    names[k] = "_".join([*mine[-n:], base])
                    break
    seen: dict[str, int] = {}
    out = []
    for p, name in zip(models, names):
        n = seen.get(name, 0)
        seen[name] = n + 1
        out.append(_with(p, name=name if not n else f"{name}_{n + 1}"))
    return out


def propose(index: RepoClasses, c: _Class) -> Proposal:
    """The entry for one module class (problems say why it cannot be live)."""
    init = index.find_method(c, "__init__")
    params = [p for p in init_params(init[1] if init else None)]
    problems: list[str] = []
    kwargs: dict[str, Any] = {}
    guessed: list[str] = []
    env: dict[str, Any] = {}
    for p in params:
        if not p.required:
            env[p.name] = p.default
            continue
        if p.name in GUESSES:
            kwargs[p.name] = env[p.name] = GUESSES[p.name]
            guessed.append(p.name)
        elif p.positional_only:
            problems.append(f"constructor argument {p.name} is positional-only")
        else:
            problems.append(f"no value for the constructor argument {p.name!r}")
    fwd = index.find_method(c, "forward")
    assert fwd is not None
    fparams = init_params(fwd[1])
    infer = _Infer(index)
    got = infer.first_layer(c, env) if fparams else None
    how = ""
    guess: InputGuess | None = None
    if got:
        guess, how = got
        how = f"from the first layer, {how}"
        for k, v in infer.needed.items():
            kwargs[k] = v
            guessed.append(k)
    else:
        guess, how = _from_constructor(params, kwargs, env, guessed)
    shapes: dict[str, tuple[int, ...]] = {}
    inputs: tuple[InputGuess, ...] = ()
    if not fparams:
        problems.append("forward() takes no input")
    elif guess is None:
        problems.append(f"cannot infer the input {fparams[0].name!r} (no known first layer)")
    else:
        first = fparams[0]
        guess = InputGuess(None if first.positional_only else first.name, guess.shape,
                           guess.dtype, guess.high)
        inputs = (guess,)
        seq = next((env.get(n) for n in _SEQ if isinstance(env.get(n), int)), None)
        img = next((env.get(n) for n in _IMAGE if isinstance(env.get(n), int)), None)
        for d in guess.shape:
            if d == "batch":
                shapes["batch"] = (2, 4)
            elif d == "seq":
                shapes["seq"] = (seq,) if seq else (16, 32)
            elif d in ("height", "width"):
                shapes[d] = (img or 32,)
            elif d == "length":
                shapes["length"] = (32,)
        more = [p.name for p in fparams[1:] if p.required]
        if more:
            problems.append(f"forward() also needs {', '.join(more)}: add inputs for "
                            f"{'them' if len(more) > 1 else 'it'}")
    dynamic = tuple(d for d, vs in shapes.items() if len(vs) > 1)
    line = c.node.lineno
    return Proposal(name=_snake(c.name), entry=f"{c.module}:{c.name}", path=c.path, line=line,
                    kwargs=kwargs, guessed=tuple(guessed), inputs=inputs, shapes=shapes,
                    dynamic=dynamic, how=how, problems=tuple(problems))


def _from_constructor(params: list[Param], kwargs: dict[str, Any], env: dict[str, Any],
                      guessed: list[str]) -> tuple[InputGuess | None, str]:
    names = {p.name for p in params}

    def value(n: str) -> int | None:
        v = env.get(n)
        if v is None and n in names:
            kwargs[n] = env[n] = GUESSES[n]
            guessed.append(n)
            v = GUESSES[n]
        return v if isinstance(v, int) and not isinstance(v, bool) else None

    for n in _TOKENS:
        if n in names and value(n):
            return (InputGuess(None, ("batch", "seq"), "int64", value(n)),
                    f"from the constructor's {n} (token ids)")
    for n in _IMAGE:
        if n in names and value(n):
            ch = next((value(c) for c in _CHANNELS if c in names), None) or 3
            return (InputGuess(None, ("batch", ch, "height", "width")),
                    f"from the constructor's {n} (an image)")
    for n in _DIMS:
        if n in names and value(n):
            return (InputGuess(None, ("batch", "seq", value(n))),
                    f"from the constructor's {n} (a sequence of {n}-sized vectors)")
    return None, ""


def discover(root: str, note: Callable[[str], None] = warn) -> tuple[list[Proposal], list[str]]:
    """(proposals, building blocks) for the repository at `root`. What cannot be read is said
    through `note` (a located line) and skipped."""
    index = RepoClasses(root, note)
    skipped: set[str] = set()

    def guarded(c: _Class, work: Callable[[], Any]) -> Any:
        # The reading of a class (constructor defaults evaluated, names resolved, layers
        # followed) recurses over its expressions: a file the parser and the skeleton took may
        # still nest deeper than that can go. The class is skipped, said where it is.
        try:
            return work()
        except RecursionError:
            note(f"{c.path}:{c.node.lineno}: class {c.name} skipped: {TOO_DEEP[2]}")
            skipped.add(c.qualname)
            return None

    candidates = []
    for q, c in sorted(index.classes.items(), key=lambda kv: (kv[1].path, kv[1].node.lineno)):
        if not c.name.startswith("_") and guarded(c, lambda: _is_model_class(index, c)):
            candidates.append(c)
    built_inside: set[str] = set()
    for c in candidates:
        built_inside.update(guarded(c, lambda: _built_inside(index, c)) or ())
    candidates = [c for c in candidates if c.qualname not in skipped]
    blocks = [f"{c.module}:{c.name}" for c in candidates if c.qualname in built_inside]
    models = [p for c in candidates if c.qualname not in built_inside
              if (p := guarded(c, lambda: propose(index, c))) is not None]
    return _unique_names(models), blocks


def _is_model_class(index: RepoClasses, c: _Class) -> bool:
    """An `nn.Module` with a `forward` of its own or inherited, not an abstract one."""
    if not index.is_module(c.qualname):
        return False
    found = index.find_method(c, "forward")
    return found is not None and not _is_abstract(found[1])


def _built_inside(index: RepoClasses, c: _Class) -> set[str]:
    """The classes `c`'s constructor calls (building blocks, not models of their own)."""
    init = index.find_method(c, "__init__")
    if init is None:
        return set()
    out = set()
    for node in ast.walk(init[1]):
        if isinstance(node, ast.Call):
            q = index.resolve(node.func, *init)
            if q and q != c.qualname:
                out.add(q)
    return out


def _with(p: Proposal, **changes: Any) -> Proposal:
    import dataclasses

    return dataclasses.replace(p, **changes)


def _is_abstract(fn: ast.FunctionDef) -> bool:
    body = [s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    return (not body or (len(body) == 1 and isinstance(body[0], ast.Raise)) or
            (len(body) == 1 and isinstance(body[0], ast.Pass)))


# --------------------------------------------------------------------------- YAML

def _scalar(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "null"
    if isinstance(v, (int, float)):
        return repr(v)
    s = str(v)
    return s if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.:-]*", s) else '"' + s.replace('"', "'") + '"'


def _flow(d: dict[str, Any]) -> str:
    return "{" + ", ".join(f"{k}: {_flow_value(v)}" for k, v in d.items()) + "}"


def _flow_value(v: Any) -> str:
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_scalar(x) for x in v) + "]"
    if isinstance(v, dict):
        return _flow(v)
    return _scalar(v)


def _comment(text: str) -> str:
    return " ".join(str(text).split())[:300]


def entry_lines(p: Proposal, note: str | None = None) -> list[str]:
    """The YAML lines of one entry (commented out when it has problems or a note)."""
    lines = [f"  - name: {_scalar(p.name)}",
             f"    entry: {_scalar(p.entry)}"]
    if p.kwargs:
        guessed = f"   # guessed: {', '.join(p.guessed)}" if p.guessed else ""
        lines.append(f"    kwargs: {_flow(p.kwargs)}{guessed}")
    if p.inputs:
        lines.append(f"    inputs:{'   # ' + _comment(p.how) if p.how else ''}")
        for i in p.inputs:
            spec: dict[str, Any] = {}
            if i.name:
                spec["name"] = i.name
            spec["shape"] = list(i.shape)
            spec["dtype"] = i.dtype
            if i.high is not None:
                spec.update(low=0, high=i.high)
            lines.append(f"      - {_flow(spec)}")
    if p.shapes:
        lines.append("    shapes:")
        lines += [f"      {d}: {_flow_value(list(v))}" for d, v in p.shapes.items()]
    if p.dynamic:
        lines.append(f"    dynamic: {_flow_value(list(p.dynamic))}")
    reasons = list(p.problems) + ([note] if note else [])
    if not reasons:
        return lines
    head = [f"  # {p.entry} ({p.path}:{p.line}) is not proposed: "
            f"{_comment('; '.join(reasons))}"]
    return head + ["  # " + ln[2:] for ln in lines]


def render_config(proposals: list[Proposal], blocks: list[str], packages: list[str],
                  notes: dict[str, str] | None = None, *, checked: bool = False) -> str:
    notes = notes or {}
    today = datetime.date.today().isoformat()
    out = [SCHEMA_LINE,
           f"# Written by `pt2bot init{' --check' if checked else ''}` on {today}. Check the "
           "guessed kwargs and shapes:",
           "# they are small values to make each model build and run, not your real sizes.",
           "version: 1"]
    if packages:
        out.append(f"static: {{paths: [{', '.join(_scalar(p + '/') for p in packages)}]}}")
    live = [p for p in proposals if not p.problems and p.name not in notes]
    out.append("models:" if live else "models: []")
    for p in proposals:
        if not p.problems and p.name not in notes:
            out += entry_lines(p)
    for p in proposals:
        if p.problems or p.name in notes:
            out += entry_lines(p, notes.get(p.name))
    if blocks:
        out.append("# Also found, as building blocks of the models above (add them if you "
                   "compile them alone):")
        out += [f"#   {b}" for b in blocks]
    out.append("run: {device: auto}")
    return "\n".join(out) + "\n"


def _packages(proposals: list[Proposal]) -> list[str]:
    tops = []
    for p in proposals:
        top = p.path.split("/")[0] if "/" in p.path else ""
        if top and top not in tops:
            tops.append(top)
    return tops


# --------------------------------------------------------------------------- the command

def validate(text: str, directory: str) -> Any:
    """Load the text with the project's config loader, from a file in `directory`."""
    from pt2bot.configfile import load_config

    fd, tmp = tempfile.mkstemp(prefix=".pt2bot-init-", suffix=".yml", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        return load_config(tmp)
    finally:
        os.unlink(tmp)


def check_models(text: str, root: str) -> dict[str, str]:
    """Run each live entry once (phases=["breaks"]); model name → why it did not run."""
    from pt2bot.configfile import load_config
    from pt2bot.smoke import run_models

    fd, tmp = tempfile.mkstemp(prefix=".pt2bot-init-", suffix=".yml", dir=root)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        config = load_config(tmp)
        if not config.models:
            return {}
        with tempfile.TemporaryDirectory(prefix="pt2bot-init-") as out_dir:
            results = run_models(config, repo_root=root, out_dir=out_dir, phases=["breaks"],
                                 device="cpu")
    finally:
        os.unlink(tmp)
    failed = {}
    for run in results.models:
        if run.status != "ok" or run.phase_errors:
            err = run.error or (run.phase_errors[0] if run.phase_errors else None)
            kind, message = (err.kind, err.message) if err else (None, None)
            where = f" at {err.path}:{err.line}" if err and err.path else ""
            failed[str(run.name)] = (f"--check: {run.status} ({kind or '?'})"
                                     f"{where}: {message or ''}")
    return failed


def init_config(root: str, *, check: bool = False, force: bool = False,
                out: str | None = None) -> tuple[str, list[Proposal], dict[str, str]]:
    """Write the starting config; returns (path, proposals, --check failures)."""
    root = os.path.abspath(root)
    path = os.path.abspath(out or os.path.join(root, CONFIG_NAME))
    if os.path.exists(path) and not force:
        raise UserError(f"{os.path.relpath(path)} exists; pass --force to overwrite it")
    proposals, blocks = discover(root)
    packages = _packages(proposals)
    text = render_config(proposals, blocks, packages)
    validate(text, os.path.dirname(path))
    failures: dict[str, str] = {}
    if check:
        failures = check_models(text, root)
        text = render_config(proposals, blocks, packages, failures, checked=True)
        validate(text, os.path.dirname(path))
    atomic_write_bytes(path, text.encode("utf-8"))
    return path, proposals, failures


def cli_init(args: Any) -> int:
    path, proposals, failures = init_config(args.root, check=args.check, force=args.force)
    live = [p for p in proposals if not p.problems and p.name not in failures]
    shown = os.path.relpath(path) if path.startswith(os.getcwd() + os.sep) else path
    print(f"pt2bot: wrote {shown}: {len(live)} model(s) proposed"
          + (f", {len(proposals) - len(live)} commented out" if len(proposals) > len(live)
             else ""))
    for p in proposals:
        state = ("ok" if p in live else
                 failures.get(p.name) or "; ".join(p.problems))
        print(f"pt2bot:   {p.name} ({p.entry}): {_comment(state)[:200]}")
    return 0


__all__ = ["GUESSES", "InputGuess", "Proposal", "check_models", "cli_init",
           "discover", "init_config", "propose", "render_config", "RepoClasses", "validate"]
