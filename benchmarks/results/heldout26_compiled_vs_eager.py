"""Where head's own compiled results differ from its eager ones in heldout26_rerun.log (the same on
both sides, so not an edit's): spline_ar_density 72 of 80 equal, quadratic_spline_inverse 60,
elementwise_stack 78, maf_density 76, composed_flow 72 (wgan_gp_penalty 80 of 80: not run here). Runs
the harness's head side (no pt2bot code) with H26_FRESH=4 and groups the differing results by
mode and by what each side returned.

    H26_FRESH=4 /work/venvs/realcode/bin/python benchmarks/results/heldout26_compiled_vs_eager.py \
        flowtorch:spline_ar_density flowtorch:quadratic_spline_inverse flowtorch:elementwise_stack \
        flowtorch:maf_density flowtorch:composed_flow \
        > benchmarks/results/heldout26_compiled_vs_eager.log
"""
import os, sys, tempfile, collections
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import heldout26_rerun as R
for key in sys.argv[1:]:
    pkg = R.models_package(key)
    d = R.make_copy(pkg, None, tempfile.mkdtemp())
    res, log = R.side(d, key, os.path.join(d, "out.pt"), "")
    c = collections.Counter()
    names = collections.defaultdict(list)
    for k in res:
        if "/compiled/" not in k: continue
        e = res[k.replace("/compiled/", "/eager/")]; cc = res[k]
        if R.same(e, cc): continue
        desc = lambda r: r[0] if r[0] == "ok" else f"{r[0]} {r[1]}: {r[2][:200]}"
        g = (k.split("/",1)[1], desc(e), desc(cc) if not (e[0]==cc[0]=="ok") else "ok, " + R._describe(e, cc))
        c[g] += 1
        names[g].append(k.split("/")[0])
    print(key, R.breaks(log, pkg))
    for x, n in c.items(): print("  ", n, x, "inputs:", ", ".join(names[x][:8]))
