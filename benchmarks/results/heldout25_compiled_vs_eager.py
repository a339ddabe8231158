"""Where head's own compiled results differ from its eager ones in heldout25_rerun.log (the same on
both sides, so not an edit's): poisson_lif_mlp 28 of 80 equal, receptive_field_lif 46, regularized_lif_cell
39. Runs the harness's head side (no pt2bot code) with H25_FRESH=4 and groups the differing results
by mode and by what each side returned.

    H25_FRESH=4 /work/venvs/realcode/bin/python benchmarks/results/heldout25_compiled_vs_eager.py \
        norse:poisson_lif_mlp norse:receptive_field_lif norse:regularized_lif_cell \
        > benchmarks/results/heldout25_compiled_vs_eager.log
"""
import os, sys, tempfile, collections
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import heldout25_rerun as R
for key in sys.argv[1:]:
    d = R.make_copy("norse", None, tempfile.mkdtemp())
    res, log = R.side(d, key, os.path.join(d, "out.pt"), "")
    c = collections.Counter()
    for k in res:
        if "/compiled/" not in k: continue
        e = res[k.replace("/compiled/", "/eager/")]; cc = res[k]
        if R.same(e, cc): continue
        desc = lambda r: r[0] if r[0] == "ok" else f"{r[0]} {r[1]}: {r[2][:200]}"
        c[(k.split("/",1)[1], desc(e), desc(cc) if not (e[0]==cc[0]=="ok") else "ok, " + R._describe(e, cc))] += 1
    print(key, R.breaks(log, "norse"))
    for x, n in c.items(): print("  ", n, x)
