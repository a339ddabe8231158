"""exc_check.py's token id -1 after a first compiled call on valid inputs, as a proof's shape case
then an injected value would run, with the batch dim marked dynamic weakly (maybe_mark_dynamic: mark_dynamic raises, batch is specialised) (pt2bot.yml's dynamic:
{batch: null}) and without; PR 2's head and suggestion, backend "eager", no pt2bot code."""
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
bad = tokens.clone()
bad[0, 0] = -1
for path in sys.argv[1:]:
    mod = load(path, "m" + str(abs(hash(path))))
    torch.manual_seed(0)
    model = mod.BiLSTMCRF().eval()
    for dyn in (False, True):
        torch._dynamo.reset()
        fn = torch.compile(model, backend="eager")
        args = [tokens.clone(), mask.clone(), tags.clone()]
        bargs = [bad.clone(), mask.clone(), tags.clone()]
        if dyn:
            for a in args + bargs:
                torch._dynamo.maybe_mark_dynamic(a, 0)
        with torch.no_grad():
            fn(*args)
            try:
                fn(*bargs)
                print(f"{path} dynamic batch {dyn}: no exception")
            except Exception as e:  # noqa: BLE001
                print(f"{path} dynamic batch {dyn}: {type(e).__module__}.{type(e).__name__}: {str(e).splitlines()[0][:150]}")
