"""Compare two gt_fix_outputs.py result files (head vs patched): bitwise/NaN-aware equality per entry."""
import sys, torch
a, b = torch.load(sys.argv[1]), torch.load(sys.argv[2])
bad = 0
for k in a:
    for field in a[k]:
        x, y = a[k][field], b[k][field]
        if isinstance(x, dict):
            for n in x:
                eq = torch.equal(torch.nan_to_num(x[n], 7.0, 8.0, 9.0), torch.nan_to_num(y[n], 7.0, 8.0, 9.0)) and torch.equal(x[n].isnan(), y[n].isnan())
                if not eq: bad += 1; print("DIFF", k, field, n, (x[n]-y[n]).abs().nan_to_num().max().item(), "nan head/patched", x[n].isnan().sum().item(), y[n].isnan().sum().item())
        else:
            eq = torch.equal(x.isnan(), y.isnan()) and torch.equal(torch.nan_to_num(x, 7.0, 8.0, 9.0), torch.nan_to_num(y, 7.0, 8.0, 9.0))
            if not eq: bad += 1; print("DIFF", k, field, "maxabs", (x-y).abs().nan_to_num().max().item())
            else: print("equal", k, field, "nan:", x.isnan().any().item(), "inf:", x.isinf().any().item())
print("differences:", bad)
