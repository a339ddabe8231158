from __future__ import annotations

import ast

from pt2bot.rules.base import Rule

_TIME = frozenset({"time.time", "time.perf_counter", "time.monotonic", "time.process_time", "time.time_ns",
                   "time.perf_counter_ns", "time.monotonic_ns"})
# Measured on torch 2.13: `random.random()` breaks (GB0007) but `random.randint` is traced,
# so only the functions verified to break are listed.
_RANDOM = frozenset({"random.random", "random.uniform", "random.gauss"})


class HostNondeterminism(Rule):
    """## What it does
    Flags host clock and host RNG calls in compiled code: `time.time()` / `time.perf_counter()`
    and friends, `random.random()` / `random.uniform()` / `random.gauss()`, and
    `numpy.random.*`.

    ## Why is this bad?
    These read host state that dynamo cannot trace. torch 2.13 breaks the graph on each call:
    the time functions and `random.random` with GB0007 ("Attempted to call function marked as
    skipped"), `numpy.random.*` with GB0033. Timing inside `forward` also measures nothing
    useful: compiled kernels run asynchronously. (NumPy math on tensors, e.g. `np.exp(t)`, is
    *not* flagged: with `trace_numpy` dynamo traces it. `random.randint` is traced too.)

    ## Example
    ```python
    def forward(self, x):
        t0 = time.perf_counter()
        noise = np.random.rand()
        return x * noise
    ```

    ## Use instead
    Time outside the model, and use torch's RNG, which compiles:
    ```python
    def forward(self, x):
        noise = torch.rand((), device=x.device)
        return x * noise
    ```
    """

    code = "PTC107"
    name = "host-nondeterminism"
    summary = "`time.*`, `random.*`, `numpy.random.*` calls in compiled code (graph break)"
    gb = "GB0007"
    callee_until = {"random.random": "2.14"}   # traced from 2.14 on (tests/test_rules_torch.py)
    node_types = (ast.Call,)

    def check(self, ctx, node):
        target = ctx.call_target
        if not target:
            return
        if target in _TIME:
            ctx.report(self.code, node, f"`{target}()` is a host call that breaks the graph; "
                       "time outside the compiled model")
        elif target in _RANDOM:
            ctx.report(self.code, node, f"`{target}()` breaks the graph; use torch's RNG "
                       "(`torch.rand`, `torch.randint`)")
        elif target.startswith("numpy.random."):
            ctx.report(self.code, node, f"`{target}()` breaks the graph; use torch's RNG "
                       "(`torch.rand`, `torch.randn`)", gb="GB0033")
