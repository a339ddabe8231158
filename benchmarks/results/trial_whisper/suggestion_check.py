"""An independent re-run of what pt2bot proposed on the Whisper trial's PRs (no pt2bot code).

    python suggestion_check.py      # in a venv with torch (the trial's: torch 2.13.0+cpu)

1. `log-item` (TextDecoder logs `logits.max().item()` at debug level): the one suggestion posted
   as verified, the ```suggestion block of `review_log_item.json`, applied to the PR's model.py.
2. `mel-inf-floor` (AudioEncoder clamps a log-mel with an inf in it to -1.5): no suggestion was
   verified (the proof crashed); its three candidates (`fixes_mel_inf_floor.json`, from the
   review's report.json), one of them posted inline as "Candidate fix, not verified: drop the
   branch: the guarded statement leaves other values unchanged", applied the same way.

Each patched model.py is loaded as a module beside the PR's own (head) with the same weights (a
tiny Whisper: n_mels 80, n_audio_ctx 8, width 32, 2 heads, 2 layers, vocabulary 100, 16
positions); the package-relative imports of decode/transcribe (not used by forward) are
replaced by None. Inputs: (batch, token length) (1, 1), (2, 3), (4, 8), (2, 16) for 1; for 2, the encoder at
batch 1, 2, 4 and the whole model at (2, 3); mel values random normal,
zeros, one NaN, one +inf, one -inf, a row of -inf (digital silence), tiny (1e-30), huge (1e30),
negative (-5 |N|). Models: the full `Whisper.forward(mel, tokens)`, `AudioEncoder(mel)` and
`TextDecoder(tokens, xa)` with xa of the same value kinds. Modes: eager, and
`torch.compile(backend="eager")` (dynamo reset per case; the fix with fullgraph=True), each
without and with gradients (logits.sum().backward(); every parameter's grad compared). Outputs
and gradients are compared exactly: the same NaN positions and bitwise-equal other values; an
exception is compared by its type. For 1, the debug records the logger emits are compared too
(with the logger at DEBUG), reported apart from the outputs.
"""
from __future__ import annotations

import json
import logging
import os
import sys
import types

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
torch.set_num_threads(1)


def patched(src: str, start: int, end: int, block: list[str]) -> str:
    lines = src.split("\n")
    return "\n".join(lines[:start - 1] + block + lines[end:])


def suggestion_of(review: str):
    [c] = [c for c in json.load(open(review))["comments"] if "```suggestion" in c["body"]]
    block = c["body"].split("```suggestion\n", 1)[1].split("\n```", 1)[0].split("\n")
    return (c.get("start_line") or c["line"]), c["line"], block


def load(src: str, name: str):
    src = src.replace("from .decoding import decode as decode_function",
                      "decode_function = None").replace(
        "from .decoding import detect_language as detect_language_function",
        "detect_language_function = None").replace(
        "from .transcribe import transcribe as transcribe_function", "transcribe_function = None")
    mod = types.ModuleType(name)
    sys.modules[name] = mod
    exec(compile(src, f"<{name}>", "exec"), mod.__dict__)
    return mod


def build(mod):
    torch.manual_seed(0)
    m = mod.Whisper(mod.ModelDimensions(80, 8, 32, 2, 2, 100, 16, 32, 2, 2)).eval()
    with torch.no_grad():
        m.decoder.positional_embedding.normal_()   # torch.empty in whisper (a checkpoint fills it)
    return m


def values(kind: str, shape, g):
    x = torch.randn(shape, generator=g)
    if kind == "zeros":
        x = torch.zeros(shape)
    elif kind == "nan":
        x.view(-1)[5] = float("nan")
    elif kind == "+inf":
        x.view(-1)[5] = float("inf")
    elif kind == "-inf":
        x.view(-1)[5] = float("-inf")
    elif kind == "-inf row":
        x[:, :, 3] = float("-inf") if x.dim() == 3 and x.shape[1] == 80 else x[:, :, 3]
        if not (x.dim() == 3 and x.shape[1] == 80):
            x[:, 0] = float("-inf")
    elif kind == "tiny":
        x = x * 1e-30
    elif kind == "huge":
        x = x * 1e30
    elif kind == "negative":
        x = -5 * x.abs()
    return x


KINDS = ("normal", "zeros", "nan", "+inf", "-inf", "-inf row", "tiny", "huge", "negative")


def same_tensor(a, b):
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    na, nb = torch.isnan(a), torch.isnan(b)
    return bool(torch.equal(na, nb)) and bool(torch.equal(a[~na], b[~nb]))


def run(model, part, args, compiled, grad, fullgraph):
    target = {"whisper": model, "encoder": model.encoder, "decoder": model.decoder}[part]
    fn = torch.compile(target, backend="eager", fullgraph=fullgraph) if compiled else target
    model.zero_grad(set_to_none=True)
    try:
        with torch.set_grad_enabled(grad):
            out = fn(*args)
            if grad:
                out.float().sum().backward()
    except Exception as e:  # noqa: BLE001 - what each side raises is compared
        return ("raised", type(e).__name__)
    return ("ok", out.detach().clone(),
            [None if p.grad is None else p.grad.clone() for p in model.parameters()])


def same(a, b):
    if a[0] != b[0] or a[0] == "raised":
        return a == b, f"{a[1] if a[0] == 'raised' else 'ok'} / {b[1] if b[0] == 'raised' else 'ok'}"
    if not same_tensor(a[1], b[1]):
        d = (a[1] - b[1]).abs()
        d = d[~torch.isnan(d)]
        return False, f"outputs differ (max {float(d.max()) if d.numel() else float('nan'):.3g})"
    for ga, gb in zip(a[2], b[2]):
        if (ga is None) != (gb is None) or (ga is not None and not same_tensor(ga, gb)):
            return False, "gradients differ"
    return True, "equal"


class Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.msgs = []

    def emit(self, record):
        self.msgs.append(record.getMessage())


def compare(label, head_mod, fix_mod, parts, shapes, log_name=None):
    head, fix = build(head_mod), build(fix_mod)
    fix.load_state_dict(head.state_dict())
    rec = {}
    for name, mod in (("head", head_mod), ("fix", fix_mod)):
        if log_name:
            h = Records()
            lg = getattr(mod, "logger")
            lg.setLevel(logging.DEBUG)
            lg.addHandler(h)
            lg.propagate = False
            rec[name] = h
    g = torch.Generator().manual_seed(1)
    n = ok = 0
    diffs = []
    log_diffs = []
    for b, s in shapes:
        if True:
            tokens = torch.randint(0, 100, (b, s), generator=g)
            for kind in KINDS:
                mel = values(kind, (b, 80, 16), g)
                xa = values(kind, (b, 8, 32), g)
                for part in parts:
                    args = {"whisper": (mel, tokens), "encoder": (mel,), "decoder": (tokens, xa)}[part]
                    for compiled in (False, True):
                        for grad in (False, True):
                            torch._dynamo.reset()
                            for h in rec.values():
                                h.msgs.clear()
                            a = run(head, part, args, compiled, grad, False)
                            c = run(fix, part, args, compiled, grad, compiled)
                            eq, why = same(a, c)
                            n += 1
                            ok += eq
                            case = (f"{part} batch={b} seq={s} {kind} "
                                    f"{'compiled' if compiled else 'eager'}{' grad' if grad else ''}")
                            if not eq:
                                diffs.append(f"{case}: {why}")
                            print(f"   {case}: {why}", flush=True)
                            if rec and rec["head"].msgs != rec["fix"].msgs:
                                log_diffs.append(f"{case}: head logged {len(rec['head'].msgs)}, "
                                                 f"fix {len(rec['fix'].msgs)}")
    print(f"{label}: {ok} of {n} equal", flush=True)
    for d in diffs[:40]:
        print("   differs:", d)
    if len(diffs) > 40:
        print(f"   ... and {len(diffs) - 40} more")
    if log_name:
        print(f"{label}: debug records differ on {len(log_diffs)} of {n}")
        for d in log_diffs[:6]:
            print("   log:", d)
    return ok, n, diffs


def main() -> None:
    # 1. the verified suggestion of the log-item PR
    src = open(os.path.join(HERE, "model_log_item.py")).read()
    start, end, block = suggestion_of(os.path.join(HERE, "review_log_item.json"))
    print(f"log-item suggestion (lines {start}-{end}):\n" + "\n".join(block))
    compare("log-item: verified suggestion", load(src, "w_log_head"),
            load(patched(src, start, end, block), "w_log_fix"), ("whisper", "decoder"),
            ((1, 1), (2, 3), (4, 8), (2, 16)), log_name="logger")

    # 2. the candidates of the mel-inf-floor PR (none verified: the proof crashed)
    src = open(os.path.join(HERE, "model_mel_inf_floor.py")).read()
    head = load(src, "w_mel_head")
    cands = json.load(open(os.path.join(HERE, "fixes_mel_inf_floor.json")))["candidates"]
    for c in cands:
        print(f"\nmel-inf-floor candidate {c['id']} ({c['title']}), lines "
              f"{c['start_line']}-{c['end_line']}:\n" + "\n".join(c["lines"]))
        fix = load(patched(src, c["start_line"], c["end_line"], c["lines"]), f"w_mel_{c['id']}")
        compare(f"mel-inf-floor {c['id']} encoder", head, fix, ("encoder",), ((1, 1), (2, 1), (4, 1)))
        compare(f"mel-inf-floor {c['id']} whisper", head, fix, ("whisper",), ((2, 3),))


if __name__ == "__main__":
    main()
