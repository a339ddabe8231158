"""The typed data between stages: a smoke run's results, one model's RUN and its parts.

docs/formats.md is the contract for the JSON; these frozen dataclasses are its one definition
in code. The worker and runner produce them, merge/compare/pipeline/audit consume them, and
what goes to disk is `to_json()` of them, unchanged from what formats.md describes.

Reading is lossless, so old and foreign files survive a round trip exactly:
- a key this model does not know goes to `extra` and is written back where it was;
- a value of the wrong type (a string where a count belongs, a break that is not an object)
  is not forced into a field: the field stays unmeasured (`None`) and the value is kept
  verbatim in `extra`, so `to_json(from_json(x)) == x`, key order included;
- a key that was absent stays absent (`key_order` remembers which were there).
Records built by code (no `key_order`) write every field, except those in `OMIT_IF_NONE`
that are None (e.g. a RUN's `error`, present only when the model failed).

Use `with_(**changes)` rather than `dataclasses.replace`: it also records that a field now
belongs in the JSON. `load_results_file` is the one reader of a results file from disk.
"""
from __future__ import annotations

import collections.abc
import dataclasses
import hashlib
import re
import types
import typing
from dataclasses import dataclass, field
from typing import Any, ClassVar, Iterable, Mapping, Sequence, TypeVar, Union

from pt2bot.errors import UserError
from pt2bot.jsonio import read_json
from pt2bot.stats import summarise_samples

# --------------------------------------------------------------------------- vocabulary

RESULTS_SCHEMA = "pt2bot.results/1"
REPORT_SCHEMA = "pt2bot.report/1"
FINDINGS_SCHEMA = "pt2bot.findings/1"
REVIEW_SCHEMA = "pt2bot.review/1"
CHECK_SCHEMA = "pt2bot.check/1"
AUDIT_SCHEMA = "pt2bot.audit/1"

# The smoke worker's phases, in the order it runs them (`pt2bot run`, run_models(phases=)).
PHASES = ("breaks", "matrix", "export", "advice", "latency")
STATUSES = ("ok", "error", "timeout", "skipped")
FAILED_STATUSES = ("error", "timeout")          # a model that ran and produced no result
ERROR_KINDS = ("import", "crash", "oom", "timeout", "input", "exception", "build")
EXPORT_KINDS = ("data_dependent", "constraint_violation", "unsupported", "error")
TIMINGS = ("eager_ms", "compiled_ms", "reference_ms")   # the timed series of a latency row


def is_failed(status: object) -> bool:
    """Whether a RUN status means the model ran and failed (error or timeout)."""
    return status in FAILED_STATUSES


Shape = Mapping[str, int]
R = TypeVar("R", bound="Record")


def case_key(shape: Mapping[str, Any] | None) -> tuple[tuple[str, Any], ...]:
    """A hashable, order-independent key for a shape case ({"b": 4} and {"b": 4} match)."""
    if not isinstance(shape, Mapping):
        return ()
    return tuple(sorted((str(k), v) for k, v in shape.items()))


# --------------------------------------------------------------------------- machinery

_MISSING = object()


@dataclass(frozen=True)
class _Partial:
    """A list of records with some items that are not objects: the field gets the records,
    and the list as read is kept in `extra` (so it is written back as it was)."""
    value: tuple[Any, ...]


@dataclass(frozen=True, kw_only=True)
class Record:
    """Base of every record: unknown or malformed JSON kept in `extra`, key order kept."""

    extra: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)
    key_order: tuple[str, ...] | None = field(default=None, repr=False, compare=False)

    OMIT_IF_NONE: ClassVar[frozenset[str]] = frozenset()

    @classmethod
    def from_json(cls: type[R], data: Mapping[str, Any]) -> R:
        """Read a JSON object (never raises for wrong shapes inside it: see the module doc)."""
        if not isinstance(data, Mapping):
            raise TypeError(f"{cls.__name__}: expected a JSON object, got {type(data).__name__}")
        convs = _converters(cls)
        kw: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        for k, v in data.items():
            conv = convs.get(k)
            got = conv(v) if conv is not None else _MISSING
            if got is _MISSING:
                extra[k] = v
            elif isinstance(got, _Partial):   # typed: the good items; written back: all
                kw[k] = got.value
                extra[k] = v
            else:
                kw[k] = got
        return cls(**kw, extra=extra, key_order=tuple(data))

    @classmethod
    def coerce(cls: type[R], value: R | Mapping[str, Any]) -> R:
        """`value` as this record: itself, or read from its JSON."""
        return value if isinstance(value, cls) else cls.from_json(value)

    def to_json(self) -> dict[str, Any]:
        names = _field_names(type(self))
        out: dict[str, Any] = {}
        if self.key_order is None:
            for n in names:
                if n in self.extra:
                    out[n] = self.extra[n]
                else:
                    v = getattr(self, n)
                    if v is None and n in self.OMIT_IF_NONE:
                        continue
                    out[n] = _dump(v)
        else:
            for k in self.key_order:
                if k in self.extra:
                    out[k] = self.extra[k]
                elif k in names:
                    out[k] = _dump(getattr(self, k))
        for k, v in self.extra.items():
            out.setdefault(k, v)
        return out

    def with_(self: R, **changes: Any) -> R:
        """A copy with `changes` (field values, or JSON-shaped values that convert to them)."""
        convs = _converters(type(self))
        extra = dict(self.extra)
        kw: dict[str, Any] = {}
        for k, v in changes.items():
            if k not in convs:
                raise TypeError(f"{type(self).__name__} has no field {k!r}")
            if not _is_typed_value(v):
                got = convs[k](v)
                if got is _MISSING or isinstance(got, _Partial):
                    raise TypeError(f"{type(self).__name__}.{k}: unexpected value {v!r}")
                v = got
            kw[k] = v
            extra.pop(k, None)
        order = self.key_order
        if order is not None:
            order = order + tuple(k for k in changes if k not in order)
        return dataclasses.replace(self, **kw, extra=extra, key_order=order)

    def without(self: R, *names: str) -> R:
        """A copy where the fields `names` are unset and absent from the JSON."""
        convs = _converters(type(self))
        defaults = {f.name: f for f in dataclasses.fields(self) if f.name in names}
        if set(names) - set(convs):
            raise TypeError(f"{type(self).__name__} has no field(s) {sorted(set(names) - set(convs))}")
        kw = {n: (f.default_factory() if f.default_factory is not dataclasses.MISSING
                  else f.default) for n, f in defaults.items()}
        extra = {k: v for k, v in self.extra.items() if k not in names}
        # Pin the order to what is written now, less these (a canonical record writes all).
        order = tuple(k for k in (self.key_order if self.key_order is not None
                                  else tuple(self.to_json())) if k not in names)
        return dataclasses.replace(self, **kw, extra=extra, key_order=order)

    def updated(self: R, data: Mapping[str, Any]) -> R:
        """A copy with the keys of a JSON object applied (unknown keys go to `extra`)."""
        convs = _converters(type(self))
        good = {}
        bad = {}
        for k, v in data.items():
            got = convs[k](v) if k in convs else _MISSING
            if got is _MISSING or isinstance(got, _Partial):
                bad[k] = v
            else:
                good[k] = got
        rec = self.with_(**good)
        if not bad:
            return rec
        order = rec.key_order
        if order is not None:
            order = order + tuple(k for k in bad if k not in order)
        return dataclasses.replace(rec, extra={**rec.extra, **bad}, key_order=order)


def _is_typed_value(v: Any) -> bool:
    if isinstance(v, Record):
        return True
    return isinstance(v, tuple) and bool(v) and all(isinstance(x, Record) for x in v)


def _dump(v: Any) -> Any:
    if isinstance(v, Record):
        return v.to_json()
    if isinstance(v, (tuple, list)):
        return [_dump(x) for x in v]
    if isinstance(v, Mapping):
        return {k: _dump(x) for k, x in v.items()}
    return v


_CONVERTERS: dict[type, dict[str, Any]] = {}
_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _field_names(cls: type) -> tuple[str, ...]:
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = tuple(f.name for f in dataclasses.fields(cls)
                      if f.name not in ("extra", "key_order"))
        _FIELD_NAMES[cls] = names
    return names


def _converters(cls: type) -> dict[str, Any]:
    convs = _CONVERTERS.get(cls)
    if convs is None:
        hints = typing.get_type_hints(cls)
        convs = {n: _converter(hints[n]) for n in _field_names(cls)}
        _CONVERTERS[cls] = convs
    return convs


def _converter(tp: Any) -> Any:
    """A function JSON value → field value, or _MISSING when the value does not fit `tp`."""
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        options = [_converter(a) for a in typing.get_args(tp) if a is not type(None)]
        nullable = type(None) in typing.get_args(tp)

        def union(v: Any) -> Any:
            if v is None:
                return None if nullable else _MISSING
            for conv in options:
                got = conv(v)
                if got is not _MISSING:
                    return got
            return _MISSING
        return union
    if tp is Any:
        return lambda v: v
    if tp is bool:
        return lambda v: v if isinstance(v, bool) else _MISSING
    if tp is int:
        return lambda v: v if isinstance(v, int) and not isinstance(v, bool) else _MISSING
    if tp is float:   # ints stay ints, so `31` is written back as `31`, not `31.0`
        return lambda v: (v if isinstance(v, (int, float)) and not isinstance(v, bool)
                          else _MISSING)
    if tp is str:
        return lambda v: v if isinstance(v, str) else _MISSING
    if origin is tuple:
        arg = typing.get_args(tp)[0]
        item = _converter(arg)
        of_records = isinstance(arg, type) and issubclass(arg, Record)

        def items(v: Any) -> Any:
            if not isinstance(v, (list, tuple)):
                return _MISSING
            out = [item(x) for x in v]
            if not any(x is _MISSING for x in out):
                return tuple(out)
            # One junk entry must not hide the good ones (a results file with a bad model).
            return _Partial(tuple(x for x in out if x is not _MISSING)) if of_records \
                else _MISSING
        return items
    if origin in (collections.abc.Mapping, dict) or tp in (Mapping, dict):
        args = typing.get_args(tp)
        value = _converter(args[1]) if args else (lambda v: v)

        def mapping(v: Any) -> Any:
            if not isinstance(v, Mapping) or not all(isinstance(k, str) for k in v):
                return _MISSING
            out = {k: value(x) for k, x in v.items()}
            return _MISSING if any(x is _MISSING for x in out.values()) else out
        return mapping
    if isinstance(tp, type) and issubclass(tp, Record):
        return lambda v: tp.from_json(v) if isinstance(v, Mapping) else _MISSING
    raise TypeError(f"results: no JSON converter for {tp!r}")


# --------------------------------------------------------------------------- a RUN's parts

# Dynamo names the code it resumes after a graph break
# `torch_dynamo_resume_in_<co_name>_at_<line>` (torch/_dynamo/resume_execution.py,
# TORCH_DYNAMO_RESUME_IN_PREFIX) and gives it that line as co_firstlineno; a resume of a
# resume nests the prefix, and the last `_at_<line>` is its own.
RESUME_RE = re.compile(r"^torch_dynamo_resume_in_(?P<inner>.+)_at_(?P<line>\d+)$")

# a recompile guard that holds a Python float to its value (`___stack2 == 0.7655948996543884`,
# the number an `.item()` returned, passed across its break): it fails when the data give
# another value, on any shape. On 2.13 the frame then compiles once more, with the number a
# symbol (automatic dynamic, as for sizes: twelve calls with twelve values compile it twice),
# unless the code needs the number as a Python value (`math.log10(peak.item())`, dasp-pytorch's
# peak normaliser) or keeps it in the module's state and reads it back (`self.seen += n`):
# then every new value compiles again. (S4's user measured the first where the review claimed
# the second for every such guard.) A float made
# from a size (`sym_float(x.size()[2] // 14) ... == 1.0`) is not one
_VALUE_GUARD = re.compile(r"==\s*-?\d+\.\d+(?:e[-+]?\d+)?\)*\s*$")
VALUE_GUARD_WORDS = ("a float's value: a new value the data give compiles the frame again, once where "
                     "dynamo can then trace the number as a symbol, on every new value, up to the "
                     "recompile limit, where the code needs it as a Python number (`math.log10(...)`, "
                     "state read back)")


def value_guard(guard: object) -> bool:
    """Whether a recompile guard holds a Python float (not one made from a size) to its value."""
    return isinstance(guard, str) and bool(_VALUE_GUARD.search(guard)) and ".size()" not in guard


def user_function(name: str) -> str:
    """The user's function a frame dynamo made to resume after a break was cut from
    (`torch_dynamo_resume_in_forward_at_12` -> `forward`); other names as they are."""
    m = RESUME_RE.match(name)
    while m:
        name = m.group("inner")
        m = RESUME_RE.match(name)
    return name


def split_off_frame(compile_id: object) -> bool:
    """Whether a compile id ("2/1": frame 2's second compile) is of a frame other than the
    model's own `forward`, frame 0: dynamo compiles any other frame only because a graph break
    sent the code around it to eager. False where no id was recorded."""
    return str(compile_id or "0").split("/")[0] not in ("", "0")


def on_break_stack(stack: Sequence[tuple[object, object, object]], site: tuple[object, object],
                   resumed_at: tuple[object, object] | None, function: tuple[object, object] | None) -> bool:
    """Whether a frame is one a break splits off: a function resumed after the break's own
    line `site` (path, line) or after a call on its user `stack` ((path, line, function),
    outermost first), else (`function`: path and name) a function on that stack below its
    root frame, which dynamo inlined before and now enters as a frame of its own."""
    if resumed_at is not None:
        return site == resumed_at or any((p, ln) == resumed_at for p, ln, _ in stack)
    return function is not None and any((p, fn) == function for p, _, fn in stack[1:])


@dataclass(frozen=True, kw_only=True)
class Frame(Record):
    """One user frame of a break's stack, or the frame a compile was for (`library`: its file
    in an installed package, where `path` is null)."""
    path: str | None = None
    line: int | None = None
    function: str | None = None
    library: str | None = None
    OMIT_IF_NONE: ClassVar[frozenset[str]] = frozenset({"library"})


@dataclass(frozen=True, kw_only=True)
class GraphBreak(Record):
    """One graph-break site (deduplicated per GB id and innermost user frame)."""
    gb: str | None = None
    gb_type: str | None = None
    path: str | None = None
    line: int | None = None
    function: str | None = None
    source: str | None = None
    reason: str | None = None
    explanation: str | None = None
    hints: tuple[str, ...] = ()
    url: str | None = None
    count: int | None = None
    in_loop: bool | None = None
    user_stack: tuple[Frame, ...] = ()
    # dynamo's line when it is not inside the function dynamo names, or holds no code (then
    # `line` is None)
    reported_line: int | None = None
    # where in an installed package a break outside the repository is
    # (`linformer/linformer.py:112`; `path` is then None)
    library: str | None = None
    # True: a break the shape matrix's compiles hit and the one-case break pass did not (a
    # size made dynamic by the matrix turns `n_ctx > 1` into a symbolic bool that
    # `scaled_dot_product_attention(is_causal=...)` refuses)
    matrix_only: bool | None = None
    # the last line of the outermost frame (`user_stack`'s first) when dynamo could not resume
    # after this break and ran the rest of that frame eagerly
    eager_rest_end: int | None = None
    # where in an installed package the break is, when `path`/`line` is the repository's line
    # that calls into it (`torchhd/embeddings.py:411`)
    inside: str | None = None
    # with `in_loop`: the outermost frame of `user_stack` whose line lies in a `for`/`while`
    # loop, and that loop's first line (the frame dynamo gave up on and ran eagerly)
    loop_frame: Frame | None = None
    # the outermost frames of the other stacks the site was reached from, where their first
    # line differs from `user_stack`'s (a helper called at two lines of `forward`: dynamo
    # resumes after each call)
    call_sites: tuple[Frame, ...] | None = None
    OMIT_IF_NONE: ClassVar[frozenset[str]] = frozenset({"reported_line", "library", "matrix_only",
                                                        "eager_rest_end", "inside", "loop_frame",
                                                        "call_sites"})

    def stacks(self) -> list[tuple[tuple[str | None, int | None, str | None], ...]]:
        """`user_stack` as (path, line, function) tuples, outermost first, then the same with
        each of `call_sites` for its outermost frame."""
        stack = tuple((f.path, f.line, f.function) for f in self.user_stack)
        return [stack] + [((c.path, c.line, c.function),) + stack[1:] for c in self.call_sites or ()]


@dataclass(frozen=True, kw_only=True)
class Site(Record):
    """A place in the user's code: repo-relative path and line."""
    path: str | None = None
    line: int | None = None


@dataclass(frozen=True, kw_only=True)
class RecompileReason(Record):
    """Why one shape case recompiled: a failed guard and where it came from."""
    guard: str | None = None
    dim: str | None = None
    kind: str | None = None            # guard | size_mismatch | size_one
    path: str | None = None
    line: int | None = None
    source: str | None = None
    # The frame that recompiled (its code's name, file, first line), the compile's id
    # ("2/1": the reasons of one compile share it), and for a resume function dynamo made
    # after a graph break (`torch_dynamo_resume_in_forward_at_13`) the line it resumes
    # after. Absent in results written before they were recorded.
    frame: Frame | None = None
    compile_id: str | None = None
    resumed_after: Site | None = None
    # A guard on state an earlier call left on the module (`self._seq_len_cached == 32`),
    # failed where the cases ran in order keeping it (pt2bot/smoke/matrix.py `_sequence`);
    # absent otherwise
    carried: bool | None = None
    # with `carried`: where the code writes that state (`self.size += seq_len`), `{path, line,
    # source}`, where it was found in the guard's function or class
    stored_at: Mapping[str, Any] | None = None
    # A guard on a number drawn anew on every call (numpy's or Python's `random`), failed where
    # the cases ran in order without the generators seeded before each call and not where they
    # were (pt2bot/smoke/matrix.py); absent otherwise
    drawn: bool | None = None
    OMIT_IF_NONE: ClassVar[frozenset[str]] = frozenset({"frame", "compile_id", "resumed_after", "carried",
                                                        "stored_at", "drawn"})


@dataclass(frozen=True, kw_only=True)
class RecompileCase(Record):
    shape: Shape = field(default_factory=dict)
    compiled: bool | None = None
    recompiles: int | None = None
    reasons: tuple[RecompileReason, ...] = ()
    eager_fallback: bool | None = None
    error: str | None = None
    # where in the repository the error was raised (the innermost frame of its user code)
    error_at: Site | None = None
    OMIT_IF_NONE: ClassVar[frozenset[str]] = frozenset({"error", "error_at"})


@dataclass(frozen=True, kw_only=True)
class Recompiles(Record):
    """The matrix phase's recompiles: `count` leaves out torch's own size-1 ones (`size_one`).
    `limit_frames`: the frames that hit the recompile limit and run eagerly from then on."""
    count: int | None = None
    size_one: int | None = None
    eager_fallback: bool | None = None
    limit: int | None = None
    cases: tuple[RecompileCase, ...] = ()
    limit_frames: tuple[Frame, ...] | None = None
    # every frame compilation of the matrix (first compiles too): the shape advice's "before"
    compiles: int | None = None
    OMIT_IF_NONE: ClassVar[frozenset[str]] = frozenset({"size_one", "limit_frames", "compiles"})


@dataclass(frozen=True, kw_only=True)
class Specialisation(Record):
    """A dim configured as dynamic that the code specialised to one value; `frame`,
    `compile_id` and `resumed_after` as a RecompileReason's, for the compile it was made in
    (absent where not known: an export's, or results written before they were recorded)."""
    dim: str | None = None
    value: int | None = None
    path: str | None = None
    line: int | None = None
    source: str | None = None
    reason: str | None = None
    frame: Frame | None = None
    compile_id: str | None = None
    resumed_after: Site | None = None
    OMIT_IF_NONE: ClassVar[frozenset[str]] = frozenset({"frame", "compile_id", "resumed_after"})


@dataclass(frozen=True, kw_only=True)
class AccuracyRow(Record):
    """Compiled vs eager output on one shape case."""
    shape: Shape = field(default_factory=dict)
    match: bool | None = None
    max_abs_err: float | None = None
    rtol: float | None = None
    atol: float | None = None
    message: str | None = None
    # the eager outputs' shapes on this case (smoke.inputs.output_shapes): base's and head's
    # compared; absent from results written before they were recorded
    out_shapes: tuple[Any, ...] | None = None
    OMIT_IF_NONE: ClassVar[frozenset[str]] = frozenset({"message", "out_shapes"})


@dataclass(frozen=True, kw_only=True)
class ExportCase(Record):
    shape: Shape = field(default_factory=dict)
    match: bool | None = None
    max_abs_err: float | None = None
    error: str | None = None
    OMIT_IF_NONE: ClassVar[frozenset[str]] = frozenset({"max_abs_err", "error"})


@dataclass(frozen=True, kw_only=True)
class ExportOutcome(Record):
    """torch.export with the configured dynamic dims. `ok` None: export not attempted."""
    ok: bool | None = None
    kind: str | None = None            # None (ok) or one of EXPORT_KINDS
    message: str | None = None
    path: str | None = None
    line: int | None = None
    source: str | None = None
    static_dims: tuple[Mapping[str, Any], ...] = ()
    cases: tuple[ExportCase, ...] = ()
    gb: str | None = None
    # where in an installed package torch's innermost frame was ("pkg/mod.py:219"), the
    # repository's `path:line` being where the repository's code reached it
    library: str | None = None
    # pt2bot's own words on what to write instead, where it recognised the cause (no user text)
    hint: str | None = None
    # the exported program differs from eager under another seed, where the model draws random
    # numbers: draws made outside torch's ops are constants in it (pt2bot/smoke/export.py
    # `frozen_draws`; no user text)
    frozen: str | None = None
    OMIT_IF_NONE: ClassVar[frozenset[str]] = frozenset({"gb", "library", "hint", "frozen"})

    def failed_cases(self) -> tuple[int, int]:
        """(the shape cases the exported program failed on, the cases it was run on): one that
        holds on some cases only guards on sizes the code pins."""
        held = [c for c in self.cases if c.match is not None]
        return sum(1 for c in held if not c.match), len(held)


@dataclass(frozen=True, kw_only=True)
class ShapeAdvice(Record):
    """The "advice" phase (pt2bot/smoke/advice.py): the dynamic-shape spec the model can
    have, verified. `export.dynamic_shapes`: `{input: {"axis": {name, min, max,
    multiple_of} | {static: true, reason, path, line}}}`; `compile`: `{method,
    compiles_before, compiles_after, ...}`; `code`: `{python, compile, yaml}`."""
    export: Mapping[str, Any] | None = None
    compile: Mapping[str, Any] | None = None
    code: Mapping[str, Any] | None = None
    notes: tuple[str, ...] = ()
    seconds: float | None = None
    steps_s: Mapping[str, float] | None = None

    def dims(self) -> Mapping[str, Any]:
        """`export.dynamic_shapes`, `{}` when unknown or malformed."""
        ds = (self.export or {}).get("dynamic_shapes")
        return ds if isinstance(ds, Mapping) else {}


@dataclass(frozen=True, kw_only=True)
class Samples(Record):
    """A timed series in ms: summary + samples; `rounds` groups them per worker process."""
    median: float | None = None
    min: float | None = None
    iqr: float | None = None
    samples: tuple[float, ...] = ()
    rounds: tuple[tuple[float, ...], ...] | None = None
    OMIT_IF_NONE: ClassVar[frozenset[str]] = frozenset({"rounds"})

    def grouped(self) -> list[list[float]] | list[float]:
        """What the latency statistic resamples: the rounds when there are any, else samples."""
        if self.rounds:
            return [list(r) for r in self.rounds]
        return list(self.samples)

    def pooled(self, more: Iterable[float]) -> "Samples":
        """These samples plus one more process's, kept as a round of their own."""
        new = tuple(float(x) for x in more)
        rounds = self.rounds or (self.samples,)
        return summarise(x for r in (*rounds, new) for x in r).with_(rounds=(*rounds, new))


def summarise(samples_ms: Iterable[float]) -> Samples:
    """median / min / IQR (ms, rounded for stable JSON) and the finite samples themselves.

    The IQR is the linear-interpolated p75 - p25 (numpy's default) for any number of
    samples; `pt2bot.stats` uses the same quantile, so summaries and verdicts agree.
    """
    d = summarise_samples(list(samples_ms))
    return Samples(median=d["median"], min=d["min"], iqr=d["iqr"], samples=tuple(d["samples"]))


@dataclass(frozen=True, kw_only=True)
class LatencyRow(Record):
    shape: Shape = field(default_factory=dict)
    eager_ms: Samples | None = None
    compiled_ms: Samples | None = None
    reference_ms: Samples | None = None
    OMIT_IF_NONE: ClassVar[frozenset[str]] = frozenset({"reference_ms"})

    def timing(self, which: str) -> Samples | None:
        if which not in TIMINGS:
            raise KeyError(which)
        return getattr(self, which)


@dataclass(frozen=True, kw_only=True)
class CompileTimes(Record):
    """The process's first compiled call in seconds: `warm` when every graph it compiled was
    loaded from the on-disk caches (FX graph / AOTAutograd), else `cold` (a graph missed
    them, or the backend has no on-disk cache: eager, aot_eager)."""
    cold: float | None = None
    warm: float | None = None


@dataclass(frozen=True, kw_only=True)
class EagerFrame(Record):
    """A frame dynamo gave up on: it runs eagerly (skipped for a break in a loop, a failed
    compile); `reason` is torch's first line."""
    function: str | None = None
    path: str | None = None
    line: int | None = None
    reason: str | None = None
    end_line: int | None = None      # the function's last line (absent: not known)
    OMIT_IF_NONE: ClassVar[frozenset[str]] = frozenset({"end_line"})


@dataclass(frozen=True, kw_only=True)
class GraphCoverage(Record):
    """How much of the graph-break pass's compiled call ran inside graphs (pt2bot/smoke/ops.py).

    `captured_ops`: torch's `counters["stats"]["calls_captured"]` (the call nodes of every
    graph, as PyTorch CI's expected results count them); `graph_ops`: those per graph, in
    compile order; `unique_graphs`: `counters["stats"]["unique_graphs"]`; `largest_share`:
    max(graph_ops) / captured_ops. `aten_in_graphs` and `aten_outside`: ATen operators
    dispatched during the call inside the graphs and outside any graph (the eager code
    around them), counted by one dispatch mode; `aten_outside_ops` those outside by operator
    (absent in results written before it was recorded). `eager_frames`: frames that run eagerly."""
    captured_ops: int | None = None
    unique_graphs: int | None = None
    graph_ops: tuple[int, ...] = ()
    largest_share: float | None = None
    aten_in_graphs: int | None = None
    aten_outside: int | None = None
    aten_outside_ops: Mapping[str, int] | None = None
    eager_frames: tuple[EagerFrame, ...] = ()

    OMIT_IF_NONE: ClassVar[frozenset[str]] = frozenset({"aten_outside_ops"})


@dataclass(frozen=True, kw_only=True)
class CompileCost(Record):
    """The cost of the matrix phase's first compiled call (pt2bot/smoke/compile_cost.py).

    `cpu_s`: CPU seconds of the worker, its reaped children and its live descendants (the
    compile pool, read from /proc) over the call; `wall_s` the same call's wall time.
    Deterministic: `fx_nodes`, `fx_ops` (the nodes that are operations: no graph input nor
    output) and `guards` (sums over the frames compiled), `graphs`,
    `kernels` and `kernel_bytes` (inductor: kernel definitions and size of the generated
    code; null with other backends), `cache_hits`/`cache_misses` (FX graph cache lookups;
    null when the backend has no on-disk cache). `cache`: cold | warm. `cpu_method` says
    how `cpu_s` was read."""
    cpu_s: float | None = None
    wall_s: float | None = None
    fx_nodes: int | None = None
    fx_ops: int | None = None
    guards: int | None = None
    graphs: int | None = None
    kernels: int | None = None
    kernel_bytes: int | None = None
    cache_hits: int | None = None
    cache_misses: int | None = None
    cache: str | None = None
    backend: str | None = None
    cpu_method: str | None = None
    # the first compiled call raised (a dim declared dynamic that the code pins) and these
    # figures are of the call run again with the dims marked weakly, which reused what the
    # first had compiled: not one compile's cost, and never compared (absent otherwise)
    retried: bool | None = None
    OMIT_IF_NONE: ClassVar[frozenset[str]] = frozenset({"retried"})


# --------------------------------------------------------------------------- compile reports
# Where a model's compile report lives, relative to the results file's directory (and, once
# copied, to the report directory): `compile/<model>/<side>/trace.log`, tlparse's
# `index.html` beside it. The smoke run writes there (pt2bot/smoke/compile_report.py) and the
# summary points there (pt2bot/report/compile_report.py); both build the paths here, from the
# model's name, never from what a worker wrote.
COMPILE_DIR = "compile"
TRACE_NAME = "trace.log"
HTML_NAME = "index.html"
SIDES = ("head", "base")


def model_dir_name(name: str) -> str:
    """A file-system safe, collision-free directory name for a model name (as its log's)."""
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", name).strip(".") or "model"
    if safe != name:
        safe += "-" + hashlib.sha256(name.encode()).hexdigest()[:8]
    return safe[:120]


def report_dir(name: str, side: str) -> str:
    """`compile/<model>/<side>`, relative to the results file or report directory."""
    if side not in SIDES:
        raise ValueError(f"side must be one of {SIDES}, not {side!r}")
    return f"{COMPILE_DIR}/{model_dir_name(name)}/{side}"


def trace_path(name: str, side: str) -> str:
    return f"{report_dir(name, side)}/{TRACE_NAME}"


@dataclass(frozen=True, kw_only=True)
class CompileReport(Record):
    """A model's compile report: its structured trace and, with tlparse, the HTML report.

    Paths are relative to the results file's directory (`report_dir` above); `note` says why
    there is no HTML (tlparse missing, failed).
    """
    trace: str | None = None
    html: str | None = None
    bytes: int | None = None
    truncated: bool | None = None
    note: str | None = None
    # What was compiled, comparable across processes and worktrees: `{graphs, guards,
    # compiles, graph_count}` (pt2bot/smoke/signature.py); absent when the trace was cut or
    # holds no compile.
    signature: Mapping[str, Any] | None = None
    OMIT_IF_NONE: ClassVar[frozenset[str]] = frozenset({"signature"})


@dataclass(frozen=True, kw_only=True)
class RunError(Record):
    """Why a model has no result: `kind` in ERROR_KINDS, located in user code when known."""
    kind: str | None = None
    message: str | None = None
    path: str | None = None
    line: int | None = None
    signal: str | None = None
    # the repository frames of the traceback, outermost first (at most 20, the innermost): a
    # pull request's line the fault passed through, where `path`/`line` is the innermost
    frames: tuple[Site, ...] | None = None
    OMIT_IF_NONE: ClassVar[frozenset[str]] = frozenset({"frames"})


@dataclass(frozen=True, kw_only=True)
class PhaseError(Record):
    """A phase that crashed while the others still ran (`phase: "exit"`: died after writing)."""
    phase: str | None = None
    kind: str | None = None
    message: str | None = None
    path: str | None = None
    line: int | None = None
    traceback: str | None = None
    OMIT_IF_NONE: ClassVar[frozenset[str]] = frozenset({"traceback"})


@dataclass(frozen=True, kw_only=True)
class LatencyGate(Record):
    """The review's decision on head's RUN (pt2bot/latency_gate.py): `gate` "unchanged" (same
    graphs and guards, no changed code ran: no latency verdict) or "measured", and why."""
    gate: str | None = None
    note: str | None = None


# --------------------------------------------------------------------------- a RUN

@dataclass(frozen=True, kw_only=True)
class ModelRun(Record):
    """One model on one tree: RUN in docs/formats.md. Every measure None = unmeasured."""
    name: str | None = None
    status: str | None = None
    reason: str | None = None
    error: RunError | None = None
    graph_count: int | None = None
    graph_breaks: tuple[GraphBreak, ...] | None = None
    recompiles: Recompiles | None = None
    specialized: tuple[Specialisation, ...] | None = None
    accuracy: tuple[AccuracyRow, ...] | None = None
    export: ExportOutcome | None = None
    latency: tuple[LatencyRow, ...] | None = None
    compile_s: CompileTimes | None = None
    # The first compile's cost and the graph-break pass's coverage (absent in older results)
    compile_cost: CompileCost | None = None
    graph_coverage: GraphCoverage | None = None
    peak_mem_mb: float | None = None
    peak_mem_method: str | None = None
    files: tuple[str, ...] | None = None
    # Repo lines the model executed or dynamo traced: path -> "1-3,7" (pt2bot/reach.py).
    coverage: Mapping[str, str] | None = None
    # The part of `coverage` dynamo traced in the "breaks" phase's compiled call: the lines
    # whose graph breaks `graph_breaks` holds (pt2bot/reach.py judges break claims on them).
    traced_lines: Mapping[str, str] | None = None
    # On the lines a review watched (its changed lines), the operands no eager call evaluated
    # on a line that ran: path -> [{line, col, end_line, end_col, code, guard, kind}]
    # (pt2bot/smoke/coverage.py); absent when nothing was watched
    unevaluated: Mapping[str, Any] | None = None
    compile_report: CompileReport | None = None
    shape_advice: ShapeAdvice | None = None
    latency_gate: LatencyGate | None = None
    # The shape cases on which an eager output holds no finite value (a loss of NaN): inputs
    # outside what the model takes, where every comparison is NaN with NaN (absent when each
    # floating-point output of each case has a finite value)
    nonfinite: tuple[Mapping[str, Any], ...] | None = None
    # With `nonfinite`: the parameters and buffers that hold NaN, inf or values past 1e30 as
    # built (whisper's positional embedding, `torch.empty` until weights are loaded), by name
    unset_weights: tuple[str, ...] | None = None
    # Every eager output holds a single value throughout, on every shape case (guided-
    # diffusion's UNets as built return 0: their last layers are initialised to zero): what
    # compiled runs are compared with shows little (absent otherwise)
    uniform: bool | None = None
    phases: tuple[str, ...] = ()
    phase_s: Mapping[str, float] = field(default_factory=dict)
    phase_errors: tuple[PhaseError, ...] = ()
    log: str | None = None
    duration_s: float | None = None
    OMIT_IF_NONE: ClassVar[frozenset[str]] = frozenset({"error", "log", "coverage",
                                                         "traced_lines", "unevaluated", "compile_report",
                                                         "compile_cost", "graph_coverage",
                                                         "shape_advice", "latency_gate",
                                                         "nonfinite", "unset_weights", "uniform"})

    @classmethod
    def empty(cls, name: str, status: str = "ok", *, error: RunError | None = None,
              log: str | None = None, duration_s: float | None = None) -> "ModelRun":
        """The RUN before anything is measured: the worker starts from it, and a worker that
        produced nothing (crash, timeout) is reported as it, with its `error`."""
        return cls(name=name, status=status, error=error, log=log,
                   duration_s=None if duration_s is None else round(duration_s, 3))

    @property
    def failed(self) -> bool:
        return is_failed(self.status)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def breaks(self) -> tuple[GraphBreak, ...]:
        return self.graph_breaks or ()

    def latency_rows(self) -> tuple[LatencyRow, ...]:
        return self.latency or ()


@dataclass(frozen=True, kw_only=True)
class ResultsFile(Record):
    """`pt2bot run --out FILE`: the header of one smoke run and its models' RUNs."""
    schema: str = RESULTS_SCHEMA
    commit: str | None = None
    torch: str | None = None
    python: str | None = None
    device: str | None = None
    device_name: str | None = None
    backend: str | None = None
    config_digest: str | None = None
    created: str | None = None
    shard: str | None = None
    models: tuple[ModelRun, ...] = ()

    @classmethod
    def empty(cls) -> "ResultsFile":
        """No model run (nothing selected): a clean result, not a broken run."""
        return cls(key_order=("schema", "models"))

    @property
    def is_results(self) -> bool:
        """Whether this is a results file at all (the schema id, and a list of models)."""
        return self.schema == RESULTS_SCHEMA and isinstance(self.extra.get("models", []), list)

    def by_name(self) -> dict[str, ModelRun]:
        return {m.name: m for m in self.models if isinstance(m.name, str)}


# A results file bigger than this is refused before it is parsed (four times the most of one
# worker's RUN that the runner reads back, smoke/supervise.py's OUT_CAP_BYTES).
RESULTS_CAP_BYTES = 128 * 1024 * 1024


def load_results_file(path: str, *, what: str) -> ResultsFile:
    """A results file from disk: the one reader of `pt2bot run --out FILE`, a review's
    head.json/base.json, the audit's baseline-<sha>.json, a shard's results.

    Used by `check --results`, `review --baseline`, `--costs` and `pt2bot merge`; `what` is
    the option or command that names the file, so every refusal reads alike (exit 2):
    "--baseline: b.json: 200,000,000 bytes is over the 134,217,728-byte cap", "merge:
    a.json: not valid JSON: ...", "--results: r.json: not a pt2bot results file (schema
    pt2bot.results/1)".
    """
    data = read_json(path, what=what, max_bytes=RESULTS_CAP_BYTES)
    if not isinstance(data, dict) or data.get("schema") != RESULTS_SCHEMA \
            or not isinstance(data.get("models"), list):
        raise UserError(f"{what}: {path}: not a pt2bot results file (schema {RESULTS_SCHEMA})")
    return ResultsFile.from_json(data)


def shape_label(shape: object) -> str:
    """A shape case as the summary and the notices name it: `batch=2,seq=16`, `default` for
    the one case of a model with no size names."""
    if not isinstance(shape, Mapping) or not shape:
        return "default"
    return ",".join(f"{k}={v}" for k, v in shape.items())


def first_line(text: object, limit: int = 200) -> str:
    """The first line of an error's text, cut at `limit` characters."""
    line = str(text or "").strip().split("\n", 1)[0].strip()
    return line if len(line) <= limit else line[:limit - 1] + "…"


def every_case_raised(run: ModelRun) -> bool:
    """Whether the shape matrix ran cases and every one of them raised (compiled)."""
    cases = run.recompiles.cases if run.recompiles is not None else ()
    return bool(cases) and all(c.error for c in cases)


def unmeasured(run: ModelRun, matrix: bool = True) -> list[str]:
    """What a run that is `ok` still did not measure, and why: a phase that raised while the
    others ran (its first line), the shape cases that raised, and a shape matrix whose every
    case raised, whose recompile figures are then zeros that say nothing (a new user's
    spiking network: norse's Poisson encoder draws `torch.rand(..., generator=None)`, which
    no compile with a dynamic batch takes). `matrix` False leaves the shape matrix's cases
    out, for a caller that says them otherwise (compiled code newly raising)."""
    out = []
    cases = run.recompiles.cases if run.recompiles is not None and matrix else ()
    raised = [c for c in cases if c.error]
    if cases and every_case_raised(run):
        out.append(f"the shape matrix (recompiles): every case raised {first_line(cases[0].error)}"
                   + at_site(cases[0].error_at) + in_package(cases[0].error))
    elif raised:
        # the other cases' counts stand, but the cases that raised were neither counted nor
        # compared with eager: their rows would read as measured
        shapes = ", ".join(shape_label(c.shape) for c in raised[:3]) + (
            ", ..." if len(raised) > 3 else "")
        out.append(f"the shape matrix (recompiles, accuracy): {len(raised)} of {len(cases)} "
                   f"cases raised ({shapes}): {first_line(raised[0].error)}"
                   + at_site(raised[0].error_at) + in_package(raised[0].error))
    for e in run.phase_errors:
        if e.phase in ("breaks", "latency", "accuracy", "export", "compile"):
            out.append(f"{'graph breaks' if e.phase == 'breaks' else e.phase}: "
                       f"{e.kind or 'error'}: {first_line(e.message)}")
    return out


def breaks_unmeasured(run: ModelRun | None) -> bool:
    """Whether the run's graph-break pass raised: its empty list of breaks says nothing (a
    new user's review read "graph breaks 0 | 0 | 0" for a model that breaks, and counted
    as fixed every break of base where head's pass raised)."""
    return run is not None and any(e.phase == "breaks" for e in run.phase_errors)


_PACKAGE_FRAME = re.compile(r'File "[^"\n]*[/\\](?:site|dist)-packages[/\\]([^"\n]+)", line (\d+)')


def at_site(site: "Site | None") -> str:
    """" at mixnet/model.py:22": where the repository's code raised (a new user's dynamic
    `samples` made every compiled case raise "not simple sympy type" at their own `unfold`,
    and the line named neither)."""
    return f" at {site.path}:{site.line}" if site is not None and site.path and site.line else ""


def in_package(text: str | None) -> str:
    """" (in norse/torch/functional/encode.py:157)": the innermost frame of a message's user
    code inside an installed package, where the error came from one."""
    found = _PACKAGE_FRAME.findall(text or "")
    return f" (in {found[-1][0].replace(chr(92), '/')}:{found[-1][1]})" if found else ""


__all__ = [
    "AUDIT_SCHEMA", "CHECK_SCHEMA", "ERROR_KINDS", "EXPORT_KINDS", "FAILED_STATUSES",
    "FINDINGS_SCHEMA", "PHASES", "REPORT_SCHEMA", "RESULTS_SCHEMA", "REVIEW_SCHEMA",
    "STATUSES", "TIMINGS", "COMPILE_DIR", "HTML_NAME", "SIDES", "TRACE_NAME",
    "AccuracyRow", "CompileCost", "CompileTimes", "EagerFrame", "ExportCase", "ExportOutcome",
    "Frame", "GraphBreak", "GraphCoverage", "LatencyGate",
    "LatencyRow", "ModelRun", "PhaseError", "RecompileCase", "RecompileReason", "Recompiles",
    "RESULTS_CAP_BYTES", "Record", "ResultsFile", "RunError", "Samples", "ShapeAdvice", "Site",
    "Specialisation", "is_failed", "case_key", "load_results_file", "summarise",
    "model_dir_name", "report_dir", "trace_path", "RESUME_RE", "user_function",
    "breaks_unmeasured", "first_line", "shape_label", "unmeasured", "at_site", "in_package",
    "split_off_frame", "on_break_stack",
    "VALUE_GUARD_WORDS", "value_guard",
]
