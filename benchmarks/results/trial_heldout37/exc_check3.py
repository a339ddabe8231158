"""The values the review's evidence says the proof injected (-1, 0, 1e3, 1e6) put into each integer
input of PR 2's model (tokens, tags) at one position, after a first compiled call on valid inputs:
the exception of head eager, head compiled and the suggestion compiled (backend "eager"), no pt2bot
code."""
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
sides = [(p, mode) for p in sys.argv[1:] for mode in ("eager", "compiled")]
fns = {}
for p, mode in sides:
    mod = load(p, "m" + str(abs(hash(p))))
    torch.manual_seed(0)
    model = mod.BiLSTMCRF().eval()
    fns[(p, mode)] = torch.compile(model, backend="eager") if mode == "compiled" else model
    with torch.no_grad():
        fns[(p, mode)](tokens, mask, tags)
for which in (0, 2):
    for val in (-1, 0, 1000, 1000000):
        args = [tokens.clone(), mask.clone(), tags.clone()]
        args[which][1, 3] = val
        row = []
        for key in sides:
            try:
                with torch.no_grad():
                    out = fns[key](*args)
                row.append(f"{key[0].split('_')[-1]} {key[1]}: {float(out):.6g}")
            except Exception as e:  # noqa: BLE001
                row.append(f"{key[0].split('_')[-1]} {key[1]}: {type(e).__name__}: {str(e).splitlines()[0][:70]}")
        print(f"{['tokens', 'mask', 'tags'][which]}[1, 3] = {val}: " + " | ".join(row))
