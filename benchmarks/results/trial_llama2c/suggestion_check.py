"""An independent re-run of the suggestion pt2bot posted on the llama2.c trial's PR (no pt2bot
code): the suggestion block of `review_60036f6.json` applied to the PR's model.py, the patched
Transformer against the PR's own (head), same weights and inputs, eager and compiled.

    python suggestion_check.py      # in a venv with torch (the trial's: torch 2.13.0+cpu)

The PR raises RuntimeError on non-finite hidden states; the suggestion keeps the check in
compiled code as `torch._assert_async` and the `raise` in eager. Scenarios: token ids of several
batches and lengths, with and without targets (the training loss); a NaN in one embedding row the
ids read; an inf there; a NaN in the final norm's weight (every position). Eager and compiled
(eager backend, the suggestion with fullgraph=True), with and without gradients: each side's
result (the logits and the loss, or the exception's type) and every parameter's gradient.
"""
from __future__ import annotations

import json
import os
import sys
import types

import torch

HERE = os.path.dirname(os.path.abspath(__file__))


def patched(src: str, review: str) -> str:
    [c] = [c for c in json.load(open(review))["comments"] if "```suggestion" in c["body"]]
    block = c["body"].split("```suggestion\n", 1)[1].split("\n```", 1)[0].split("\n")
    lines = src.split("\n")
    start = c.get("start_line") or c["line"]
    return "\n".join(lines[:start - 1] + block + lines[c["line"]:])


def load(src: str, name: str):
    mod = types.ModuleType(name)
    sys.modules[name] = mod
    exec(compile(src, f"<{name}>", "exec"), mod.__dict__)
    return mod


def build(mod):
    torch.manual_seed(0)
    args = mod.ModelArgs(dim=32, n_layers=2, n_heads=2, n_kv_heads=2, vocab_size=100,
                         hidden_dim=32, max_seq_len=16, dropout=0.0)
    return mod.Transformer(args).eval()


def run(model, tokens, targets, compiled, grad, fullgraph):
    fn = torch.compile(model, backend="eager", fullgraph=fullgraph) if compiled else model
    model.zero_grad(set_to_none=True)
    try:
        with torch.set_grad_enabled(grad):
            logits = fn(tokens, targets)
            loss = model.last_loss
            if grad:
                (loss if loss is not None else logits.sum()).backward()
    except Exception as e:  # noqa: BLE001 - what each side raises is compared
        return ("raised", type(e).__name__)
    return ("ok", logits.detach().clone(), None if loss is None else loss.detach().clone(),
            [None if p.grad is None else p.grad.clone() for p in model.parameters()])


def same(a, b):
    if a[0] != b[0] or a[0] == "raised":
        return a == b, f"{a[1] if a[0] == 'raised' else 'ok'} / {b[1] if b[0] == 'raised' else 'ok'}"
    if not torch.equal(a[1], b[1]) or (a[2] is None) != (b[2] is None) or (
            a[2] is not None and not torch.equal(a[2], b[2])):
        return False, f"outputs differ (max {float((a[1] - b[1]).abs().max()):.3g})"
    for ga, gb in zip(a[3], b[3]):
        if (ga is None) != (gb is None) or (ga is not None and not torch.equal(ga, gb)):
            return False, "gradients differ"
    return True, "equal"


def main() -> None:
    src = open(os.path.join(HERE, "model_finite_check.py")).read()
    head = build(load(src, "llama_head"))
    fix = build(load(patched(src, os.path.join(HERE, "review_60036f6.json")), "llama_fix"))
    fix.load_state_dict(head.state_dict())
    state0 = {k: v.clone() for k, v in head.state_dict().items()}

    def tweak(what):
        def apply(m, tokens):
            with torch.no_grad():
                if what == "embedding NaN":
                    m.tok_embeddings.weight[int(tokens[0, 0])] = float("nan")
                elif what == "embedding inf":
                    m.tok_embeddings.weight[int(tokens[0, 0]), 0] = float("inf")
                elif what == "norm NaN":
                    m.norm.weight[0] = float("nan")
        return apply

    g = torch.Generator().manual_seed(1)
    scenarios = []
    for b, t in ((1, 1), (2, 8), (4, 16), (3, 5)):
        tokens = torch.randint(0, 100, (b, t), generator=g)
        targets = torch.randint(0, 100, (b, t), generator=g)
        for what in ("plain", "embedding NaN", "embedding inf", "norm NaN"):
            scenarios.append((f"batch={b} seq={t} {what}", tokens, None, tweak(what)))
            scenarios.append((f"batch={b} seq={t} {what} targets", tokens, targets, tweak(what)))
    n = ok = 0
    for name, tokens, targets, apply in scenarios:
        for compiled in (False, True):
            for grad in (False, True):
                torch._dynamo.reset()
                for m in (head, fix):
                    m.load_state_dict(state0)
                    apply(m, tokens)
                a = run(head, tokens, targets, compiled, grad, False)
                b_ = run(fix, tokens, targets, compiled, grad, compiled)
                eq, why = same(a, b_)
                n += 1
                ok += eq
                print(f"{name} {'compiled' if compiled else 'eager'}{' grad' if grad else ''}: {why}")
    print(f"review_60036f6.json: {ok} of {n} equal")


if __name__ == "__main__":
    main()
