"""Validate pt2bot.yml with file:line errors and build the frozen Config dataclasses.

The YAML is composed (not loaded) so that every key and value keeps its line; the node tree
is turned into plain Python by hand, which also lets us see duplicate keys (PyYAML silently
keeps the last one) and refuse tags that would construct arbitrary objects. Validation
collects every problem and raises them together, ordered by line, so a user fixes the whole
file in one pass instead of one error per CI run.

The editor schema (`pt2bot/schemas/pt2bot.schema.json`) describes the same rules; tests keep
the two in agreement. jsonschema is not a runtime dependency, hence this hand-written checker.
"""
from __future__ import annotations

import difflib
import json
import math
import re
from dataclasses import dataclass
from collections.abc import Callable
from typing import Any

import yaml

from pt2bot import __version__
from pt2bot.config import (
    DEVICES,
    FAIL_ON,
    FILTERS,
    Config,
    InputSpec,
    ModelConfig,
    RunConfig,
    StaticConfig,
    Thresholds,
)
from pt2bot.errors import ConfigError

SUPPORTED_VERSIONS = (1,)
DTYPES = ("float32", "float16", "bfloat16", "float64", "int64", "int32", "int16", "int8",
          "uint8", "bool", "complex64")  # what the smoke worker can generate
# torch's aliases, so `dtype: long` gets "did you mean int64" rather than a spelling guess.
DTYPE_ALIASES = {"float": "float32", "half": "float16", "double": "float64", "long": "int64",
                 "int": "int32", "short": "int16", "cfloat": "complex64",
                 "fp32": "float32", "fp16": "float16", "bf16": "bfloat16", "fp64": "float64"}
COMPILE_MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
POLICIES = ("fail", "warn", "ignore")
SEVERITIES = ("error", "warning")

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
ENTRY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*"
                   r":[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")
# Model names become file names (logs/<name>.log) and CLI arguments: keep them tame.
MODEL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")
CODE = re.compile(r"[A-Z]+[0-9]*")

Path = tuple  # a key path: ("models", 1, "shapes", "batch")
_BAD = object()  # a checker's result for an invalid value: the field keeps its default
MAX_SHOWN = 100  # problems listed in the message (all are in ConfigErrors.errors)


@dataclass(frozen=True)
class Problem:
    line: int | None
    key: str | None
    message: str
    order: int = 0


class ConfigErrors(ConfigError):
    """Every problem found in one file; `str()` gives one located line per problem."""

    def __init__(self, file: str, problems: list[Problem]) -> None:
        first = problems[0]
        super().__init__(first.message, file=file, line=first.line, key=first.key)
        self.errors = [ConfigError(p.message, file=file, line=p.line, key=p.key) for p in problems]
        lines = [str(e) for e in self.errors[:MAX_SHOWN]]
        if len(self.errors) > MAX_SHOWN:  # a generated config gone wrong: keep the log readable
            lines.append(f"{file}: ... and {len(self.errors) - MAX_SHOWN} more problems")
        self.args = ("\n".join(lines),)

    def __str__(self) -> str:
        return self.args[0]


# --------------------------------------------------------------------------- formatting

def format_path(path: Path) -> str:
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif isinstance(part, str) and IDENT.fullmatch(part):
            out += f".{part}" if out else part
        else:  # user text (a glob, an odd key): quoted, escaped
            out += f"[{json.dumps(str(part))}]"
    return out


def show(value: Any) -> str:
    """A value as the user wrote it, short and escaped (it is untrusted text)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, str):
        return json.dumps(value if len(value) <= 60 else value[:57] + "...")
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return f"a {type(value).__name__} ({json.dumps(str(value)[:40])})"


def did_you_mean(word: Any, choices: list[str] | tuple[str, ...]) -> str:
    if not isinstance(word, str):
        return ""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f'; did you mean "{close[0]}"?' if close else ""


def _one_of(choices: tuple[str, ...] | list[str]) -> str:
    return ", ".join(choices) if choices else "(none)"


# --------------------------------------------------------------------------- YAML → plain + lines

def _tag(tag: str) -> str:
    # Tags may carry %-escaped arbitrary text: quote and escape like any user string.
    return show(tag.replace("tag:yaml.org,2002:", "!!"))


class _Reader:
    """Turns composed YAML nodes into plain data, recording the line of every key and value."""

    def __init__(self, loader: Any, problems: list[Problem]) -> None:
        self.loader = loader
        self.problems = problems
        self.value_lines: dict[Path, int] = {}
        self.key_lines: dict[Path, int] = {}
        self._active: set[int] = set()
        self.bad: set[Path] = set()  # values already reported here; the checker skips them

    def problem(self, line: int, path: Path, message: str) -> None:
        self.bad.add(path)
        self.problems.append(Problem(line, format_path(path) or None, message, len(self.problems)))

    def read(self, node: yaml.Node, path: Path) -> Any:
        line = node.start_mark.line + 1
        self.value_lines.setdefault(path, line)
        if id(node) in self._active:  # `&a [*a]`: a recursive alias
            self.problem(line, path, "recursive YAML alias")
            return None
        if isinstance(node, yaml.ScalarNode):
            return self._scalar(node, path)
        self._active.add(id(node))
        try:
            if isinstance(node, yaml.SequenceNode):
                if node.tag != "tag:yaml.org,2002:seq":
                    self.problem(line, path, f"unsupported YAML tag {_tag(node.tag)}")
                return [self.read(item, path + (i,)) for i, item in enumerate(node.value)]
            if node.tag != "tag:yaml.org,2002:map":
                self.problem(line, path, f"unsupported YAML tag {_tag(node.tag)}")
            return self._mapping(node, path)
        finally:
            self._active.discard(id(node))

    def _scalar(self, node: yaml.ScalarNode, path: Path) -> Any:
        constructor = yaml.SafeLoader.yaml_constructors.get(node.tag)
        if constructor is None or node.tag == "tag:yaml.org,2002:merge":
            self.problem(node.start_mark.line + 1, path, f"unsupported YAML tag {_tag(node.tag)}")
            return None
        try:
            return constructor(self.loader, node)
        except (yaml.YAMLError, ValueError) as e:
            self.problem(node.start_mark.line + 1, path, f"bad YAML value: {e}")
            return None

    def _mapping(self, node: yaml.MappingNode, path: Path) -> dict[Any, Any]:
        out: dict[Any, Any] = {}
        first_line: dict[Any, int] = {}
        merged: list[tuple[yaml.Node, yaml.Node]] = []
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":  # `<<: *defaults`
                sources = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
                for src in sources:
                    if isinstance(src, yaml.MappingNode):
                        merged.extend(src.value)
                    else:
                        self.problem(src.start_mark.line + 1, path, "`<<` merges only mappings")
                continue
            key = self._scalar(key_node, path) if isinstance(key_node, yaml.ScalarNode) else None
            kline = key_node.start_mark.line + 1
            if not isinstance(key, str):
                hint = (" (YAML reads on/off/yes/no as booleans: quote the key)"
                        if isinstance(key, bool) else "")
                self.problem(kline, path, f"expected a string key, got {show(key)}{hint}")
                continue
            if key in first_line:
                self.problem(kline, path + (key,),
                             f"duplicate key (first given at line {first_line[key]}); "
                             "YAML would silently keep only the last one")
                continue
            first_line[key] = kline
            self.key_lines[path + (key,)] = kline
            out[key] = self.read(value_node, path + (key,))
        for key_node, value_node in merged:  # explicit keys win over merged ones
            key = self._scalar(key_node, path) if isinstance(key_node, yaml.ScalarNode) else None
            if isinstance(key, str) and key not in out:
                self.key_lines[path + (key,)] = key_node.start_mark.line + 1
                out[key] = self.read(value_node, path + (key,))
        return out


# --------------------------------------------------------------------------- checking

class _Checker:
    def __init__(self, reader: _Reader) -> None:
        self.reader = reader
        self.problems = reader.problems

    def line(self, path: Path, *, key: bool = False) -> int | None:
        table = self.reader.key_lines if key else self.reader.value_lines
        p = tuple(path)
        while p:
            if p in table:
                return table[p]
            if p in self.reader.value_lines:
                return self.reader.value_lines[p]
            p = p[:-1]
        return self.reader.value_lines.get((), None)

    def error(self, path: Path, message: str, *, key: bool = False) -> object:
        self.problems.append(Problem(self.line(path, key=key), format_path(path) or None,
                                     message, len(self.problems)))
        return _BAD

    def expected(self, path: Path, what: str, value: Any, hint: str = "") -> object:
        return self.error(path, f"expected {what}, got {show(value)}{hint}")

    def mapping(self, value: Any, path: Path, spec: dict[str, Callable[[Any, Path], Any]],
                what: str, required: tuple[str, ...] = ()) -> dict[str, Any] | None:
        """Check a mapping's keys against `spec`; return the valid fields (invalid ones omitted)."""
        if value is None:
            value = {}
        if not isinstance(value, dict):
            self.expected(path, what, value)
            return None
        out: dict[str, Any] = {}
        for k, v in value.items():
            if path + (k,) in self.reader.bad:
                continue
            if k not in spec:
                self.error(path + (k,), f"unknown key{did_you_mean(k, list(spec))} "
                                        f"(expected one of: {_one_of(list(spec))})", key=True)
                continue
            checked = spec[k](v, path + (k,))
            if checked is not _BAD:
                out[k] = checked
        for k in required:
            if k not in value:
                self.error(path, f'missing required key "{k}"')
        return out

    # -- scalar checkers (each returns the value or _BAD)

    def boolean(self, v: Any, path: Path) -> Any:
        return v if isinstance(v, bool) else self.expected(path, "true or false", v)

    def integer(self, minimum: int, what: str) -> Callable[[Any, Path], Any]:
        def check(v: Any, path: Path) -> Any:
            if isinstance(v, int) and not isinstance(v, bool) and v >= minimum:
                return v
            return self.expected(path, what, v)
        return check

    def number(self, what: str, *, positive: bool = False) -> Callable[[Any, Path], Any]:
        def check(v: Any, path: Path) -> Any:
            ok = (isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
                  and (v > 0 if positive else v >= 0))
            return float(v) if ok else self.expected(path, what, v)
        return check

    def choice(self, choices: tuple[str, ...], aliases: dict[str, str] | None = None
               ) -> Callable[[Any, Path], Any]:
        def check(v: Any, path: Path) -> Any:
            if isinstance(v, str) and v in choices:
                return v
            hint = (f'; did you mean "{aliases[v]}"?' if aliases and isinstance(v, str) and v in aliases
                    else did_you_mean(v, choices))
            return self.expected(path, f"one of {_one_of(choices)}", v, hint)
        return check

    def string(self, pattern: re.Pattern[str] | None = None, what: str = "a non-empty string",
               hint: Callable[[str], str] | None = None) -> Callable[[Any, Path], Any]:
        def check(v: Any, path: Path) -> Any:
            if isinstance(v, str) and v and (pattern is None or pattern.fullmatch(v)):
                return v
            return self.expected(path, what, v, hint(v) if hint and isinstance(v, str) else "")
        return check

    def nullable(self, check: Callable[[Any, Path], Any]) -> Callable[[Any, Path], Any]:
        return lambda v, path: None if v is None else check(v, path)

    def list_of(self, item: Callable[[Any, Path], Any], what: str, *, nonempty: bool = False,
                unique: bool = False) -> Callable[[Any, Path], Any]:
        def check(v: Any, path: Path) -> Any:
            if not isinstance(v, list) or (nonempty and not v):
                hint = f" (write [{v}])" if isinstance(v, (str, int)) and not isinstance(v, bool) else ""
                return self.expected(path, what, v, hint)
            out, bad = [], False
            for i, x in enumerate(v):
                r = item(x, path + (i,))
                if r is _BAD:
                    bad = True
                    continue
                if unique and r in out:
                    self.error(path + (i,), f"{show(x)} is listed twice")
                    bad = True
                    continue
                out.append(r)
            return _BAD if bad else tuple(out)
        return check

    def map_of(self, key: Callable[[Any, Path], Any], value: Callable[[Any, Path], Any],
               what: str) -> Callable[[Any, Path], Any]:
        def check(v: Any, path: Path) -> Any:
            if v is None:
                return {}
            if not isinstance(v, dict):
                return self.expected(path, what, v)
            out, bad = {}, False
            for k, x in v.items():
                if key(k, path + (k,)) is _BAD:
                    bad = True
                    continue
                r = value(x, path + (k,))
                if r is _BAD:
                    bad = True
                else:
                    out[k] = r
            return _BAD if bad else out
        return check


def _entry_hint(v: str) -> str:
    if ":" not in v and "." in v:
        mod, _, attr = v.rpartition(".")
        return f' (put ":" before the attribute: "{mod}:{attr}")'
    return ""


def _key_checker(ck: _Checker, pattern: re.Pattern[str], what: str) -> Callable[[Any, Path], Any]:
    def check(k: Any, path: Path) -> Any:
        if isinstance(k, str) and pattern.fullmatch(k):
            return k
        return ck.error(path, f"expected {what} as the key, got {show(k)}", key=True)
    return check


# --------------------------------------------------------------------------- sections

def _check_static(ck: _Checker, v: Any) -> StaticConfig:
    p: Path = ("static",)
    strings = ck.list_of(ck.string(), "a list of strings")
    code = ck.string(CODE, "a rule code or prefix such as PTC101 or PTC1")
    codes = ck.list_of(code, "a list of rule codes or prefixes (e.g. [PTC101, PTC3])")
    spec = {
        "paths": strings, "exclude": strings,
        "filter": ck.choice(FILTERS), "fail_on": ck.choice(FAIL_ON),
        "select": codes, "ignore": codes,
        "severity": ck.map_of(_key_checker(ck, CODE, "a rule code or prefix"),
                              ck.choice(SEVERITIES), "a mapping of rule code to error|warning"),
        "per_file_ignores": ck.map_of(ck.string(what="a glob"), codes,
                                      "a mapping of glob to a list of rule codes"),
    }
    fields = ck.mapping(v, p, spec, "a mapping (static: {paths: [...], ...})")
    return StaticConfig(**fields) if fields else StaticConfig()


def _check_run(ck: _Checker, v: Any) -> RunConfig:
    spec = {
        "device": ck.choice(DEVICES, {"gpu": "cuda", "cuda:0": "cuda"}),
        "backend": ck.string(IDENT, "a torch.compile backend name such as inductor or eager"),
        "mode": ck.nullable(ck.choice(COMPILE_MODES)),
        "timeout_s": ck.number("a positive number of seconds", positive=True),
        "warmup": ck.integer(0, "an integer >= 0"),
        "repeats": ck.integer(1, "a positive integer"),
        "threads": ck.nullable(ck.integer(1, "a positive integer or null (torch's default)")),
        "jobs": ck.integer(1, "a positive integer"),
        "recompile_limit": ck.integer(1, "a positive integer"),
        "cache_dir": ck.nullable(ck.string(what="a directory path or null")),
        "latency": ck.boolean,
        "rounds": ck.integer(1, "a positive integer"),
    }
    fields = ck.mapping(v, ("run",), spec, "a mapping (run: {device: auto, ...})")
    return RunConfig(**fields) if fields else RunConfig()


def _check_thresholds(ck: _Checker, v: Any) -> Thresholds:
    spec = {
        "new_graph_breaks": ck.integer(0, "an integer >= 0"),
        "new_recompiles": ck.integer(0, "an integer >= 0"),
        "latency_regression_pct": ck.number("a number >= 0 (percent)"),
        "export_regression": ck.choice(POLICIES),
        "accuracy": ck.choice(POLICIES),
        "require_gpu": ck.boolean,
    }
    fields = ck.mapping(v, ("thresholds",), spec, "a mapping (thresholds: {new_graph_breaks: 0, ...})")
    return Thresholds(**fields) if fields else Thresholds()


def _check_version(ck: _Checker, v: Any) -> int:
    if isinstance(v, int) and not isinstance(v, bool) and v in SUPPORTED_VERSIONS:
        return v
    known = ", ".join(str(x) for x in SUPPORTED_VERSIONS)
    ck.error(("version",), f"this pt2bot ({__version__}) understands config version {known} only, "
                           f"got {show(v)}")
    return SUPPORTED_VERSIONS[-1]


def _check_inputs(ck: _Checker, v: Any, path: Path, dims: list[str], dims_from: str
                  ) -> tuple[tuple[InputSpec, ...], str | None] | object:
    entry = ck.string(ENTRY, 'an entry "module.path:attr" (e.g. "mypkg.data:make_inputs")', _entry_hint)
    if isinstance(v, dict):  # the factory form
        fields = ck.mapping(v, path, {"entry": entry}, "", required=("entry",))
        return ((), fields["entry"]) if fields and "entry" in fields else _BAD
    if not isinstance(v, list):
        return ck.expected(path, 'a list of inputs ({shape: [...], dtype: ...}) '
                                 'or a factory {entry: "pkg.mod:make_inputs"}', v)

    def dim(x: Any, p: Path) -> Any:
        if isinstance(x, int) and not isinstance(x, bool):
            return x if x >= 1 else ck.expected(p, "a dim name or a positive integer", x)
        if isinstance(x, str) and x in dims:
            return x
        if isinstance(x, str):
            return ck.error(p, f"unknown dim {show(x)}{did_you_mean(x, dims)} "
                               f"(dims declared in {dims_from}: {_one_of(dims)})")
        return ck.expected(p, "a dim name or a positive integer", x)

    specs: list[InputSpec] = []
    names: dict[str, int] = {}
    ok = True
    for i, item in enumerate(v):
        p = path + (i,)
        spec = {
            "shape": ck.list_of(dim, "a list of dim names or integers"),
            "dtype": ck.choice(DTYPES, DTYPE_ALIASES),
            "low": ck.nullable(_signed(ck)),
            "high": ck.nullable(_signed(ck)),
            "name": ck.nullable(ck.string(IDENT, "a forward() argument name")),
        }
        fields = ck.mapping(item, p, spec, "a mapping {shape: [...], dtype: ...}", required=("shape",))
        if fields is None:
            ok = False
            continue
        low, high = fields.get("low"), fields.get("high")
        if low is not None and high is not None and not low < high:
            ck.error(p + ("high",), f"must be greater than low ({show(item['low'])}), "
                                    f"got {show(item['high'])}")
            ok = False
        if "shape" not in fields:
            ok = False
            continue
        name = fields.get("name")
        if name is not None:
            if name in names:
                ck.error(p + ("name",), f'duplicate input name "{name}" (also inputs[{names[name]}])')
                ok = False
            names.setdefault(name, i)
        if len(fields) != len(item):
            ok = False
        specs.append(InputSpec(**fields))
    return (tuple(specs), None) if ok else _BAD


def _signed(ck: _Checker) -> Callable[[Any, Path], Any]:
    def check(v: Any, path: Path) -> Any:
        if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
            return v
        return ck.expected(path, "a finite number", v)
    return check


def _check_model(ck: _Checker, v: Any, i: int) -> ModelConfig | None:
    path: Path = ("models", i)
    if not isinstance(v, dict):
        ck.expected(path, "a mapping {name: ..., entry: ...}", v)
        return None
    positive = ck.integer(1, "a positive integer")
    spec: dict[str, Callable[[Any, Path], Any]] = {
        "name": ck.string(MODEL_NAME, "a name of letters, digits, _ . - (at most 100)"),
        "entry": ck.string(ENTRY, 'an entry "module.path:attr" (e.g. "mypkg.models:TinyGPT")',
                           _entry_hint),
        "kwargs": ck.map_of(_key_checker(ck, IDENT, "a keyword argument name"), lambda x, p: x,
                            "a mapping of keyword arguments"),
        "inputs": lambda x, p: x,   # checked below, once the dims are known
        "shapes": ck.map_of(_key_checker(ck, IDENT, "a dim name"),
                            ck.list_of(positive, "a list of positive integers", nonempty=True,
                                       unique=True),
                            "a mapping of dim name to a list of sizes (batch: [1, 8])"),
        "cases": lambda x, p: x,    # checked below, against shapes
        "dynamic": lambda x, p: x,  # checked below, against shapes
        "export": ck.boolean,
        "tolerance": ck.map_of(_key_checker(ck, re.compile("|".join(DTYPES)), "a dtype"),
                               _tolerance(ck), "a mapping of dtype to [rtol, atol]"),
        "timeout_s": ck.nullable(ck.number("a positive number of seconds", positive=True)),
    }
    fields = ck.mapping(v, path, spec, "", required=("name", "entry"))
    if fields is None:
        return None
    ok = len(fields) == len(v) and "name" in fields and "entry" in fields

    # The declared dim names, even when some sizes are bad, so one mistake is reported once.
    raw_shapes = v.get("shapes")
    declared = [k for k in raw_shapes if isinstance(k, str)] if isinstance(raw_shapes, dict) else []
    dims, dims_from = declared, f"models[{i}].shapes"
    if "cases" in fields:
        cases = _check_cases(ck, fields.pop("cases"), path + ("cases",),
                             declared if raw_shapes is not None else None)
        if cases is _BAD:
            ok = False
        else:
            fields["cases"] = cases
            if raw_shapes is None and cases:
                dims, dims_from = list(cases[0]), f"models[{i}].cases"
    if "dynamic" in fields:
        dyn = ck.list_of(_dim_name(ck, dims, dims_from), "a list of dim names", unique=True)(
            fields.pop("dynamic"), path + ("dynamic",))
        if dyn is _BAD:
            ok = False
        else:
            fields["dynamic"] = dyn
    if "inputs" in fields:
        got = _check_inputs(ck, fields.pop("inputs"), path + ("inputs",), dims, dims_from)
        if got is _BAD:
            ok = False
        else:
            fields["inputs"], fields["inputs_entry"] = got  # type: ignore[misc]
            used = {d for spec in fields["inputs"] for d in spec.shape if isinstance(d, str)}
            for d in dims if fields["inputs"] else ():  # a factory gets every dim; specs may not
                if d not in used:
                    where = ("shapes", d) if raw_shapes is not None else ("cases",)
                    ck.error(path + where, f'no input uses dim "{d}", so its cases would all be '
                                           "the same (name it in an inputs[].shape)", key=True)
                    ok = False
    if not ok:
        return None
    return ModelConfig(**fields, line=ck.line(path))


def _dim_name(ck: _Checker, dims: list[str], dims_from: str) -> Callable[[Any, Path], Any]:
    def check(x: Any, p: Path) -> Any:
        if isinstance(x, str) and x in dims:
            return x
        if isinstance(x, str):
            return ck.error(p, f"{show(x)} is not a dim in {dims_from}{did_you_mean(x, dims)} "
                               f"(declared: {_one_of(dims)})")
        return ck.expected(p, "a dim name", x)
    return check


def _non_negative(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x >= 0


def _tolerance(ck: _Checker) -> Callable[[Any, Path], Any]:
    def check(v: Any, p: Path) -> Any:
        if isinstance(v, list) and len(v) == 2 and all(_non_negative(x) for x in v):
            return (float(v[0]), float(v[1]))
        return ck.expected(p, "[rtol, atol], two numbers >= 0", v)
    return check


def _check_cases(ck: _Checker, v: Any, path: Path, shape_dims: list[str] | None) -> Any:
    """Explicit cases replace the product of `shapes`; each must set exactly the same dims."""
    if not isinstance(v, list) or not v:
        return ck.expected(path, "a non-empty list of cases ({batch: 1, seq: 8})", v)
    want = shape_dims
    out: list[dict[str, int]] = []
    ok = True
    for j, case in enumerate(v):
        p = path + (j,)
        if not isinstance(case, dict) or not case:
            ck.expected(p, "a mapping of dim name to size ({batch: 1, seq: 8})", case)
            ok = False
            continue
        if want is None:
            want = list(case)  # without shapes, the first case names the dims
        got: dict[str, int] = {}
        for k, size in case.items():
            if k not in want:
                where = "shapes" if shape_dims is not None else "cases[0]"
                ck.error(p + (k,), f"unknown dim {show(k)}{did_you_mean(k, want)} "
                                   f"(dims in {where}: {_one_of(want)})", key=True)
                ok = False
            elif isinstance(size, int) and not isinstance(size, bool) and size >= 1:
                got[k] = size
            else:
                ck.expected(p + (k,), "a positive integer", size)
                ok = False
        missing = [d for d in want if d not in case]
        if missing:
            ck.error(p, f"missing dim {', '.join(missing)} (every case sets all of: {_one_of(want)})")
            ok = False
        out.append(got)
    return tuple(out) if ok else _BAD


def _check_models(ck: _Checker, v: Any) -> tuple[ModelConfig, ...]:
    if v is None:
        return ()
    if not isinstance(v, list):
        ck.expected(("models",), "a list of models (- name: ..., entry: ...)", v)
        return ()
    models: list[ModelConfig] = []
    seen: dict[str, int] = {}
    for i, item in enumerate(v):
        name = item.get("name") if isinstance(item, dict) else None
        if isinstance(name, str):
            if name in seen:
                ck.error(("models", i, "name"), f'duplicate model name "{name}" '
                                                f"(first at line {ck.line(('models', seen[name], 'name'))})")
            else:
                seen[name] = i
        m = _check_model(ck, item, i)
        if m is not None:
            models.append(m)
    return tuple(models)


# --------------------------------------------------------------------------- entry point

# libyaml's parser is ~10x faster and gives the same nodes and marks; PyYAML's is the fallback.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def parse_yaml(text: str, path: str) -> tuple[Any, _Reader]:
    """Compose `text` and return (plain data, reader with lines); raise on syntax errors."""
    problems: list[Problem] = []
    loader = _LOADER(text)
    try:
        node = loader.get_single_node()
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line = mark.line + 1 if mark else None
        what = f"{e.problem or e.context} (column {mark.column + 1})" if mark else str(e.problem)
        if e.context and e.problem and e.context_mark:  # where the unclosed thing began
            what += f", {e.context} that starts at line {e.context_mark.line + 1}"
        lines = text.splitlines()
        if line and line <= len(lines) and lines[line - 1][:mark.column + 1].endswith("\t"):
            what += " (YAML indents with spaces, not tabs)"
        raise ConfigErrors(path, [Problem(line, None, f"YAML syntax error: {what}")]) from None
    except yaml.YAMLError as e:  # e.g. a control character in the file
        raise ConfigErrors(path, [Problem(None, None, f"YAML error: {e}")]) from None
    finally:
        loader.dispose()
    reader = _Reader(loader, problems)
    if node is None:
        raise ConfigErrors(path, [Problem(None, None, "the file is empty; expected a mapping "
                                                       "such as `version: 1` then `models:`")])
    return reader.read(node, ()), reader


TOP_KEYS = ("version", "static", "models", "run", "thresholds")


def build_config(text: str, path: str) -> Config:
    """Parse and validate pt2bot.yml text; raise `ConfigErrors` listing every problem."""
    data, reader = parse_yaml(text, path)
    ck = _Checker(reader)
    if not isinstance(data, dict):
        ck.expected((), f"a mapping of sections ({', '.join(TOP_KEYS)})", data)
        raise ConfigErrors(path, reader.problems)
    for k in data:
        if k not in TOP_KEYS:
            ck.error((k,), f"unknown key{did_you_mean(k, TOP_KEYS)} "
                           f"(expected one of: {', '.join(TOP_KEYS)})", key=True)
    config = Config(
        version=_check_version(ck, data["version"]) if "version" in data else 1,
        static=_check_static(ck, data.get("static")),
        models=_check_models(ck, data.get("models")),
        run=_check_run(ck, data.get("run")),
        thresholds=_check_thresholds(ck, data.get("thresholds")),
        path=path,
        raw=data,
    )
    if reader.problems:
        problems = sorted(reader.problems, key=lambda p: (p.line or 0, p.order))
        raise ConfigErrors(path, problems)
    return config


__all__ = ["build_config", "parse_yaml", "ConfigErrors", "Problem", "format_path", "DTYPES",
           "SUPPORTED_VERSIONS", "COMPILE_MODES"]
