"""Re-run, with no pt2bot code, of the suggestion pt2bot verified on mamba-minimal (johnma2006/mamba-minimal
at 03de542, its model.py copied as head_model.py, and as fixed_model.py with the suggestion applied by hand).
Printed at the session of trial_mamba_minimal.md: "max abs diff, normal inputs: 0.0 | with deltas > 10: 0.0 fullgraph
compiled OK" (torch 2.13.0+cpu)."""
import torch, head_model, fixed_model
torch.manual_seed(0)
args = head_model.ModelArgs(d_model=32, n_layer=2, vocab_size=100)
h = head_model.Mamba(args); f = fixed_model.Mamba(args); f.load_state_dict(h.state_dict())
fc = torch.compile(f, fullgraph=True, backend="eager")
worst = 0.0
for b, l in [(2, 16), (4, 32), (1, 7), (3, 5)]:
    ids = torch.randint(0, 100, (b, l))
    with torch.no_grad():
        eh, ef, cf = h(ids), f(ids), fc(ids)
    worst = max(worst, (eh - ef).abs().max().item(), (eh - cf).abs().max().item())
# a step size above 10: scale dt_proj's bias so softplus gives large deltas, on both
for m in (h, f):
    for layer in m.layers:
        layer.mixer.dt_proj.bias.data += 20.0
ids = torch.randint(0, 100, (2, 16))
with torch.no_grad():
    eh, ef = h(ids), f(ids)
print("max abs diff, normal inputs:", worst, "| with deltas > 10:", (eh - ef).abs().max().item(), "fullgraph compiled OK")
