"""Independent check (no pt2bot code) of the fix pt2bot verified on the trial's PR (clip-freq-loss):
`freq = torch.where(freq > self.max_ratio * pix, freq * (self.max_ratio * pix / freq).detach(), freq)`
for `if freq > self.max_ratio * pix: freq = freq * (self.max_ratio * pix / freq).detach()`.

head (model_clip_freq_loss.py) and the fix (the same file with the suggestion applied) are built
with seed 0 and run eager and compiled (torch.compile, backend eager, one compile per side and
scenario, batch 2 then 4 then 8), forward and backward of the loss, on scenarios:
  plain      the model as configured (ffl_weight 1): the cap is never taken
  capped     ffl_weight 100: the cap is taken (the PR's own branch, which no shape case of the
             review took)
  identity   the last conv zero-initialized (the denoiser starts as the identity, a common
             initialization) and a batch of clean images (noise level 0): out == clean exactly,
             so freq == pix == 0 and the fix's untaken branch computes 0 * (0 / 0)
  w0_equal   every weight 0 and noisy == clean: out == clean as well
The same for a hand edit (`hand`, NEW2 below) that selects a detached scale instead of the value.
Prints, per scenario and side, whether the loss and every gradient equal head's (NaN positions too) and how
many gradients hold NaN on each side.
"""
import os
import sys
import types

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = open(os.path.join(HERE, "model_clip_freq_loss.py")).read()
OLD = ("        if freq > self.max_ratio * pix:\n"
       "            freq = freq * (self.max_ratio * pix / freq).detach()\n")
NEW = ("        freq = torch.where(freq > self.max_ratio * pix, freq * (self.max_ratio * pix / freq).detach(), freq)\n")
assert OLD in SRC


def load(name, src):
    m = types.ModuleType(name)
    exec(compile(src, name + ".py", "exec"), m.__dict__)
    return m


# a hand edit that keeps the division out of the gradient: the scale (1 where the cap is not
# taken) is selected and detached before it multiplies freq
NEW2 = ("        freq = freq * torch.where(freq > self.max_ratio * pix, self.max_ratio * pix / freq,\n"
        "                                  torch.ones_like(freq)).detach()\n")
SIDES = {"head": load("head", SRC), "fix": load("fix", SRC.replace(OLD, NEW)),
         "hand": load("hand", SRC.replace(OLD, NEW2))}


def build(mod, scenario):
    torch.manual_seed(0)
    m = mod.Denoiser(ffl_weight=100.0 if scenario == "capped" else 1.0)
    if scenario == "identity":
        torch.nn.init.zeros_(m.tail.weight)
        torch.nn.init.zeros_(m.tail.bias)
    if scenario == "w0_equal":
        for p in m.parameters():
            torch.nn.init.zeros_(p)
    return m


def inputs(scenario, b):
    g = torch.Generator().manual_seed(b)
    clean = torch.rand(b, 3, 32, 32, generator=g)
    if scenario in ("identity", "w0_equal"):
        return clean.clone(), clean
    return clean + 0.1 * torch.randn(b, 3, 32, 32, generator=g), clean


def run(side, scenario, compiled):
    torch._dynamo.reset()
    m = build(SIDES[side], scenario)
    fn = torch.compile(m, backend="eager") if compiled else m
    res = []
    for b in (2, 4, 8):
        m.zero_grad(set_to_none=True)
        noisy, clean = inputs(scenario, b)
        out, loss = fn(noisy, clean)
        loss.backward()
        res.append((b, loss.detach(), [p.grad.clone() for p in m.parameters()]))
    return res


def same(a, b):
    return a.shape == b.shape and torch.equal(a.isnan(), b.isnan()) and torch.equal(
        torch.nan_to_num(a, 0.0), torch.nan_to_num(b, 0.0))


torch.set_num_threads(1)
for scenario in ("plain", "capped", "identity", "w0_equal"):
    for compiled in (False, True):
      h = run("head", scenario, compiled)
      for side in ("fix", "hand"):
        f = run(side, scenario, compiled)
        for (b, hl, hg), (_, fl, fg) in zip(h, f):
            nh = sum(bool(g.isnan().any()) for g in hg)
            nf = sum(bool(g.isnan().any()) for g in fg)
            eq_g = sum(same(x, y) for x, y in zip(hg, fg))
            print(f"{scenario:9s} {side:4s} {'compiled' if compiled else 'eager':8s} batch {b}: loss head {hl.item():.6g} "
                  f"{side} {fl.item():.6g} equal {same(hl, fl)}; gradients equal {eq_g} of {len(hg)}; "
                  f"gradients with NaN: head {nh}, {side} {nf}")

# graph breaks of each side (torch._dynamo.explain on the configured batch 2): the library's own
# break at focal_frequency_loss.py:84 stays on every side; the PR's at line 36 only on head
for side in ("head", "fix", "hand"):
    torch._dynamo.reset()
    m = build(SIDES[side], "plain")
    ex = torch._dynamo.explain(m)(*inputs("plain", 2))
    where = sorted({f"{os.path.basename(r.user_stack[-1].filename)}:{r.user_stack[-1].lineno}"
                    for r in ex.break_reasons if r.user_stack})
    print(f"explain {side}: {ex.graph_count} graphs, {ex.graph_break_count} breaks at {where}")
