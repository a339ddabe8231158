"""Graph-break and recompile checks for your own test suite.

    from pt2bot.testing import assert_no_graph_breaks, graph_breaks

    def test_encoder_compiles_whole():
        assert_no_graph_breaks(Encoder(), torch.randn(2, 16))

The functions compile with an eager (recording) backend, so they cost a dynamo trace and no
inductor compile. They read dynamo's structured trace (the `torch.__trace` logger that
`TORCH_TRACE` and tlparse use), not `torch._dynamo.explain`, which misses breaks inside loops
and breaks with nothing traced before them (see pt2bot/smoke/breaks.py). The records are
the ones the smoke run reports: one per (GB id, innermost frame in your code), with `count`.

Which code is "yours" (`user_code`): a break is located at the innermost frame of its
traceback that lies in your code, and `path` is relative to where that code lives. By default
your code is
  1. the project of the calling file: the nearest directory above it holding
     `pyproject.toml`, `setup.py`, `setup.cfg`, `pt2bot.yml` or `.git` (else the directory
     above the calling file's outermost package), minus virtualenvs and site-packages in it;
  2. and the top-level package that defines the function or the module's class, wherever it
     is installed (a `pip install .` into site-packages too), paths then relative to the
     directory holding that package.
Pass `user_code="src"` (a directory or several; relative to the current directory) to say it
yourself. torch's own modules are never "yours": a break inside `nn.MultiheadAttention` is
located at the line of your code that called it.

Every call resets dynamo before and after (and clears its counters and compile metrics), so
checks do not see each other's compiled code, and compiled code elsewhere in the process is
dropped. torch's logging configuration is left as it was.
"""
from __future__ import annotations

import inspect
import os
import sys
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

from pt2bot.smoke.location import RepoPaths, real_file

_PT2BOT_DIR = os.path.dirname(os.path.abspath(__file__))
# torch is not a dependency of pt2bot itself (`pt2bot check` runs without it): the extra.
INSTALL_TORCH = ("pip install 'pt2bot[smoke]' (or your project's own torch: pt2bot installs "
                 "torch only with that extra)")
_PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", "pt2bot.yml", ".git")
_NOT_USER_PACKAGES = frozenset({"torch", "functorch", "builtins", "pt2bot"})


# --------------------------------------------------------------------------- records

@dataclass(frozen=True)
class GraphBreak:
    """One graph-break site, as the smoke run reports it (docs/formats.md, `graph_breaks`)."""
    gb: str | None                 # "GB0124"; None when the torch in use has no registry id
    gb_type: str                   # dynamo's context-free break type
    path: str | None               # relative to the user code it lies in (see user_code)
    line: int | None
    function: str | None
    hints: tuple[str, ...] = ()
    reason: str = ""
    explanation: str = ""
    url: str | None = None
    source: str = ""               # the source line
    count: int = 1                 # break events merged into this site (loops, layers)
    in_loop: bool = False          # dynamo skipped the frame (GB7000) and ran it eagerly
    user_stack: tuple[dict[str, Any], ...] = ()
    # with in_loop: the frame dynamo gave up on (the outermost one whose line is in a loop)
    # and that loop's first line
    loop_frame: dict[str, Any] | None = None

    @classmethod
    def from_site(cls, s: dict[str, Any]) -> "GraphBreak":
        return cls(gb=s.get("gb"), gb_type=s.get("gb_type") or "", path=s.get("path"),
                   line=s.get("line"), function=s.get("function"),
                   hints=tuple(s.get("hints") or ()), reason=s.get("reason") or "",
                   explanation=s.get("explanation") or "", url=s.get("url"),
                   source=s.get("source") or "", count=int(s.get("count") or 1),
                   in_loop=bool(s.get("in_loop")),
                   user_stack=tuple(dict(f) for f in s.get("user_stack") or ()),
                   loop_frame=dict(s["loop_frame"]) if isinstance(s.get("loop_frame"), dict) else None)

    def to_dict(self) -> dict[str, Any]:
        """The smoke run's RUN `graph_breaks[]` item."""
        return {"gb": self.gb, "gb_type": self.gb_type, "path": self.path, "line": self.line,
                "function": self.function, "source": self.source, "reason": self.reason,
                "explanation": self.explanation, "hints": list(self.hints), "url": self.url,
                "count": self.count, "in_loop": self.in_loop,
                "user_stack": [dict(f) for f in self.user_stack],
                **({"loop_frame": dict(self.loop_frame)} if self.loop_frame else {})}

    @property
    def location(self) -> str:
        if not self.path:
            return "(outside your code)"
        return f"{self.path}:{self.line}" if self.line else self.path


@dataclass(frozen=True)
class RecompileReason:
    guard: str                     # the guard that failed, as torch prints it
    # guard: a guard in the code failed | size_mismatch: a static size changed |
    # size_one: torch's 0/1 specialisation | automatic_dynamic: the first size change of a
    # dim under dynamic=None, after which torch compiles that dim dynamic (once per dim)
    kind: str
    path: str | None = None
    line: int | None = None
    source: str | None = None
    dim: str | None = None         # "x.shape[0]": the input dim the guard is about

    def to_dict(self) -> dict[str, Any]:
        return {"guard": self.guard, "kind": self.kind, "path": self.path, "line": self.line,
                "source": self.source, "dim": self.dim}


@dataclass(frozen=True)
class Recompile:
    """The call at `call` (index into the inputs) compiled the function again."""
    call: int
    shapes: dict[str, tuple[int, ...]]         # the tensor inputs of that call
    reasons: tuple[RecompileReason, ...] = ()

    @property
    def size_one(self) -> bool:
        """Only torch's own 0/1 specialisation: size 1 always gets its own graph."""
        return bool(self.reasons) and all(r.kind == "size_one" for r in self.reasons)

    @property
    def expected(self) -> bool:
        """torch.compile's by-design recompiles: size 1, and automatic dynamic's one per dim."""
        return bool(self.reasons) and all(r.kind in ("size_one", "automatic_dynamic")
                                          for r in self.reasons)

    def to_dict(self) -> dict[str, Any]:
        return {"call": self.call, "shapes": {k: list(v) for k, v in self.shapes.items()},
                "size_one": self.size_one, "expected": self.expected,
                "reasons": [r.to_dict() for r in self.reasons]}


# --------------------------------------------------------------------------- user code

@dataclass
class UserCode(RepoPaths):
    """RepoPaths for a project root plus packages that live elsewhere (site-packages)."""
    packages: tuple[str, ...] = ()     # package directories or single-module files

    def __post_init__(self) -> None:
        super().__post_init__()
        self.packages = tuple(os.path.realpath(p) for p in self.packages)

    def rel(self, filename: str | None) -> str | None:
        real = real_file(filename)
        if real is None:
            return None
        if real.startswith(_PT2BOT_DIR + os.sep):
            return None     # pt2bot's own frames (an editable install inside the project)
        r = super().rel(filename)
        if r:
            return r
        for pkg in self.packages:
            if real == pkg or real.startswith(pkg + os.sep):
                return os.path.relpath(real, os.path.dirname(pkg)).replace(os.sep, "/")
        return None

    def source_line(self, rel: str | None, line: int | None) -> str:
        text = super().source_line(rel, line)
        if text or not rel or not line:
            return text
        for pkg in self.packages:
            candidate = os.path.join(os.path.dirname(pkg), rel)
            if os.path.isfile(candidate):
                return RepoPaths(os.path.dirname(pkg)).source_line(rel, line)
        return ""


def _caller_file() -> str | None:
    """The first frame outside pt2bot (the user's test, through the pytest fixture too)."""
    frame = sys._getframe(1)
    while frame is not None:
        f = os.path.abspath(frame.f_code.co_filename)
        if not f.startswith(_PT2BOT_DIR + os.sep) and not frame.f_code.co_filename.startswith("<"):
            return f
        frame = frame.f_back
    return None


def project_root(path: str) -> str:
    """The nearest directory at or above `path` with a project marker; else the directory
    above the outermost package containing it."""
    d = path if os.path.isdir(path) else os.path.dirname(path)
    d = os.path.realpath(d)
    probe = d
    while True:
        if any(os.path.exists(os.path.join(probe, m)) for m in _PROJECT_MARKERS):
            return probe
        parent = os.path.dirname(probe)
        if parent == probe:
            break
        probe = parent
    while os.path.isfile(os.path.join(d, "__init__.py")):
        d = os.path.dirname(d)
    return d


def _defining_package(obj: Any) -> str | None:
    """The directory of the top-level package (or the file of the module) defining `obj`."""
    import torch

    target = type(obj) if isinstance(obj, torch.nn.Module) else obj
    target = getattr(target, "__wrapped__", target)
    modname = getattr(target, "__module__", None) or ""
    top = modname.split(".")[0]
    if not top or top in _NOT_USER_PACKAGES or top.startswith("_"):
        return None
    mod = sys.modules.get(top)
    file = getattr(mod, "__file__", None)
    if not file:
        return None
    if os.path.basename(file) == "__init__.py":
        return os.path.dirname(file)
    if modname == top:
        return file           # a single-module top level: only that file is the user's
    return None


def _require_torch() -> None:
    try:
        import torch  # noqa: F401
    except ImportError as e:
        raise ModuleNotFoundError(f"pt2bot.testing needs torch: {INSTALL_TORCH}",
                                  name="torch") from e


def resolve_user_code(obj: Any, user_code: str | Sequence[str] | None = None,
                      caller: str | None = None) -> UserCode:
    """Where the user's code is, for `obj` called from `caller` (see the module docstring)."""
    _require_torch()
    if user_code is not None:
        roots = [user_code] if isinstance(user_code, (str, os.PathLike)) else list(user_code)
        roots = [os.path.abspath(os.fspath(r)) for r in roots]
        if not roots:
            raise ValueError("user_code: give at least one directory")
        return UserCode(roots[0], packages=tuple(roots[1:]))
    caller = caller or _caller_file()
    root = project_root(caller) if caller else os.getcwd()
    pkg = _defining_package(obj)
    return UserCode(root, packages=(pkg,) if pkg else ())


# --------------------------------------------------------------------------- graph breaks

def _call_parts(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    from pt2bot.smoke.inputs import CaseInputs

    return CaseInputs(shape={}, args=tuple(args), kwargs=dict(kwargs))


def graph_breaks(fn_or_module: Callable[..., Any], *args: Any,
                 user_code: str | Sequence[str] | None = None,
                 **kwargs: Any) -> list[GraphBreak]:
    """Every graph-break site of one call `fn_or_module(*args, **kwargs)`, compiled by dynamo.

    `user_code` is keyword-only and not passed on (see the module docstring); to pass a
    keyword argument of that name to your function, wrap the call in a lambda.
    Runs under `torch.no_grad()`, as the smoke run does.
    """
    paths = resolve_user_code(fn_or_module, user_code, _caller_file())
    return _measure(fn_or_module, _call_parts(args, kwargs), paths)


def _measure(fn: Any, case: Any, paths: UserCode) -> list[GraphBreak]:
    """measure_breaks (the smoke run's breaks phase), minus the frames that called it.

    Dynamo's user-code traceback starts at the outermost Python frame: the test that called
    us is in the user's project too, but it is not part of the break. Frames of the calling
    stack (same file and line) are cut from the front of each site's stack.
    """
    from pt2bot.smoke.breaks import measure_breaks

    outer: set[tuple[str | None, int]] = set()
    frame = sys._getframe(1)
    while frame is not None:
        outer.add((paths.rel(frame.f_code.co_filename), frame.f_lineno))
        frame = frame.f_back
    with LoggingKept():
        got = measure_breaks(fn, case, paths)
    out = []
    for site in got["graph_breaks"]:
        stack = list(site.get("user_stack") or ())
        while stack and (stack[0]["path"], stack[0]["line"]) in outer:
            stack.pop(0)
        if not stack and site.get("user_stack"):
            # the only "user" frames were the caller's: the break is outside the user's code
            site = {**site, "path": None, "line": None, "function": None, "source": ""}
        out.append(GraphBreak.from_site({**site, "user_stack": stack}))
    return out


def assert_no_graph_breaks(fn_or_module: Callable[..., Any], *args: Any,
                           user_code: str | Sequence[str] | None = None,
                           **kwargs: Any) -> None:
    """Fail (AssertionError) listing each break as pt2bot comments it."""
    paths = resolve_user_code(fn_or_module, user_code, _caller_file())
    found = graph_breaks(fn_or_module, *args, user_code=[paths.root, *paths.packages], **kwargs)
    if found:
        __tracebackhide__ = True  # noqa: F841 - pytest: show the test's line, not ours
        raise AssertionError(format_breaks(found, _name(fn_or_module)))


def format_breaks(breaks: Sequence[GraphBreak], what: str = "the function") -> str:
    """Plain text for a test failure: one block per site, like pt2bot's review comment
    (GB code and type, where, the explanation, hints, the documentation page)."""
    n = len(breaks)
    lines = [f"{n} graph break{'s' if n != 1 else ''} in {what} "
             "(dynamo, eager backend; pt2bot.testing):"]
    for b in breaks:
        code = b.gb or "graph break"
        fn = f" in {b.function}" if b.function else ""
        times = f" ({b.count} times)" if b.count > 1 else ""
        lines.append(f"  {b.location}{fn}: {code} {b.gb_type}{times}")
        if b.source:
            lines.append(f"      {b.source}")
        text = b.explanation or b.reason
        if text:
            lines.append(f"      {_one_line(text, 600)}")
        for h in b.hints[:2]:
            lines.append(f"      hint: {_one_line(h, 400)}")
        if b.in_loop:
            lines.append("      inside a loop: dynamo skips the whole frame and runs it eagerly")
        if b.url:
            lines.append(f"      {b.url}")
    return "\n".join(lines)


# --------------------------------------------------------------------------- recompiles

def _as_call(item: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
    if isinstance(item, dict):
        return (), dict(item)
    if isinstance(item, (tuple, list)):
        return tuple(item), {}
    return (item,), {}


def _param_names(fn: Any) -> list[str]:
    target = fn.forward if hasattr(fn, "forward") else fn
    try:
        sig = inspect.signature(target)
    except (TypeError, ValueError):
        return []
    return [p.name for p in sig.parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]


def _case(args: tuple[Any, ...], kwargs: dict[str, Any], params: list[str]) -> Any:
    """CaseInputs whose dims name every tensor axis ("x.shape[0]"), for guard attribution."""
    import torch

    from pt2bot.smoke.inputs import CaseInputs

    names = tuple(params[i] if i < len(params) else f"arg{i}" for i in range(len(args)))
    named = dict(zip(names, args))
    named.update(kwargs)
    dims: dict[str, dict[int, str]] = {}
    shape: dict[str, int] = {}
    for name, v in named.items():
        if isinstance(v, torch.Tensor):
            for ax, size in enumerate(v.shape):
                dim = f"{name}.shape[{ax}]"
                dims.setdefault(name, {})[ax] = dim
                shape[dim] = int(size)
    return CaseInputs(shape=shape, args=args, kwargs=kwargs, dims=dims, arg_names=names)


def recompiles(fn: Callable[..., Any], inputs: Iterable[Any], *, dynamic: bool | None = None,
               user_code: str | Sequence[str] | None = None) -> list[Recompile]:
    """Compile `fn` once and call it with each item of `inputs` (a tuple of positional
    arguments, a dict of keyword arguments, or one argument); every call that made dynamo
    compile again is a `Recompile` with the guards that failed.

    `dynamic` is torch.compile's (None: static first, automatic dynamic on the second
    shape). The recompile limit is raised above the number of calls, so none is hidden by
    a silent fallback to eager.
    """
    import torch

    from pt2bot.smoke.breaks import RecordingBackend
    from pt2bot.smoke.matrix import parse_recompile_reason, specialization_sites, specialised_at
    from pt2bot.smoke.trace import (TraceCollector, compilation_metrics, intern_table,
                                    reset_dynamo)

    calls = [_as_call(i) for i in inputs]
    paths = resolve_user_code(fn, user_code, _caller_file())
    params = _param_names(fn)
    limit_key = ("recompile_limit" if hasattr(torch._dynamo.config, "recompile_limit")
                 else "cache_size_limit")
    out: list[Recompile] = []
    made_dynamic: set[str] = set()
    reset_dynamo()
    try:
        compiled = torch.compile(fn, backend=RecordingBackend(), dynamic=dynamic)
        with LoggingKept(), torch._dynamo.config.patch(**{limit_key: len(calls) + 8}), \
                torch.no_grad(), TraceCollector() as events:
            for k, (args, kwargs) in enumerate(calls):
                n0 = len(compilation_metrics())
                compiled(*args, **kwargs)
                metrics = compilation_metrics()
                files = sorted({m.co_filename for m in metrics if m.co_filename}
                               | set(intern_table().values()))
                case = _case(args, kwargs, params)
                # A static size guard names no line; the line that specialised the size does
                # (the structured trace's user stack: what the smoke run reports it with).
                sites = specialization_sites(events, paths)
                for m in metrics[n0:]:
                    text = getattr(m, "recompile_reason", None)
                    if not text or getattr(m, "fail_type", None):
                        continue
                    reasons = []
                    for r in parse_recompile_reason(text, case, files, paths, events):
                        kind = r["kind"]
                        if (kind == "size_mismatch" and dynamic is None and r["dim"]
                                and r["dim"] not in made_dynamic):
                            kind = "automatic_dynamic"
                            made_dynamic.add(r["dim"])
                        site = specialised_at(r["guard"], sites) if not r["path"] else None
                        if site is not None:
                            r = {**r, "path": site["path"], "line": site["line"],
                                 "source": site["source"]}
                        reasons.append(RecompileReason(
                            guard=r["guard"], kind=kind, path=r["path"], line=r["line"],
                            source=r["source"], dim=r["dim"]))
                    out.append(Recompile(call=k, shapes={
                        n: tuple(int(s) for s in v.shape) for n, v in case.named().items()
                        if isinstance(v, torch.Tensor)}, reasons=tuple(reasons)))
    finally:
        reset_dynamo()
    return out


def assert_no_recompiles(fn: Callable[..., Any], inputs: Iterable[Any], *,
                         dynamic: bool | None = None, allow_expected: bool = True,
                         user_code: str | Sequence[str] | None = None) -> None:
    """Fail listing each recompile with its guards. torch.compile's by-design recompiles
    (`Recompile.expected`: size 1, and the one per dim that turns on automatic dynamic) are
    allowed unless `allow_expected=False`; pt2bot's smoke run counts those apart too."""
    calls = list(inputs)
    paths = resolve_user_code(fn, user_code, _caller_file())
    found = recompiles(fn, calls, dynamic=dynamic, user_code=[paths.root, *paths.packages])
    bad = [r for r in found if not (allow_expected and r.expected)]
    if bad:
        __tracebackhide__ = True  # noqa: F841
        raise AssertionError(format_recompiles(bad, _name(fn), len(calls)))


def format_recompiles(found: Sequence[Recompile], what: str = "the function",
                      n_calls: int | None = None) -> str:
    over = f" over {n_calls} calls" if n_calls is not None else ""
    lines = [f"{len(found)} recompile{'s' if len(found) != 1 else ''} of {what}{over} "
             "(dynamo, eager backend; pt2bot.testing):"]
    for r in found:
        shapes = ", ".join(f"{k}: {list(v)}" for k, v in r.shapes.items())
        lines.append(f"  call {r.call} ({shapes or 'no tensors'}):")
        for g in r.reasons or (RecompileReason(guard="(no reason recorded)", kind="guard"),):
            where = f" at {g.path}:{g.line}" if g.path else ""
            if g.path and g.kind in ("size_mismatch", "automatic_dynamic"):
                where = f"; specialised to a constant at {g.path}:{g.line}"
            src = f"  ({_one_line(g.source, 200)})" if g.source else ""
            tag = {"size_one": " [size 1: torch specialises 0/1 by design]",
                   "automatic_dynamic": " [automatic dynamic: this dim compiles dynamic from now"
                                        " on]"}.get(g.kind, "")
            lines.append(f"      guard failed: {_one_line(g.guard, 300)}{where}{src}{tag}")
    return "\n".join(lines)


# --------------------------------------------------------------------------- configured models

class ModelFailed(Exception):
    """A configured model could not be built, fed or run eagerly (the smoke run's `error`)."""

    def __init__(self, name: str, kind: str, message: str, path: str | None = None,
                 line: int | None = None) -> None:
        where = f" at {path}:{line}" if path and line else (f" at {path}" if path else "")
        super().__init__(f"model {name}: {kind} error{where}: {message}")
        self.name, self.kind, self.message, self.path, self.line = name, kind, message, path, line


def model_graph_breaks(model: Any, root: str, *, device: str = "cpu") -> list[GraphBreak]:
    """The breaks phase of the smoke run for one `pt2bot.config.ModelConfig`, in this
    process: the model and the first shape case's inputs are built as the worker builds them
    (pt2bot/smoke/inputs.py), run eagerly once, then traced for breaks. Paths are relative
    to `root` (the config's directory), as in the smoke run. Raises ModelFailed.
    """
    _require_torch()
    from pt2bot.smoke.inputs import calls_with_grad

    paths = UserCode(root)
    with calls_with_grad(model.grad):
        built, cases, _outs, _spec = _built_model(model, paths, device, model.shape_cases()[:1])
        return _measure(built, cases[0], paths)


def _built_model(model: Any, paths: Any, device: str, shapes: list[dict[str, int]]
                 ) -> tuple[Any, list[Any], list[Any], dict[str, Any]]:
    """(module, the cases' inputs, their eager outputs, the model's spec as the worker
    reads it), built as the smoke run's worker builds them; raises ModelFailed."""
    import dataclasses
    import json

    from pt2bot.smoke.inputs import (build_inputs, build_model, call_mode, forward_params,
                                      infer_dims, run_forward)

    spec = json.loads(json.dumps(dataclasses.asdict(model), default=str))
    try:
        built = build_model(str(spec.get("entry") or ""), spec.get("kwargs") or {}, paths,
                            spec.get("config"), train=bool(spec.get("train")),
                            grad=bool(spec.get("grad")))
        built = built.to(device)
        cases = [build_inputs(spec, built, shape, device, paths) for shape in shapes]
        infer_dims(cases, forward_params(built))
        with call_mode():
            outs = [run_forward(built, c, paths) for c in cases]
    except _model_error() as e:
        raise ModelFailed(model.name, e.kind, e.message, e.path, e.line) from None
    return built, cases, outs, spec


def model_shape_advice(model: Any, root: str, *, device: str = "cpu",
                       recompile_limit: int = 8) -> dict[str, Any]:
    """The smoke run's shape advice for one `pt2bot.config.ModelConfig`, in this process
    (pt2bot/smoke/advice.py): every shape case built and run eagerly as the worker does, the
    matrix compiled (eager backend) for the compiles before, then the advised spec derived,
    exported and compiled. The RUN's `shape_advice` dict (docs/formats.md); paths relative
    to `root`. Raises ModelFailed."""
    from pt2bot.smoke.advice import measure_advice
    from pt2bot.smoke.trace import reset_dynamo

    _require_torch()
    from pt2bot.smoke.inputs import calls_with_grad

    paths = UserCode(root)
    try:
        with calls_with_grad(model.grad), LoggingKept():
            built, cases, outs, spec = _built_model(model, paths, device, model.shape_cases())
            got = measure_advice(built, cases, outs, spec,
                                 {"recompile_limit": recompile_limit}, paths)
    finally:
        reset_dynamo()
    return got["shape_advice"]


def format_shape_advice(advice: dict[str, Any], what: str = "the model") -> str:
    """The advice as text: one line per input dim, the export and compile verdicts, the
    notes, then the code to paste (Python, and the `dynamic:` lines of pt2bot.yml)."""
    lines = [f"shape advice for {what} (pt2bot.testing):"]
    ex = advice.get("export") or {}
    for inp, axes in (ex.get("dynamic_shapes") or {}).items():
        for ax, e in axes.items():
            head = f"  {inp}.shape[{ax}]"
            if e.get("static"):
                where = f" at {e['path']}:{e['line']}" if e.get("path") else ""
                src = f"  ({_one_line(e['source'], 200)})" if e.get("source") else ""
                per = e.get("per_size") or {}
                again = (f"; each new size compiles again ({per.get('recompiled')} recompiles over "
                         f"{per.get('sizes')} sizes): past {per.get('limit') or 8} sizes dynamo runs "
                         "this code eagerly" if per else "")
                lines.append(f"{head}: cannot be dynamic, {e.get('reason')}{where}{src}{again}")
                continue
            rng = ", ".join(f"{k} {e[k]}" for k in ("min", "max", "multiple_of")
                            if e.get(k) is not None) or "any size"
            lines.append(f"{head} ({e.get('name')}): dynamic, {rng}")
            if e.get("auto") and e.get("multiple_of"):
                took = ", ".join(str(n) for n in e["auto"].get("took") or ())
                lines.append("      the multiple is torch's fix for a Dim, not the model's need: "
                             "Dim.AUTO exports it with none" + (f" (ran {took})" if took else ""))
            split = e.get("not_one_range")
            if split:
                where = f" at {split['path']}:{split['line']}" if split.get("path") else ""
                lines.append(f"      not one range over the matrix: {split.get('reason')}{where}")
    if ex.get("ok") is False:
        where = f" at {ex['path']}:{ex['line']}" if ex.get("path") else ""
        lines.append(f"  export still fails: {ex.get('kind')}{where}")
    c = advice.get("compile") or {}
    if c.get("method"):
        lines.append(f"  compiles over the matrix: {c.get('compiles_before')} -> "
                     f"{c.get('compiles_after')} with {c['method']}")
    lines += [f"  note: {_one_line(n, 400)}" for n in advice.get("notes") or ()]
    code = advice.get("code") or {}
    for key in ("python", "compile", "yaml"):
        if code.get(key):
            lines.append("")
            lines += ["    " + x for x in str(code[key]).splitlines()]
    return "\n".join(lines)


@dataclass(frozen=True)
class ProvenFix:
    """A candidate fix of one graph break, and what its proof found (`verified_fixes`)."""
    path: str                      # relative to the user code it lies in (see user_code)
    start_line: int                # lines start_line..end_line are replaced by `lines`
    end_line: int
    lines: tuple[str, ...]
    rule: str                      # the rule whose recipe offered it ("PTC105")
    title: str
    verified: bool
    evidence: str = ""             # what was proven, when verified
    reason: str = ""               # why not, when not
    diff: str = ""                 # the edit as a unified diff of the file
    # not an edit: the dynamo setting proven for the break on `start_line`
    # (`torch._dynamo.config.<setting> = True`; `lines` and `diff` are empty)
    setting: str = ""

    def __str__(self) -> str:
        what = f"verified: {self.evidence}" if self.verified else f"not verified: {self.reason}"
        return f"{self.path}:{self.start_line}: {self.title} ({what})\n{self.diff}"


def verified_fixes(model: Any, *args: Any, user_code: str | Sequence[str] | None = None,
                   include_rejected: bool = False, **kwargs: Any) -> list[ProvenFix]:
    """The fixes of the graph breaks of `model(*args, **kwargs)` that pt2bot proved, in this
    process, as `pt2bot review` proves the ones it suggests: for each break in your code, the
    candidate edits the rules' recipes offer for the static findings on its line are put in
    place one by one (the function's patched text compiled in memory; your files are never
    written) and kept only when the break is gone, no other break appears, the graph count
    does not grow, the outputs equal the unpatched model's on these inputs, and where the
    replaced code guards against NaN, inf, an empty mask or zero, also with that value
    injected into the edited function's arguments. A `.item()` break (GB0124) or a
    dynamic-shape operator's (GB0036) that no edit fixed is then tried with torch's own hint,
    `capture_scalar_outputs` / `capture_dynamic_output_shape_ops`, set and the code unchanged:
    kept when the break is gone, no other appears and the compiled outputs equal eager ones (a
    `ProvenFix` with `setting` and no lines). `include_rejected=True` also returns the
    candidates that failed, with their reason.

        for fix in verified_fixes(Encoder(), torch.randn(2, 16)):
            print(fix)          # the file, the lines, the evidence and a unified diff
    """
    import difflib

    _require_torch()
    import torch

    from pt2bot.config import StaticConfig
    from pt2bot.fixes import SETTINGS
    from pt2bot.rules import apply_candidate, fix_candidates
    from pt2bot.smoke.verify import measure_state, prove_candidate
    from pt2bot.static import check_paths

    code = resolve_user_code(model, user_code, _caller_file())
    case = _call_parts(args, kwargs)
    out: list[ProvenFix] = []
    with LoggingKept():
        breaks = [b for b in _measure(model, case, code) if b.path and b.line]
        for path in dict.fromkeys(b.path for b in breaks):
            base = _base_dir(code, path)
            if base is None:
                continue
            paths = RepoPaths(base)
            with open(os.path.join(base, path), encoding="utf-8", newline="") as fh:
                source = fh.read()
            lines = {b.line for b in breaks if b.path == path}
            findings = [f for f in check_paths(base, [path], StaticConfig(select=("ALL",)),
                                               jobs=1)
                        if any(f.line <= n <= (f.end_line or f.line) for n in lines)]
            with torch.no_grad():
                torch.manual_seed(0)
                own = case.fresh()     # (the case stays as it was for the proof's calls)
                head_out = model(*own.args, **own.kwargs)
            head = measure_state(model, [case], [head_out], {}, {}, paths, ["breaks"])
            fixed: set[int] = set()
            for f in findings:
                targets = [{"kind": "break", "path": b.path, "line": b.line, "gb": b.gb,
                            "gb_type": b.gb_type} for b in breaks
                           if b.path == path and f.line <= (b.line or 0) <= (f.end_line or f.line)
                           and b.line not in fixed]
                cands = [v for c in fix_candidates(f, source) for v in (c, *c.variants)]
                for cand in cands if targets else ():
                    patched = apply_candidate(source, cand)
                    verdict = prove_candidate(
                        {"path": path, "start_line": cand.start_line, "end_line": cand.end_line,
                         "lines": list(cand.lines), "original": source, "patched": patched,
                         "guards": list(cand.guards), "safe": cand.safe, "targets": targets},
                        model, [case], [head_out], head, {}, {"backend": "eager"}, paths,
                        ["breaks"], None, {})
                    diff = "".join(difflib.unified_diff(
                        source.splitlines(keepends=True), patched.splitlines(keepends=True),
                        f"a/{path}", f"b/{path}"))
                    out.append(ProvenFix(
                        path=path, start_line=cand.start_line, end_line=cand.end_line,
                        lines=tuple(cand.lines), rule=cand.code, title=cand.title,
                        verified=bool(verdict.get("accepted")),
                        evidence=str(verdict.get("evidence") or ""),
                        reason=str(verdict.get("reason") or ""), diff=diff))
                    if verdict.get("accepted"):
                        fixed.update(t["line"] for t in targets)
                        break   # the most likely verified candidate of this finding
            runs: dict[str, Any] = {}   # a setting's run of head's code serves each site
            for b in breaks:
                name = SETTINGS.get(str(b.gb))
                if b.path != path or b.line in fixed or not name:
                    continue
                target = {"kind": "break", "path": path, "line": b.line, "gb": b.gb,
                          "gb_type": b.gb_type}
                verdict = prove_candidate(
                    {"path": path, "start_line": b.line, "end_line": b.line,
                     "lines": [source.splitlines()[b.line - 1]], "original": source,
                     "patched": source, "guards": [], "safe": False, "targets": [target],
                     "setting": name},
                    model, [case], [head_out], head, {}, {"backend": "eager"}, paths,
                    ["breaks"], None, {}, runs)
                out.append(ProvenFix(
                    path=path, start_line=b.line, end_line=b.line, lines=(), rule="",
                    title=f"set `torch._dynamo.config.{name} = True` where the model is compiled",
                    verified=bool(verdict.get("accepted")), setting=name,
                    evidence=str(verdict.get("evidence") or ""),
                    reason=str(verdict.get("reason") or "")))
                if verdict.get("accepted"):
                    fixed.add(b.line)
    return out if include_rejected else [f for f in out if f.verified]


def _base_dir(code: "UserCode", rel: str) -> str | None:
    """The directory `rel` is relative to: the project root or a package's parent."""
    for d in (code.root, *(os.path.dirname(p) for p in code.packages)):
        full = os.path.join(d, rel)
        if os.path.isfile(full) and code.rel(full) == rel:
            return d
    return None


def _model_error() -> type[Exception]:
    """The smoke run's "the model's fault" exception type (kind, message, path, line)."""
    from pt2bot.smoke.location import ModelError
    return ModelError


def pick_device(requested: str | None) -> str:
    """`run.device` for an in-process check: cuda when asked (or auto and present), else cpu."""
    if requested == "cuda":
        return "cuda"
    if requested in (None, "auto"):
        import torch

        return "cuda" if torch.cuda.is_available() else "cpu"
    return "cpu"


# --------------------------------------------------------------------------- helpers

def _name(obj: Any) -> str:
    import torch

    if isinstance(obj, torch.nn.Module):
        return f"{type(obj).__qualname__}.forward"
    return getattr(obj, "__qualname__", None) or type(obj).__name__


def _one_line(text: str, limit: int) -> str:
    s = " ".join(str(text).split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


class LoggingKept:
    """Put back every torch logger's level, handlers and propagation on exit.

    The trace collector restores `torch.__trace` itself; this also covers anything dynamo
    configures lazily on first compile, so a test suite's logging looks the same afterwards.
    """

    def __enter__(self) -> "LoggingKept":
        import contextlib
        import logging

        from pt2bot.smoke.trace import private_trace_logger

        self._saved = {name: (lg.level, list(lg.handlers), lg.propagate, lg.disabled)
                       for name, lg in _torch_loggers(logging)}
        # the structured trace goes to no test runner's capture (pt2bot/smoke/trace.py)
        self._private = contextlib.ExitStack()
        self._private.enter_context(private_trace_logger())
        return self

    def __exit__(self, *exc: object) -> None:
        import logging

        self._private.close()
        for name, lg in _torch_loggers(logging):
            saved = self._saved.get(name)
            if saved is None:
                continue    # created during the call: it had no configuration to restore
            level, handlers, propagate, disabled = saved
            lg.setLevel(level)
            lg.propagate = propagate
            lg.disabled = disabled
            for h in list(lg.handlers):
                if h not in handlers:
                    lg.removeHandler(h)
            for h in handlers:
                if h not in lg.handlers:
                    lg.addHandler(h)


def _torch_loggers(logging: Any) -> list[tuple[str, Any]]:
    names = [n for n in list(logging.root.manager.loggerDict)
             if n == "torch" or n.startswith("torch.")]
    return [(n, logging.getLogger(n)) for n in names]


__all__ = ["INSTALL_TORCH", "GraphBreak", "Recompile", "RecompileReason", "UserCode",
           "assert_no_graph_breaks", "assert_no_recompiles", "ModelFailed", "format_breaks", "model_graph_breaks",
           "pick_device", "format_recompiles", "graph_breaks",
           "project_root", "recompiles", "resolve_user_code", "ProvenFix", "verified_fixes"]

