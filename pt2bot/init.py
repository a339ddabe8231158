"""`pt2bot init`: write a starting pt2bot.yml for a repository.

Discovery is static (the AST of every .py file; nothing is imported): the `nn.Module`
subclasses (directly, through torch's module classes, or through other classes of the repo)
that define or inherit a `forward`. The files are those `pt2bot check` reads, less tests, docs
and virtual environments; what a name refers to (imports, relative imports, re-exports, star
imports) and which classes are modules is the analysis engine's answer, as in `pt2bot check`
(pt2bot/analysis/graph.py). For each, the constructor's required arguments get small guessed values
by name (`dim` → 32, `depth` → 2, `num_tokens` → 100, ...; a large size default is lowered to
the same), and the input of `forward`'s first parameter is inferred from the first layer it goes
through (`self.layer(x)`, `self.transformer.wte(x)` through `nn.ModuleDict`, `for block in
self.blocks` through `nn.ModuleList`, `self.model(input_ids=x)` by keyword, through
`nn.Sequential`, conditional expressions and the repo's own module classes, up to three levels
deep):

    nn.Embedding(n, d)  → int64 ids [batch, seq] in [0, n)
    nn.Conv2d(c, ...)   → [batch, c, height, width]   (height = width = image_size or 32)
    nn.Conv1d(c, ...)   → [batch, c, length]
    nn.Linear(d, ...)   → [batch, d]

(a subclass of one of them that keeps its constructor, whisper's `class Conv1d(nn.Conv1d)`,
the same). A count of one part of a model is guessed as the count (`n_audio_head` as
`n_head`, `n_text_ctx` as `n_ctx`).

A constructor argument that takes a config object of the repository (found by annotation, by
a `config_class` attribute, or by the fields the constructor reads) becomes the entry's
`config:` (pt2bot.config.ConfigObject): the config class (a dataclass, a Hugging Face-style
`PretrainedConfig` subclass, or a plain class) with its size fields set small and consistent,
or, when a required field cannot be guessed, a named preset through a factory classmethod
(`Config.from_name`) with the sizes overridden. Its fields are values for the layers
(`nn.Embedding(config.vocab_size, ...)`).

A `forward` that differentiates inside itself (`torch.autograd.grad`, `.backward()`: a force
field's forces) gets `grad: true`, as the smoke run's default `torch.no_grad()` would make it
raise. A model whose package defines an autograd.Function (guided-diffusion's gradient
checkpointing) gets `grad: true` commented out, saying why: the Function's backward, where
dynamo may break, runs only with autograd on.

When no first layer is recognised, constructor names, config fields and forward's parameter
name and use are the fallback (`image_size` and `channels` → an image; `num_tokens`/`vocab_size`
or a parameter named `tokens` → ids; a parameter forward indexes a table with, or named `heads`,
`relations`, `*_idx` → ids [batch] below the count its kind names (`n_entities`); `dim` →
[batch, seq, dim]), said in a comment. Further required parameters of forward get inputs too
(_more_input: a time, a mask, their own first layer's input, ids, else one like the data input;
a time named first hands the data input to the parameter after it; a graph's `edge_index` makes
the data input node features, `_from_constructor`). An optional parameter of forward that
defaults to None and that forward tests against None (`targets=None`, a language model's
loss) gets the same guess as a commented-out input with the line of that test: the default
path runs as callers run it, and the user sees which branch is left and how to run it; one that
forward reads as another object (`kv_cache.get_pos()`, no tensor's attribute) is said in a comment
instead, with the way to build it (an input factory). A weight-setting method of the class that
its constructor never calls (`init_weights()`, nanochat's GPT) is said above the entry. What
could not be inferred (a required constructor argument without a guess, a forward argument
annotated as a Python value, no input at all) is written as a commented-out entry with the
reason. Sizes a staged model ties together stay consistent (`_fit_staged_sizes`: a width each
stage's heads divide, an image size left at its default beside a window size). Classes that other found
classes build in their constructors (directly or through a helper function of the repo) or hand
on to be built (`downsample=PatchMerging`), classes
given a model's config but fed a hidden state, and classes whose name says layer (`LoRALinear`,
`...Norm`, `...Loss`) are listed as building blocks and layers in a comment, not proposed.

The text is validated with the project's config loader (pt2bot.configfile.load_config) before
it is written; an existing pt2bot.yml is never overwritten without `--force`. `--check`
runs each proposed model once (the smoke run's "breaks" phase, in its own worker process:
the model is built and every shape case runs eagerly) and keeps the entries that ran; the
others are commented out with the error. It prints what it ran and what it kept, model by
model (`Checked`).
"""
from __future__ import annotations

import ast
import datetime
import functools
import os
import re
import sys
import tempfile
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Collection, Iterator, Sequence

from pt2bot.analysis.graph import Index
from pt2bot.analysis.infer import CONTAINERS, ModuleContext, Rules
from pt2bot.analysis.model import FileSummary, dotted, import_bindings, import_name
from pt2bot.analysis.walk import skeleton_module
from pt2bot.errors import UserError
from pt2bot.jsonio import atomic_write_bytes
from pt2bot.static.discover import discover_files, warn
from pt2bot.static.files import TOO_DEEP, parse_source, read_source

CONFIG_NAME = "pt2bot.yml"
# (no `$schema` modeline: pt2bot has no address of its own to point one at, and a new user's
# file began with one holding a placeholder, `<owner>`; the schema ships with the package)
SCHEMA_LINE = ("# This file's JSON Schema is pt2bot/schemas/pt2bot.schema.json in the installed pt2bot "
               "package: an editor\n# validates it with `# yaml-language-server: $schema=<that file's "
               "path>` as a first line.")
_MAX_DEPTH = 3

# Small values that make a model build and run fast on a CPU; consistent with each other
# (dim divisible by heads, dim_head * heads == dim, image_size divisible by patch_size).
GUESSES: dict[str, int] = {}
for _names, _value in (
        (("dim", "d_model", "hidden_dim", "hidden_size", "embed_dim", "emb_dim", "n_embd",
          "width", "in_features", "dim_in", "in_dim", "input_dim", "d_in", "n_embed",
          "embedding_dim", "embedding_size", "latent_dim",
          # a UNet's base width (guided diffusion's `model_channels`, minDiffusion's `n_feat`):
          # its GroupNorm takes 32 groups
          "model_channels", "base_channels", "n_feat", "n_state"), 32),
        # a UNet's blocks per resolution: one is the smallest that builds each level
        (("num_res_blocks", "n_res_blocks", "num_resnet_blocks"), 1),
        (("depth", "n_layer", "n_layers", "num_layers", "layers", "num_blocks",
          "num_hidden_layers", "num_encoder_layers", "num_decoder_layers", "encoder_layers",
          "decoder_layers"), 2),
        # (key/value heads and query groups too: they must divide the heads)
        (("heads", "n_head", "n_heads", "num_heads", "nhead", "num_attention_heads",
          "attention_heads", "num_key_value_heads", "n_kv_heads", "num_kv_heads",
          "n_query_groups", "encoder_attention_heads", "decoder_attention_heads", "latent_heads"), 2),
        # a Perceiver's latent array: its length, like a sequence's, but not the input's
        (("num_latents",), 16),
        (("dim_head", "head_dim", "d_head", "head_size", "d_kv", "kv_channels", "head_width"), 16),
        (("mlp_dim", "ff_dim", "dim_ff", "d_ff", "hidden", "ffn_dim", "intermediate_size",
          "hidden_features", "n_inner", "dim_feedforward", "moe_intermediate_size",
          "encoder_ffn_dim", "decoder_ffn_dim"), 64),
        (("num_tokens", "vocab", "vocab_size", "n_vocab", "num_embeddings", "n_tokens"), 100),
        (("seq_len", "max_seq_len", "block_size", "max_len", "context_length", "n_ctx",
          "max_length", "num_patches", "max_seq_length", "max_position_embeddings",
          "n_positions"), 16),
        # experts: only lowered (a default of 0 means "no experts"), never switched on
        (("num_experts", "n_expert", "n_experts", "num_local_experts"), 4),
        (("num_experts_per_tok", "n_expert_per_token", "num_experts_per_token"), 2),
        (("image_size", "img_size", "image_height", "image_width", "image_resolution",
          "input_resolution"), 32),
        (("patch_size", "patch", "patch_height", "patch_width"), 8),
        (("channels", "in_channels", "in_chans", "num_channels", "in_ch", "n_channel", "n_channels"), 3),
        # a spectrogram's mel bands (whisper's `n_mels`): the count its models are trained on
        (("n_mels", "num_mels", "n_mel", "n_mel_bins", "num_mel_bins"), 80),
        (("num_classes", "n_classes", "classes", "out_features", "dim_out", "out_dim",
          "output_dim", "d_out", "num_labels"), 10)):
    for _n in _names:
        GUESSES[_n] = _value
_TOKENS = ("num_tokens", "vocab_size", "vocab", "n_vocab", "num_embeddings", "n_tokens")
_SEQ = ("seq_len", "max_seq_len", "block_size", "max_len", "context_length", "n_ctx",
        "max_length", "max_seq_length", "max_position_embeddings", "n_positions")
_HEAD_DIMS = ("dim_head", "head_dim", "d_head", "head_size", "d_kv", "kv_channels", "head_width")
_CLASSES = ("classes", "num_classes", "n_classes", "out_features", "dim_out", "out_dim",
            "output_dim", "d_out", "num_labels", "layers", "hidden", "vocab", "width", "patch",
            "heads")   # (too general to guess a prefixed name by: `num_group_layers` is not a depth)
_EXPERTS = ("num_experts", "n_expert", "n_experts", "num_local_experts", "num_experts_per_tok",
            "n_expert_per_token", "num_experts_per_token")
_IMAGE = ("image_size", "img_size")
# an image's side for an input known to be an image (by its first layer or its docstring): a
# latent diffusion model's `input_size` or `sample_size` too
_IMAGE_SIZES = _IMAGE + ("image_resolution", "input_resolution", "input_size", "sample_size", "resolution")
_CHANNELS = ("channels", "in_channels", "in_chans", "num_channels")
_DIMS = ("dim", "d_model", "hidden_dim", "hidden_size", "embed_dim", "n_embd", "emb_dim")


# --------------------------------------------------------------------------- data

@dataclass(frozen=True)
class Param:
    name: str
    required: bool
    default: Any = None            # the literal default, when it evaluates
    positional_only: bool = False
    annotation: ast.AST | None = field(default=None, compare=False)


@dataclass(frozen=True)
class InputGuess:
    name: str | None               # forward() parameter (None: positional)
    shape: tuple[str | int, ...]
    dtype: str = "float32"
    high: int | None = None
    # a float input's range where forward's docstring says it (`non-negative magnitudes`):
    # drawn uniform in [0, 1) instead of a standard normal (`_doc_range`)
    nonnegative: bool = False


@dataclass(frozen=True)
class ConfigGuess:
    """A model's `config:` entry: the config object its constructor takes, built from the
    config class with small sizes (or from a named preset through a factory classmethod)."""
    entry: str                     # "pkg.mod:Config" or "pkg.mod:Config.from_name"
    kwargs: dict[str, Any]
    guessed: tuple[str, ...]
    arg: str | None                # the constructor's keyword for it (None: first positional)
    kind: str                      # "dataclass config", "Hugging Face-style config from the preset 'x'", ...
    path: str
    line: int


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
    # what `forward` differentiates with (`torch.autograd.grad`): its calls need autograd on
    grad: str = ""
    # where no `grad`: an autograd.Function of the model's package, whose backward the
    # default no_grad run never traces (written as a commented-out `grad: true`)
    grad_hint: str = ""
    problems: tuple[str, ...] = ()
    config: tuple[ConfigGuess, ...] = ()   # one per constructor parameter that takes one
    # forward's optional tensors (`targets=None`) whose branch the proposed inputs never run:
    # (the input a user adds to run it, how it was guessed, the line that tests it)
    optional: tuple[tuple[InputGuess, str, str], ...] = ()
    # forward's optional parameters tested against None that it reads as another object
    # (nanochat's `kv_cache.get_pos()`): no tensor input runs their branch (the name, what it
    # reads, the line that tests it)
    objects: tuple[tuple[str, str, str], ...] = ()
    # a method of the class that sets its weights and that its constructor never calls
    # (nanochat's `init_weights()`: "this __init__ function runs in meta device context")
    uncalled_init: str = ""


@dataclass
class _Class:
    module: str
    name: str
    path: str
    node: ast.ClassDef             # (a FunctionDef in RepoClasses.functions)
    names: ModuleContext       # its module's names (imports, top-level defs) as the engine reads them
    tree: ast.Module | None = None   # its module's AST (where a config's presets are read)

    @property
    def qualname(self) -> str:
        return f"{self.module}.{self.name}"

    def method(self, name: str) -> ast.FunctionDef | None:
        """The class's method `name` as Python binds it: its last definition (the `@overload`
        stubs before it, whose body is `...`, read as abstract, dropped recurrentgemma's
        every block from init's proposals)."""
        found = None
        for n in self.node.body:
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name:
                found = n
        return found  # type: ignore[return-value]


# --------------------------------------------------------------------------- discovery

# Directories with code in them but no model to propose; beside them, init skips what
# `pt2bot check` skips (pt2bot.static.discover.SKIP_DIRS, hidden directories) and every
# directory holding a `pyvenv.cfg` (a virtual environment, whatever its name).
NO_MODEL_DIRS = frozenset({"env", "tests", "test", "docs", "doc", "benchmarks"})


def iter_sources(root: str, note: Callable[[str], None] = warn) -> Iterator[tuple[str, str]]:
    """(repo-relative path, the path Python imports it by) of each Python file worth looking
    at: the files `pt2bot check` would read, less tests, docs and virtual environments. In a
    src layout (src/ without an `__init__.py`) a file is imported by its path below src/,
    unless the repository's own code imports it as `src.` (V-JEPA's `from src.models.utils
    import ...`, a namespace package at the root: `models.predictor` read as a second module)."""
    root = os.path.abspath(root)
    files = list(discover_files(root, ["."], note=note)) if os.path.isdir(root) else []
    src_layout = not os.path.isfile(os.path.join(root, "src", "__init__.py")) and \
        not _imports_src(root, [f for f in files if f.startswith("src/")])
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
    for rel in files:   # (discovered from ".": the root's own name may hold `[` or `*`)
        *dirs, name = rel.split("/")
        if (name.startswith(("test_", "conftest", "setup.")) or name.endswith("_test.py")
                or NO_MODEL_DIRS.intersection(dirs) or in_venv(dirs)):
            continue
        path = rel[len("src/"):] if src_layout and dirs[:1] == ["src"] else rel
        if import_name(path):
            yield rel, path


_SRC_IMPORT = re.compile(rb"^[ \t]*(?:from[ \t]+src\.\w|import[ \t]+src\.\w)", re.M)


def _imports_src(root: str, files: Sequence[str]) -> bool:
    """Whether a file under src/ imports another as `src.<module>` (the repository's root on
    the path, src/ a namespace package)."""
    for rel in files:
        try:
            with open(os.path.join(root, rel), "rb") as fh:
                if _SRC_IMPORT.search(fh.read(200_000)):
                    return True
        except OSError:
            continue
    return False


class RepoClasses:
    """The repository's classes: the analysis engine's index of the tree (pt2bot.analysis.graph,
    as `pt2bot check` uses it: names through imports and re-exports, which classes are
    `nn.Module`s, torch's private bases included, methods through base classes) and each
    class's AST, where init reads constructors and first layers."""

    def __init__(self, root: str, note: Callable[[str], None] = warn) -> None:
        """`note`: where a skipped file is said (a located line, as `pt2bot check`'s PTC000)."""
        self.root = os.path.abspath(root)
        self.classes: dict[str, _Class] = {}
        # module-level functions (`def make_proj(config): return LoRALinear(...)`), read where
        # a constructor calls one to build its layers (node: the FunctionDef)
        self.functions: dict[str, _Class] = {}
        self._local_imports: dict[ast.FunctionDef, dict[str, str]] = {}
        self._configs: dict[str, _ConfigClass] = {}
        self._functions: dict[str, list[_Class]] = {}     # module -> the autograd.Functions it may run
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
                        summary.module, node.name, rel, node, live.mod, tree)
                elif isinstance(node, ast.FunctionDef):
                    self.functions[f"{summary.module}.{node.name}"] = _Class(
                        summary.module, node.name, rel, node, live.mod, tree)
                elif (isinstance(node, ast.Assign) and len(node.targets) == 1
                      and isinstance(node.targets[0], ast.Name)
                      and isinstance(node.value, ast.Lambda)):
                    # `blk = lambda ic, oc: nn.Sequential(...)`: a function as a def would be
                    name = node.targets[0].id
                    fn = ast.FunctionDef(name=name, args=node.value.args,
                                         body=[ast.Return(node.value.body)], decorator_list=[],
                                         returns=None, type_params=[])
                    ast.copy_location(fn, node)
                    self.functions[f"{summary.module}.{name}"] = _Class(
                        summary.module, name, rel, fn, live.mod, tree)  # type: ignore[arg-type]
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

    def autograd_functions(self, module: str) -> list["_Class"]:
        """The classes deriving from `torch.autograd.Function` in `module` and the modules of
        the repository it imports, directly or through others (a package's `__init__` too, as
        an import runs it): the ones a model of `module` may run. Read once per module."""
        hit = self._functions.get(module)
        if hit is None:
            reached = self.imported(module)
            hit = self._functions[module] = [x for q, x in self.classes.items() if x.module in reached
                                             and self.index.is_autograd_function(q)]
        return hit

    def imported(self, module: str) -> set[str]:
        """`module` and every module of the repository its imports reach."""
        known = self.index.summaries
        seen: set[str] = set()
        todo = [module]
        while todo:
            m = todo.pop()
            if m in seen or m not in known:
                continue
            seen.add(m)
            parts = m.split(".")
            todo += [".".join(parts[:k]) for k in range(1, len(parts))]   # its packages' __init__
            for target in known[m].imports.values():
                name = target.lstrip("*")
                while name and name not in known:
                    name = name.rpartition(".")[0]
                if name:
                    todo.append(name)
        return seen

    def torch_layer(self, qualname: str) -> str | None:
        """The torch class a class of the repository is built as, where it subclasses one
        (through the repository's classes) with no constructor of its own: whisper's `class
        Conv1d(nn.Conv1d)`, which changes only how it computes, takes what `nn.Conv1d` takes."""
        g = self.index
        for c in g.mro(qualname):
            entry = g.classes.get(c)
            if entry is None or "__init__" in entry[1].methods:
                return None
            for b in entry[1].bases:
                torch_name = next((n for n in (g.canonical(b), b) if n.startswith("torch.nn.")), None)
                if torch_name is not None:
                    return torch_name
        return None

    def config_class(self, c: _Class) -> "_ConfigClass":
        hit = self._configs.get(c.qualname)
        if hit is None:
            hit = self._configs[c.qualname] = _ConfigClass(self, c)
        return hit

    def super_method(self, c: _Class, name: str) -> tuple[_Class, ast.FunctionDef] | None:
        """The method `super().name(...)` calls from class `c`: the first class after `c` in its
        method resolution order, among the repository's classes, that defines it."""
        for q in self.index.mro(c.qualname)[1:]:
            owner = self.classes.get(q)
            node = owner.method(name) if owner else None
            if owner and node:
                return owner, node
        return None

    def find_method(self, c: _Class, name: str) -> tuple[_Class, ast.FunctionDef] | None:
        """The method as the class inherits it, through the repo's classes."""
        found = self.index.method(c.qualname, name)
        owner = self.classes.get(found[:-len(name) - 1]) if found else None
        node = owner.method(name) if owner else None
        return (owner, node) if owner and node else None


# --------------------------------------------------------------------------- evaluation

_UNKNOWN = object()


def _eval(expr: ast.AST | None, env: dict[str, Any]) -> Any:
    """Literals, names from `env`, + - * // and tuples and lists; anything else is _UNKNOWN. An attribute
    chain is looked up whole (`config.n_embd`: a field of a config object, see _ConfigGuess)."""
    if expr is None:
        return _UNKNOWN
    if isinstance(expr, ast.Constant):
        return expr.value
    if isinstance(expr, ast.Name):
        return env.get(expr.id, _UNKNOWN)
    if isinstance(expr, ast.Attribute):
        name = dotted(expr)
        return env.get(name, _UNKNOWN) if name else _UNKNOWN
    if isinstance(expr, (ast.Tuple, ast.List)):
        items = [_eval(e, env) for e in expr.elts]
        return _UNKNOWN if any(i is _UNKNOWN for i in items) else \
            tuple(items) if isinstance(expr, ast.Tuple) else items
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


def _forward_inputs(index: "RepoClasses", c: "_Class", fwd: ast.FunctionDef) -> list[Param]:
    """forward's inputs: its parameters, and where it takes `*args` with no positional
    parameter of its own, those of the method of the class it passes them to
    (`def forward(self, *args, is_training=False, **kwargs): ... self.forward_features(*args,
    **kwargs)`: dinov2's image `x`, where init gave the image the name `is_training`). A
    parameter with a default that is no input (a flag) is left to its default there."""
    params = init_params(fwd)
    a = fwd.args
    if a.vararg is None or a.posonlyargs or len(a.args) > 1:
        return params
    for n in ast.walk(fwd):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and \
                isinstance(n.func.value, ast.Name) and n.func.value.id == "self" and \
                any(isinstance(s, ast.Starred) and isinstance(s.value, ast.Name) and s.value.id == a.vararg.arg
                    for s in n.args):
            found = index.find_method(c, n.func.attr)
            if found is not None:
                return [p for p in init_params(found[1]) if p.required] + [p for p in params if p.required]
    return [p for p in params if p.required]


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
                         positional_only=i < len(a.posonlyargs), annotation=arg.annotation))
    for arg, d in zip(a.kwonlyargs, a.kw_defaults):
        out.append(Param(arg.arg, d is None, None if d is None else _eval(d, {}),
                         annotation=arg.annotation))
    return out


# --------------------------------------------------------------------------- inference

@dataclass
class _Infer:
    index: RepoClasses
    needed: dict[str, int] = field(default_factory=dict)   # top-level kwargs to set

    def first_layer(self, c: _Class, env: dict[str, Any], depth: int = 0,
                    top: bool = True, param: str | None = None,
                    method: str = "forward") -> tuple[InputGuess, str] | None:
        """The input of forward's first parameter (or of `param`, when the caller passed the
        input by keyword) from the first layer it goes through; through the class's own
        methods it is passed to (`self._forward_impl(x)`, `self.scoring_function(h, t, r)`)."""
        found = self.index.find_method(c, method)
        if found is None or depth > _MAX_DEPTH:
            return None
        owner, fwd = found
        params = init_params(fwd)
        if not params:
            return None
        x = param if param in {p.name for p in params} else params[0].name
        methods = {n for n in _called_on_self(fwd) if self.index.find_method(c, n) is not None}
        got = _first_consumer(fwd, x, methods)
        if got is None:
            return None
        chain, keyword = got
        if len(chain) == 1 and chain[0] in methods:
            inner = self.index.find_method(c, str(chain[0]))
            assert inner is not None
            names = [p.name for p in init_params(inner[1])]
            if keyword and keyword.startswith("#"):     # passed by position
                at = int(keyword[1:])
                keyword = names[at] if at < len(names) else None
            return (self.first_layer(c, env, depth + 1, top, param=keyword, method=str(chain[0]))
                    if keyword in names else None)
        init = self.index.find_method(c, "__init__")
        if init is None:
            return None
        assigned, local = _assignments(init[1])
        expr = assigned.get(str(chain[0]))
        if expr is None:
            return None
        if keyword and keyword.startswith("+"):
            # the layer takes the input with a dim of size 1 inserted: the input is its shape
            # without that dim (a waveform for a one-channel `Conv1d`)
            k = int(keyword[1:])
            got = self.follow(expr, chain[1:], env, local, init, depth, top, None)
            # (not to one value per example: `self.time_mlp(t[:, None])` is a time, which the
            # rules for a time read, with the data input after it)
            if got is None or k >= len(got[0].shape) or got[0].shape[k] != 1 or len(got[0].shape) < 3:
                return None
            g = got[0]
            return replace(g, shape=g.shape[:k] + g.shape[k + 1:]), f"{got[1]}, after a dim of 1 inserted at {k}"
        return self.follow(expr, chain[1:], env, local, init, depth, top, keyword)

    def follow(self, expr: ast.AST, rest: list[str | int], env: dict[str, Any],
               local: dict[str, ast.AST], where: tuple[_Class, ast.FunctionDef], depth: int,
               top: bool, param: str | None) -> tuple[InputGuess, str] | None:
        """The layer that `self.<attr><rest>` names, where `expr` built `self.<attr>`: through
        `nn.ModuleDict(dict(wte=...))` by key, `nn.ModuleList([...])`/`nn.Sequential(...)` by
        index (and the element of a comprehension), the repo's own modules by attribute."""
        if not rest:
            return self.layer(expr, env, local, where, depth, top, param)
        if isinstance(expr, ast.IfExp):
            return (self.follow(expr.body, rest, env, local, where, depth, top, param)
                    or self.follow(expr.orelse, rest, env, local, where, depth, top, param))
        if isinstance(expr, ast.Name) and expr.id in local:
            return self.follow(local.pop(expr.id), rest, env, local, where, depth, top, param)
        step = rest[0]
        if isinstance(expr, (ast.ListComp, ast.GeneratorExp)):
            return self.follow(expr.elt, rest[1:], env, local, where, depth, top, param)
        if isinstance(expr, (ast.List, ast.Tuple)):
            items = [e for e in expr.elts if not isinstance(e, ast.Starred)]
            k = step if isinstance(step, int) else 0
            return (self.follow(items[k], rest[1:], env, local, where, depth, top, param)
                    if -len(items) <= k < len(items) else None)
        if isinstance(expr, ast.Dict):
            value = next((v for k, v in zip(expr.keys, expr.values)
                          if isinstance(k, ast.Constant) and k.value == step), None)
            return (self.follow(value, rest[1:], env, local, where, depth, top, param)
                    if value is not None else None)
        if not isinstance(expr, ast.Call):
            return None
        q = self.index.resolve(expr.func, *where) or ""
        kind = q.rsplit(".", 1)[-1] if q.startswith("torch.nn.") else None
        if q in ("dict", "builtins.dict"):
            value = next((k.value for k in expr.keywords if k.arg == step), None)
            if value is None and expr.args:
                return self.follow(expr.args[0], rest, env, local, where, depth, top, param)
            return (self.follow(value, rest[1:], env, local, where, depth, top, param)
                    if value is not None else None)
        if kind in ("ModuleDict", "ModuleList") or q in ("list", "tuple", "builtins.list"):
            inner = expr.args[0] if expr.args else next(
                (k.value for k in expr.keywords if k.arg == "modules"), None)
            return (self.follow(inner, rest, env, local, where, depth, top, param)
                    if inner is not None else None)
        if kind == "Sequential":
            items = [a for a in expr.args if not isinstance(a, ast.Starred)]
            k = step if isinstance(step, int) else 0
            if len(items) == 1 and not isinstance(items[0], ast.Call):   # Sequential(OrderedDict)
                return None
            return (self.follow(items[k], rest[1:], env, local, where, depth, top, param)
                    if -len(items) <= k < len(items) else None)
        sub = self.index.classes.get(q)
        if sub is not None and self.index.is_module(q) and depth < _MAX_DEPTH \
                and isinstance(step, str):
            init = self.index.find_method(sub, "__init__")
            if init is None:
                return None
            sub_env = self.bind(sub, expr, env, top)
            assigned, sub_local = _assignments(init[1])
            inner = assigned.get(step)
            got = (self.follow(inner, rest[1:], sub_env, sub_local, init, depth + 1, False, param)
                   if inner is not None else None)
            if got:
                return got[0], f"{got[1]} in {sub.name}"
        return None

    def layer(self, expr: ast.AST, env: dict[str, Any], local: dict[str, ast.AST],
              where: tuple[_Class, ast.FunctionDef], depth: int,
              top: bool, param: str | None = None) -> tuple[InputGuess, str] | None:
        """The input a layer built by `expr` takes (`where`: the constructor `expr` is in;
        `param`: the keyword the input is passed by)."""
        if isinstance(expr, ast.IfExp):
            return (self.layer(expr.body, env, local, where, depth, top, param)
                    or self.layer(expr.orelse, env, local, where, depth, top, param))
        if isinstance(expr, ast.Name) and expr.id in local:
            return self.layer(local.pop(expr.id), env, local, where, depth, top, param)
        if isinstance(expr, (ast.List, ast.Tuple)) and expr.elts:
            # `layers = [nn.Linear(in_dim, hidden_dim)]` ... `nn.Sequential(*layers)` (DINO's head)
            return self.layer(expr.elts[0], env, local, where, depth, top, param)
        if not isinstance(expr, ast.Call):
            return None
        q = self.index.resolve(expr.func, *where) or ""
        built = q if q.startswith("torch.nn.") else self.index.torch_layer(q) if q in self.index.classes else None
        kind = built.rsplit(".", 1)[-1] if built else None
        first = expr.args[0] if expr.args else None
        if kind == "Sequential" and expr.args:
            first = expr.args[0]
            return self.layer(first.value if isinstance(first, ast.Starred) else first,
                              env, local, where, depth, top)
        if kind in ("Embedding", "Conv2d", "Conv1d", "Linear"):
            if first is None:
                first = next((k.value for k in expr.keywords
                              if k.arg in ("num_embeddings", "in_channels", "in_features")),
                             None)
            v = self.value(first, env, top)
            if (v is _UNKNOWN or v is None) and kind == "Embedding":
                v = _vocab_of(first, env)
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
            got = self.first_layer(sub, sub_env, depth + 1, top=False, param=param)
            if got:
                return got[0], f"{got[1]} in {sub.name}"
        # (a module's lambda is a variable to the name resolver: its bare name)
        helper = self.index.functions.get(q) or self.index.functions.get(f"{where[0].module}.{q}")
        if helper is not None and depth < _MAX_DEPTH:
            # a function of the repository that builds the layer (`blk(n_channel, 64)` returning
            # `nn.Sequential(nn.Conv2d(ic, oc, 7), ...)`): what it returns, its parameters bound
            # to the call's arguments
            fn = helper.node
            assert isinstance(fn, ast.FunctionDef)
            ret = next((s.value for s in reversed(fn.body)
                        if isinstance(s, ast.Return) and s.value is not None), None)
            names = [a.arg for a in fn.args.posonlyargs + fn.args.args]
            bound = {n: self.value(a, env, top) for n, a in zip(names, expr.args)
                     if not isinstance(a, ast.Starred)}
            bound.update((k.arg, self.value(k.value, env, top)) for k in expr.keywords if k.arg)
            got = (self.layer(ret, {k: v for k, v in bound.items() if v is not _UNKNOWN},
                              _assignments(fn)[1], (helper, fn), depth + 1, False)
                   if ret is not None else None)
            if got:
                return got[0], f"{got[1]} from {fn.name}()"
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
        pairs = [*zip([p.name for p in params if not p.name.startswith("*")], call.args),
                 *((k.arg, k.value) for k in call.keywords if k.arg)]
        for name, a in pairs:
            out[name] = self.value(a, env, top)
            # a config object passed on (`Block(config)`): its fields under the new name
            prefix = dotted(a)
            if prefix:
                for key, v in list(env.items()):
                    if key.startswith(prefix + "."):
                        field_name = key[len(prefix) + 1:]
                        out[f"{name}.{field_name}"] = out[f"self.{name}.{field_name}"] = v
        return {k: v for k, v in out.items() if v is not _UNKNOWN}


def _vocab_of(expr: ast.AST | None, env: dict[str, Any]) -> Any:
    """An embedding sized by a config field the constructor computes (`config.padded_vocab_size`,
    set in `__post_init__` from `vocab_size`): the config's vocabulary size, which ids below
    it fit whatever the padding."""
    name = dotted(expr) if expr is not None else None
    if not name or "." not in name or "vocab" not in name.rpartition(".")[2]:
        return _UNKNOWN
    prefix = name.rpartition(".")[0]
    known = [env[f"{prefix}.{t}"] for t in _TOKENS if isinstance(env.get(f"{prefix}.{t}"), int)]
    return min(known) if known else _UNKNOWN


def _self_attr(expr: ast.AST) -> str | None:
    if (isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name)
            and expr.value.id == "self"):
        return expr.attr
    return None


def _chain(expr: ast.AST, loops: dict[str, list[str | int]]) -> list[str | int] | None:
    """`self.transformer.wte` → ["transformer", "wte"], `self.layers[0]` → ["layers", 0],
    `block` of `for block in self.blocks` → ["blocks", 0]; None for anything not on self."""
    if isinstance(expr, ast.Name):
        return list(loops[expr.id]) if expr.id in loops else None
    if isinstance(expr, ast.Attribute):
        if isinstance(expr.value, ast.Name) and expr.value.id == "self":
            return [expr.attr]
        head = _chain(expr.value, loops)
        return None if head is None else head + [expr.attr]
    if isinstance(expr, ast.Subscript):
        head = _chain(expr.value, loops)
        key = expr.slice
        k = key.value if isinstance(key, ast.Constant) and isinstance(key.value, (int, str)) else 0
        return None if head is None else head + [k]
    return None


def _called_on_self(fn: ast.FunctionDef) -> set[str]:
    """The names of `self.<name>(...)` calls in `fn`."""
    return {n.func.attr for n in ast.walk(fn) if isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name)
            and n.func.value.id == "self"}


def _first_consumer(fn: ast.FunctionDef, name: str, methods: Collection[str] = ()
                    ) -> tuple[list[str | int], str | None] | None:
    """The layer of the first `self.layer(name, ...)` call in statement order, as a chain of
    steps from `self` (see _chain), and the keyword `name` is passed by (None: positional);
    while `name` still holds the input (other calls on it, like `torch.tanh(x)`, are passed
    over; once `name` is reassigned, e.g. `x = x.view(...)`, its shape is no longer the
    input's). A call of one of the class's own `methods` takes `name` at any position, said
    as the keyword "#<position>" (`self.score(h, t, r)`: `t` is "#1")."""
    loops: dict[str, list[str | int]] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.For):
            it, target = node.iter, node.target
            if (isinstance(it, ast.Call) and isinstance(it.func, ast.Name)
                    and it.func.id == "enumerate" and it.args and isinstance(target, ast.Tuple)
                    and len(target.elts) == 2):
                it, target = it.args[0], target.elts[1]
            head = _chain(it, {})
            if head is not None and isinstance(target, ast.Name):
                loops[target.id] = head + [0]
    for stmt in fn.body:
        for node in ast.walk(stmt):
            if not isinstance(node, ast.Call):
                continue
            chain = _chain(node.func, loops)
            if not chain:
                continue
            at = [i for i, a in enumerate(node.args) if isinstance(a, ast.Name) and a.id == name]
            if len(chain) == 1 and chain[0] in methods and at:
                return chain, f"#{at[0]}"
            if at and at[0] == 0:
                return chain, None
            new_dim = _inserted_dim(node.args[0], name) if node.args else None
            if new_dim is not None:
                return chain, f"+{new_dim}"
            kw = next((k.arg for k in node.keywords
                       if k.arg and isinstance(k.value, ast.Name) and k.value.id == name), None)
            if kw and (not node.args or len(chain) == 1 and chain[0] in methods):
                return chain, kw
        targets = (stmt.targets if isinstance(stmt, ast.Assign) else
                   [stmt.target] if isinstance(stmt, (ast.AugAssign, ast.AnnAssign)) else [])
        if any(isinstance(n, ast.Name) and n.id == name for t in targets for n in ast.walk(t)):
            return None
    return None


def _inserted_dim(arg: ast.AST, name: str) -> int | None:
    """k where `arg` is `name` with a dim of size 1 inserted at k: `name[:, None]` (1),
    `name[None]` (0), `name.unsqueeze(1)`; a waveform `[batch, samples]` made the one channel
    of a `Conv1d(1, ...)` (fast-bss-eval's trial: `self.encoder(noisy[:, None])`)."""
    if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Attribute) and arg.func.attr == "unsqueeze" \
            and isinstance(arg.func.value, ast.Name) and arg.func.value.id == name and len(arg.args) == 1 \
            and isinstance(arg.args[0], ast.Constant) and type(arg.args[0].value) is int and arg.args[0].value >= 0:
        return arg.args[0].value
    if isinstance(arg, ast.Subscript) and isinstance(arg.value, ast.Name) and arg.value.id == name:
        parts = arg.slice.elts if isinstance(arg.slice, ast.Tuple) else [arg.slice]
        nones = [i for i, p in enumerate(parts) if isinstance(p, ast.Constant) and p.value is None]
        whole = all(isinstance(p, ast.Slice) and p.lower is None and p.upper is None and p.step is None
                    for i, p in enumerate(parts) if i not in nones)
        if len(nones) == 1 and whole:
            return nones[0]
    return None


def _first_layer_text(index: RepoClasses, c: _Class, fwd: ast.FunctionDef, name: str) -> str | None:
    """`self.encoder = norse.PoissonEncoder(seq_length=steps, ...)`: the constructor line of the
    first layer `name` goes through, where that layer tells init no shape (a class of an
    installed package, a layer of no known kind), so that the user knows where init stopped."""
    got = _first_consumer(fwd, name)
    init = index.find_method(c, "__init__")
    if got is None or init is None or not got[0] or not isinstance(got[0][0], str):
        return None
    expr = _assignments(init[1])[0].get(got[0][0])
    if expr is None:
        return None
    text = " ".join(f"self.{got[0][0]} = {ast.unparse(expr)}".split())   # (one line: a comment)
    return text if len(text) <= 120 else text[:119] + "…"


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


# --------------------------------------------------------------------------- config objects

# Constructor parameters that hold a configuration object when no annotation says which class.
_CONFIG_PARAM = re.compile(r"(?:^|_)(?:config|cfg|conf|args|hparams|params|settings|options)$")
# Classmethods that build a config from a named preset and take the fields to override.
_PRESET_FACTORIES = ("from_name", "from_preset")
_HF_BASES = ("PretrainedConfig", "PreTrainedConfig")


def _alternatives(ann: ast.AST | None) -> list[ast.AST]:
    """What an annotation allows, one by one: `Config`, `"Config"`, `Optional[Config]`,
    `Union[Tuple[int, int], int]`, `int | None`."""
    if ann is None:
        return []
    if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
        try:
            ann = ast.parse(ann.value, mode="eval").body
        except SyntaxError:
            return []
    if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):
        return _alternatives(ann.left) + _alternatives(ann.right)
    if isinstance(ann, ast.Subscript) and (dotted(ann.value) or "").rpartition(".")[2] in (
            "Optional", "Union"):
        inner = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
        return [alt for e in inner for alt in _alternatives(e)]
    return [ann]


def _as_annotated(value: Any, ann: ast.AST | None) -> Any:
    """A size guessed by name, as the annotation takes it: `Tuple[int, int]` (SAM's
    `image_embedding_size`, one int refused by the constructor) gets one per element."""
    if isinstance(value, int) and isinstance(ann, ast.Subscript) and \
            (dotted(ann.value) or "").rsplit(".", 1)[-1] in ("Tuple", "tuple"):
        elts = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
        if elts and all(dotted(e) == "int" for e in elts):
            return [value] * len(elts)
    return value


def _takes_int(ann: ast.AST | None) -> bool:
    """Whether a field annotated so may hold one int (not `List[int]`, `str`, ...)."""
    return ann is None or any(dotted(alt) == "int" for alt in _alternatives(ann))


def _is_dataclass(node: ast.ClassDef) -> bool:
    for d in node.decorator_list:
        name = dotted(d.func if isinstance(d, ast.Call) else d) or ""
        if name.rpartition(".")[2] == "dataclass":
            return True
    return False


def _field_default(value: ast.AST | None) -> tuple[bool, Any]:
    """(required, default) of a dataclass field's value: `= 4`, `= field(default=4)`,
    `= field(default_factory=list)` (not required, default unknown), none (required)."""
    if value is None:
        return True, None
    if isinstance(value, ast.Call) and (dotted(value.func) or "").rpartition(".")[2] == "field":
        kw = {k.arg: k.value for k in value.keywords if k.arg}
        if "default" in kw:
            return False, _eval(kw["default"], {})
        return "default_factory" not in kw, _UNKNOWN
    return False, _eval(value, {})


class _ConfigClass:
    """A configuration class of the repository, read from source: its fields (name → Param,
    in declaration order, base classes first) and its kind."""

    def __init__(self, index: RepoClasses, c: _Class) -> None:
        self.c = c
        chain = [index.classes[q] for q in reversed(index.index.mro(c.qualname))
                 if q in index.classes]
        bases = [b for q in index.index.mro(c.qualname) if q in index.index.classes
                 for b in index.index.classes[q][1].bases]
        self.kind = ("dataclass" if any(_is_dataclass(k.node) for k in chain) else
                     "Hugging Face-style" if any(b.rpartition(".")[2] in _HF_BASES for b in bases)
                     else "class")
        self.fields: dict[str, Param] = {}
        if self.kind == "dataclass":
            for k in chain:
                for n in k.node.body:
                    if (isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)
                            and "ClassVar" not in ast.unparse(n.annotation)):
                        required, default = _field_default(n.value)
                        self.fields[n.target.id] = Param(n.target.id, required, default,
                                                         annotation=n.annotation)
            return
        init = index.find_method(c, "__init__")
        if init is not None:
            self.fields = {p.name: p for p in init_params(init[1])}
        if init is None or init[1].args.kwarg is not None:
            # `def __init__(self, vocab_size, block_size, **kwargs)` setting what it is given
            # over class-level defaults (`n_layer = 12`): those are fields too
            for k in chain:
                for n in k.node.body:
                    target = (n.targets[0] if isinstance(n, ast.Assign) and len(n.targets) == 1
                              else n.target if isinstance(n, ast.AnnAssign) else None)
                    if isinstance(target, ast.Name) and target.id not in self.fields:
                        default = _eval(getattr(n, "value", None), {})
                        if isinstance(default, int) and not isinstance(default, bool):
                            self.fields[target.id] = Param(target.id, False, default)

    def fill(self, preset: bool = False) -> tuple[dict[str, Any], list[str], list[str], dict[str, Any]]:
        """(kwargs, guessed, problems, known field values). A size field gets its small value
        when it has no default, a None default (computed later from the others), or a larger
        one; the expert counts are only lowered. With a preset (`preset`), whose values are not
        read, every size field is set, experts aside."""
        kwargs: dict[str, Any] = {}
        guessed: list[str] = []
        problems: list[str] = []
        values: dict[str, Any] = {}
        for f in self.fields.values():
            guess = GUESSES.get(f.name) or GUESSES.get(_part_count(f.name) or "")
            if guess is not None and not _takes_int(f.annotation):
                guess = None
            default = f.default
            lower = isinstance(default, int) and not isinstance(default, bool) and default > guess \
                if guess is not None else False
            if guess is not None and f.name in _EXPERTS:
                use = lower
            elif guess is not None:
                use = f.required or preset or default is None or lower
            else:
                use = False
            if use:
                kwargs[f.name] = values[f.name] = guess
                guessed.append(f.name)
            elif f.required and not preset:
                problems.append(f"no value for the config field {f.name!r} of {self.c.name}")
            elif not f.required and default is not _UNKNOWN and default is not None:
                values[f.name] = default   # (None: computed later, from the others)
        return kwargs, guessed, problems, values

    def preset(self, index: RepoClasses) -> tuple[str, str, str] | None:
        """(factory name, its name parameter, a preset name) when the class has a classmethod
        such as `from_name(cls, name, **kwargs)` and its module names presets
        (`dict(name="pythia-14m", ...)` or `{"name": "tiny", ...}`)."""
        for factory in _PRESET_FACTORIES:
            found = index.find_method(self.c, factory)
            if found is None:
                continue
            fn = found[1]
            params = init_params(fn)
            if not params or fn.args.kwarg is None or not any(
                    dotted(d) == "classmethod" for d in fn.decorator_list):
                continue
            name = _first_preset(found[0].tree) or _first_preset(self.c.tree)
            if name is not None:
                return factory, params[0].name, name
        return None


def _first_preset(tree: ast.Module | None) -> str | None:
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.Call) and dotted(node.func) == "dict":
            for k in node.keywords:
                if k.arg == "name" and isinstance(k.value, ast.Constant) \
                        and isinstance(k.value.value, str) and k.value.value:
                    return k.value.value
        elif isinstance(node, ast.Dict):
            for k, v in zip(node.keys, node.values):
                if (isinstance(k, ast.Constant) and k.value == "name" and isinstance(v, ast.Constant)
                        and isinstance(v.value, str) and v.value):
                    return v.value
    return None


def _annotation_class(index: RepoClasses, ann: ast.AST | None,
                      where: tuple[_Class, ast.FunctionDef]) -> str | None:
    """The repo class (not a module) an annotation allows, if any."""
    for alt in _alternatives(ann):
        q = index.resolve(alt, *where)
        if q in index.classes and not index.is_module(q):
            return q
    return None


def _config_class(index: RepoClasses, c: _Class, init: tuple[_Class, ast.FunctionDef],
                  p: Param) -> _Class | None:
    """The repository's config class a constructor parameter takes: its annotation's, else
    (a parameter named like a config) the class's `config_class` (Hugging Face's convention),
    else the config class whose fields cover most of the `p.<field>` the constructor reads."""
    q = _annotation_class(index, p.annotation, init)
    if q:
        return index.classes[q]
    if not _CONFIG_PARAM.search(p.name):
        return None
    for owner in index.index.mro(c.qualname):
        k = index.classes.get(owner)
        for n in k.node.body if k else ():
            if (isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "config_class"
                                                  for t in n.targets)):
                q = index.resolve(n.value, k, k.node)  # type: ignore[arg-type]
                if q in index.classes and not index.is_module(q):
                    return index.classes[q]
    used = {n.attr for n in ast.walk(init[1]) if isinstance(n, ast.Attribute)
            and isinstance(n.value, ast.Name) and n.value.id == p.name}
    if not used:
        return None
    best: tuple[int, int, int] | None = None
    found = None
    for q, k in index.classes.items():
        if index.is_module(q) or not (_is_dataclass(k.node) or re.search(
                r"(?:Config|Cfg|Args|Params|Settings)$", k.name)):
            continue
        score = len(used & set(index.config_class(k).fields))
        rank = (score, k.module == c.module, -len(k.name))
        if score and (best is None or rank > best):
            best, found = rank, k
    return found


def _config_guess(index: RepoClasses, cfg: _Class, p: Param, first: bool
                  ) -> tuple[ConfigGuess, list[str], dict[str, Any]]:
    """The `config:` entry for constructor parameter `p` taking config class `cfg`: (the
    guess, its problems, the known field values)."""
    info = index.config_class(cfg)
    kwargs, guessed, problems, values = info.fill()
    entry = f"{cfg.module}:{cfg.name}"
    preset = info.preset(index) if problems else None
    if preset is not None:
        factory, name_param, name = preset
        kwargs, guessed, _, values = info.fill(preset=True)
        kwargs = {name_param: name, **kwargs}
        entry, problems = f"{entry}.{factory}", []
        values.update(kwargs)
    guess = ConfigGuess(entry, kwargs, tuple(guessed), None if first else p.name,
                        info.kind + (f" config from the preset {preset[2]!r}" if preset else " config"),
                        cfg.path, cfg.node.lineno)
    return guess, problems, values


_MAX_FORWARD = 3    # `**kwargs` followed through at most this many constructors


def forwarded_params(index: RepoClasses, init: tuple[_Class, ast.FunctionDef] | None,
                     seen: frozenset[str] = frozenset(), depth: int = 0) -> list[Param]:
    """The parameters a constructor takes through its `**kwargs` and passes on whole to a
    repository class it builds: `PerceiverLM(*, dim, num_tokens, max_seq_len, **kwargs)`
    builds `PerceiverIO(dim=dim, ..., **kwargs)`, whose `depth` (required) and `latent_dim=512`
    can only be given to PerceiverLM. Without them, the model is proposed with no depth and
    does not build, or is built at its real width. The callee may be the base class's
    constructor, `super().__init__(image_size, in_channels * 2, *args, **kwargs)` (a
    super-resolution UNet over its UNet). Those the call itself passes (by keyword, or by
    position before a `*args`) are not the caller's to give; a callee that forwards its own
    `**kwargs` is followed too, a few levels."""
    if init is None or depth >= _MAX_FORWARD or init[1].args.kwarg is None:
        return []
    owner, fn = init
    kw = init[1].args.kwarg.arg
    out: list[Param] = []
    names = set(seen) | {p.name for p in init_params(fn)}
    for call in ast.walk(fn):
        if not isinstance(call, ast.Call) or not any(
                k.arg is None and isinstance(k.value, ast.Name) and k.value.id == kw
                for k in call.keywords):
            continue
        f = call.func
        if isinstance(f, ast.Attribute) and f.attr == "__init__" and isinstance(f.value, ast.Call) \
                and isinstance(f.value.func, ast.Name) and f.value.func.id == "super":
            callee = index.super_method(owner, "__init__")
        else:
            target = index.classes.get(index.resolve(f, owner, fn) or "")
            callee = index.find_method(target, "__init__") if target is not None else None
        if callee is None:
            continue
        given = {k.arg for k in call.keywords if k.arg is not None}
        # (a `*args` passes the caller's own positional arguments on: those after it are not given)
        positional = next((i for i, a in enumerate(call.args) if isinstance(a, ast.Starred)),
                          len(call.args))
        params = init_params(callee[1])
        for k, p in enumerate(params):
            if p.positional_only or k < positional or p.name in given or p.name in names:
                continue
            names.add(p.name)
            out.append(p)
        out += forwarded_params(index, callee, frozenset(names), depth + 1)
        names |= {p.name for p in out}
    return out


def propose(index: RepoClasses, c: _Class) -> Proposal:
    """The entry for one module class (problems say why it cannot be live)."""
    init = index.find_method(c, "__init__")
    params = [p for p in init_params(init[1] if init else None)]
    params += forwarded_params(index, init)
    problems: list[str] = []
    kwargs: dict[str, Any] = {}
    guessed: list[str] = []
    env: dict[str, Any] = {}
    configs: list[ConfigGuess] = []
    config_params: list[str] = []
    missing: list[str] = []
    for k, p in enumerate(params):
        if not p.required:
            small = _smaller(p)
            if small is not None and not p.positional_only:
                kwargs[p.name] = small
                guessed.append(p.name)
            env[p.name] = p.default if small is None else small
            continue
        cfg = (_config_class(index, c, init, p) if init is not None and _guess(p.name) is None
               else None)
        if cfg is not None:
            config_params.append(p.name)
            assert init is not None
            positional = len(init[1].args.posonlyargs) + len(init[1].args.args) - 1
            config, more, values = _config_guess(index, cfg, p, first=k == 0 and positional > 0)
            configs.append(config)
            problems += more
            for f, v in values.items():   # `config.n_embd` and `self.config.n_embd` as evaluated
                env[f"{p.name}.{f}"] = env[f"self.{p.name}.{f}"] = v
        elif _guess(p.name) is not None:
            kwargs[p.name] = env[p.name] = _as_annotated(_guess(p.name), p.annotation)
            guessed.append(p.name)
        elif p.positional_only:
            problems.append(f"constructor argument {p.name} is positional-only")
        elif init is not None and _CONFIG_PARAM.search(p.name):
            problems.append(_no_config_class(index, init, p.name))
        else:
            missing.append(p.name)
    for name, k in (_floor_divisors(init[1]) if init is not None else {}).items():
        if name in guessed and isinstance(kwargs.get(name), int) and 0 < kwargs[name] < k:
            # `heads = width // 64` (CLIP's vision tower): a guess below the divisor makes a
            # count of 0 and the constructor raises
            kwargs[name] = env[name] = k
    _fit_staged_sizes(params, kwargs, env, guessed)
    if missing:
        # one problem for all of them: four in a row hid the rest of the line on the console
        problems.insert(0, f"no value for the constructor argument{'s' if len(missing) > 1 else ''} "
                           + ", ".join(map(repr, missing)))
    fwd = index.find_method(c, "forward")
    assert fwd is not None
    fparams = _forward_inputs(index, c, fwd[1])
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
    elif configs and init is not None and fparams:
        guess, how = _from_config(env, {f for n in config_params for f in _fields_read(init[1], n)},
                                  fparams[0].name)
    elif fparams and (ids := _index_input(env, fwd[1], fparams[0].name, None)) \
            and not _IDS_NAME.search(fparams[0].name):
        guess, how = ids
    elif fparams and (doc := _doc_input(env, fwd[1], fparams[0].name, c.node)):
        guess, how = doc
    elif fparams and _IDS_NAME.search(fparams[0].name):
        guess, how = _ids_by_name(env, fparams[0].name)
    else:
        guess, how = _from_constructor(params, kwargs, env, guessed,
                                       graph=any(p.name == "edge_index" for p in fparams[1:]),
                                       image=bool(fparams) and bool(_IMAGE_NAME.search(fparams[0].name)))
        if guess is None and fparams and init is not None:
            guess, how = _from_buffer(env, init[1], fwd[1], fparams[0].name) or (None, "")
    if guess is None and fparams and _IDS_NAME.search(fparams[0].name):
        # a config the first input's shape is not read from (recurrentgemma's `Griffin(config)`,
        # whose embedder's `encode(tokens)` is no layer init knows): ids by the name still
        guess, how = _ids_by_name(env, fparams[0].name)
    shapes: dict[str, tuple[int, ...]] = {}
    inputs: tuple[InputGuess, ...] = ()
    if not fparams:
        problems.append("forward() takes no input")
    elif guess is None:
        layer = _first_layer_text(index, c, fwd[1], fparams[0].name)
        problems.append(f"cannot infer the input {fparams[0].name!r} " + (
            f"(its first layer, `{layer}`, tells no input shape: add the input to `inputs:`)"
            if layer else "(no known first layer)"))
    else:
        first = fparams[0]
        guess = InputGuess(None if first.positional_only else first.name, guess.shape,
                           guess.dtype, guess.high)
        # the data input: the first parameter's, unless that is a time (`forward(t, x)`),
        # when what was guessed for it goes to the next parameter nothing else names
        data, data_how = guess, how
        pending = bool(_TIME_NAME.search(first.name)) and any(p.required for p in fparams[1:])
        notes = [f"{first.name}: {how}"] if how and not pending else []
        if pending:
            guess = InputGuess(guess.name, ("batch",), "float32")
            notes.append(f"{first.name}: a time per example, by its name")
        inputs = (guess,)
        unguessed = []
        for p in fparams[1:]:
            if not p.required:
                continue
            extra = _more_input(infer, c, env, fwd[1], p, data)
            if extra is None:
                unguessed.append(p)
                continue
            g, why = extra
            if pending and why == _LIKE_DATA:
                g, why, pending = data, data_how or _LIKE_DATA, False
            inputs += (InputGuess(None if p.positional_only else p.name, g.shape, g.dtype,
                                  g.high),)
            notes.append(f"{p.name}: {why}")
        for k, v in infer.needed.items():      # (sizes the further inputs' layers needed)
            if k not in kwargs:
                kwargs[k] = v
                guessed.append(k)
        if len(inputs) > 1:
            how = "; ".join(notes)
        ranged = [i.name or first.name for i in inputs
                  if i.dtype.startswith("float") and _doc_range(fwd[1], i.name or first.name, c.node)]
        if ranged:
            # a spectrogram's magnitudes, probabilities: a standard normal's negative values
            # make the model's loss NaN (a KL divergence of a negative target)
            inputs = tuple(replace(i, nonnegative=True) if (i.name or first.name) in ranged else i
                           for i in inputs)
            whose = "forward's docstring" if all(_doc_range(fwd[1], n) for n in ranged) \
                else "the docstring"
            how += f"; {', '.join(ranged)} in [0, 1), as {whose} says not negative"
        multiples = {d: k for i in inputs for d, k in
                     _doc_multiples(fwd[1], i.name or first.name, c.node, i.shape).items()}
        tested = [(p, f"{fwd[0].path}:{line}") for p in fparams[1:]
                  if not p.required and p.default is None and not p.positional_only
                  and (line := _none_tested(fwd[1], p.name))]
        objects = tuple((p.name, read, at) for p, at in tested if (read := _object_read(fwd[1], p.name)))
        optional = tuple(
            (InputGuess(p.name, g.shape, g.dtype, g.high), why, at)
            for p, at in tested if p.name not in {o[0] for o in objects}
            and (extra := _more_input(infer, c, env, fwd[1], p, data)) for g, why in (extra,))
        if unguessed:
            several = len(unguessed) > 1
            said = "; ".join(f"`{p.name}: {ast.unparse(p.annotation)}`" for p in unguessed)
            problems.append(
                f"forward() also needs {', '.join(p.name for p in unguessed)}, not one tensor by "
                f"{'their annotations' if several else 'its annotation'} ({said}): add inputs for "
                f"{'them' if several else 'it'} (an `inputs: {{entry: ...}}` factory can build "
                "lists and dicts of tensors)")
        listed = _doc_sizes(fwd[1], c.node, {d for i in inputs for d in i.shape
                                             if isinstance(d, str) and d != "batch"})
        if multiples:
            how += "; " + ", ".join(f"{d} a multiple of {k}" for d, k in multiples.items()) + \
                ", as the docstring says"
        if listed:
            how += "; " + ", ".join(f"{d} {' or '.join(map(str, v))}" for d, v in listed.items()) + \
                ", as the docstring says"
        seq = _known(env, _SEQ)
        # A config's length (`block_size`, `max_position_embeddings`) is a maximum: shorter
        # sequences run too, and a second length is what shows a recompile per length. A
        # constructor's own (`gMLP(seq_len=...)`) may be the one length the model takes.
        top_seq = _known({k: v for k, v in env.items() if "." not in k}, _SEQ)
        img = _known(env, _IMAGE_SIZES)
        for d in (d for i in inputs for d in i.shape):
            if d in listed:
                shapes[d] = listed[d]
            elif d in multiples:
                # a size the docstring says is a multiple of k (a waveform framed by 256): the
                # defaults below fit no frame; two multiples, so a recompile per size shows
                shapes[d] = (2 * multiples[d], 4 * multiples[d])
            elif d == "batch":
                shapes["batch"] = (2, 4)
            elif d == "seq":
                shapes["seq"] = ((16, 32) if not seq else (seq,) if top_seq or seq < 4
                                 else (seq // 2, seq))
            elif d in ("height", "width", "depth"):
                shapes[d] = (img or 32,)
            elif d == "length":
                shapes["length"] = (32,)
            elif d == "edges":
                shapes["edges"] = (_EDGES,)
            elif isinstance(d, str) and d not in shapes:
                # a dim the docstring names in its own words (a radar map's `range` and
                # `doppler`): one size, a multiple of the small powers of two a stride or a
                # pooling asks for
                shapes[d] = (_DOC_OTHER_SIZE,)
    dynamic = tuple(d for d, vs in shapes.items() if len(vs) > 1)
    script = _script_at_import(c.tree)
    if script:
        # first: no value or input guessed makes this entry run while its import runs a script
        problems.insert(0, f"{c.path} runs a script when imported ({script}): the worker that "
                           f"builds the model imports it and would run that too; move {c.name} "
                           "into a module of its own, or that code under "
                           "`if __name__ == \"__main__\":`")
    line = c.node.lineno
    return Proposal(name=_snake(c.name), entry=f"{c.module}:{c.name}", path=c.path, line=line,
                    kwargs=kwargs, guessed=tuple(guessed), inputs=inputs, shapes=shapes,
                    dynamic=dynamic, how=how, grad=_differentiates(fwd[1]), grad_hint=_functions_hint(index, c),
                    problems=tuple(problems),
                    config=tuple(configs), optional=optional if inputs else (),
                    objects=objects if inputs else (), uncalled_init=_uncalled_init(c, init))


def _script_at_import(tree: ast.Module | None) -> str:
    """What a module runs at import that only a script should: its command line parsed
    (`parser.parse_args()`: S4's example.py, which pt2bot's worker would answer with its own
    argv), a dataset downloaded (`download=True`), the process ended or input read. Said as
    "`args = parser.parse_args()` at line 29"; "" when none. Top-level statements only, and
    not under `if __name__ == "__main__":`."""
    if tree is None:
        return ""

    def scripted(call: ast.Call) -> bool:
        f = call.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        return (name in ("parse_args", "parse_known_args", "input", "exit", "quit")
                or any(k.arg == "download" and isinstance(k.value, ast.Constant)
                       and k.value.value is True for k in call.keywords))

    def top(body: list[ast.stmt]) -> Iterator[ast.stmt]:
        for node in body:
            if isinstance(node, ast.If):
                t = node.test
                if isinstance(t, ast.Compare) and isinstance(t.left, ast.Name) \
                        and t.left.id == "__name__":
                    continue   # the script's own guard
                yield from top(node.body + node.orelse)
            elif isinstance(node, (ast.Try, ast.With)):
                yield from top(node.body)
            elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                                       ast.Import, ast.ImportFrom)):
                yield node

    def calls(node: ast.AST) -> Iterator[ast.Call]:
        # what runs at import: not the body of a lambda or a comprehension's deferred parts
        if isinstance(node, ast.Call):
            yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, ast.Lambda):
                yield from calls(child)

    for node in top(tree.body):
        for call in calls(node):
            if scripted(call):
                text = " ".join(ast.unparse(node).split())
                if len(text) > 80:
                    text = text[:77] + "..."
                return f"`{text}` at line {node.lineno}"
    return ""


def _functions_hint(index: RepoClasses, c: _Class) -> str:
    """The autograd.Functions the model's module may run (those its imports reach), said where
    a model may run them: guided-diffusion's `CheckpointFunction` (nn.py), behind an attention
    block's `checkpoint(...)`, calls `th.autograd.grad` in its backward, and with autograd on
    dynamo breaks there three times, which the default no_grad run never shows. (Every model
    of a package was told of all of its Functions: DINOv2's 26 proposals, its backbone and its
    heads, of one in a segmentation head no model of them imports.)"""
    found = index.autograd_functions(c.module)
    if not found:
        return ""
    names = ", ".join(f"`{x.name}` ({x.path})" for x in found[:2]) + (f" and {len(found) - 2} more" if len(found) > 2 else "")
    return (f"{names}: an autograd.Function's backward runs only with autograd on, which "
            "the default torch.no_grad() run never traces; `grad: true` (or a second entry with it) "
            "checks the training or guidance path")


def _none_tested(fn: ast.FunctionDef, name: str) -> int | None:
    """The first line of `fn` that tests its parameter `name` against None (`if targets is not
    None:`, `... if mask is None else ...`): a path the default None leaves unrun (llama2.c's
    loss, taken only with `targets`)."""
    for n in sorted((n for n in ast.walk(fn) if isinstance(n, ast.Compare)), key=lambda n: n.lineno):
        if isinstance(n.left, ast.Name) and n.left.id == name and len(n.ops) == 1 and \
                isinstance(n.ops[0], (ast.Is, ast.IsNot)) and \
                isinstance(n.comparators[0], ast.Constant) and n.comparators[0].value is None:
            return n.lineno
    return None


# the methods that set a model's weights, which its constructor may leave to the caller
_WEIGHT_INIT = re.compile(r"^_?(?:init|initialize|initialise|reset)_(?:weights|parameters|params)$")


def _uncalled_init(c: _Class, init: tuple[_Class, ast.FunctionDef] | None) -> str:
    """`init_weights() (nanochat/gpt.py:204)`: a method of the class itself that sets its
    weights, takes no argument, and that its constructor never names; else "". Built from the
    class alone, such a model runs on weights it was never trained from (nanochat's GPT builds
    on the meta device and sets every parameter in `init_weights()`)."""
    named = {n.attr for n in ast.walk(init[1]) if isinstance(n, ast.Attribute)} if init else set()
    for st in c.node.body:
        if isinstance(st, ast.FunctionDef) and _WEIGHT_INIT.match(st.name) and st.name not in named \
                and len(st.args.args) == 1 and not st.args.vararg and not st.args.kwonlyargs:
            return f"{st.name}() ({c.path}:{st.lineno})"
    return ""


@functools.lru_cache(maxsize=1)
def _tensor_attributes() -> frozenset[str] | None:
    """What a torch.Tensor has, from the torch installed beside (None where it does not import:
    then nothing is judged not a tensor by its use)."""
    try:
        import torch
    except Exception:   # noqa: BLE001 - any failure to import means: not known here
        return None
    return frozenset(dir(torch.Tensor))


def _object_read(fn: ast.FunctionDef, name: str) -> str:
    """`kv_cache.get_pos` where `fn` reads an attribute of its parameter `name` that no tensor
    has (nanochat's KV cache, an object whose branch a guessed tensor input crashes in), else
    ""."""
    attrs = _tensor_attributes()
    if attrs is None:
        return ""
    for n in sorted((n for n in ast.walk(fn) if isinstance(n, ast.Attribute)), key=lambda n: (n.lineno, n.col_offset)):
        if isinstance(n.value, ast.Name) and n.value.id == name and n.attr not in attrs:
            return f"{name}.{n.attr}"
    return ""


def _differentiates(fn: ast.AST) -> str:
    """The call by which `fn` differentiates inside itself (`torch.autograd.grad(energy, pos)`,
    a force field's forces; `energy.backward()`), "" if none: under the smoke run's default
    `torch.no_grad()` it raises, so the entry gets `grad: true`."""
    for n in ast.walk(fn):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
            f = n.func
            if f.attr == "grad" and isinstance(f.value, (ast.Name, ast.Attribute)) and \
                    (f.value.id if isinstance(f.value, ast.Name) else f.value.attr) == "autograd":
                return "autograd.grad"
            if f.attr == "backward":
                return ".backward()"
    return ""


# Where a UNet puts attention: guided diffusion's `attention_resolutions` are downsampling
# rates (attention at the second level), taming's `attn_resolutions` sizes of a 32-pixel image
# halved (attention at 16 pixels): each guess builds one attention block.
_LISTS: dict[str, list[int]] = {"attention_resolutions": [2], "attn_resolutions": [16]}


def _floor_divisors(init: ast.FunctionDef) -> dict[str, int]:
    """The constructor's arguments it floor-divides by a constant (`vision_width // 64`):
    name -> the largest such divisor, the least value whose quotient is not 0."""
    names = {a.arg for a in init.args.args + init.args.kwonlyargs}
    out: dict[str, int] = {}
    for node in ast.walk(init):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv) \
                and isinstance(node.left, ast.Name) and node.left.id in names \
                and isinstance(node.right, ast.Constant) and type(node.right.value) is int and node.right.value > 1:
            out[node.left.id] = max(out.get(node.left.id, 0), node.right.value)
    return out


# a model's width, which its heads must divide
_WIDTH_NAMES = frozenset({"dim", "d_model", "hidden_dim", "hidden_size", "embed_dim", "emb_dim", "n_embd",
                          "width", "embedding_dim"})
_HEAD_NAMES = frozenset({"heads", "n_head", "n_heads", "num_heads", "nhead", "num_attention_heads"})


def _fit_staged_sizes(params: list[Param], kwargs: dict[str, Any], env: dict[str, Any],
                      guessed: list[str]) -> None:
    """Sizes a hierarchical model ties together, kept consistent with what is left at its
    default (Swin: `embed_dim=96`, `num_heads=[3, 6, 12, 24]`, `window_size=7`, where init's
    `embed_dim: 32` and `img_size: 32` made every one of its models fail to build):
    - a width guessed smaller, where the heads stay a list per stage and the width doubles per
      stage, is raised to the first that each stage's heads divide (48 for [3, 6, 12, 24]);
    - an image size is left at its default where windows of a size it must fit are kept
      (`window_size`, unguessed): the image is split into patches, then into windows, and a
      small image's token grid does not hold a whole number of them."""
    by = {p.name: p for p in params}
    heads = next((p.default for p in params if p.name in _HEAD_NAMES and isinstance(p.default, (list, tuple))
                  and p.default and all(isinstance(h, int) and not isinstance(h, bool) and h > 0
                                        for h in p.default)), None)
    for name in [n for n in guessed if n in _WIDTH_NAMES and isinstance(kwargs.get(n), int)]:
        if heads is None:
            break
        # (a multiple of 8 where one fits, as widths are: 48, not 33, for [3, 6, 12, 24])
        span = range(kwargs[name], 8 * kwargs[name] + 1)
        fits = next((w for step in (8, 1) for w in span
                     if w % step == 0 and all((w << i) % h == 0 for i, h in enumerate(heads))), None)
        if fits is not None:
            kwargs[name] = env[name] = fits
    window = by.get("window_size")
    if window is not None and "window_size" not in guessed and isinstance(window.default, int):
        for name in [n for n in guessed if n in _IMAGE]:
            del kwargs[name]
            guessed.remove(name)
            env[name] = by[name].default if name in by else None


def _guess(name: str) -> int | list[int] | None:
    """The small value for a parameter's name: GUESSES, else by its last words (`text_dim`
    → a dim); a length with a prefix (`cross_attn_seq_len`) is a part of the sequence, half."""
    if name in _LISTS:
        return list(_LISTS[name])
    if name in GUESSES:
        return GUESSES[name]
    parts = name.split("_")
    for i in range(1, len(parts)):
        tail = "_".join(parts[i:])
        # a general word (`layers`, `width`, `heads`) only after the name of a tower of the
        # model (CLIP's `vision_width`, `transformer_heads`): `num_group_layers` is no depth
        if tail in GUESSES and (tail not in _CLASSES or (i == 1 and parts[0] in _TOWERS)):
            return GUESSES[tail] // 2 if tail in _SEQ else GUESSES[tail]
    part = _part_count(name)
    if part is not None:
        return GUESSES[part]
    if _COUNT_NAME.search(name) and not any(w.startswith(_STRUCTURE) for w in parts[1:]):
        return _COUNT
    return None


def _part_count(name: str) -> str | None:
    """The name a count of one part of a model is guessed by: the count prefix kept, the
    part's name dropped (whisper's `n_audio_head` is an `n_head`, `n_text_ctx` the text's
    `n_ctx`, its whole length), where that is a name of GUESSES; else None."""
    parts = name.split("_")
    short = f"{parts[0]}_{parts[-1]}"
    return short if len(parts) > 2 and parts[0] in ("n", "num") and short in GUESSES else None


def _smaller(p: Param) -> int | list[int] | None:
    """The small value for a size parameter whose default is larger (`ESM2(num_layers=33,
    embed_dim=1280)`): a model built at its real size takes minutes and gigabytes on a CPU.
    Expert counts are lowered too, never switched on; a default of another type is kept, and
    so is a per-head size. An image size given as a list of one (DINO's `img_size=[224]`) is
    lowered in its list: kept, every small image took the position table's interpolation
    path and never the model's native one. A tower's own size is lowered as its kind is (MAE's
    `decoder_embed_dim=512, decoder_depth=8, decoder_num_heads=16` beside an encoder made tiny:
    99.9 % of its 25 M parameters)."""
    guess = GUESSES.get(p.name)
    if guess is None and p.name.split("_")[0] in _TOWERS:
        tower = _guess(p.name)
        guess = tower if isinstance(tower, int) else None
    d = p.default
    if p.name in _IMAGE and isinstance(d, (list, tuple)) and len(d) == 1 and \
            isinstance(d[0], int) and not isinstance(d[0], bool) and guess is not None and d[0] > guess:
        return [guess]
    if guess is None or not isinstance(d, int) or isinstance(d, bool) or d <= guess \
            or p.name in _HEAD_DIMS:     # (cheap, and tied to others: a rotary dim of max(32, ...))
        return None
    return guess if _takes_int(p.annotation) else None


def _ids_by_name(env: dict[str, Any], name: str) -> tuple[InputGuess, str]:
    """Token ids for a first parameter named as such (`ESM2.forward(tokens)`, its embedding
    sized by an alphabet built at run time): below the vocabulary size the constructor or its
    config names, else below a few (any vocabulary holds them)."""
    vocab = _known(env, _TOKENS)
    return (InputGuess(None, ("batch", "seq"), "int64", vocab or _FEW_IDS),
            f"from forward's parameter {name!r} (token ids"
            f"{'' if vocab else f' below {_FEW_IDS}: the vocabulary size is not in the source'})")


def _known(env: dict[str, Any], names: tuple[str, ...]) -> int | None:
    """The first of `names` with an int value, a constructor argument's or a config field's
    (`config.block_size`)."""
    for n in names:
        for key, v in env.items():
            last = key.rsplit(".", 1)[-1]
            if (key == n or (last == n or _part_count(last) == n) and "." in key and not key.startswith("self.")) \
                    and isinstance(v, int) and not isinstance(v, bool):
                return v
    return None


_IDS_NAME = re.compile(r"^(?:input_ids|idx|ids|tokens|token_ids|text)$")
_FEW_IDS = 4
# A count no other guess names (`n_entities`, `num_relations`, `n_items`): as many as classes;
# not a part of the architecture (`num_res_blocks`, `num_head_channels`: a depth or a width,
# guessed by name or left to the user).
_COUNT_NAME = re.compile(r"^(?:n|num|number_of)_[a-z]\w*$")
_COUNT = 10
# the names of a model's towers or stacks, which prefix their own sizes (`vision_layers`)
_TOWERS = frozenset({"vision", "visual", "image", "img", "text", "language", "lang", "transformer", "encoder",
                     "decoder", "enc", "dec", "audio", "speech", "video"})
_STRUCTURE = ("block", "layer", "head", "group", "channel", "filter", "feature", "unit", "hidden",
              "dim", "stage", "level", "scale", "resolution", "res", "kernel", "stride", "patch")
# A diffusion model's or an ODE's time: one number per example (`forward(x, t)`, `forward(t, x)`).
_TIME_NAME = re.compile(r"^(?:t|ts|time|times|timesteps?|sigmas?|noise_levels?)$")
_LIKE_DATA = "guessed like the data input"
# One index per example, below a count of the constructor's: a knowledge graph's head, tail and
# relation, a recommender's user and item, a node, a class label. Each kind is read against the
# counts its name shares (`heads` below `n_entities`, `rels` below `num_relations`).
_INDEX_NAME = re.compile(r"^(?:heads?|tails?|rels?|relations?|ents?|entity|entities|users?|items?|"
                         r"labels?|\w+_(?:idx|ids|index|indices)|indices)$")
_INDEX_COUNTS = (("head", ("ent",)), ("tail", ("ent",)), ("rel", ("rel",)), ("ent", ("ent",)),
                 ("user", ("user",)), ("item", ("item",)), ("label", ("class", "label")))
_MASK_NAME = re.compile(r"^(?:\w+_)?mask(?:_\w+)?$")
# Calls whose argument (first, or the index of `t.gather(dim, index)`) is an index tensor.
_INDEX_CALLS = {"embedding": 0, "one_hot": 0, "bincount": 0, "index_select": 2, "gather": 2,
                "take": 1}
_IMAGE_NAME = re.compile(r"^(?:images?|img|imgs|pixel_values|pixels)$")


def _index_count(env: dict[str, Any], name: str) -> int:
    """How far the ids of forward's parameter `name` go: the count of the constructor (or
    config) that its kind names (`heads` below `n_entities`), else a few, which any count holds."""
    # (by any word of the name: a sampler's `negative_heads` are entities like `heads`)
    kinds = next((k for word, k in _INDEX_COUNTS
                  if any(part.startswith(word) for part in name.split("_"))), ())
    for key, v in env.items():
        last = key.rsplit(".", 1)[-1]
        if kinds and not key.startswith("self.") and _COUNT_NAME.search(last) \
                and any(k in last for k in kinds) and isinstance(v, int) \
                and not isinstance(v, bool) and v > 0:
            return v
    return _FEW_IDS


def _used_as_index(fn: ast.FunctionDef, name: str) -> str:
    """How forward reads `name` as indices, "" if it does not: "embedding" for token ids
    (`F.embedding(ids, w)`, `F.one_hot(ids)`), "table" for one index per row of a table of the
    module (`self.table[ents]`) or an index argument of torch (`torch.index_select(t, 0, idx)`,
    `t.gather(1, idx)`)."""
    def named(a: ast.AST | None) -> bool:
        return isinstance(a, ast.Name) and a.id == name

    for n in ast.walk(fn):
        if isinstance(n, ast.Subscript) and _self_attr(n.value) is not None:
            key = n.slice
            if named(key) or isinstance(key, ast.Tuple) and any(named(e) for e in key.elts):
                return "table"
        if isinstance(n, ast.Call) and isinstance(n.func, (ast.Attribute, ast.Name)):
            fname = n.func.attr if isinstance(n.func, ast.Attribute) else n.func.id
            at = _INDEX_CALLS.get(fname)
            if at is None:
                continue
            owner = n.func.value if isinstance(n.func, ast.Attribute) else None
            # `t.gather(1, idx)`: the method form takes the tensor as its receiver
            library = owner is None or isinstance(owner, (ast.Name, ast.Attribute)) and \
                (dotted(owner) or "").split(".")[-1] in ("torch", "F", "functional")
            k = at if library else at - 1
            if 0 <= k < len(n.args) and named(n.args[k]):
                return "embedding" if fname in ("embedding", "one_hot") else "table"
    return ""


def _index_input(env: dict[str, Any], fn: ast.FunctionDef, name: str,
                 like: InputGuess | None) -> tuple[InputGuess, str] | None:
    """Ids for forward's parameter `name` when its name or its use says it indexes: a sequence
    of token ids where it goes through an embedding, else one per example (a knowledge graph's
    `heads`, `self.table[ents]`), shaped like the first input where that is ids too."""
    used = _used_as_index(fn, name)
    if not used and not _INDEX_NAME.search(name):
        return None
    shape = (like.shape if like is not None and like.dtype == "int64" else
             ("batch", "seq") if used == "embedding" else ("batch",))
    high = _index_count(env, name)
    why = {"embedding": "it goes through an embedding in forward",
           "table": "it indexes a table in forward"}.get(used, "by its name")
    return InputGuess(None, shape, "int64", high), f"ids below {high}, {why}"


def _more_input(infer: "_Infer", c: "_Class", env: dict[str, Any], fn: ast.FunctionDef,
                p: Param, first: InputGuess) -> tuple[InputGuess, str] | None:
    """An input for a further required parameter of forward, guessed from its name and use:
    a time per example, a mask over the data input's named dims, the input of the first layer
    it goes through, ids, or else a tensor like the data input `first` (None: annotated as a
    Python value)."""
    if p.annotation is not None and not _takes_tensor(p.annotation):
        return None
    named_dims = tuple(d for d in first.shape if isinstance(d, str))
    if p.name == "edge_index" and first.shape[:1] == ("batch",):
        # PyTorch Geometric's edges: pairs of node indices, below the fewest nodes of a case
        return (InputGuess(p.name, (2, "edges"), "int64", _FEWEST_NODES),
                f"a graph's edges, [2, edges], node indices below {_FEWEST_NODES}")
    if _TIME_NAME.search(p.name):
        return InputGuess(p.name, ("batch",), "float32"), "a time per example, by its name"
    if _MASK_NAME.search(p.name):
        if p.name == "attention_mask":     # a tokenizer's: ones and zeros, as integers
            return InputGuess(p.name, named_dims, "int64", 2), "a tokenizer's mask of 1s and 0s"
        return InputGuess(p.name, named_dims, "bool"), "a mask over the data input's dims"
    got = infer.first_layer(c, env, param=p.name)
    doc = _doc_input(env, fn, p.name, c.node)
    if got and doc and len(doc[0].shape) > len(got[0].shape) and doc[0].shape[-1] == got[0].shape[-1]:
        # the docstring says more than the first layer, and agrees with it: the set a batch
        # holds before the features the layer reads (`coors: [batch, atoms, 3]` into
        # `nn.Linear(3, ...)`, where the layer alone gives `[batch, 3]`)
        got = None
    if got:
        g, how = got
        return InputGuess(p.name, g.shape, g.dtype, g.high), f"from its first layer, {how}"
    ids = _index_input(env, fn, p.name, first)
    if ids:
        return InputGuess(p.name, ids[0].shape, "int64", ids[0].high), ids[1]
    if doc:
        return InputGuess(p.name, doc[0].shape, doc[0].dtype, doc[0].high), doc[1]
    said = _doc_text(fn, p.name, c.node)
    if said and _DOC_INDICES.search(said):
        # indices the docstring names with no shape (V-JEPA's `masks: indices of patch tokens
        # to mask`, which reach `torch.gather` in another module): a float tensor like the
        # data fails there, so a few indices per example, below a few, which any count of
        # tokens holds; their real count is the user's to set
        return (InputGuess(p.name, ("batch", _FEW_IDS), "int64", _FEW_IDS),
                f"indices by forward's docstring, {_FEW_IDS} per example below {_FEW_IDS}: set "
                "their real count and range")
    return InputGuess(p.name, first.shape, first.dtype, first.high), _LIKE_DATA


# A forward's docstring that gives an argument's shape, one line each: `x: (N, C, H, W) tensor of
# images` (DiT, MAE), `x (Tensor): input of shape [B, T, C]` (Google style), `:param x: (B, L, D)`.
# The parenthesised or bracketed list after the colon: names of dims, or sizes.
# (`:params x:` too, a slip V-JEPA's predictor makes)
_DOC_LINE = re.compile(r"^(?::params?\s+)?\*{0,2}(\w+)\*{0,2}\s*(?:\([^)]*\))?\s*:(.*)$")
_DOC_DIMS = re.compile(r"[(\[]\s*((?:[A-Za-z_]\w*|\d+)(?:\s*,\s*(?:[A-Za-z_]\w*|\d+))*)\s*,?\s*[)\]]")
_DOC_BATCH = frozenset({"n", "b", "bs", "batch", "batch_size", "nb", "num_batch"})
_DOC_SEQ = frozenset({"n", "t", "l", "s", "seq", "seq_len", "seqlen", "len", "length", "tokens",
                      "num_tokens", "time", "frames"})
_DOC_CHANNELS = frozenset({"c", "ch", "channels", "in_channels", "num_channels", "c_in"})
_DOC_WIDTH = frozenset({"d", "e", "dim", "d_model", "hidden", "hidden_size", "embed_dim", "emb",
                        "features", "f"})
# (a volume's depth too: `[batch, 1, depth, height, width]`)
_DOC_SPACE = {"h": "height", "height": "height", "w": "width", "width": "width", "depth": "depth"}
# the size of a dim a docstring names in its own words (`range`, `doppler`)
_DOC_OTHER_SIZE = 16
_DOC_COMPLEX = re.compile(r"\b(?:complex(?:64)?|cfloat|ComplexFloat)\b")
_DOC_INTEGER = re.compile(r"\b(?:long|int(?:32|64)?|integers?|LongTensor|IntTensor)\b", re.I)
_DOC_BOOL = re.compile(r"\b(?:bool|boolean|BoolTensor)\b", re.I)
_DOC_BELOW = re.compile(r"\b(?:below|less than)\s+`?([A-Za-z_]\w*)`?")
_DOC_INDICES = re.compile(r"\b(?:indices|indexes|ids)\b", re.I)
_DOC_IDS = re.compile(r"\b(?:class labels?|labels?|class(?:es)?|ids|indices|tokens?)\b", re.I)


def _doc_input(env: dict[str, Any], fn: ast.FunctionDef, name: str,
               cls: ast.ClassDef | None = None) -> tuple[InputGuess, str] | None:
    """The input for forward's parameter `name` from the shape forward's docstring (or the
    class's) gives it (`x: (N, C, H, W) tensor of spatial inputs`), each dim named as the
    rest of init names it: the first N or B the batch, T, L or N after it the sequence, H and
    W an image's size, C its channels (after a batch and a sequence, the model's width, as
    `(B, T, C)` reads), D the width; a number is kept, and so is the value of a constructor
    argument the dim is named after (`[batch, n_features]`). Ids below the class count where
    the line calls them labels or classes, below the vocabulary where it calls them tokens.
    None where some dim is none of those."""
    text = _doc_text(fn, name, cls)
    dims = _DOC_DIMS.search(text or "")
    if not text or not dims:
        return None
    names = [d.strip() for d in dims.group(1).split(",")]
    spatial = any(d.lower() in _DOC_SPACE for d in names)
    shape: list[str | int] = []
    for i, d in enumerate(names):
        low = d.lower()
        if d.isdigit():
            shape.append(int(d))
        elif i == 0 and low in _DOC_BATCH:
            shape.append("batch")
        elif low in _DOC_SPACE:
            shape.append(_DOC_SPACE[low])
        elif low in _DOC_CHANNELS and (spatial or len(names) == 3 and i == 1):
            shape.append(_known(env, _CHANNELS) or GUESSES["channels"])
        elif low in _DOC_SEQ and i > 0 and "seq" not in shape:
            shape.append("seq")
        elif low in _DOC_WIDTH or low in _DOC_CHANNELS:
            width = _known(env, _DIMS)
            if width is None:
                return None
            shape.append(width)
        elif isinstance(env.get(d), int) and not isinstance(env.get(d), bool) and env[d] > 0:
            shape.append(env[d])
        elif i == 1 and shape == ["batch"] and re.fullmatch(r"[a-z][a-z_]{2,}", d) and d not in env:
            # the set or sequence a batch holds, in the docstring's own words (a molecule's
            # `[batch, atoms, 3]`): the sequence dim, which the other inputs read from the first
            # layer (`atoms` through an nn.Embedding) or as a mask over the data share
            shape.append("seq")
        elif i >= 2 and shape and shape[0] == "batch" and re.fullmatch(r"[a-z][a-z_]{2,}", d) \
                and d not in env:
            # a size named in the docstring's own words after the batch and the channels
            # (`[batch, 2, range, doppler]`): kept as a dim of its own name
            shape.append(d)
        else:
            return None
    said = text[dims.end():] + " " + text[:dims.start()]
    what = _DOC_IDS.search(said)
    line = f"from {'forward' if _doc_text(fn, name) else 'the class'}'s docstring, " \
        f"{' '.join(dims.group(0).split())}"
    integer = _DOC_INTEGER.search(said)
    if _DOC_COMPLEX.search(said):
        return InputGuess(None, tuple(shape), "complex64"), f"{line}, complex"
    if _DOC_BOOL.search(said):
        return InputGuess(None, tuple(shape), "bool"), f"{line}, a mask"
    if (what or integer) and shape in (["batch"], ["batch", "seq"]):
        word = what.group(0).lower() if what else ""
        high = (_known(env, _TOKENS) if word.startswith("token") else
                _index_count(env, "label") if word.startswith(("label", "class")) else
                _index_count(env, name))
        # the bound the line names, where it is a constructor argument (a tagger's "gold BIO
        # tags below num_tags": 9, where the count guess was 4)
        bound = _DOC_BELOW.search(said)
        if bound and isinstance(env.get(bound.group(1)), int) and not isinstance(env[bound.group(1)], bool) \
                and env[bound.group(1)] > 0:
            high = env[bound.group(1)]
        return InputGuess(None, tuple(shape), "int64", high), \
            f"{line} {word or 'integers'}, below {high}"
    return InputGuess(None, tuple(shape), "float32"), line


# `samples a multiple of 256`, `T must be a multiple of 4`, `length is a multiple of the hop (512)`
_DOC_MULTIPLE = re.compile(r"\b(\w+)\s+(?:(?:must|should)\s+be\s+|is\s+|are\s+)?(?:an?\s+)?"
                           r"(?:integer\s+)?multiples?\s+of\s+(?:[^\d\s,.;)]+\s+){0,2}\(?(\d+)\)?", re.I)


# `size is 32 or 48`, `size: 32 or 48`, `size in {32, 48}`, `size is one of 32, 48`
_DOC_LISTED = re.compile(r"\b([A-Za-z_]\w*)\s*(?:is|are|:|in|=)?\s*(?:one\s+of\s*)?[{\[(]?\s*"
                         r"(\d+(?:\s*(?:,|\bor\b|\band\b)\s*\d+)+)", re.I)


def _docstrings(fn: ast.FunctionDef, cls: ast.ClassDef | None) -> list[str]:
    """Forward's docstring, then the class's ("" for none)."""
    return [(ast.get_docstring(node) if node is not None else None) or "" for node in (fn, cls)]


def _doc_sizes(fn: ast.FunctionDef, cls: ast.ClassDef | None, dims: set[str]) -> dict[str, tuple[int, ...]]:
    """{dim: sizes} for each dim of `dims` (named as init names it) that forward's or the
    class's docstring lists the sizes of (held-out batch 39's "size is 32 or 48", where init
    proposed 16, a size the model is not for); at most three, smallest first."""
    out: dict[str, tuple[int, ...]] = {}
    for doc in _docstrings(fn, cls):
        for m in _DOC_LISTED.finditer(doc):
            if m.group(1) in dims and m.group(1) not in out:
                sizes = sorted({int(v) for v in re.findall(r"\d+", m.group(2)) if int(v) > 1})
                if len(sizes) > 1:
                    out[m.group(1)] = tuple(sizes[:3])
    return out


def _doc_multiples(fn: ast.FunctionDef, name: str, cls: ast.ClassDef | None,
                   shape: tuple[str | int, ...]) -> dict[str, int]:
    """{dim of `shape`: k} for each dim that the docstring line for `name` says is a multiple
    of k (`audio: [batch, 2, samples] ... (samples a multiple of 256)`), by the name the line
    gives it (`samples`, `T`), kept where init named the dim so too or where the line's own
    dims list puts it at the same place. A rule on a line of its own in forward's or the
    class's docstring counts for a dim init named as it does (held-out batch 38's "size is a
    multiple of 4.", below the inputs' lines, gave one size)."""
    text = _doc_text(fn, name, cls) or ""
    said = {m.group(1): int(m.group(2)) for m in _DOC_MULTIPLE.finditer(text) if int(m.group(2)) > 1}
    named = {d for d in shape if isinstance(d, str) and d != "batch"}
    for doc in _docstrings(fn, cls):
        for m in _DOC_MULTIPLE.finditer(doc):
            if m.group(1) in named and int(m.group(2)) > 1:
                said.setdefault(m.group(1), int(m.group(2)))
    if not said:
        return {}
    dims = _DOC_DIMS.search(text)
    names = [d.strip() for d in dims.group(1).split(",")] if dims else []
    out: dict[str, int] = {}
    for i, d in enumerate(shape):
        if not isinstance(d, str) or d == "batch":
            continue
        word = d if d in said else names[i] if i < len(names) and len(names) == len(shape) \
            and names[i] in said else None
        if word is not None:
            out[d] = said[word]
    return out


# (not "intensities": a CT volume's in HU / 1000 are negative for air, a standardised image's too)
_DOC_NONNEGATIVE = re.compile(r"\b(?:non-?negative|positive|magnitudes?|probabilit(?:y|ies)|"
                              r"(?:in|to|within|between) \[0, ?1\])", re.I)


def _doc_range(fn: ast.FunctionDef, name: str, cls: ast.ClassDef | None = None) -> bool:
    """Whether the docstring line for `name` says its values are not negative (`spec:
    [batch, n_freq, frames], non-negative magnitudes`; probabilities; `in [0, 1]`, `scaled
    to [0, 1]`)."""
    return bool(_DOC_NONNEGATIVE.search(_doc_text(fn, name, cls) or ""))


def _doc_text(fn: ast.FunctionDef, name: str, cls: ast.ClassDef | None = None) -> str | None:
    """What forward's docstring says after `name:` on its line (`_DOC_LINE`) or after `name
    is` anywhere in a line; failing that, the class's docstring, where a model often says
    what forward takes (`forward(x): x is [batch, n_features], ...`). None where neither does."""
    said = re.compile(rf"(?:^|[\s(:;,]){re.escape(name)}\s+(?:is|are)\s+(.*)$")
    for doc in _docstrings(fn, cls):
        for line in doc.splitlines():
            m = _DOC_LINE.match(line.strip())
            if m and m.group(1) == name:
                return m.group(2)
            m = said.search(line.strip())
            if m:
                return m.group(1)
    return None


# What an annotation may name that is no single tensor: Python values, and containers, whose
# items may be tensors (a decoder's KV caches, `List[Tuple[torch.Tensor, torch.Tensor]]`), where
# one tensor guessed for them fails forward's first read of them as pairs.
_NO_TENSOR = CONTAINERS | {"int", "float", "bool", "str", "None", "MutableSequence", "MutableMapping"}


def _takes_tensor(ann: ast.AST) -> bool:
    """False for an annotation that allows no single tensor: only Python values (`int`, `float |
    None`, `str`) or containers (`List[Tuple[torch.Tensor, torch.Tensor]]`)."""
    def name(a: ast.AST) -> str:
        if isinstance(a, ast.Constant) and a.value is None:
            return "None"
        return (dotted(a.value if isinstance(a, ast.Subscript) else a) or "").rpartition(".")[2]
    names = {name(a) for a in _alternatives(ann)}
    return not names or not names <= _NO_TENSOR


def _fields_read(init: ast.FunctionDef, param: str) -> set[str]:
    """The fields of config parameter `param` a constructor reads (`config.vocab_size`)."""
    return {n.attr for n in ast.walk(init) if isinstance(n, ast.Attribute)
            and isinstance(n.value, ast.Name) and n.value.id == param}


def _config_reads(index: RepoClasses, init: tuple[_Class, ast.FunctionDef], param: str,
                  seen: set[int] | None = None) -> set[str]:
    """The fields of config parameter `param` that the constructor reads, and the
    constructors of the repository's classes it passes the config on to (minGPT's
    `Block(config)` reads the dropout rates its `GPT` never names); method calls
    (`config.merge_from_dict(...)`) are not fields."""
    seen = set() if seen is None else seen
    if id(init[1]) in seen:
        return set()
    seen.add(id(init[1]))
    called = {id(n.func) for n in ast.walk(init[1]) if isinstance(n, ast.Call)}
    out = {n.attr for n in ast.walk(init[1]) if isinstance(n, ast.Attribute) and id(n) not in called
           and isinstance(n.value, ast.Name) and n.value.id == param}
    for call in ast.walk(init[1]):
        if not isinstance(call, ast.Call):
            continue
        passed = [(i, None) for i, a in enumerate(call.args)
                  if isinstance(a, ast.Name) and a.id == param]
        passed += [(None, k.arg) for k in call.keywords
                   if k.arg and isinstance(k.value, ast.Name) and k.value.id == param]
        q = index.resolve(call.func, init[0], init[1]) if passed else None
        k = index.classes.get(q) if q else None
        inner = index.find_method(k, "__init__") if k else None
        if inner is None:
            continue
        params = init_params(inner[1])
        for i, name in passed:
            target = name if i is None else (params[i].name if i < len(params) else None)
            if target is not None:
                out |= _config_reads(index, inner, target, seen)
    return out


def _no_config_class(index: RepoClasses, init: tuple[_Class, ast.FunctionDef], param: str) -> str:
    """Why a constructor's config parameter got no `config:`: no class of the repository
    could be read as its config (minGPT builds a `CfgNode(**kwargs)` and sets its fields one by
    one), and what the user's `config:` has to give it."""
    fields = sorted(_config_reads(index, init, param))
    # The fields last: a long list is what the comment's length cap cuts.
    reads = f"; it reads {', '.join(fields)}" if fields else ""
    return (f"no value for the constructor argument {param!r}, a config no class of the "
            f"repository fits: add a `config:` that builds one (README: Models built from a "
            f"config object){reads}")


def _from_config(env: dict[str, Any], read: set[str], name: str) -> tuple[InputGuess | None, str]:
    """No first layer recognised in a config-built model: its config's fields say the input.
    Token ids or an image only when the constructor reads the vocabulary or image size
    (`config.padded_vocab_size`), or forward's parameter is named so (`input_ids`, `image`);
    a layer given the whole config reads the width alone."""
    vocab = _known(env, _TOKENS)
    image = _known(env, _IMAGE)
    if image and _IMAGE_NAME.search(name):
        read = set(_IMAGE)     # (the parameter's name first: CoCa reads a vocabulary too)
    if vocab and (any("vocab" in f for f in read) or _IDS_NAME.search(name)) \
            and not read.intersection(_IMAGE):
        return InputGuess(None, ("batch", "seq"), "int64", vocab), "from the config's vocabulary size (token ids)"
    if image and (read.intersection(_IMAGE) or _IMAGE_NAME.search(name)):
        ch = _known(env, _CHANNELS) or 3
        return InputGuess(None, ("batch", ch, "height", "width")), "from the config's image size (an image)"
    width = _known(env, _DIMS)
    if width:
        return (InputGuess(None, ("batch", "seq", width)),
                "from the config's width (a sequence of vectors)")
    return None, ""


# A graph's cases: its nodes are the `batch` dim (2 and 4), its edges a fixed number, each an
# index below the fewest nodes so that every case holds it.
_EDGES = 6
_FEWEST_NODES = 2
# the constructor's width of a node's features, and what it is when it defaults to None
_NODE_WIDTHS = ("in_channels", "in_dim", "input_dim", "in_features", "num_features", "dim_in",
                "node_dim", "in_feats")
_FEW_FEATURES = 8


_FILLED = frozenset({"zeros", "ones", "randn", "rand", "empty"})   # torch.<name>(size)
_ELEMENTWISE = (ast.Add, ast.Sub, ast.Mult, ast.Div)


def _from_buffer(env: dict[str, Any], init: ast.FunctionDef, fwd: ast.FunctionDef,
                 x: str) -> tuple[InputGuess, str] | None:
    """The input from a 1-D buffer or parameter it first meets in elementwise arithmetic, as
    a standardising model does (`(x - self.mean) / self.std`, with `self.register_buffer(
    "mean", torch.zeros(num_features))`): [batch, its size]. A new user's flow-based anomaly
    scorer has no layer before the flow, and init proposed nothing for it."""
    sizes: dict[str, int] = {}
    for node in ast.walk(init):
        target = made = None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr == "register_buffer" and len(node.args) >= 2 \
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            target, made = node.args[0].value, node.args[1]
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and _self_attr(node.targets[0]):
            target, made = _self_attr(node.targets[0]), node.value
        while isinstance(made, ast.Call) and isinstance(made.func, (ast.Name, ast.Attribute)) \
                and (dotted(made.func) or "").rsplit(".", 1)[-1] == "Parameter" and made.args:
            made = made.args[0]     # `nn.Parameter(torch.zeros(n))`
        if target and isinstance(made, ast.Call) and \
                (dotted(made.func) or "").rsplit(".", 1)[-1] in _FILLED and len(made.args) == 1:
            n = _eval(made.args[0], env)
            if isinstance(n, int) and not isinstance(n, bool) and n > 0:
                sizes[target] = n
    ops = sorted((n for n in ast.walk(fwd) if isinstance(n, ast.BinOp)),
                 key=lambda n: (n.lineno, n.col_offset))
    for node in ops:
        if isinstance(node.op, _ELEMENTWISE):
            pair = (node.left, node.right)
            if any(isinstance(v, ast.Name) and v.id == x for v in pair):
                other = next((_self_attr(v) for v in pair if _self_attr(v)), None)
                if other in sizes:
                    return (InputGuess(None, ("batch", sizes[other]), "float32"),
                            f"from `self.{other}`, the size-{sizes[other]} buffer it meets first")
    return None


def _from_constructor(params: list[Param], kwargs: dict[str, Any], env: dict[str, Any],
                      guessed: list[str], graph: bool = False, image: bool = False
                      ) -> tuple[InputGuess | None, str]:
    """The input from the constructor's sizes; for a graph network (`graph`: forward takes an
    `edge_index`, PyTorch Geometric's `forward(x, edge_index)`) node features, [nodes, width];
    for an input named as an image (`image`: CLIP's `forward(image, text)`) an image, whatever
    vocabulary the constructor also names (its text's)."""
    names = {p.name for p in params}

    def value(n: str) -> int | None:
        v = env.get(n)
        if v is None and n in names:
            v = kwargs[n] = env[n] = GUESSES.get(n, _FEW_FEATURES)
            guessed.append(n)
        return v if isinstance(v, int) and not isinstance(v, bool) else None

    for n in _NODE_WIDTHS if graph else ():
        if n in names and value(n):
            return (InputGuess(None, ("batch", value(n)), "float32"),
                    f"node features [nodes, {n}], beside `edge_index`")

    if image:
        side = next((n for n in _IMAGE_SIZES if n in names and value(n)), None)
        ch = next((value(c) for c in _CHANNELS if c in names), None) or 3
        return (InputGuess(None, ("batch", ch, "height", "width")),
                "an image, by its name" + (f", its side the constructor's {side}" if side else ""))
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
    layers = _layers_of_models(models)
    if any(p.entry not in layers and not _reads_as_layer(p.entry) for p in models):
        layers |= {p.entry for p in models if _reads_as_layer(p.entry)}
    blocks += [p.entry for p in models if p.entry in layers]
    ours = {q.split(".")[0] for q in index.classes} | {q.split(".")[0] for q in index.functions}
    blocks += [said for c in sorted(index.classes.values(), key=lambda c: (c.path, c.node.lineno))
               if c not in candidates and (said := guarded(c, lambda: _library_subclass(c, ours)))]
    return _unique_names([p for p in models if p.entry not in layers]), blocks


# The last words of a class name that say it is a layer, never a model of its own (`LoRALinear`,
# `ESM1LayerNorm`, `ClipLoss`, `MeanPooler`, `KVCache`, `TransformerLayer`). When the repository has a model beside
# them, they are listed as layers rather than proposed.
_LAYER_WORDS = frozenset({"norm", "linear", "loss", "pooler", "pool", "dropout", "activation",
                          "gelu", "relu", "silu", "swiglu", "geglu", "cache", "embedding",
                          "embeddings", "rope", "layer", "block"})


def _reads_as_layer(entry: str) -> bool:
    return _snake(entry.rpartition(":")[2]).rpartition("_")[2] in _LAYER_WORDS


def _raw_input(p: Proposal) -> bool:
    """Its input is what a whole model eats: token ids or an image."""
    return bool(p.inputs) and (p.inputs[0].dtype == "int64" or "height" in p.inputs[0].shape)


def _layers_of_models(models: list[Proposal]) -> set[str]:
    """Classes that take the same config as a model of token ids or images but are fed a
    hidden state themselves (litgpt's `LLaMAMoE(config)` beside `GPT(config)`, picked by
    name from the config at run time, so no constructor call shows it is a part): layers of
    that model, not models."""
    def config_classes(p: Proposal) -> set[str]:
        return {c.entry.partition(".from_")[0] for c in p.config}

    whole = {e for p in models if _raw_input(p) for e in config_classes(p)}
    return {p.entry for p in models if p.inputs and not _raw_input(p)
            and config_classes(p) & whole}


def _library_subclass(c: _Class, ours: Collection[str]) -> str | None:
    """A class of the repository built on an installed package's class that init does not
    read (MAE's `models_vit.VisionTransformer(timm.models.vision_transformer.VisionTransformer)`,
    which writes only `forward_features`): listed with the building blocks, with why, not left
    out in silence. Only where it writes a `forward*` method of its own and its base is a class of a
    package, neither torch's (read as a module) nor the standard library's, nor the repository's
    own (`ours`: its top-level modules)."""
    if c.name.startswith("_") or not any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                                         and n.name.startswith("forward") for n in c.node.body):
        return None
    for b in c.node.bases:
        name = c.names.resolve(b)
        head = (name or "").split(".")[0]
        if name and "." in name and head not in ours and head not in ("torch", "pt2bot") \
                and head not in sys.stdlib_module_names:
            return (f"{c.module}:{c.name} (on `{name}`, an installed package's class init does not "
                    "read: its constructor and `forward` are there; add it with its arguments, or "
                    "an entry function that builds it)")
    return None


def _is_model_class(index: RepoClasses, c: _Class) -> bool:
    """An `nn.Module` with a `forward` of its own or inherited, not an abstract one, and not
    one that calls a method the class leaves abstract (a base class whose `forward` calls
    `self.scoring_function`, which only its subclasses write)."""
    if not index.is_module(c.qualname):
        return False
    found = index.find_method(c, "forward")
    if found is None or _is_abstract(found[1]):
        return False
    called = (index.find_method(c, n) for n in _called_on_self(found[1]))
    return not any(m is not None and _is_abstract(m[1]) for m in called)


def _built_inside(index: RepoClasses, c: _Class) -> set[str]:
    """The classes `c`'s constructor calls (building blocks, not models of their own),
    directly or through a function of the repository that builds them (`self.proj =
    make_proj(config)` returning a `LoRALinear`), one call deep; and the classes it hands on
    to be built, a class given as a value (Swin's `downsample=PatchMerging if ... else None`,
    which each stage builds: proposed as four models of their own, none of which ran)."""
    init = index.find_method(c, "__init__")
    if init is None:
        return set()
    out = set()
    called = {id(n.func) for n in ast.walk(init[1]) if isinstance(n, ast.Call)}
    # a class an annotation names is a type, not one handed on to be built (litgpt's `LLM(model:
    # GPT, ...)` made its GPT a building block, and init proposed its MLPs instead)
    a = init[1].args
    annotations = [x.annotation for x in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg)
                   if x is not None and x.annotation is not None] + [init[1].returns] + \
        [n.annotation for n in ast.walk(init[1]) if isinstance(n, ast.AnnAssign)]
    typed = {id(n) for ann in annotations if ann is not None for n in ast.walk(ann)}
    for node in ast.walk(init[1]):
        if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, ast.Load) \
                and id(node) not in called and id(node) not in typed:
            q = index.resolve(node, *init)
            if q and q != c.qualname and q in index.classes:
                out.add(q)
        if not isinstance(node, ast.Call):
            continue
        q = index.resolve(node.func, *init)
        if q and q != c.qualname:
            out.add(q)
        helper = index.functions.get(q or "")
        for inner in ast.walk(helper.node) if helper is not None else ():
            if isinstance(inner, ast.Call):
                q = index.resolve(inner.func, helper, helper.node)  # type: ignore[arg-type]
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


def _comment(text: str, most: int = 300) -> str:
    """One line of at most `most` characters; a cut one ends in "…", so that a reason cut
    short is not read as a whole one ("...; cannot infer")."""
    line = " ".join(str(text).split())
    if len(line) <= most:
        return line
    # at a word's end: "(build_rai…" read as a word of its own
    cut = line.rfind(" ", 0, most - 1)
    return (line[:cut] if cut > most // 2 else line[:most - 1]) + " …"


def entry_lines(p: Proposal, note: str | None = None) -> list[str]:
    """The YAML lines of one entry (commented out when it has problems or a note)."""
    lines = [f"  - name: {_scalar(p.name)}",
             f"    entry: {_scalar(p.entry)}"]
    if p.uncalled_init:
        lines.append("    # " + _comment(
            f"the constructor never calls {p.uncalled_init}: the model runs on the weights "
            f"it leaves; an entry that builds it and calls {p.uncalled_init.split(' ')[0]} "
            "runs it as it is trained"))
    listed = len(p.config) > 1      # several: a list, each item with its arg
    for cfg in p.config:
        about = f"   # {_comment(f'a {cfg.kind}, {cfg.path}:{cfg.line}')}"
        if listed:
            if cfg is p.config[0]:
                lines.append("    config:")
            lines.append(f"      - entry: {_scalar(cfg.entry)}{about}")
        else:
            lines += [f"    config:{about}", f"      entry: {_scalar(cfg.entry)}"]
        pad = "        " if listed else "      "
        if cfg.kwargs:
            guessed = f"   # guessed: {', '.join(cfg.guessed)}" if cfg.guessed else ""
            lines.append(f"{pad}kwargs: {_flow(cfg.kwargs)}{guessed}")
        if cfg.arg:
            lines.append(f"{pad}arg: {cfg.arg}")
    if p.kwargs:
        guessed = f"   # guessed: {', '.join(p.guessed)}" if p.guessed else ""
        lines.append(f"    kwargs: {_flow(p.kwargs)}{guessed}")
    if p.inputs:
        lines.append(f"    inputs:{'   # ' + _comment(p.how) if p.how else ''}")
        lines += [f"      - {_flow(_input_spec(i))}" for i in p.inputs]
        for i, why, at in p.optional:
            # commented out: given, it stops the run of the default path (None), and its shape
            # is a guess that can be wrong where the live inputs' are read from the layers
            lines.append(f"      # - {_flow(_input_spec(i))}   # "
                         + _comment(f"optional: uncomment to run the branch on `{i.name}` "
                                    f"({at}), which None skips; {why}"))
        for name, read, at in p.objects:
            lines.append("      # " + _comment(
                f"`{name}` is left None, so the branch on it ({at}) is not run: forward reads "
                f"`{read}`, which no tensor has; to run it, build the object in an input "
                "factory (`inputs: {entry: module:function}`, called with each case's dims, as the "
                "README says)"))
    if p.shapes:
        lines.append("    shapes:")
        lines += [f"      {d}: {_flow_value(list(v))}" for d, v in p.shapes.items()]
    if p.dynamic:
        lines.append(f"    dynamic: {_flow_value(list(p.dynamic))}")
    if p.grad:
        lines.append(f"    grad: true   # forward differentiates inside itself ({p.grad}): autograd on")
    elif p.grad_hint:
        lines.append(f"    # grad: true   # {_comment(p.grad_hint)}")
    reasons = list(p.problems) + ([note] if note else [])
    if not reasons:
        return lines
    head = [f"  # {p.entry} ({p.path}:{p.line}) is not proposed: "
            f"{_comment('; '.join(reasons))}"]
    return head + ["  # " + ln[2:] for ln in lines]


def _input_spec(i: InputGuess) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if i.name:
        spec["name"] = i.name
    spec["shape"] = list(i.shape)
    spec["dtype"] = i.dtype
    if i.high is not None:
        spec.update(low=0, high=i.high)
    elif i.nonnegative:
        spec.update(low=0.0, high=1.0)
    return spec


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
        # (a `...Loss` is listed by its name, built inside no model: DINO's `main_dino:DINOLoss`
        # read as a part of the vision transformer)
        out.append("# Also found, building blocks of the models above, layers or losses by their names, "
                   "and classes built on an installed package's class (add them if you compile them alone):")
        out += [f"#   {b}" for b in blocks]
    out.append("run: {device: auto}")
    # what a new user's first review on a small CPU runner spends its time on (a two-layer
    # Nystromformer: 25 minutes on 2 cores, most of it inductor's compiles and latency rounds)
    out += ["# On a CPU runner with few cores, inductor's compiles and the latency rounds take most of a",
            "# review; `run: {device: auto, backend: eager, latency: false}` keeps the graph-break,",
            "# recompile and export checks (they do not depend on the backend) and drops latency."]
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


@dataclass(frozen=True)
class Checked:
    """What `--check` saw of one model: `ok` (kept) or not (commented out, `note` says why
    in the entry's comment); `said` is the line `init --check` prints."""
    ok: bool
    said: str
    note: str = ""
    kind: str = ""                 # the failure's kind (`import`, `build`: the model was not built)
    error: str = ""                # its message


def check_models(text: str, root: str,
                 progress: Callable[[str], None] | None = None) -> dict[str, Checked]:
    """Run each live entry once (phases=["breaks"]): model name → what happened. `progress`
    is told of the start and of each model as it finishes (minutes for a library's models)."""
    from pt2bot.configfile import load_config
    from pt2bot.smoke import run_models
    from pt2bot.smoke.runner import UNIFORM_SAID, nonfinite_said, unset_said

    fd, tmp = tempfile.mkstemp(prefix=".pt2bot-init-", suffix=".yml", dir=root)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        config = load_config(tmp)
        if not config.models:
            return {}
        if progress is not None:
            progress(f"--check: running {len(config.models)} model(s), one worker each (each "
                     "takes from seconds to a few minutes on a CPU)")
        with tempfile.TemporaryDirectory(prefix="pt2bot-init-") as out_dir:
            results = run_models(
                config, repo_root=root, out_dir=out_dir, phases=["breaks"], device="cpu",
                progress=None if progress is None else
                lambda run: progress(f"--check: {run.name}: {run.status} in {run.duration_s or 0:.1f} s"))
    finally:
        os.unlink(tmp)
    cases = {m.name: len(m.shape_cases()) for m in config.models}
    out: dict[str, Checked] = {}
    for run in results.models:
        took = f", {run.duration_s:.1f} s" if run.duration_s is not None else ""
        if run.status != "ok" or run.phase_errors:
            err = run.error or (run.phase_errors[0] if run.phase_errors else None)
            kind, message = (err.kind, err.message) if err else (None, None)
            where = f" at {err.path}:{err.line}" if err and err.path else ""
            note = f"--check: {run.status} ({kind or '?'}){where}: {message or ''}"
            out[str(run.name)] = Checked(False, f"failed{took}: {run.status} ({kind or '?'})"
                                                f"{where}: {_comment(message or '')}", note,
                                         kind or "", message or "")
            continue
        n = cases.get(str(run.name), 0)
        breaks = len(run.graph_breaks or ())
        graphs = "" if run.graph_count is None else \
            f", {run.graph_count} graph(s) and {breaks} graph break(s) in the break pass"
        # where they are, so that a user knows which are their code's and which an installed
        # package's before the first review counts them
        sites = list(dict.fromkeys(
            f"{b.gb or '?'} at " + (b.library + " (installed)" if not b.path and b.library
                                     else f"{b.path}:{b.line}" if b.line else str(b.path or "?"))
            for b in run.graph_breaks or ()))
        if sites:
            graphs += f" ({'; '.join(sites[:3])}{f'; {len(sites) - 3} more' if len(sites) > 3 else ''})"
        # a model that runs but returns NaN (a loss of a standard normal where it takes
        # magnitudes) is kept, and said: every comparison a review makes on it is NaN with NaN
        # (where a weight holds such values as built, that is the likelier cause)
        cause = unset_said(run) or ": check the inputs' values (`low`, `high`)"
        nan = f"; but an output is NaN or inf on {nonfinite_said(run.nonfinite)}{cause}" if run.nonfinite else \
            f"; {UNIFORM_SAID}" if run.uniform else ""
        out[str(run.name)] = Checked(True, f"ran OK: built, {n} shape case(s) run eagerly"
                                           f"{graphs}{took}{nan}")
    return out


def init_config(root: str, *, check: bool = False, force: bool = False,
                out: str | None = None, progress: Callable[[str], None] | None = None
                ) -> tuple[str, list[Proposal], dict[str, Checked]]:
    """Write the starting config; returns (path, proposals, what --check saw of each model
    it ran: empty without --check)."""
    root = os.path.abspath(root)
    path = os.path.abspath(out or os.path.join(root, CONFIG_NAME))
    if os.path.exists(path) and not force:
        # `init` then `init --check` is the README's sequence: say how to do that, not only
        # how to run the file as it is
        again = "`pt2bot init --check --force` proposes again and keeps the models that run, " \
                "replacing it" if check else "pass --force to overwrite it"
        raise UserError(f"{os.path.relpath(path)} exists; {again} (to run the models it lists "
                        f"instead: pt2bot run --config {os.path.relpath(path)} --out results.json)")
    proposals, blocks = discover(root)
    packages = _packages(proposals)
    text = render_config(proposals, blocks, packages)
    validate(text, os.path.dirname(path))
    checked: dict[str, Checked] = {}
    if check:
        checked = check_models(text, root, progress)
        notes = {name: c.note for name, c in checked.items() if not c.ok}
        text = render_config(proposals, blocks, packages, notes, checked=True)
        validate(text, os.path.dirname(path))
    if os.path.exists(path):
        # --force replaces the file; what was there (hand-written entries) is kept beside it:
        # a new user's `init --check --force` after writing an entry by hand left `models: []`
        with open(path, "rb") as fh:
            atomic_write_bytes(path + ".bak", fh.read())
    atomic_write_bytes(path, text.encode("utf-8"))
    return path, proposals, checked


# Python's own words for a call whose arguments do not fit the function
_ARGUMENT_ERROR = re.compile(r"missing \d+ required (?:positional |keyword-only )?arguments?"
                             r"|got an unexpected keyword argument|takes \d+ positional arguments? but")


def _inputs_said(inputs: Sequence[InputGuess]) -> str:
    """`x [batch, 3, height, width]; t [batch]`: the inputs init guessed, each with its dtype
    where that is not float32 (ids: `int64 below 100`)."""
    out = []
    for k, i in enumerate(inputs):
        dtype = "" if i.dtype == "float32" else f" {i.dtype}" + (f" below {i.high}" if i.high else "")
        dtype += " in [0, 1)" if i.nonnegative else ""
        out.append(f"{i.name or f'input {k}'} [{', '.join(map(str, i.shape))}]{dtype}")
    return "; ".join(out) or "no input"


def cli_init(args: Any) -> int:
    target = os.path.abspath(os.path.join(args.root, CONFIG_NAME))
    replaced = os.path.exists(target)
    path, proposals, checked = init_config(
        args.root, check=args.check, force=args.force,
        progress=lambda line: print(f"pt2bot: {line}", file=sys.stderr, flush=True))
    live = [p for p in proposals if not p.problems and (p.name not in checked or checked[p.name].ok)]
    shown = os.path.relpath(path) if path.startswith(os.getcwd() + os.sep) else path
    print(f"pt2bot: wrote {shown}: {len(live)} model(s) proposed"
          + (f", {len(proposals) - len(live)} commented out" if len(proposals) > len(live)
             else "")
          + (f"; the file it replaced is kept as {shown}.bak" if replaced else ""))
    if not args.check:
        for p in proposals:
            # "ok" read as checked, before anything ran: the guess is said, to be read
            state = (f"proposed, not run: {_inputs_said(p.inputs)}" if p in live
                     else "; ".join(p.problems))
            print(f"pt2bot:   {p.name} ({p.entry}): {_comment(state, 200)}")
        if live:
            print("pt2bot: nothing was run; `pt2bot init --check --force` proposes again, builds "
                  f"and runs each model once and keeps those that run, replacing {shown} (or "
                  f"`pt2bot run --config {shown}` runs it as it is)")
        return 0
    ran = [p for p in proposals if p.name in checked]
    print(f"pt2bot: --check ran {len(ran)} model(s) on the CPU, each in its own worker: built, "
          "its shape cases run eagerly, then the graph-break pass")
    for p in ran:
        c = checked[p.name]
        print(f"pt2bot:   {p.name} ({p.entry}): {_comment(c.said, 300)} -> "
              f"{'kept' if c.ok else 'commented out'}")
    failed = [checked[p.name] for p in ran if not checked[p.name].ok]
    if ran and len(failed) == len(ran) and all(c.kind == "build" for c in failed) \
            and all(_ARGUMENT_ERROR.search(c.error) for c in failed):
        # the install is fine: what init guessed is not
        print("pt2bot: no model could be built: each constructor refused the arguments init "
              "guessed (a required one it did not find, often taken through **kwargs by a class it "
              "could not follow); set them under the entry's kwargs; first: "
              f"{_comment(failed[0].error, 300)}")
    elif ran and len(failed) == len(ran) and all(c.kind == "import" for c in failed):
        # (as `pt2bot run` says it: one cause behind every model, not each model's fault)
        print(f"pt2bot: no model could be imported or built: that is usually the set-up (the "
              f"install, a package the repository imports), not the models; first: "
              f"{_comment(failed[0].error, 300)}")
    unrun = [p for p in proposals if p.problems]
    if unrun:
        print(f"pt2bot: not run, {len(unrun)} class(es) init could not build from the source "
              "(commented out, with the reason):")
        for p in unrun:
            print(f"pt2bot:   {p.name} ({p.entry}): {_comment('; '.join(p.problems), 200)}")
    return 0


__all__ = ["GUESSES", "Checked", "ConfigGuess", "InputGuess", "Proposal", "check_models", "cli_init",
           "discover", "init_config", "propose", "render_config", "RepoClasses", "validate"]
