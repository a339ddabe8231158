"""Whether PR 2's early return (`(probas - 0.5).abs().min() > self.confident`, 0.4) is taken on a
random crop, with the initial weights and with cond_check's confident weights (CORAL biases +-6).

    python early_taken.py > early_taken.log
"""
import importlib, sys
import torch
sys.path.insert(0, ".")
h = importlib.import_module("model_fliptta")
for w in ("none", "confident"):
    torch.manual_seed(0); m = h.AgeNet().eval()
    if w == "confident":
        with torch.no_grad(): m.coral.coral_bias.copy_(torch.tensor([6., 6, 6, -6, -6, -6, -6]))
    x = torch.rand(2, 3, 32, 32)
    with torch.no_grad():
        p = torch.sigmoid(m.coral(m.features((x - 0.5) / 0.25)))
    print(w, "min |p-0.5| =", (p - 0.5).abs().min().item(), "early return taken:", bool((p - 0.5).abs().min() > 0.4))
