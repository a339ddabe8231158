"""Minimal repro (no pt2bot code) of the two ways the benchmark's verified
`torch._dynamo.config.capture_dynamic_output_shape_ops = True` differs from head on torcheval 0.0.7
in heldout31_rerun.log, with the specs' own models rebuilt here.

1. te_accuracy_macro_topk: a classifier's logits with multiclass_accuracy(average='macro') (its
   `(num_correct[mask] / num_total[mask]).mean()` is the GB0036 site the setting removes) and
   top-2 accuracy. The gradients of the summed outputs with respect to the parameters, eager
   against compiled (backend="eager"), without and with the setting.
   (In-process, this does not reproduce the re-run's difference: see part 3.)
2. te_recall_weighted: multiclass_recall(average='weighted') and multiclass_precision(average=None).
   Compiled once on an input holding every class, then called on inputs where the mask of classes
   keeps fewer than all four (eager broadcasts `num_tp[mask] / num_labels` when one class is kept).
   Eager against compiled, without and with the setting.

3. te_accuracy_macro_topk in heldout31_rerun.py's own side process (`--side`, H31_FRESH=2): head,
   head with the setting, and head with the hand edit hand3 (accuracy.py:289 as a masked sum, no
   setting). For each compiled call with gradients: whether any output required grad (the
   re-run's "grads max |diff| nan" is head's 6 gradients against none). The sequence a side runs
   (every input eager without and with gradients, compiled without, a dynamo reset, compiled
   with) was replayed in-process by heldout31_setting_inprocess.py in every combination, without
   reproducing it; part 4 isolates the trigger.
4. The trigger: the side's compiled calls without gradients run under `torch.no_grad()`, and some
   edge inputs raise there (labels of -1: "index -1 is out of bounds"). With the setting (and with
   hand3) the compiled graph holds torcheval's `@torch.inference_mode()` metric whole, and after a
   compiled call raises inside an outer `torch.no_grad()` block, grad mode stays off when the
   block has exited: every later call in the process runs without autograd. Without the setting
   (head: the break at accuracy.py:289 splits it) grad mode is restored. The same raising call made
   with grad mode on leaves it on.

    /work/venvs/realcode/bin/python benchmarks/results/heldout31_setting_repro.py \
        > benchmarks/results/heldout31_setting_repro.log 2>&1
"""
import logging
import os
import sys
import warnings

import torch

# torchvision's C++ ops do not load beside the CPU torch; torcheval imports torchvision at
# package import (its FID metric): the benchmark's shim, as every torchvision user here
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "real_code"))
import collect  # noqa: E402

collect.shim_torchvision()
from torcheval.metrics.functional import (multiclass_accuracy, multiclass_precision,
                                          multiclass_recall)

logging.disable(logging.WARNING)
warnings.filterwarnings("ignore")
torch.set_num_threads(1)


def clf(n_in, n_cls):
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(n_in, 32), torch.nn.ReLU(),
                               torch.nn.Linear(32, n_cls))


def grads(fn, net, x, y):
    """As heldout31_rerun.py takes them: x a leaf requiring grad, the summed (non-finite zeroed)
    floating outputs that require grad backpropagated, x's grad and every parameter's kept."""
    net.zero_grad(set_to_none=True)
    x = x.detach().clone().requires_grad_(True)
    outs = fn(x, y)
    fl = [o for o in outs if o.is_floating_point() and o.requires_grad]
    sum(torch.nan_to_num(o, 0.0, 0.0, 0.0).sum() for o in fl).backward()
    return ([o.detach().clone() for o in outs],
            [x.grad] + [p.grad.clone() if p.grad is not None else None for p in net.parameters()])


def describe(g):
    return ["None" if t is None else f"{'NaN' if torch.isnan(t).any() else 'finite'}" for t in g]


def gsame(a, b):
    return (a is None and b is None) or (a is not None and b is not None and torch.equal(a, b))


def part1():
    print("== 1. macro accuracy: gradients")
    net = clf(8, 6)

    def f(x, y):
        logits = net(x)
        return (logits, multiclass_accuracy(logits, y, num_classes=6, average="macro"),
                multiclass_accuracy(logits, y, k=2))

    g = torch.Generator().manual_seed(1)
    calls = [(torch.randn(b, 8, generator=g), torch.randint(0, 6, (b,), generator=g))
             for b in (8, 16, 1, 5)]
    print("eager: requires_grad of outputs", [o.requires_grad for o in f(*calls[0])])
    for setting in (False, True):
        torch._dynamo.reset()
        torch._dynamo.config.capture_dynamic_output_shape_ops = setting
        cf = torch.compile(f, backend="eager")
        for x, y in calls:
            eo, eg = grads(f, net, x, y)
            try:
                co, cg = grads(cf, net, x, y)
            except Exception as e:  # noqa: BLE001
                print(f"  setting={setting} batch {x.shape[0]}: compiled backward raised "
                      f"{type(e).__name__}: {str(e).splitlines()[0][:150]}")
                continue
            outs_eq = all(torch.equal(a, b) for a, b in zip(eo, co))
            names = ["x"] + [f"p{i}" for i in range(len(eg) - 1)]
            bad = [f"{n} (eager {describe([a])[0]}, compiled {describe([b])[0]})"
                   for n, a, b in zip(names, eg, cg) if not gsame(a, b)]
            print(f"  setting={setting} batch {x.shape[0]}: outputs equal {outs_eq}; grads equal "
                  f"{not bad}" + (f"; differ: {', '.join(bad)}" if bad else ""))
            for n, a, b in zip(names, eg, cg):
                if not gsame(a, b) and a is not None and b is not None:
                    print(f"     {n}: max |diff| {float((a - b).abs().max()):.3g}")
                    break
    torch._dynamo.config.capture_dynamic_output_shape_ops = False


def part2():
    print("== 2. weighted recall: compiled on all classes, called on fewer")
    net = clf(6, 4)

    def f(x, y):
        logits = net(x)
        return (logits, multiclass_recall(logits, y, num_classes=4, average="weighted"),
                multiclass_precision(logits, y, num_classes=4, average=None))

    g = torch.Generator().manual_seed(2)
    first = (torch.randn(10, 6, generator=g), torch.randperm(10, generator=g) % 4)
    later = [("all classes, batch 6", torch.randn(6, 6, generator=g), torch.randperm(6, generator=g) % 4),
             ("batch 1, label = its prediction (one class kept)", None, None),
             ("batch 3, labels all 0", torch.randn(3, 6, generator=g), torch.zeros(3, dtype=torch.long))]

    def run(fn, x, y):
        try:
            with torch.no_grad():
                return ("ok", [o.clone() for o in fn(x, y)])
        except Exception as e:  # noqa: BLE001
            return ("raise", f"{type(e).__name__}: {str(e).splitlines()[0][:120]}")

    x1 = torch.randn(1, 6, generator=g)
    with torch.no_grad():
        later[1] = (later[1][0], x1, net(x1).argmax(1))
    for setting in (False, True):
        torch._dynamo.reset()
        torch._dynamo.config.capture_dynamic_output_shape_ops = setting
        cf = torch.compile(f, backend="eager")
        print(f"-- setting={setting}: first call (every class) compiled:", run(cf, *first)[0])
        for name, x, y in later:
            e, c = run(f, x, y), run(cf, x, y)
            if e[0] == c[0] == "ok":
                eq = all(torch.equal(a, b) for a, b in zip(e[1], c[1]))
                print(f"   {name}: eager ok, compiled ok, equal {eq} (recall eager {float(e[1][1]):.4f})")
            else:
                print(f"   {name}: eager {e[0] if e[0] == 'ok' else e[1]}; compiled "
                      f"{c[0] if c[0] == 'ok' else c[1]}")
    torch._dynamo.config.capture_dynamic_output_shape_ops = False


def part3():
    print("== 3. macro accuracy in heldout31_rerun.py's side process (H31_FRESH=2)")
    import json
    import subprocess
    import tempfile
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    import heldout31_rerun as rr
    hand3 = [c for c in json.load(open(os.path.join(here, "heldout31_hand_edits.json")))["models"]
             ["torcheval:te_accuracy_macro_topk"]["candidates"]][0]
    work = tempfile.mkdtemp(prefix="h31repro_")
    env = dict(os.environ, H31_FRESH="2", PYTHONWARNINGS="ignore")
    for tag, cand, setting in (("head", None, ""), ("setting", None, "capture_dynamic_output_shape_ops"),
                               ("hand3", hand3, "")):
        d = rr.make_copy("torcheval", cand, os.path.join(work, tag))
        out = os.path.join(d, "out.pt")
        subprocess.run([sys.executable, rr.__file__, "--side", d, "torcheval:te_accuracy_macro_topk",
                        out, setting], env=env, capture_output=True, check=True)
        res = torch.load(out, weights_only=False)
        ks = [k for k in res if k.endswith("/compiled/grad")]
        none = [k for k in ks if res[k][0] == "ok" and not res[k][2]]
        ek = [k.replace("/compiled/", "/eager/") for k in ks]
        print(f"  {tag}: compiled calls with gradients {len(ks)}; with no gradient at all (no output "
              f"requiring grad) {len(none)}; eager calls with no gradient "
              f"{sum(1 for k in ek if res[k][0] == 'ok' and not res[k][2])}; outputs equal eager on "
              f"{sum(1 for k in ks if res[k][0] == 'ok' and all(torch.equal(a, b) for a, b in zip(res[k][1], res[k.replace('/compiled/', '/eager/')][1])))}")


def part4():
    print("== 4. macro accuracy: a compiled call that raises under torch.no_grad()")
    net = clf(8, 6)

    def f(x, y):
        logits = net(x)
        return (logits, multiclass_accuracy(logits, y, num_classes=6, average="macro"),
                multiclass_accuracy(logits, y, k=2))

    g = torch.Generator().manual_seed(4)
    x, y = torch.randn(8, 8, generator=g), torch.randint(0, 6, (8,), generator=g)
    for setting in (False, True):
        for outer in ("torch.no_grad()", "grad mode on"):
            torch._dynamo.reset()
            torch._dynamo.config.capture_dynamic_output_shape_ops = setting
            torch.set_grad_enabled(True)
            cf = torch.compile(f, backend="eager")
            try:
                if outer == "torch.no_grad()":
                    with torch.no_grad():
                        cf(x, torch.full_like(y, -1))
                else:
                    cf(x, torch.full_like(y, -1))
                raised = "returned"
            except Exception as e:  # noqa: BLE001
                raised = f"raised {type(e).__name__}: {str(e).splitlines()[0][:60]}"
            after = torch.is_grad_enabled()
            torch._dynamo.reset()
            out = torch.compile(f, backend="eager")(x.clone().requires_grad_(True), y)
            eager_after = f(x.clone().requires_grad_(True), y)[0].requires_grad
            print(f"  setting={setting}, labels of -1 called with {outer}: {raised}; after it "
                  f"torch.is_grad_enabled()={after}; a fresh compiled call's logits.requires_grad="
                  f"{out[0].requires_grad}; an eager call's={eager_after}")
    torch.set_grad_enabled(True)
    torch._dynamo.config.capture_dynamic_output_shape_ops = False


if __name__ == "__main__":
    print("torch", torch.__version__)
    part1()
    part2()
    part3()
    part4()
