"""numpy inside compiled code: dynamo traces it into torch ops (torch._numpy), so a numpy array
there is a tensor, and a Python branch on its value is data-dependent (monai's
SwinUNETR checks `(np.array(x.shape[2:]) % k > 0).any()` in `forward` and breaks, GB0170, on
every call, although every size in it is a Python int).

Measured on torch 2.13.0+cpu and 2.14.1 (`torch._dynamo.config.trace_numpy` is on by default):
`if np.prod(x.shape[2:]) > 100:`, `if np.sqrt(x.shape[-1]) > 2:`, `if np.array([1, 2]).any():`,
`if (np.array(x.shape) % 32 > 0).any():` all break with GB0170, static shapes or not; `np.pi`,
`len(a)`, `a.ndim`, `a.shape[0]` of an array are Python values and do not break. `int(a)` /
`float(a)` / `bool(a)` of an array whose data dynamo cannot know while tracing break with
GB0033 (PTC104, pt2bot/rules/scalar_conversion.py); of numpy on Python numbers alone they do not.

`FUNCS` are the numpy functions whose result pt2bot takes for such an array: common ones that
torch._numpy implements (tests/test_numpy_traced.py checks each against the installed torch).
"""
from __future__ import annotations

FUNCS = frozenset("""
abs absolute add all amax amin any arange argmax argmin argsort argwhere around array asarray
ceil clip concatenate count_nonzero cumprod cumsum diff divide equal exp expand_dims flatnonzero
floor floor_divide full greater greater_equal isclose isfinite isinf isnan less less_equal linspace
log log2 log10 logical_and logical_not logical_or logical_xor max maximum mean median min minimum
mod multiply nonzero not_equal ones power prod remainder reshape round sign sqrt square stack std
subtract sum take true_divide trunc unique var where zeros
""".split())

# ndarray methods whose result is again an array (a numpy value, a tensor under dynamo).
ARRAY_METHODS = frozenset("""
all any argmax argmin astype clip copy cumprod cumsum flatten max mean min nonzero prod ravel
reshape round squeeze std sum transpose var
""".split())
