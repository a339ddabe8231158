"""usage: python gt_compare.py A.pt B.pt : bitwise comparison (NaN == NaN) of two gt_outputs runs"""
import sys, torch
a, b = torch.load(sys.argv[1]), torch.load(sys.argv[2])
def same(x, y):
    return x.shape == y.shape and x.dtype == y.dtype and torch.equal(torch.nan_to_num(x, 7.0, 8.0, 9.0), torch.nan_to_num(y, 7.0, 8.0, 9.0)) and torch.equal(x.isnan(), y.isnan())
nd = 0
for k in a:
    ra, rb = a[k], b[k]
    if ra["err"] or rb["err"]:
        msg = "both raise" if (ra["err"] and rb["err"]) else "ONE RAISES"
        print(f"{k}: {msg}: {ra['err']} / {rb['err']}"); nd += msg != "both raise"; continue
    outs = all(same(x, y) for x, y in zip(ra["out"], rb["out"]))
    mx = max(float((x.float() - y.float()).abs().nan_to_num(0).max()) for x, y in zip(ra["out"], rb["out"]))
    g = "n/a"
    if ra["grads"] is not None:
        ks = set(ra["grads"]) | set(rb["grads"])
        g = all(k2 in ra["grads"] and k2 in rb["grads"] and same(ra["grads"][k2], rb["grads"][k2]) for k2 in ks)
    nd += (not outs) or g is False
    print(f"{k}: outputs equal: {outs} (max abs diff {mx:.3g}); grads equal: {g}")
print("differing runs:", nd, "of", len(a))
