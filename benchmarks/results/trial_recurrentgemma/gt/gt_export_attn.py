"""Ground truth, no pt2bot code: torch.export of LocalAttentionBlock with batch and seq
dynamic (seq=8 example, as pt2bot's first case; and seq=12), printing where torch adds the
guards on seq (TORCH_LOGS=dynamic-style via set_logs)."""
import sys, logging
sys.path.insert(0, sys.argv[1])
import torch
torch.set_num_threads(1)
torch._logging.set_logs(dynamic=logging.INFO)
import pt2bot_models as m
from torch.export import Dim
torch.manual_seed(0)
net = m.build_local_attention().eval()
for s in (8, 12):
  kw = m.attention_inputs(2, s)
  batch, seq = Dim("batch"), Dim("seq")
  try:
    torch.export.export(net, (), kw, dynamic_shapes={"x": {0: batch, 1: seq}, "segment_pos": {0: batch, 1: seq}})
    print(f"example seq={s}: export OK")
  except Exception as e:
    print(f"example seq={s}: export FAILED: {type(e).__name__}: {str(e)[:600]}")
