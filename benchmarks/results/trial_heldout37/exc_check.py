"""Which exception each side raises on a token id of -1 (outside nn.Embedding's range) and on a
first token that is padding: PR 2's head eager, head compiled, the suggestion eager and compiled
(backend "eager"), with no pt2bot code."""
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
mask = torch.ones(2, 8, dtype=torch.bool)
mask[1, 5:] = False
tokens = torch.randint(1, 1000, (2, 8), generator=g).masked_fill(~mask, 0)
tags = torch.randint(0, 9, (2, 8), generator=g)
bad_tok = tokens.clone()
bad_tok[0, 0] = -1
bad_mask = mask.clone()
bad_mask[1, 0] = False
for path in sys.argv[1:]:
    mod = load(path, "m" + str(abs(hash(path))))
    torch.manual_seed(0)
    model = mod.BiLSTMCRF().eval()
    for mode in ("eager", "compiled"):
        torch._dynamo.reset()
        fn = torch.compile(model, backend="eager") if mode == "compiled" else model
        for name, args in (("token -1", (bad_tok, mask, tags)), ("first token padding", (tokens, bad_mask, tags))):
            try:
                with torch.no_grad():
                    fn(*args)
                print(f"{path} {mode} {name}: no exception")
            except Exception as e:  # noqa: BLE001
                print(f"{path} {mode} {name}: {type(e).__module__}.{type(e).__name__}: {str(e).splitlines()[0][:150]}")
