"""What PTC201's verified edit changes in training: tabtransformer_classifier (models.py), one
compiled training step with AdamW (weight_decay 0.01) on the spec's first case (no missing value),
head's package against a copy with the verified edit at tab_transformer_pytorch.py:219. Head's
`special_token_embed.weight` gets no gradient, so AdamW skips it; the edit's compiled code gives
it an all-zero gradient, so AdamW decays it. Everything else is equal.

    /work/venvs/realcode/bin/python benchmarks/results/heldout27_zero_grad_check.py
"""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
EDIT = "            if torch.compiler.is_compiling() or is_special_token.any():\n"


def side(pkgdir: str) -> None:
    sys.path.insert(0, pkgdir)
    sys.path.insert(0, os.path.join(os.path.dirname(HERE), "real_code"))
    import random

    import torch
    torch.set_num_threads(1)
    import models
    import tab_transformer_pytorch as ttp
    assert ttp.__file__.startswith(pkgdir), ttp.__file__
    torch.manual_seed(0)
    random.seed(0)
    model, cases = models.by_key()["tab-transformer-pytorch:tabtransformer_classifier"].build()
    before = {k: v.detach().clone() for k, v in model.named_parameters()}
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    f = torch.compile(model, backend="eager")
    f(*cases[0][0]).backward()
    g = model.tt.special_token_embed.weight.grad
    print("special_token_embed.weight.grad:", None if g is None else f"zeros {tuple(g.shape)}, any nonzero {bool(g.any())}")
    opt.step()
    moved = [k for k, v in model.named_parameters() if not torch.equal(v, before[k])]
    d = (model.tt.special_token_embed.weight - before["tt.special_token_embed.weight"]).abs().max()
    print(f"after one AdamW step: {len(moved)} of {len(before)} parameters moved; "
          f"special_token_embed.weight moved: {'tt.special_token_embed.weight' in moved} (max |change| {float(d):.3g})")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        side(sys.argv[1])
        raise SystemExit(0)
    import importlib.util
    src = importlib.util.find_spec("tab_transformer_pytorch").submodule_search_locations[0]
    work = tempfile.mkdtemp(prefix="h27zg_")
    try:
        for name in ("head", "patched"):
            d = os.path.join(work, name)
            shutil.copytree(src, os.path.join(d, "tab_transformer_pytorch"))
            if name == "patched":
                p = os.path.join(d, "tab_transformer_pytorch", "tab_transformer_pytorch.py")
                lines = open(p).readlines()
                assert lines[218].strip() == "if is_special_token.any():", lines[218]
                lines[218] = EDIT
                open(p, "w").writelines(lines)
            print(f"== {name}", flush=True)
            r = subprocess.run([sys.executable, __file__, d], capture_output=True, text=True)
            print(r.stdout, end="", flush=True)
            if r.returncode:
                print(r.stderr[-2000:])
    finally:
        shutil.rmtree(work, ignore_errors=True)
