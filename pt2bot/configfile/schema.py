"""pt2bot's schema: the sections of pt2bot.yml, checked into the frozen `Config` dataclasses.

Validation collects every problem and raises them together, ordered by line, so a user fixes
the whole file in one pass instead of one error per CI run. The reading (lines, bounds) is
pt2bot/configfile/yamlread.py; the generic checkers are pt2bot/configfile/checks.py.

The editor schema (`pt2bot/schemas/pt2bot.schema.json`) describes the same rules; tests keep
the two in agreement. jsonschema is not a runtime dependency, hence this hand-written checker.
"""
from __future__ import annotations

import itertools
import re
from typing import Any

from pt2bot import __version__
from pt2bot.config import (
    CONDITIONAL,
    DEVICES,
    ENTRY,
    FAIL_ON,
    Config,
    ConfigObject,
    FixesConfig,
    DimBounds,
    InputSpec,
    ModelConfig,
    RunConfig,
    StaticConfig,
    Thresholds,
    TORCH_VERSION,
)
from pt2bot.configfile.checks import (
    BAD,
    MAX_LISTED,
    Check,
    Checker,
    did_you_mean,
    is_finite_number,
    one_of,
)
from pt2bot.configfile.yamlread import Path, read_yaml, show
from pt2bot.errors import ConfigErrors
from pt2bot.findings import FILTERS

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
# Model names become file names (logs/<name>.log) and CLI arguments: keep them tame.
MODEL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")
CODE = re.compile(r"[A-Z]+[0-9]*")


def _entry_hint(v: str) -> str:
    if ":" not in v and "." in v:
        mod, _, attr = v.rpartition(".")
        return f' (put ":" before the attribute: "{mod}:{attr}")'
    return ""


# --------------------------------------------------------------------------- sections

def _check_static(ck: Checker, v: Any) -> StaticConfig:
    p: Path = ("static",)
    strings = ck.list_of(ck.string(), "a list of strings")
    code = ck.string(CODE, "a rule code or prefix such as PTC101 or PTC1")
    codes = ck.list_of(code, "a list of rule codes or prefixes (e.g. [PTC101, PTC3])")
    spec = {
        "paths": strings, "exclude": strings,
        "filter": ck.choice(FILTERS), "fail_on": ck.choice(FAIL_ON),
        "select": codes, "ignore": codes,
        "severity": ck.map_of(ck.key(CODE, "a rule code or prefix"),
                              ck.choice(SEVERITIES), "a mapping of rule code to error|warning"),
        "per_file_ignores": ck.map_of(ck.string(what="a glob"), codes,
                                      "a mapping of glob to a list of rule codes"),
        "conditional": ck.choice(CONDITIONAL),
        "torch": ck.nullable(_torch_release(ck)),
    }
    fields = ck.mapping(v, p, spec, "a mapping (static: {paths: [...], ...})")
    return StaticConfig(**fields) if fields else StaticConfig()


def _torch_release(ck: Checker) -> Check:
    """`static.torch: "2.14"`; an unquoted 2.14 is a YAML float (and 2.10 would read as 2.1)."""
    what = 'a torch release such as "2.14" or "2.14.1" (quoted)'
    as_string = ck.string(TORCH_VERSION, what)

    def check(v: Any, path: Path) -> Any:
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return ck.expected(path, what, v, ' (quote it, as in "2.14": YAML reads an unquoted 2.10 as the number 2.1)')
        return as_string(v, path)
    return check


def _check_run(ck: Checker, v: Any) -> RunConfig:
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
        "shape_advice": ck.boolean,
        "rounds": ck.integer(1, "a positive integer"),
    }
    fields = ck.mapping(v, ("run",), spec, "a mapping (run: {device: auto, ...})")
    return RunConfig(**fields) if fields else RunConfig()


def _check_thresholds(ck: Checker, v: Any) -> Thresholds:
    spec = {
        "new_graph_breaks": ck.integer(0, "an integer >= 0"),
        "new_recompiles": ck.integer(0, "an integer >= 0"),
        "latency_regression_pct": ck.number("a number >= 0 (percent)"),
        "compile_regression_pct": ck.number("a number >= 0 (percent)"),
        "export_regression": ck.choice(POLICIES),
        "accuracy": ck.choice(POLICIES),
        "require_gpu": ck.boolean,
    }
    fields = ck.mapping(v, ("thresholds",), spec, "a mapping (thresholds: {new_graph_breaks: 0, ...})")
    return Thresholds(**fields) if fields else Thresholds()


def _check_fixes(ck: Checker, v: Any) -> FixesConfig:
    spec = {
        "verify": ck.boolean,
        "budget_s": ck.number("a positive number of seconds", positive=True),
    }
    fields = ck.mapping(v, ("fixes",), spec, "a mapping (fixes: {verify: true, budget_s: 300})")
    return FixesConfig(**fields) if fields else FixesConfig()


def _check_version(ck: Checker, v: Any) -> int:
    if isinstance(v, int) and not isinstance(v, bool) and v in SUPPORTED_VERSIONS:
        return v
    known = ", ".join(str(x) for x in SUPPORTED_VERSIONS)
    ck.error(("version",), f"this pt2bot ({__version__}) understands config version {known} only, "
                           f"got {show(v)}")
    return SUPPORTED_VERSIONS[-1]


def _check_inputs(ck: Checker, v: Any, path: Path, dims: list[str], dims_from: str
                  ) -> tuple[tuple[InputSpec, ...], str | None] | object:
    entry = ck.string(ENTRY, 'an entry "module.path:attr" (e.g. "mypkg.data:make_inputs")', _entry_hint)
    if isinstance(v, dict):  # the factory form
        fields = ck.mapping(v, path, {"entry": entry}, "", required=("entry",))
        return ((), fields["entry"]) if fields and "entry" in fields else BAD
    if not isinstance(v, list):
        return ck.expected(path, 'a list of inputs ({shape: [...], dtype: ...}) '
                                 'or a factory {entry: "pkg.mod:make_inputs"}', v)

    known = frozenset(dims)

    def dim(x: Any, p: Path) -> Any:
        if isinstance(x, int) and not isinstance(x, bool):
            return x if x >= 1 else ck.expected(p, "a dim name or a positive integer", x)
        if isinstance(x, str) and x in known:
            return x
        if isinstance(x, str):
            return ck.error(p, f"unknown dim {show(x)}{did_you_mean(x, dims)} "
                               f"(dims declared in {dims_from}: {one_of(dims)})")
        return ck.expected(p, "a dim name or a positive integer", x)

    specs: list[InputSpec] = []
    names: dict[str, int] = {}
    ok = True
    for i, item in enumerate(v):
        p = path + (i,)
        spec = {
            "shape": ck.list_of(dim, "a list of dim names or integers"),
            "dtype": ck.choice(DTYPES, DTYPE_ALIASES),
            "low": ck.nullable(ck.finite),
            "high": ck.nullable(ck.finite),
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
    return (tuple(specs), None) if ok else BAD


def _check_configs(ck: Checker, v: Any, path: Path) -> tuple[ConfigObject, ...] | object:
    """`config:` one config object, or a list of them for a constructor that takes several
    (each but one passed by keyword, so each but one names its `arg`)."""
    if not isinstance(v, list):
        one = _check_config_object(ck, v, path)
        return BAD if one is BAD else (one,)
    if not v:
        return ck.expected(path, "a config mapping or a non-empty list of them", v)
    items = [_check_config_object(ck, x, path + (j,)) for j, x in enumerate(v)]
    if any(x is BAD for x in items):
        return BAD
    objs: list[ConfigObject] = items  # type: ignore[assignment]
    positional = [j for j, o in enumerate(objs) if not o.arg]
    if len(positional) > 1:
        return ck.error(path + (positional[1],), "only one config can be the first positional "
                                                 'argument: give the others an "arg"')
    seen: dict[str, int] = {}
    for j, o in enumerate(objs):
        if o.arg and o.arg in seen:
            return ck.error(path + (j, "arg"), f'"{o.arg}" is already config[{seen[o.arg]}]\'s arg')
        seen.setdefault(o.arg or "", j)
    return tuple(objs)


def _check_config_object(ck: Checker, v: Any, path: Path) -> ConfigObject | object:
    """`{entry: pkg.mod:Config, kwargs: {...}, arg: config}`: an object the model's
    constructor takes, built first (a class or a factory such as `Config.from_name`)."""
    spec: dict[str, Check] = {
        "entry": ck.string(ENTRY, 'an entry "module.path:attr" (e.g. "mypkg.config:Config" or '
                                  '"mypkg.config:Config.from_name")', _entry_hint),
        "kwargs": ck.map_of(ck.key(IDENT, "a keyword argument name"), lambda x, p: x,
                            "a mapping of keyword arguments"),
        "arg": ck.nullable(ck.string(IDENT, "the constructor's argument name for the config")),
    }
    if not isinstance(v, dict):
        return ck.expected(path, 'a mapping {entry: "pkg.mod:Config", kwargs: {...}}', v)
    fields = ck.mapping(v, path, spec, "", required=("entry",))
    if fields is None or len(fields) != len(v) or "entry" not in fields:
        return BAD
    return ConfigObject(**fields)


def _check_model(ck: Checker, v: Any, i: int) -> ModelConfig | None:
    path: Path = ("models", i)
    if not isinstance(v, dict):
        ck.expected(path, "a mapping {name: ..., entry: ...}", v)
        return None
    positive = ck.integer(1, "a positive integer")
    spec: dict[str, Check] = {
        "name": ck.string(MODEL_NAME, "a name of letters, digits, _ . - (at most 100)"),
        "entry": ck.string(ENTRY, 'an entry "module.path:attr" (e.g. "mypkg.models:TinyGPT")',
                           _entry_hint),
        "kwargs": ck.map_of(ck.key(IDENT, "a keyword argument name"), lambda x, p: x,
                            "a mapping of keyword arguments"),
        "config": lambda x, p: _check_configs(ck, x, p),
        "inputs": lambda x, p: x,   # checked below, once the dims are known
        "shapes": ck.map_of(ck.key(IDENT, "a dim name"),
                            ck.list_of(positive, "a list of positive integers", nonempty=True,
                                       unique=True),
                            "a mapping of dim name to a list of sizes (batch: [1, 8])"),
        "cases": lambda x, p: x,    # checked below, against shapes
        "dynamic": lambda x, p: x,  # checked below, against shapes
        "export": ck.boolean,
        "train": ck.boolean,
        "grad": ck.boolean,
        "tolerance": ck.map_of(ck.key(re.compile("|".join(DTYPES)), "a dtype"),
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
        if cases is BAD:
            ok = False
        else:
            fields["cases"] = cases
            if raw_shapes is None and cases:
                dims, dims_from = list(cases[0]), f"models[{i}].cases"
    if "dynamic" in fields:
        got = _check_dynamic(ck, fields.pop("dynamic"), path + ("dynamic",), dims, dims_from,
                             _matrix_values(fields.get("shapes"), fields.get("cases")))
        if got is BAD:
            ok = False
        else:
            fields["dynamic"], fields["bounds"] = got  # type: ignore[misc]
    if "inputs" in fields:
        got = _check_inputs(ck, fields.pop("inputs"), path + ("inputs",), dims, dims_from)
        if got is BAD:
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
    for j, obj in enumerate(fields.get("config", ())):
        if obj.arg and obj.arg in fields.get("kwargs", {}):
            ck.error(path + ("config",) + ((j,) if isinstance(v.get("config"), list) else ()) + ("arg",),
                     f'"{obj.arg}" is set twice: by this config and in kwargs')
            ok = False
    if not ok:
        return None
    # A model compiled for a training step runs its forward with autograd on, and so do the
    # calls that measure it: `train: true` brings `grad: true` unless the file says otherwise.
    if fields.get("train") and "grad" not in fields:
        fields["grad"] = True
    return ModelConfig(**fields, line=ck.line(path))


def _matrix_values(shapes: Any, cases: Any) -> dict[str, set[int]]:
    """Each dim's sizes over the shape matrix (the explicit cases, else the product's)."""
    out: dict[str, set[int]] = {}
    if isinstance(cases, tuple):
        for case in cases:
            for d, size in case.items():
                out.setdefault(d, set()).add(size)
    elif isinstance(shapes, dict):
        for d, sizes in shapes.items():
            out[d] = set(sizes)
    return out


def _check_dynamic(ck: Checker, v: Any, path: Path, dims: list[str], dims_from: str,
                   values: dict[str, set[int]]) -> Any:
    """`dynamic: [batch, seq]`, or the mapping form with each dim's declared range and
    divisibility: `dynamic: {batch: {}, seq: {min: 16, max: 128, multiple_of: 8}}` (an empty
    or null value: dynamic, no bounds). → (dim names, {dim: DimBounds}) or BAD. Every size
    the matrix gives a bounded dim must lie in its range and be a multiple: the export and
    the advice take the declared range as what the model accepts."""
    name = ck.name_in(dims, dims_from, "dim")
    if not isinstance(v, dict):
        dyn = ck.list_of(name, "a list of dim names, or a mapping of dim name to its bounds "
                               "({seq: {min: 16, max: 128, multiple_of: 8}})", unique=True)(v, path)
        return BAD if dyn is BAD else (dyn, {})
    positive = ck.integer(1, "a positive integer")
    spec = {"min": positive, "max": positive, "multiple_of": positive}
    names: list[str] = []
    bounds: dict[str, DimBounds] = {}
    ok = True
    for d, b in v.items():
        p = path + (d,)
        if name(d, p) is BAD:
            ok = False
            continue
        fields = ck.mapping(b, p, spec, "a mapping {min: ..., max: ..., multiple_of: ...} or null")
        if fields is None or len(fields) != len(b or {}):
            ok = False
            continue
        names.append(d)
        lo, hi, k = fields.get("min"), fields.get("max"), fields.get("multiple_of")
        if lo is not None and hi is not None and lo > hi:
            ck.error(p + ("max",), f"must be at least min ({lo}), got {hi}")
            ok = False
            continue
        sizes = sorted(values.get(d, ()))
        for key, bad, why in (
                ("min", [x for x in sizes if lo is not None and x < lo], "below min"),
                ("max", [x for x in sizes[::-1] if hi is not None and x > hi], "above max"),
                ("multiple_of", [x for x in sizes if k and x % k], "not a multiple of")):
            if bad:
                ck.error(p + (key,), f"the shape matrix gives {d} = {bad[0]}, {why} "
                                     f"{fields[key]} (the bounds must hold every size of the matrix)")
                ok = False
        if fields:
            bounds[d] = DimBounds(**fields)
    return (tuple(names), bounds) if ok else BAD


def _non_negative(x: Any) -> bool:
    return is_finite_number(x) and x >= 0


def _tolerance(ck: Checker) -> Check:
    def check(v: Any, p: Path) -> Any:
        if isinstance(v, list) and len(v) == 2 and all(_non_negative(x) for x in v):
            return (float(v[0]), float(v[1]))
        return ck.expected(p, "[rtol, atol], two numbers >= 0", v)
    return check


def _check_cases(ck: Checker, v: Any, path: Path, shape_dims: list[str] | None) -> Any:
    """Explicit cases replace the product of `shapes`; each must set exactly the same dims."""
    if not isinstance(v, list) or not v:
        return ck.expected(path, "a non-empty list of cases ({batch: 1, seq: 8})", v)
    want = shape_dims
    known = frozenset(want or ())
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
            known = frozenset(want)
        got: dict[str, int] = {}
        for k, size in case.items():
            if k not in known:
                where = "shapes" if shape_dims is not None else "cases[0]"
                ck.error(p + (k,), f"unknown dim {show(k)}{did_you_mean(k, want)} "
                                   f"(dims in {where}: {one_of(want)})", key=True)
                ok = False
            elif isinstance(size, int) and not isinstance(size, bool) and size >= 1:
                got[k] = size
            else:
                ck.expected(p + (k,), "a positive integer", size)
                ok = False
        n_missing = len(want) - sum(1 for k in case if k in known)
        if n_missing:
            # the first few only: a scan that stops early stays linear in the file's size
            missing = list(itertools.islice((d for d in want if d not in case), MAX_LISTED))
            more = f" and {n_missing - len(missing)} more" if n_missing > len(missing) else ""
            ck.error(p, f"missing dim {', '.join(missing)}{more} (every case sets all of: {one_of(want)})")
            ok = False
        out.append(got)
    return tuple(out) if ok else BAD


def _check_models(ck: Checker, v: Any) -> tuple[ModelConfig, ...]:
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


TOP_KEYS = ("version", "static", "models", "run", "thresholds", "fixes")


def build_config(text: str, path: str) -> Config:
    """Parse and validate pt2bot.yml text; raise `ConfigErrors` listing every problem."""
    doc = read_yaml(text, path)
    data = doc.data
    ck = Checker(doc)
    if not isinstance(data, dict):
        ck.expected((), f"a mapping of sections ({', '.join(TOP_KEYS)})", data)
        raise ConfigErrors(path, doc.problems)
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
        fixes=_check_fixes(ck, data.get("fixes")),
        path=path,
        raw=data,
    )
    if doc.problems:
        problems = sorted(doc.problems, key=lambda p: (p.line or 0, p.order))
        raise ConfigErrors(path, problems)
    return config
