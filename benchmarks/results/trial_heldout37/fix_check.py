"""Head against the review's verified suggestion, with no pt2bot code.

    python fix_check.py HEAD_MODEL.py SUGGESTION_MODEL.py

Each file is imported as its own module; BiLSTMCRF() is built with seed 0 in each and the
suggestion's parameters are loaded from head's. Every input runs eager and compiled
(torch.compile(backend="eager"), one compile per side and gradient mode, so the inputs' shapes
and values recompile as they would in a training loop), without gradients and with the gradients
of the output with respect to every parameter. Results are compared exactly (torch.equal with
equal NaN positions; the same exception type and first message line). Inputs: padded batches as
nertag.data makes them (1 to 8 sentences, lengths 1 to 40), full masks, one-token sentences, token
ids 0 and 999, an empty row, a row whose first token is padding, all rows empty, a -1 and a 1000
token id, and weights all 0, NaN, +inf, -inf, 1e-30, -1e30 in the embedding, negated weights.
"""
import importlib.util
import sys
import torch

torch.set_num_threads(1)


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def batch(g, b, n, lengths=None):
    lengths = torch.randint(1, n + 1, (b,), generator=g) if lengths is None else torch.tensor(lengths)
    n = int(lengths.max())
    mask = torch.arange(n)[None, :] < lengths[:, None]
    tokens = torch.randint(1, 1000, (b, n), generator=g).masked_fill(~mask, 0)
    tags = torch.randint(0, 9, (b, n), generator=g).masked_fill(~mask, 0)
    return tokens, mask, tags


def inputs():
    g = torch.Generator().manual_seed(7)
    out = []
    for i in range(24):
        b, n = 1 + i % 8, [4, 16, 32, 40][i % 4]
        out.append((f"rand{i}_b{b}_n{n}", batch(g, b, n), None))
    t, m, y = batch(g, 3, 12, [12, 12, 12]); out.append(("full_mask", (t, m, y), None))
    t, m, y = batch(g, 4, 1, [1, 1, 1, 1]); out.append(("one_token", (t, m, y), None))
    t, m, y = batch(g, 2, 8, [8, 5]); out.append(("ids_zero", (torch.zeros_like(t), m, y), None))
    out.append(("ids_max", (torch.full_like(t, 999), m, y), None))
    t, m, y = batch(g, 3, 8, [8, 5, 3]); m2 = m.clone(); m2[2] = False
    out.append(("empty_row", (t, m2, y), None))
    m3 = m.clone(); m3[1, 0] = False
    out.append(("first_token_padding", (t, m3, y), None))
    out.append(("all_rows_empty", (t, torch.zeros_like(m), y), None))
    t4 = t.clone(); t4[0, 0] = -1; out.append(("token_minus1", (t4, m, y), None))
    t5 = t.clone(); t5[0, 0] = 1000; out.append(("token_1000", (t5, m, y), None))
    for name, val in (("zeros", 0.0), ("nan", float("nan")), ("inf", float("inf")),
                      ("neginf", float("-inf")), ("tiny", 1e-30), ("huge_neg", -1e30)):
        out.append((f"w_{name}", (t, m, y), ("embed", val)))
    out.append(("w_negated", (t, m, y), ("negate", None)))
    return out


def run(mod, state, compiled, grad, cases):
    torch.manual_seed(0)
    model = mod.BiLSTMCRF()
    model.load_state_dict(state)
    model.eval()
    torch._dynamo.reset()
    fn = torch.compile(model, backend="eager") if compiled else model
    res = {}
    for name, args, wmod in cases:
        model.load_state_dict(state)
        if wmod:
            with torch.no_grad():
                if wmod[0] == "embed":
                    model.embed.weight.fill_(wmod[1])
                else:
                    for p in model.parameters():
                        p.neg_()
        model.zero_grad(set_to_none=True)
        try:
            with torch.set_grad_enabled(grad):
                out = fn(*[a.clone() for a in args])
            grads = []
            if grad:
                out.backward()
                grads = [None if p.grad is None else p.grad.clone() for p in model.parameters()]
            res[name] = ("ok", out.detach(), grads)
        except Exception as e:  # noqa: BLE001 - a raise is a result
            res[name] = ("raise", type(e).__name__, str(e).split("\n")[0][:160])
    return res


def same(a, b):
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, torch.Tensor):
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        na, nb = a.isnan(), b.isnan()
        return bool(torch.equal(na, nb) and torch.equal(torch.where(na, 0, a), torch.where(nb, 0, b)))
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def main():
    head = load(sys.argv[1], "head_model")
    sugg = load(sys.argv[2], "sugg_model")
    torch.manual_seed(0)
    state = head.BiLSTMCRF().state_dict()
    cases = inputs()
    n = eq = 0
    for compiled in (False, True):
        for grad in (False, True):
            h = run(head, state, compiled, grad, cases)
            s = run(sugg, state, compiled, grad, cases)
            tag = f"{'compiled' if compiled else 'eager'}/{'grad' if grad else 'nograd'}"
            for name, *_ in cases:
                n += 1
                if same(h[name], s[name]):
                    eq += 1
                else:
                    def show(r):
                        return (f"{r[0]} {r[1:]}" if r[0] == "raise"
                                else f"ok {r[1].item():.6g}")
                    print(f"DIFFER {tag} {name}: head {show(h[name])} / suggestion {show(s[name])}")
            eh = [k for k in h if h[k][0] == "raise"]
            print(f"{tag}: head raises on {eh}")
    print(f"{eq} of {n} results equal")


if __name__ == "__main__":
    main()
