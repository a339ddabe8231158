"""The static analysis engine under the rules: what a name is, what runs compiled, and where.

- `model`: the picklable per-file summary (classes, functions, call edges, candidates);
- `infer`: names and kinds in a function (tensor, size, shape, parameter...), what a
  same-file helper returns, `FunctionContext` and `ModuleContext` the rules query;
- `walk`: the one pass over a function (conditions, call edges, none from code dynamo never
  runs) and the per-file skeleton;
- `graph`: which functions are compiled code, across files (re-exports, star imports, torch's
  own module classes from `torch_modules`; not `assume_constant_result`/`allow_in_graph`);
- `sizeargs`: sizes across calls (a pending candidate, kept when a compiled caller passes a
  size to the parameter it reads);
- `numpy_calls`: the numpy calls dynamo traces into torch ops;
- `queries`: small questions rules ask of a function's kinds (operands, receivers).

It reads source text only: nothing here imports torch or the code it analyses.
"""
