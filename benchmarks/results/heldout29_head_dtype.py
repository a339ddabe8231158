"""Why heldout29_rerun.log's six DIFFER results are head's, not the hand edit's: head compiled returns
the KS detector's capped Bonferroni p-value (min(1.0, ...) taking 1.0) as a float64 tensor where
head in eager returns Python's 1.0 (torch.as_tensor makes it float32), because dynamo traces the
numpy recursion after the .item() break into torch ops. No pt2bot code.

    /work/venvs/realcode/bin/python benchmarks/results/heldout29_head_dtype.py 2>/dev/null \
        > benchmarks/results/heldout29_head_dtype.log
"""
import os
import sys
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "real_code"))
import torch; torch.set_num_threads(1)
import models
sp = models.by_key()['torchdrift:td_ks_pvalue_pca']
torch.manual_seed(0); m, cases = sp.build(); m.eval()
g = torch.Generator().manual_seed(5)
cm = torch.compile(m, backend="eager")
for b, s in ((1, 0.3), (2, 1.0), (10, 1.0), (16, 1.0)):
    x = s * torch.randn(b, 10, generator=g)
    with torch.no_grad():
        pe = m(x)[1]; pc = cm(x)[1]
    print(b, "eager", pe, pe.dtype, "| compiled", pc, pc.dtype)
