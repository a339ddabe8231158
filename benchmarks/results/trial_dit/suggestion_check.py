"""An independent re-run of the suggestions pt2bot posted on the DiT trial's two PRs (no pt2bot
code): each suggestion block of a saved review.json applied to the PR's models.py, the patched
DiT against the PR's own (head), same weights and inputs, eager and compiled.

    python suggestion_check.py      # in a venv with torch and timm (the trial's: torch 2.14.1)

DiT zero-initialises its adaLN modulations and its final layer, so that a fresh model's output
is 0 whatever goes in: every weight is redrawn here (normal, std 0.05) so outputs depend on the
inputs. Scenarios for the NaN guard (`if torch.isnan(x).any(): x = torch.nan_to_num(x)` at the
end of forward): ordinary inputs; a NaN in the output (the final linear's bias[0] set to NaN);
an inf and no NaN (bias[0] set to inf, then -inf), the case an fp16 overflow gives. For the
label check: labels in range, and labels out of range (-1, num_classes), where head raises.
"""
from __future__ import annotations

import json
import os
import sys
import types

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
KW = dict(input_size=32, patch_size=2, in_channels=3, hidden_size=32, depth=2, num_heads=2,
          num_classes=10)


def patched(src: str, review: str) -> str:
    """`src` with the review's one suggestion block applied over start_line..line."""
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


def build(mod, state=None):
    torch.manual_seed(0)
    m = mod.DiT(**KW).eval()
    if state is None:
        with torch.no_grad():
            for p in m.parameters():
                p.normal_(0, 0.05)
    else:
        m.load_state_dict(state)
    return m


def inputs(batch: int, seed: int, labels=None):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(batch, 3, 32, 32, generator=g)
    t = torch.randint(0, 1000, (batch,), generator=g).float()
    y = torch.randint(0, 10, (batch,), generator=g) if labels is None else torch.tensor(labels)
    return x, t, y


def run(model, args, compiled: bool, grad: bool):
    fn = torch.compile(model, backend="eager", fullgraph=False) if compiled else model
    model.zero_grad(set_to_none=True)
    try:
        with torch.set_grad_enabled(grad):
            out = fn(*args)
            if grad:
                out.float().nan_to_num(0.0, 0.0, 0.0).sum().backward()
    except Exception as e:  # noqa: BLE001 - what each side raises is compared
        return ("raised", type(e).__name__)
    grads = [p.grad.clone() if p.grad is not None else None for p in model.parameters()]
    return ("ok", out.detach().clone(), grads)


def same(a, b) -> tuple[bool, str]:
    if a[0] != b[0] or a[0] == "raised":
        return a == b, f"{a[1] if a[0] == 'raised' else 'ok'} / {b[1] if b[0] == 'raised' else 'ok'}"
    if not torch.equal(a[1].isnan(), b[1].isnan()) or not torch.equal(
            torch.nan_to_num(a[1], 0.0, 0.0, 0.0), torch.nan_to_num(b[1], 0.0, 0.0, 0.0)) or \
            not torch.equal(a[1].isinf(), b[1].isinf()):
        diff = (a[1].float() - b[1].float()).abs()
        return False, f"outputs differ (inf head {int(a[1].isinf().sum())}, fix {int(b[1].isinf().sum())}; " \
                      f"max finite diff {float(diff[diff.isfinite()].max()) if diff.isfinite().any() else 0.0:.3g})"
    for ga, gb in zip(a[2], b[2]):
        if (ga is None) != (gb is None) or (ga is not None and not torch.equal(ga.nan_to_num(), gb.nan_to_num())):
            return False, "gradients differ"
    return True, "equal"


def check(pr: str, review: str, scenarios) -> tuple[int, int]:
    head_src = open(os.path.join(HERE, f"models_{pr}.py")).read()
    head_mod = load(head_src, f"dit_head_{pr}")
    fix_mod = load(patched(head_src, os.path.join(HERE, review)), f"dit_fix_{pr}_{review}")
    head = build(head_mod)
    state0 = {k: v.clone() for k, v in head.state_dict().items()}
    fix = build(fix_mod, state0)
    n = ok = 0
    for name, args, tweak in scenarios:
        for compiled in (False, True):
            for grad in (False, True):
                torch._dynamo.reset()
                with torch.no_grad():
                    for m in (head, fix):
                        m.load_state_dict(state0)
                        tweak(m)
                a = run(head, args, compiled, grad)
                b = run(fix, args, compiled, grad)
                eq, why = same(a, b)
                n += 1
                ok += eq
                print(f"{pr} {review} {name} {'compiled' if compiled else 'eager'}"
                      f"{' grad' if grad else ''}: {why}")
    return ok, n


def bias(value: float):
    def tweak(m):
        m.final_layer.linear.bias[0] = value
    return tweak


def main() -> None:
    plain = [(f"batch={b} seed={s}", inputs(b, s), lambda m: None) for b in (2, 4, 3) for s in (0, 1)]
    nan_cases = plain + [(f"{what} batch=2", inputs(2, 7), bias(v))
                         for what, v in (("NaN in the output", float("nan")),
                                         ("+inf, no NaN", float("inf")), ("-inf, no NaN", float("-inf")))]
    label_cases = plain + [(f"labels {ys}", inputs(2, 3, ys), lambda m: None)
                           for ys in ([-1, 3], [10, 0], [9, 0])]
    total = []
    for pr, review, cases in (("nan_guard", "review_nan_guard_5112bc3.json", nan_cases),
                              ("nan_guard", "review_nan_guard_ffe50ea.json", nan_cases),
                              ("validate_labels", "review_validate_labels.json", label_cases)):
        ok, n = check(pr, review, cases)
        total.append((review, ok, n))
    for review, ok, n in total:
        print(f"{review}: {ok} of {n} equal")


if __name__ == "__main__":
    main()
