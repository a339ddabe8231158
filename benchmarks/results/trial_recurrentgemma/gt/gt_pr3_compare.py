"""Compares the pickles of gt_pr3_fix.py: head eager vs fix eager / fix compiled."""
import sys, pickle, torch
for scale in sys.argv[1:]:
  H = pickle.load(open(f"/tmp/fh-rg/gt/pr3_pr3-softcap_eager_{scale}.pkl", "rb"))
  for k, (out, g) in H.items():
    # head's raw max |logit| is not returned; the soft-capped output is; report it
    print(f"scale {scale} case b,s={k}: head eager max|out|={out.abs().max().item():.3f}")
  for lab in ("eager", "compiled"):
    F = pickle.load(open(f"/tmp/fh-rg/gt/pr3_pr3-fix_{lab}_{scale}.pkl", "rb"))
    for k in H:
      if isinstance(F[k], str): print(f"  fix {lab} {k}: RAISED {F[k]}"); continue
      (ho, hg), (fo, fg) = H[k], F[k]
      od = (ho - fo).abs().max().item()
      gd = max((hg[n] - fg[n]).abs().max().item() for n in hg) if set(hg) == set(fg) else float('nan')
      print(f"  fix {lab} {k}: max|out diff|={od:.2e}, max|grad diff|={gd:.2e}")
