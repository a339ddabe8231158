"""Compare two gt_run.py outputs entry by entry (exact equality incl. NaN positions, then allclose)."""
import sys, torch
a, b = torch.load(sys.argv[1], weights_only=False), torch.load(sys.argv[2], weights_only=False)
def cmp(x, y):
    if x is None or y is None:
        return "same" if x is None and y is None else f"none-vs-tensor ({x is None},{y is None})"
    if x.shape != y.shape: return f"shape {tuple(x.shape)} vs {tuple(y.shape)}"
    if torch.equal(torch.nan_to_num(x, 7.0, 8.0, 9.0), torch.nan_to_num(y, 7.0, 8.0, 9.0)) and torch.equal(x.isnan(), y.isnan()):
        return "same"
    if torch.allclose(x, y, rtol=1e-4, atol=1e-5, equal_nan=True): return "close"
    return f"DIFF (maxabs {(x-y).abs().nan_to_num(0).max().item():.3g}, nan {int(x.isnan().sum())} vs {int(y.isnan().sum())}, nonfinite {int((~x.isfinite()).sum())} vs {int((~y.isfinite()).sum())})"
ndiff = 0
for k in a:
    ra, rb = a[k], b.get(k)
    if "error" in ra or "error" in rb:
        print(k, "A:", ra.get("error", "ok"), "| B:", rb.get("error", "ok")); ndiff += ra.get("error") != rb.get("error"); continue
    parts = ["out " + cmp(ra["out"], rb["out"])]
    if "pgrad" in ra:
        pd = [n for n in ra["pgrad"] if cmp(ra["pgrad"][n], rb["pgrad"][n]) not in ("same", "close")]
        ig = [n for n in ra["igrad"] if cmp(ra["igrad"][n], rb["igrad"].get(n)) not in ("same", "close")]
        parts.append(f"param grads differ: {len(pd)}{(' ' + str(pd[:4])) if pd else ''}")
        parts.append(f"input grads differ: {ig}")
        if pd: parts.append("e.g. " + cmp(ra["pgrad"][pd[0]], rb["pgrad"][pd[0]]))
    line = "; ".join(parts)
    bad = "DIFF" in line or "none-vs" in line or "shape" in line or ("pgrad" in ra and ("differ: 0" not in line or "differ: []" not in line))
    ndiff += bad
    z = ra["out"]
    print(("!! " if bad else "   ") + str(k), line, f"[A out: {int((z == 0).sum())} zeros, {int((~z.isfinite()).sum())} nonfinite of {z.numel()}]")
print("entries with a difference:", ndiff, "of", len(a))
