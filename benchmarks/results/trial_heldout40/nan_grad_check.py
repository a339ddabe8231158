"""PR 2b's suggestion against head, eager, with gradients, on a batch with one NaN reading: which
gradient differs and where (no pt2bot code)."""
import importlib.util
import torch
torch.set_num_threads(1)


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


H = load("model_rescale.py", "h").BayesClassifier
F = load("model_rescale_fix.py", "f").BayesClassifier
torch.manual_seed(0)
h = H().eval()
f = F().eval()
f.load_state_dict(h.state_dict())
g = torch.Generator().manual_seed(7)
x = torch.randn(4, 12, generator=g)
x[1, 3] = float("nan")
for name, m in (("head", h), ("suggestion", f)):
    torch.manual_seed(1)
    xx = x.clone().requires_grad_(True)
    p, e = m(xx)
    (torch.nan_to_num(p, 0.0, 0.0, 0.0).sum() + torch.nan_to_num(e, 0.0, 0.0, 0.0).sum()).backward()
    print(f"{name}: outputs NaN rows {torch.isnan(p).any(-1).nonzero().flatten().tolist()}; "
          f"features.grad NaN entries {int(xx.grad.isnan().sum())} of {xx.grad.numel()} "
          f"(rows {sorted(set(xx.grad.isnan().nonzero()[:, 0].tolist()))}); parameter grads with NaN: "
          f"{ {n: int(q.grad.isnan().sum()) for n, q in m.named_parameters() if q.grad is not None and q.grad.isnan().any()} }")

# the mechanism: amax's backward with a NaN maximum, fed a zero gradient (what torch.where sends
# to `scale` when the test fails)
t = torch.tensor([[float("nan"), 1.0], [2.0, -3.0]], requires_grad=True)
t.abs().amax().backward(torch.tensor(0.0))
print(f"amax backward of [[nan, 1], [2, -3]].abs() fed 0: grad {t.grad.tolist()}")
t = torch.tensor([[0.5, 1.0], [2.0, -3.0]], requires_grad=True)
t.abs().amax().backward(torch.tensor(0.0))
print(f"amax backward of [[0.5, 1], [2, -3]].abs() fed 0: grad {t.grad.tolist()}")
