"""The cross-batch memory's self-comparison removal (pytorch_metric_learning/utils/
loss_and_miner_utils.py `not_self_comparisons`, lines 303-304) called directly and through a
CrossBatchMemory without a miner, head against each edit of those lines: the two the proofs
verified (line 304: a torch.where write; line 303, verified by the --matrix run only:
`if not torch.compiler.is_compiling() and e <= s:`) and the helper's hand edit (303-304 as one
torch.where). No pt2bot code.

The spec `pytorch-metric-learning:contrastive_xbm` mines its pairs with a PairMarginMiner whose
positive pairs are at distance > 0.2, so a self-comparison (distance 0) is never mined and the
wrap-around shift of line 304 cannot change its loss: this script checks the lines where the
shift does matter.

    /work/venvs/realcode/bin/python benchmarks/results/heldout17_xbm_direct.py \
        > benchmarks/results/heldout17_xbm_direct.log
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from typing import Any

PY = sys.executable
FILE = "pytorch_metric_learning/utils/loss_and_miner_utils.py"
EDITS = {
    "proof_304": (304, 304, ["        p_c.copy_(torch.where(p_c <= e - s, p_c + ref_size, p_c))"]),
    "proof_303_matrix": (303, 303, ["    if not torch.compiler.is_compiling() and e <= s:"]),
    "hand_303_304": (303, 304, ["    p_c = torch.where((e <= s) & (p_c <= e - s), p_c + ref_size, p_c)"]),
}


def run(pkgdir: str, out: str) -> None:
    sys.path.insert(0, pkgdir)
    import torch
    torch.set_num_threads(1)
    import pytorch_metric_learning as pml
    assert os.path.realpath(list(pml.__path__)[0]).startswith(os.path.realpath(pkgdir))
    from pytorch_metric_learning import losses
    from pytorch_metric_learning.utils import loss_and_miner_utils as lmu

    g = torch.Generator().manual_seed(3)
    results: dict[str, Any] = {}
    # direct: all pairs of a batch of size b against a memory of size m whose current batch
    # starts at queue index q (wrapping when q + b > m)
    direct = []
    for m, b, q in [(10, 4, 8), (10, 6, 6), (10, 4, 0), (12, 5, 9), (8, 8, 3), (16, 6, 13), (10, 3, 9)]:
        labels = torch.randint(0, 3, (b,), generator=g)
        mem = torch.randint(0, 3, (m,), generator=g)
        curr = torch.arange(q, q + b) % m
        mem[curr] = labels
        direct.append((f"m{m}_b{b}_q{q}", labels, mem, curr, m))

    def f(labels: Any, mem: Any, curr: Any, m: int) -> Any:
        it = lmu.get_all_pairs_indices(labels, mem)
        return lmu.remove_self_comparisons(it, curr, m)

    for mode in ("eager", "compiled"):
        torch._dynamo.reset()
        ff = torch.compile(f, backend="eager") if mode == "compiled" else f
        for name, labels, mem, curr, m in direct:
            results[f"direct/{name}/{mode}"] = [t.clone() for t in ff(labels, mem, curr, m)]

    # a CrossBatchMemory of NT-Xent with no miner: every positive pair against the memory counts
    class Step(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            torch.manual_seed(0)
            self.embed = torch.nn.Linear(8, 4)
            self.xbm = losses.CrossBatchMemory(losses.NTXentLoss(temperature=0.1),
                                               embedding_size=4, memory_size=10)

        def forward(self, x: Any, labels: Any) -> Any:
            self.xbm.reset_queue()
            e = self.embed(x)
            return torch.stack([self.xbm(ec, lc) for ec, lc in zip(e.chunk(3), labels.chunk(3))])

    model = Step().eval()
    inputs = []
    for i, b in enumerate([12, 15, 18, 21, 24, 9, 27, 12, 18, 24]):
        inputs.append((f"b{b}_{i}", torch.randn(b, 8, generator=g), torch.randint(0, 3, (b,), generator=g)))
    for mode in ("eager", "compiled"):
        torch._dynamo.reset()
        fn = torch.compile(model, backend="eager") if mode == "compiled" else model
        for name, x, lab in inputs:
            with torch.no_grad():
                results[f"xbm_ntxent/{name}/{mode}"] = [fn(x, lab).clone()]
    torch.save(results, out)


def same(a: Any, b: Any) -> bool:
    import torch
    return len(a) == len(b) and all(x.shape == y.shape and torch.equal(x, y) for x, y in zip(a, b))


def main(argv: list[str]) -> int:
    if argv and argv[0] == "--run":
        run(argv[1], argv[2])
        return 0
    import importlib.util

    import torch
    src = importlib.util.find_spec("pytorch_metric_learning").submodule_search_locations[0]
    work = tempfile.mkdtemp(prefix="h17xbm_")
    try:
        res = {}
        for tag in ["head"] + list(EDITS):
            d = os.path.join(work, tag)
            shutil.copytree(src, os.path.join(d, "pytorch_metric_learning"))
            if tag != "head":
                a, b, lines = EDITS[tag]
                path = os.path.join(d, FILE)
                text = open(path).read().splitlines(keepends=True)
                text[a - 1:b] = [ln + "\n" for ln in lines]
                open(path, "w").writelines(text)
            out = os.path.join(d, "out.pt")
            p = subprocess.run([PY, __file__, "--run", d, out], capture_output=True, text=True,
                               env=dict(os.environ, PYTHONWARNINGS="ignore"), timeout=1800)
            if p.returncode != 0:
                raise RuntimeError(p.stderr[-3000:])
            res[tag] = torch.load(out, weights_only=False)
        head = res["head"]
        for tag in EDITS:
            a, b, lines = EDITS[tag]
            print(f"== {tag}: {FILE}:{a}-{b} -> {lines}")
            for group in ("direct", "xbm_ntxent"):
                for mode in ("eager", "compiled"):
                    ks = [k for k in head if k.startswith(group + "/") and k.endswith("/" + mode)]
                    eq = [k for k in ks if same(head[k], res[tag][k])]
                    print(f"   {group} {mode}: {len(eq)} of {len(ks)} equal to head's {mode}")
                    for k in ks:
                        if k not in eq:
                            h, p_ = head[k], res[tag][k]
                            if group == "direct":
                                print(f"      DIFFER {k}: kept pairs head {[len(t) for t in h]} / "
                                      f"patched {[len(t) for t in p_]}")
                            else:
                                print(f"      DIFFER {k}: head {h[0].tolist()} / patched {p_[0].tolist()}")
        hk = [k for k in head if k.endswith("/compiled")]
        print(f"head compiled equal to head eager: {sum(same(head[k], head[k.replace('/compiled', '/eager')]) for k in hk)} of {len(hk)}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
