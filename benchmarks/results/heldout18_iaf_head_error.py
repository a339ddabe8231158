"""Why pyro-ppl:iaf_planar_flows is a head_error in the single-case run and not with the matrix.

pyro's Planar, Radial and Sylvester transforms keep the last (x, y) in `_cached_x_y` (a tuple)
and the log-det of that call in `_cached_logDetJ` (None as built). The proof puts back every
module's Python flags and numbers as built before each call, None included
(pt2bot/smoke/inputs.py `restore_state`, `_SCALARS`), but not other Python objects such as that
tuple; and it calls eager and compiled on the same input tensors. Single case, the eager call on
case 0 leaves (x, y) of case 0 cached; `_cached_logDetJ` is set back to None; the break pass on
the same case 0 tensors hits the (x, y) cache and reads the log-det None. With the matrix the
eager calls end on case 1, so case 0 misses the cache. The same in plain eager, no pt2bot code:

    /work/venvs/realcode/bin/python benchmarks/results/heldout18_iaf_head_error.py
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "real_code"))
import models  # noqa: E402
import torch  # noqa: E402

sp = models.by_key()["pyro-ppl:iaf_planar_flows"]
torch.manual_seed(0)
m, cases = sp.build()
m.eval()
x = cases[0][0][0]
with torch.no_grad():
    m(x)
    for mod in m.modules():   # what a put-back of the None-valued attributes as built does
        if "_cached_logDetJ" in vars(mod):
            mod._cached_logDetJ = None
    try:
        m(x)
        print("second eager call on the same input tensor: ok")
    except TypeError as e:
        print(f"second eager call on the same input tensor: TypeError: {e}")
    m(x.clone())
    print("the same values in a new tensor: ok")
