"""Building the model and its inputs for one shape case; comparing outputs.

Everything here runs user code (imports, constructors, input factories), so every failure
becomes a `ModelError` with a kind and the innermost user location, never a crash.
"""
from __future__ import annotations

import contextlib
import functools
import inspect
import re
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Collection, Iterator

from pt2bot.smoke import entry as entry_mod
from pt2bot.smoke.location import ModelError, RepoPaths, user_frames, user_location

# The old name of the one model-fault type (pt2bot/smoke/location.py), kept for callers.
WorkerError = ModelError

DEFAULT_TOLERANCE: dict[str, tuple[float, float]] = {   # dtype → (rtol, atol), compiled vs eager
    "float64": (1e-7, 1e-7),
    "float32": (1e-4, 1e-5),
    "float16": (1e-2, 1e-3),
    "bfloat16": (1.6e-2, 1e-2),
}
# Torch raises these for inputs that do not fit the model (shape/dtype/arity mismatches).
_SHAPE_WORDS = re.compile(r"shape|size|dimension|mat1|mat2|expected input|must match|"
                          r"number of (?:dims|channels)|out of range|cannot be multiplied",
                          re.IGNORECASE)


def _exc_text(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) <= 4000 else text[:3999] + "…"


def import_entry(entry: str, paths: RepoPaths, *, kind: str = "import") -> Any:
    """`pkg.mod:attr` → the object (pt2bot.smoke.entry does the import and the diagnosis)."""
    try:
        return entry_mod.load_entry(entry, paths.root)
    except ModelError as e:   # an entry kind (module_not_found, ...) becomes a RUN kind
        raise ModelError(kind, f"{entry}: {e.message} ({e.kind})", e.path, e.line,
                         exc_type=e.exc_type) from None


# Whether the model's calls run with autograd on (the model's `grad:`), set where the worker
# builds its one model. Inference runs them under `torch.no_grad()`; a forward that
# differentiates inside itself (a force field's `-dE/dx` by `torch.autograd.grad`, an implicit
# layer's Jacobian term) raises there, "element 0 of tensors does not require grad".
_GRAD = [False]
# torch's words for `torch.autograd.grad` or `.backward()` on a result computed with autograd off
_NEEDS_GRAD = "does not require grad and does not have a grad_fn"


def build_model(entry: str, kwargs: dict[str, Any], paths: RepoPaths,
                configs: list[dict[str, Any]] | None = None, *, train: bool = False,
                grad: bool = False) -> Any:
    """Import and construct the model (class or factory), in eval mode, or in training mode
    with `train` (the model's `train:`); its calls run with autograd on from now with `grad`
    (the model's `grad:`, `call_mode`). `configs`: the model's `config:` ([{entry, kwargs,
    arg}]), each built first and passed to the constructor, by its `arg` or (without one) as
    the first positional argument."""
    _GRAD[0] = bool(grad)
    built: list[tuple[str | None, Any]] = []
    for config in configs or ():
        cfg_entry = str(config.get("entry") or "")
        cfg_obj = import_entry(cfg_entry, paths)
        try:
            built.append((config.get("arg"), entry_mod.build_config_object(
                cfg_obj, config.get("kwargs") or {}, root=paths.root)))
        except ModelError as e:
            raise ModelError(_build_kind(e), f"config {cfg_entry}: {e.message} ({e.kind})", e.path,
                             e.line, exc_type=e.exc_type) from None
    obj = import_entry(entry, paths)
    try:
        model = entry_mod.build_model(obj, kwargs or {}, root=paths.root, configs=built)
    except ModelError as e:
        raise ModelError(_build_kind(e), f"{entry}: {e.message} ({e.kind})", e.path, e.line,
                         exc_type=e.exc_type, frames=e.frames) from None
    return model.train(bool(train))


def _build_kind(e: ModelError) -> str:
    """The run's error kind of a model that imported and was not built: `build` (arguments
    its constructor refuses, a constructor that raises: the entry's kwargs or the model's code,
    not the install), or `import` where the constructor's own import failed."""
    return "import" if e.exc_type in ("ImportError", "ModuleNotFoundError") else "build"


@dataclass
class CaseInputs:
    """Inputs of one shape case, as forward() receives them."""
    shape: dict[str, int]
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    # forward argument name → {tensor axis: dim name} for the dims of the matrix
    dims: dict[str, dict[int, str]] = field(default_factory=dict)
    arg_names: tuple[str, ...] = ()        # forward() parameter name of each positional arg
    # the name of forward()'s `*args` where the positional args go into it (dinov2's
    # `forward(self, *args, is_training=False, **kwargs)`): export keys them under it, as a tuple
    var_args: str | None = None

    def named(self, params: list[str] | None = None) -> dict[str, Any]:
        """Every input keyed by its forward() parameter name."""
        # (positional args that go into `*args` have no parameter of their own: their names)
        out = dict(zip(params if params and not self.var_args else self.arg_names, self.args))
        out.update(self.kwargs)
        return out

    def replace_tensors(self, fn: Any) -> "CaseInputs":
        """A copy with `fn` applied to every input, and to every value inside an input that is
        a list, tuple or dict (a decoder's KV caches: a list of pairs of tensors)."""
        memo: dict[int, Any] = {}
        return CaseInputs(self.shape, tuple(map_nested(a, fn, memo) for a in self.args),
                          {k: map_nested(v, fn, memo) for k, v in self.kwargs.items()}, self.dims,
                          self.arg_names, self.var_args)

    def tensors(self, params: list[str] | None = None) -> dict[str, Any]:
        """Every input tensor by its path: an input's name, and for a tensor inside a list,
        tuple or dict input the name with its place (`kv_caches[0][1]`, `freqs['local']`), the
        keys `dims` gives their axes under."""
        out: dict[str, Any] = {}
        for name, value in self.named(params).items():
            _tensor_paths(value, name, out)
        return out

    def fresh(self) -> "CaseInputs":
        """A copy whose tensors are copies (`clone`: still differentiable into the case's own),
        for one call: a forward that writes into its inputs (gemma's attention fills the KV
        caches it is passed with `index_copy_`) leaves the case as it was, so the next call, and
        a candidate's beside head's, starts from the same values, and no tensor keeps one
        call's autograd graph into the next ("backward through the graph a second time")."""
        import torch

        return self.replace_tensors(lambda v: v.clone() if isinstance(v, torch.Tensor) else v)


def key_path(key: Any) -> str:
    """A dict key's place in a tensor's path: `['local']` for a string, else its text
    (`[AttentionType.GLOBAL]`, gemma's `freqs_cis` keyed by an enum)."""
    return f"[{key!r}]" if isinstance(key, str) else f"[{key}]"


def _items(value: Any) -> list[tuple[str, Any]] | None:
    """(its place in a path, item) of each item of a list, a tuple (a named one too) or a dict;
    None for anything else (a tensor, a number, a `torch.Size`, an object). The one reading of
    an input's structure that the copies, the paths and the specs share."""
    if type(value) is dict:
        return [(key_path(k), v) for k, v in value.items()]
    if type(value) in (list, tuple) or (isinstance(value, tuple) and hasattr(value, "_fields")):
        return [(f"[{i}]", v) for i, v in enumerate(value)]
    return None


def _rebuilt(value: Any, items: list[Any]) -> Any:
    """A container of `value`'s kind (`_items`) holding `items`, in its order and under its keys:
    a named tuple as one, which torch.export's structure check wants for its spec too."""
    if type(value) is dict:
        return dict(zip(value, items))
    if type(value) is list:
        return list(items)
    return type(value)(*items) if hasattr(value, "_fields") else tuple(items)


def _tensor_paths(value: Any, path: str, out: dict[str, Any]) -> None:
    import torch

    if isinstance(value, torch.Tensor):
        out[path] = value
    for step, v in _items(value) or ():
        _tensor_paths(v, path + step, out)


def layout(value: Any) -> Any:
    """The structure of an input, as JSON, for the paste-ready `dynamic_shapes` that
    torch.export matches against it type for type: "tensor", `{"list": [...]}`, `{"tuple":
    [...]}` (with `class`, a named tuple's, `module:qualname`), `{"dict": {key: ...}}` (with
    `exprs`, the keys that are no string, written as their text: an enum member, and `classes`,
    the classes those name), or None for anything else (a number, None, an object). The classes
    are what the pasted code imports: torch wants the named tuple itself, and the enum's members
    as keys."""
    import torch

    if isinstance(value, torch.Tensor):
        return "tensor"
    items = _items(value)
    if items is None:
        return None
    if type(value) is dict:
        out: dict[str, Any] = {"dict": {str(k): layout(v) for k, v in value.items()}}
        exprs = [str(k) for k in value if not isinstance(k, str)]
        if not exprs:
            return out
        classes = sorted({_class_of(k) for k in value if not isinstance(k, str)} - {None})
        return {**out, "exprs": exprs, **({"classes": classes} if classes else {})}
    out = {"list" if type(value) is list else "tuple": [layout(v) for _, v in items]}
    named = _class_of(value) if hasattr(value, "_fields") else None
    return {**out, "class": named} if named else out


def _class_of(value: Any) -> str | None:
    """`module:qualname` of an enum member's or a named tuple's class, where code can import it
    by that name (not one defined inside a function)."""
    import enum

    cls = type(value)
    if not (isinstance(value, enum.Enum) or hasattr(value, "_fields")) or "<" in cls.__qualname__:
        return None
    return f"{cls.__module__}:{cls.__qualname__}"


def nest_spec(spec: dict[str, Any], values: dict[str, Any]) -> dict[str, Any]:
    """A flat `dynamic_shapes` keyed by tensor path (`CaseInputs.tensors`) as torch.export
    takes it for inputs `values` (by name): every input named, a list, tuple or dict input given
    its own structure (its own keys), each tensor in it its axes, anything else None."""
    import torch

    def build(value: Any, path: str) -> Any:
        if isinstance(value, torch.Tensor):
            return spec.get(path)
        items = _items(value)
        return None if items is None else _rebuilt(value, [build(v, path + step) for step, v in items])
    return {name: build(value, name) for name, value in values.items()}


def map_nested(value: Any, fn: Any, memo: dict[int, Any] | None = None) -> Any:
    """`fn` of `value`, of each item of a list or tuple (a named tuple kept one) and each value
    of a dict, depth first; an object met twice is mapped once (two arguments that are one
    tensor stay one)."""
    if memo is None:
        memo = {}
    key = id(value)
    if key not in memo:
        items = _items(value)
        memo[key] = fn(value) if items is None else _rebuilt(value, [map_nested(v, fn, memo) for _, v in items])
    return memo[key]


def var_positional(model: Any) -> str | None:
    """The name of forward()'s `*args` where forward() has no other positional parameter
    (`forward(self, *args, is_training=False, **kwargs)`): the first named input that is no
    parameter of it goes there, positionally, as its callers pass it, the others by keyword as
    before (`model(x, masks=m)`). Given by keyword it lands in `**kwargs`, and torch.export
    refuses dims keyed by a name forward() does not have (dinov2's backbone: "export fails" on
    every model, for the way it was called)."""
    try:
        sig = inspect.signature(model.forward)
    except (TypeError, ValueError):
        return None
    ps = list(sig.parameters.values())
    if any(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in ps):
        return None
    return next((p.name for p in ps if p.kind == p.VAR_POSITIONAL), None)


def forward_params(model: Any) -> list[str]:
    try:
        sig = inspect.signature(model.forward)
    except (TypeError, ValueError):
        return []
    return [p.name for p in sig.parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]


_DTYPES = ("float32", "float16", "bfloat16", "float64", "int64", "int32", "int16", "int8",
           "uint8", "bool", "complex64")


def _make_tensor(spec: dict[str, Any], sizes: list[int], device: str, gen: Any) -> Any:
    import torch

    dtype_name = str(spec.get("dtype") or "float32")
    if dtype_name not in _DTYPES:
        raise ModelError("input", f"unknown dtype {dtype_name!r}; expected one of "
                                   f"{', '.join(_DTYPES)}")
    dtype = getattr(torch, dtype_name)
    low, high = spec.get("low"), spec.get("high")
    if dtype == torch.bool:
        return torch.randint(0, 2, sizes, generator=gen).bool().to(device)
    if not dtype.is_floating_point and not dtype.is_complex:
        lo = int(low if low is not None else 0)
        hi = int(high if high is not None else 2)
        if hi <= lo:
            raise ModelError("input", f"input high ({hi}) must be above low ({lo})")
        return torch.randint(lo, hi, sizes, generator=gen, dtype=dtype).to(device)
    if low is None and high is None:
        t = torch.randn(sizes, generator=gen)
    else:
        lo = float(low if low is not None else 0.0)
        hi = float(high if high is not None else lo + 1.0)
        t = torch.rand(sizes, generator=gen) * (hi - lo) + lo
    return t.to(dtype=dtype, device=device)


def build_inputs(model_spec: dict[str, Any], model: Any, shape: dict[str, int], device: str,
                 paths: RepoPaths, *, seed: int = 0) -> CaseInputs:
    """The forward() inputs for one case, from `inputs` specs or the `inputs_entry` factory."""
    import torch

    params = forward_params(model)
    gen = torch.Generator().manual_seed(seed)
    if model_spec.get("inputs_entry"):
        factory = import_entry(model_spec["inputs_entry"], paths, kind="input")
        try:
            made = factory(**shape)
        except Exception as e:  # noqa: BLE001
            path, line = user_location(e, paths)
            raise ModelError("input", f"{model_spec['inputs_entry']}({shape}) raised "
                                       f"{_exc_text(e)}", path, line) from None
        if isinstance(made, dict):
            args, kwargs = (), dict(made)
        elif isinstance(made, (tuple, list)):
            args, kwargs = tuple(made), {}
        else:
            args, kwargs = (made,), {}
        into_var = var_positional(model)
        first = next(iter(kwargs), None)
        if into_var and not args and first is not None and first not in params:
            # a factory's dict into a `*args` forward: its first entry positionally (as for
            # named `inputs`), its others by keyword
            args, names = (kwargs.pop(first),), (first,)
        else:
            into_var = None
            names = tuple(params[i] if i < len(params) else f"arg{i}" for i in range(len(args)))
        # (on the model's device, those inside a list or a dict too)
        case = CaseInputs(dict(shape), args, kwargs, {}, names, into_var).replace_tensors(
            lambda v: v.to(device) if isinstance(v, torch.Tensor) else v)
    else:
        args_l: list[Any] = []
        arg_names: list[str] = []
        kwargs = {}
        dims: dict[str, dict[int, str]] = {}
        into_var = var_positional(model)
        specs = model_spec.get("inputs") or []
        if not specs:
            raise ModelError("input", "the model has neither `inputs` nor `inputs_entry`")
        for i, spec in enumerate(specs):
            sizes: list[int] = []
            axes: dict[int, str] = {}
            for ax, d in enumerate(spec.get("shape") or ()):
                if isinstance(d, int) and not isinstance(d, bool):
                    sizes.append(d)
                elif isinstance(d, str) and d.isdigit():
                    sizes.append(int(d))
                elif isinstance(d, str) and d in shape:
                    sizes.append(int(shape[d]))
                    axes[ax] = d
                else:
                    raise ModelError("input", f"inputs[{i}].shape[{ax}]: dim {d!r} is not in "
                                               f"`shapes` ({', '.join(shape) or 'none'})")
            t = _make_tensor(spec, sizes, device, gen)
            name = spec.get("name")
            if name and not (into_var and name not in params and not args_l):
                kwargs[name] = t
                key = name
            else:
                args_l.append(t)
                key = name or (params[len(args_l) - 1] if len(args_l) - 1 < len(params) else f"arg{i}")
                arg_names.append(key)
            if axes:
                dims[key] = axes
        case = CaseInputs(dict(shape), tuple(args_l), kwargs, dims, tuple(arg_names),
                          into_var if into_var and args_l else None)
    check_binding(model, case)
    return case


def check_binding(model: Any, case: CaseInputs) -> None:
    """Inputs that forward() cannot accept are the config's mistake: kind `input`."""
    try:
        inspect.signature(model.forward).bind(*case.args, **case.kwargs)
    except (TypeError, ValueError) as e:
        raise ModelError("input", f"the configured inputs do not fit forward(): {e}") from None


def infer_dims(cases: list[CaseInputs], params: list[str]) -> None:
    """For factory inputs: (arg, axis) → the dim whose value it equals in every case; an arg
    inside a list, tuple or dict input by its path (`CaseInputs.tensors`)."""
    import torch

    if not cases or any(c.dims for c in cases):
        return
    varying = [d for d in cases[0].shape if len({c.shape[d] for c in cases}) > 1]
    found: dict[str, dict[int, str]] = {}
    # (a tensor inside a list or dict input by its path: a decoder's KV caches follow the
    # batch of the ids, and one left unmarked pins the batch where the two meet)
    each = [c.tensors(params) for c in cases]
    for name, t in each[0].items():
        for ax in range(t.dim()):
            hits = [d for d in varying
                    if all(isinstance(ts.get(name), torch.Tensor) and ts[name].dim() > ax
                           and ts[name].shape[ax] == c.shape[d] for c, ts in zip(cases, each))]
            if len(hits) == 1:
                found.setdefault(name, {})[ax] = hits[0]
    for c in cases:
        c.dims = found


# the buffers of each model built for a run, as built (by the model's id): the smoke run and
# the proof start every call from them (`restore_state`)
_BUILT: dict[int, list[tuple[Any, str, Any, Any]]] = {}
# and, module by module, its Python flags and numbers as built (`module_scalars`) and the tensors
# it keeps as plain attributes, not buffers (`self.carry = torch.zeros(8)`), each with a copy of
# its values as built, by the model's id
_BUILT_ATTRS: dict[int, list[tuple[Any, dict[str, Any], dict[str, tuple[Any, Any]]]]] = {}
# and its parameters' values as built, where they are small enough to keep a copy of
# (PARAMS_KEPT_BYTES): a layer that rescales its weight through `.data` in forward (FrEIA's
# spectral norm correction) changes what every later call reads
_BUILT_PARAMS: dict[int, list[tuple[Any, Any]]] = {}
PARAMS_KEPT_BYTES = 256 << 20
# the Python values a module's flag or number holds
_SCALARS = (bool, int, float, complex, str, type(None))


def module_scalars(module: Any) -> dict[str, Any]:
    """A module's own attributes that hold a Python flag, number or string (`self._logged =
    False`), or a tuple of them (a cache as built, torch.distributions' `_cached_x_y = None,
    None`, which a call fills with its input and output: put back with the other half of the
    cache, pyro's `_cached_logDetJ = None`, or a later call on the same input tensor hits the
    one and reads None from the other), leaving out the ones every `nn.Module` has (`training`,
    `_compiled_call_impl`): what every call starts from (`restore_state`), and what the proof
    compares after a call (pt2bot/smoke/verify.py `scalar_attributes`)."""
    own = _module_attributes()
    return {k: v for k, v in vars(module).items() if k not in own and (
        isinstance(v, _SCALARS) or isinstance(v, tuple) and all(isinstance(x, _SCALARS) for x in v))}


@functools.lru_cache(maxsize=1)
def _module_attributes() -> frozenset[str]:
    from torch import nn

    return frozenset(vars(nn.Module()))


def remember_state(model: Any) -> None:
    """Keep `model`'s buffers as they are now, before any run, for `restore_state`, and its
    modules' Python flags and numbers. A model that updates a buffer on every call (a running
    normalizer's count and mean, a cache of positions) would otherwise give each call the state
    the calls before it left: a compiled run compared with an eager one of another state,
    head's outputs with a candidate's (a fix refused for the drift), a cache read that only
    ever hits. So would a flag set on the first call (`if not self._logged:
    logger.info(...); self._logged = True`): the eager reference calls would set it, and the
    compiled run would never trace the first call's code, where a user's first compiled call
    breaks the graph. So would a tensor kept as a plain attribute that a call rebinds (a
    streaming block's `self.carry = y.detach().mean(0)`). So would a parameter a call changes in
    place (`self.layer.weight.data *= scale`): its values are kept too, where all the model's
    parameters take at most PARAMS_KEPT_BYTES (a copy of a large model's weights is not made
    for what only a few models do). Other Python objects (lists, dicts) are not kept."""
    import torch

    _BUILT[id(model)] = [(m, name, b, b.detach().clone().requires_grad_(b.requires_grad))
                         for m in model.modules() for name, b in m._buffers.items() if b is not None]
    _BUILT_ATTRS[id(model)] = [(m, module_scalars(m),
                                {k: (t, t.detach().clone()) for k, t in _plain_tensors(m).items()})
                               for m in model.modules()]
    params = list(model.parameters())
    with _refusing(params):
        if sum(p.numel() * p.element_size() for p in params) <= PARAMS_KEPT_BYTES:
            _BUILT_PARAMS[id(model)] = [(p, torch.Tensor.as_subclass(p, torch.Tensor).detach().clone())
                                        for p in params]


def _refusing(params: list[Any]) -> Any:
    """Subclasses' torch functions off while pt2bot reads and writes the parameters' values,
    where a parameter is of a subclass: its torch functions may refuse torch's own on itself
    (hypll's ManifoldParameter, an empty Parameter that wraps its values, raises on `numel`), and
    pt2bot's bookkeeping must not fail a model whose eager run and torch.compile tell what they
    do with it. Reading and copying values needs none of a subclass's own behaviour."""
    import torch

    if all(type(p) in (torch.Tensor, torch.nn.Parameter) for p in params):
        return contextlib.nullcontext()
    return torch._C.DisableTorchFunctionSubclass()


def forget_state(model: Any) -> None:
    """Drop what `remember_state` kept of `model` (an exported program's module, made for one
    comparison), and with it the references that kept the model alive."""
    _BUILT.pop(id(model), None)
    _BUILT_ATTRS.pop(id(model), None)
    _BUILT_PARAMS.pop(id(model), None)


def _plain_tensors(module: Any) -> dict[str, Any]:
    """A module's own attributes that hold a tensor outside its parameters and buffers."""
    import torch

    return {k: v for k, v in vars(module).items() if isinstance(v, torch.Tensor)}


@contextlib.contextmanager
def zero_weights(model: Any) -> Iterator[bool]:
    """Inside, every call that starts from the model's state as built (`start_call`) starts
    from its parameters all 0 (the proof's weights all alike: a layer initialised to zero, as
    a neural ODE's last layer often is); after, from them as built again. Yields False, and
    changes nothing, where the model has no parameters or they were too large to keep
    (`remember_state`)."""
    import torch

    with _built_params_as(model, torch.zeros_like) as changed:
        yield changed


@contextlib.contextmanager
def special_weights(model: Any, kind: str | None, pattern: str) -> Iterator[bool]:
    """Inside, every call that starts from the model's state as built (`start_call`) starts
    from its floating parameters holding NaN (`kind` "nan") or inf: the first entry of each
    (`pattern` "one") or all of them ("all"); after, from them as built again. A NaN in a
    hidden state fed by token ids (llama2.c's `if not torch.isfinite(h).all(): raise ...`) is
    reached no other way: no argument of the function can hold one. Yields False, and changes
    nothing, for no kind, or where `zero_weights` would."""
    if kind is None:
        yield False
        return
    value = float("nan") if kind == "nan" else float("inf")

    def special(saved: Any) -> Any:
        v = saved.clone()
        if v.is_floating_point() and v.numel():
            if pattern == "all" or v.dim() == 0:
                v.fill_(value)
            else:
                v[(0,) * v.dim()] = value
        return v

    with _built_params_as(model, special) as changed:
        yield changed


@contextlib.contextmanager
def parameters_at(model: Any, names: Collection[str], value: float) -> Iterator[list[str]]:
    """Inside, every call that starts from the model's state as built (`start_call`) starts
    from its floating parameters whose own name (the last part of the dotted one) is in
    `names` filled with `value`; after, from them as built again. A test on a learned scalar
    (`if self.logit_scale.exp() > 100:` in openai/CLIP) is reached that way when no input
    reaches it. Yields the dotted names changed ([] where none, or none were kept)."""
    named = getattr(model, "named_parameters", None)
    chosen = {id(p): n for n, p in (named() if callable(named) else ())
              if n.rsplit(".", 1)[-1] in names and p.is_floating_point()}

    def fill(saved: Any) -> Any:
        return saved.clone().fill_(value)

    with _built_params_as(model, fill, only=set(chosen)) as changed:
        yield sorted(chosen.values()) if changed else []


@contextlib.contextmanager
def _built_params_as(model: Any, change: Callable[[Any], Any],
                     only: Collection[int] | None = None) -> Iterator[bool]:
    """The parameters `remember_state` kept of `model`, each as `change` makes it from its kept
    copy (those whose id() is in `only`, where given), for every call that starts from them
    inside; the kept ones again after. False, changing nothing, where none were kept or none
    is in `only`."""
    built = id(model)
    kept = _BUILT_PARAMS.get(built)
    if not kept or (only is not None and not any(id(p) in only for p, _ in kept)):
        yield False
        return
    _BUILT_PARAMS[built] = [(p, change(saved) if only is None or id(p) in only else saved)
                            for p, saved in kept]
    try:
        yield True
    finally:
        _BUILT_PARAMS[built] = kept
        restore_state(model)


def start_call(model: Any) -> None:
    """Before a call whose outputs are compared with another call's (eager with compiled or
    exported, head with a candidate): the model's buffers as built (`restore_state`) and
    the generators seeded the same (`seed_all`). A model that draws random numbers in forward
    (dropout in training mode, noise added to its input, a random augmentation, numpy's
    `np.random.choice` over a transport plan) then draws the same numbers in both, whatever the
    calls before drew: with the eager backend and in an exported program a random op takes the
    same values from the same generator state, and numpy and `random` run in Python, outside
    any graph. (The inductor backend draws from a generator of its own, unless
    `fallback_random` is set.)"""
    restore_state(model)
    seed_all()


def seed_all(seed: int = 0) -> None:
    """torch's default generator, numpy's global one and Python's `random`, seeded alike: the
    same weights on every build of a model, the same draws on every compared call."""
    import random

    import torch

    torch.manual_seed(seed)
    random.seed(seed)
    try:
        import numpy
    except ImportError:     # a model that cannot draw from numpy
        return
    numpy.random.seed(seed)


def restore_state(model: Any) -> None:
    """Put back the buffers `remember_state` kept of `model` (or of the model a compiled
    wrapper holds), into the same tensors, so that code compiled against them still finds
    them: an in-place copy outside any compiled frame, which no graph records. A buffer the
    model rebound (`self.var = ...`) is bound back to the kept tensor first. The modules'
    Python flags and numbers are set back too, and one a call added is removed; so are the
    tensors kept as plain attributes, bound back to the tensor as built, with its values; and
    the parameters' values, where they were kept."""
    import torch

    built = id(getattr(model, "_orig_mod", model))
    kept = _BUILT_PARAMS.get(built, ())
    with torch.no_grad(), _refusing([p for p, _ in kept]):
        for param, saved in kept:
            param.data.copy_(saved)
    for module, scalars, tensors in _BUILT_ATTRS.get(built, ()):
        # a flag or number the calls added is taken away again (`if not hasattr(self, "_warned")`)
        for name in module_scalars(module).keys() - scalars.keys():
            del vars(module)[name]
        vars(module).update(scalars)
        # so is a plain tensor a call added (`self.last_attn = attn`); one it rebound is bound back
        for name in _plain_tensors(module).keys() - tensors.keys():
            del vars(module)[name]
        with torch.no_grad():
            for name, (tensor, saved) in tensors.items():
                try:
                    tensor.copy_(saved)
                except RuntimeError:   # an inference tensor, a leaf that requires grad: a copy instead
                    tensor = saved.clone()
                vars(module)[name] = tensor
    state = _BUILT.get(built)
    if not state:
        return
    with torch.no_grad():
        for i, (module, name, tensor, saved) in enumerate(state):
            if tensor.grad_fn is not None:
                # updated in place from values that need a gradient (the gradients' run):
                # the next backward would reach into the run before. A view cannot be
                # detached in place: a tensor of its own takes its place from now on
                if tensor._base is not None:
                    tensor = saved.clone()
                    state[i] = (module, name, tensor, saved)
                else:
                    tensor.detach_()
            if module._buffers.get(name) is not tensor:
                module._buffers[name] = tensor
            tensor.requires_grad_(saved.requires_grad)
            tensor.copy_(saved)


def call_mode() -> Any:
    """The autograd mode every call of the model runs in, eager, compiled or exported:
    `torch.no_grad()`, or `torch.enable_grad()` for a model built with `grad`. Only the calls:
    setting its state back (`restore_state`) writes tensors with autograd off either way."""
    import torch

    return torch.enable_grad() if _GRAD[0] else torch.no_grad()


@contextlib.contextmanager
def calls_with_grad(on: bool) -> Iterator[None]:
    """`call_mode` set for a block and set back after it: for a process that measures several
    models or functions (pt2bot.testing), where one model's `grad:` must not outlive its calls."""
    old = _GRAD[0]
    _GRAD[0] = bool(on)
    try:
        yield
    finally:
        _GRAD[0] = old


def run_forward(model: Any, case: CaseInputs, paths: RepoPaths) -> Any:
    """Eager forward on its own copy of the inputs (`CaseInputs.fresh`); an exception is the
    model's: `exception`, or `input` for a misfit."""
    own = case.fresh()
    try:
        return model(*own.args, **own.kwargs)
    except Exception as e:  # noqa: BLE001
        path, line = user_location(e, paths)
        raised_in_repo = False
        tb = traceback.extract_tb(e.__traceback__)
        if tb and paths.rel(tb[-1].filename):
            raised_in_repo = True
        kind = "exception"
        if (not raised_in_repo and isinstance(e, (RuntimeError, ValueError, IndexError))
                and _SHAPE_WORDS.search(str(e))):
            kind = "input"
        shape = ", ".join(f"{k}={v}" for k, v in case.shape.items())
        hint = ("; the model's calls run under torch.no_grad(): set `grad: true` on the model if its "
                "forward differentiates inside itself" if not _GRAD[0] and _NEEDS_GRAD in str(e) else "")
        raise ModelError(kind, f"forward({shape}) raised {_exc_text(e)}{hint}", path, line,
                         exc_type=type(e).__name__, frames=user_frames(e, paths),
                         exc_bases=tuple(c.__name__ for c in type(e).__mro__)) from None


def flatten_outputs(out: Any) -> list[Any]:
    """Every tensor/number leaf of a forward() result, in a stable order."""
    import torch

    leaves: list[Any] = []

    def walk(o: Any) -> None:
        if isinstance(o, torch.Tensor):
            leaves.append(o)
        elif isinstance(o, dict):
            for k in sorted(o, key=str):
                walk(o[k])
        elif isinstance(o, (list, tuple)):
            for v in o:
                walk(v)
        elif hasattr(o, "__dataclass_fields__"):
            for k in o.__dataclass_fields__:
                walk(getattr(o, k))
        elif isinstance(o, (int, float, bool)):
            leaves.append(o)
    walk(out)
    return leaves


# the outputs whose shapes a shape case records: enough to say what changed, bounded in size
MAX_OUTPUT_SHAPES = 16


def output_shapes(out: Any) -> list[list[int] | None]:
    """The shape of each leaf of an eager call's result (`flatten_outputs`' order; None for a
    Python number), the first MAX_OUTPUT_SHAPES of them: base's and head's are compared on each
    shape case, so that a model whose outputs change shape is not "unchanged"."""
    import torch

    return [list(t.shape) if isinstance(t, torch.Tensor) else None
            for t in flatten_outputs(out)[:MAX_OUTPUT_SHAPES]]


def tolerances(tolerance: dict[str, Any] | None = None) -> dict[str, tuple[float, float]]:
    """dtype name -> (rtol, atol): DEFAULT_TOLERANCE with a model's `tolerance` over it."""
    tol = dict(DEFAULT_TOLERANCE)
    for k, v in (tolerance or {}).items():
        tol[str(k)] = (float(v[0]), float(v[1]))
    return tol


def finite_output(out: Any) -> bool:
    """Whether every floating-point output of an eager call holds a finite value (a loss of
    NaN beside a finite reconstruction is not: it is the output a user trains on)."""
    import torch

    floats = [t for t in flatten_outputs(out) if isinstance(t, torch.Tensor)
              and (t.is_floating_point() or t.is_complex()) and t.numel()]
    return all(bool(torch.isfinite(t.detach()).any()) for t in floats)


def nothing_finite(out: Any) -> str | None:
    """What an eager call's floating-point outputs, there being some, hold where they hold no
    finite value at all: "nan" (NaN only: a comparison of them shows nothing), "inf" (some inf:
    only where inf and NaN fall, and the signs of the infs, are compared); None otherwise."""
    import torch

    floats = [t.detach() for t in flatten_outputs(out) if isinstance(t, torch.Tensor)
              and (t.is_floating_point() or t.is_complex()) and t.numel()]
    if not floats or any(bool(torch.isfinite(t).any()) for t in floats):
        return None
    return "inf" if any(bool(torch.isinf(t).any()) for t in floats) else "nan"


def one_value(out: Any) -> bool:
    """Whether an eager call's floating-point outputs, there being some with more than one
    element, each hold a single value throughout (a classifier whose prototypes are all zero
    as built scores every input 0): outputs equal to such ones show little of an edit."""
    import torch

    floats = [t.detach() for t in flatten_outputs(out) if isinstance(t, torch.Tensor)
              and (t.is_floating_point() or t.is_complex()) and t.numel() > 1]
    return bool(floats) and all(bool((t == t.reshape(-1)[0]).all()) for t in floats)


def compare_outputs(expected: Any, actual: Any,
                    tolerance: dict[str, Any] | None = None, *, types: bool = False) -> dict[str, Any]:
    """`{match, max_abs_err, rtol, atol}`: per-dtype tolerance, exact for ints/bools. `types`: a
    tensor where `expected` has a Python number, or a tensor of another dtype, is a mismatch
    (an edit's outputs against head's; not compiled or exported outputs against eager ones,
    which may hold a number as a tensor)."""
    import torch

    tol = tolerances(tolerance)
    exp, act = flatten_outputs(expected), flatten_outputs(actual)
    res: dict[str, Any] = {"match": True, "max_abs_err": 0.0, "rtol": None, "atol": None}
    if len(exp) != len(act):
        return {**res, "match": False, "max_abs_err": None,
                "message": f"{len(act)} outputs, expected {len(exp)}"}
    for e, a in zip(exp, act):
        if not isinstance(e, torch.Tensor):
            if types and isinstance(a, torch.Tensor):
                # a 0-d tensor compares equal to head's Python number of the same value, but its
                # caller gets another type (a logged metric, a size, `json.dumps`): not head's output
                res.update(match=False, max_abs_err=None,
                           message=f"output is a tensor where head's is a Python {type(e).__name__} ({e!r})")
                continue
            if e != a:
                res.update(match=False, message=f"scalar output {a!r}, expected {e!r}")
            continue
        if not isinstance(a, torch.Tensor) or tuple(e.shape) != tuple(a.shape):
            res.update(match=False, max_abs_err=None,
                       message=f"output shape {tuple(getattr(a, 'shape', ()))}, "
                               f"expected {tuple(e.shape)}")
            continue
        if types and e.dtype != a.dtype:
            # equal values in another dtype are not head's output: a kept 0-d float64 tensor
            # where head had a Python float promotes what it meets (pyro's Pareto fit: sigma
            # as a tensor, and the result built from it float64 where head's was float32)
            got, want = (str(t.dtype).replace("torch.", "") for t in (a, e))
            res.update(match=False, max_abs_err=None, message=f"output is {got} where head's is {want}")
            continue
        e, a = e.detach().cpu(), a.detach().cpu()
        if e.layout != a.layout:
            res.update(match=False, max_abs_err=None,
                       message=f"output's layout is {a.layout} where head's is {e.layout}")
            continue
        if e.layout != torch.strided:
            # a sparse buffer (whisper's `alignment_heads`) has no `torch.equal` or `allclose`:
            # its values compare as the dense tensors they stand for
            e, a = e.to_dense(), a.to_dense()
        if e.is_floating_point() or e.is_complex():
            name = str(e.dtype).replace("torch.", "")
            rtol, atol = tol.get(name, tol["float32"])
            res["rtol"], res["atol"] = rtol, atol
            if e.numel():
                err = (e.double() - a.double()).abs()
                finite = torch.isfinite(err)
                m = float(err[finite].max()) if finite.any() else 0.0
                res["max_abs_err"] = max(res["max_abs_err"] or 0.0, m)
            if not torch.allclose(a.to(e.dtype), e, rtol=rtol, atol=atol, equal_nan=True):
                res["match"] = False
                # the largest error is over the finite differences only: a NaN or an inf on one
                # side alone would read "max abs error 0", so it is said as what it is
                ad = a.to(e.dtype)
                one_side = (torch.isnan(e) != torch.isnan(ad)) | ((torch.isinf(e) | torch.isinf(ad)) & (e != ad))
                k = int(one_side.sum())
                if k and not res.get("message"):
                    res["message"] = f"NaN or inf on one side only in {k} of {e.numel()} values"
        elif not torch.equal(e, a.to(e.dtype)):
            res["match"] = False
            res["max_abs_err"] = max(res["max_abs_err"] or 0.0,
                                     float((e.double() - a.double()).abs().max()))
    return res
