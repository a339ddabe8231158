"""The mask of PR 2's model given as an int64 tensor with a -1 (or 1e3, 1e6) in one element, and
filled with -1 or 1e6 (what pt2bot/smoke/patch.py's `_special` makes of a bool input for its
"invalid" guard: `out = out.long()` then filled), what an injection of "-1, 0, 1e3, 1e6" into a
bool input can only be: head eager, head compiled, the suggestion eager and compiled (backend
"eager"), no pt2bot code."""
import importlib.util
import sys
import torch

torch.set_num_threads(1)


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


g = torch.Generator().manual_seed(1)
mask = torch.ones(2, 16, dtype=torch.bool)
tokens = torch.randint(1, 1000, (2, 16), generator=g)
tags = torch.randint(0, 9, (2, 16), generator=g)
for val, fill in ((-1, False), (1000, False), (1000000, False), (-1, True), (1000000, True)):
    m = mask.long()
    if fill:
        m.fill_(val)
    else:
        m[1, 3] = val
    for path in sys.argv[1:]:
        mod = load(path, "m" + str(abs(hash(path))))
        torch.manual_seed(0)
        model = mod.BiLSTMCRF().eval()
        for mode in ("eager", "compiled"):
            torch._dynamo.reset()
            fn = torch.compile(model, backend="eager") if mode == "compiled" else model
            try:
                with torch.no_grad():
                    out = fn(tokens, m, tags)
                r = f"{float(out):.6g}"
            except Exception as e:  # noqa: BLE001
                r = f"{type(e).__name__}: {str(e).splitlines()[0][:110]}"
            print(f"{'mask filled with' if fill else 'mask[1, 3] ='} {val} (int64 mask) {path} {mode}: {r}")
