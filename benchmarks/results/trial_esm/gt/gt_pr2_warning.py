"""PR2 ground truth: a mostly-masked batch; does head warn in eager and compiled, does the patched code?"""
import os, sys, logging
sys.path.insert(0, os.getcwd())
import torch
torch.set_num_threads(1)
logging.basicConfig(level=logging.WARNING, format="LOG %(name)s: %(message)s")
import pt2bot_fixtures as f
torch.manual_seed(0)
m = f.tiny_esm2().eval()
kw = f.padded_tokens(2, 16)
kw["tokens"][:, 1:12] = m.mask_idx  # 11 of 15 real tokens masked in row 0
with torch.no_grad():
    print("eager call:", flush=True); m(**kw)
    print("compiled call (eager backend):", flush=True); torch.compile(m, backend="eager")(**kw)
