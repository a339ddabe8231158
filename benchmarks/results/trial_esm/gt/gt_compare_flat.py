import sys, torch
a, b = torch.load(sys.argv[1]), torch.load(sys.argv[2]); bad = 0; n = 0
for k in a:
    for f in a[k]:
        n += 1
        x, y = a[k][f], b[k][f]
        if not (x.shape == y.shape and torch.equal(x.isnan(), y.isnan()) and torch.allclose(x.nan_to_num(), y.nan_to_num(), atol=0, rtol=0)):
            bad += 1; print("DIFF", k, f, "maxabs", (x - y).abs().nan_to_num().max().item() if x.shape == y.shape else (x.shape, y.shape))
print(f"{n} tensors compared, {bad} differ (bitwise)")
