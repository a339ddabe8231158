"""Which frames dynamo compiles and which it skips on PR 2's head (detr_r18_sine, one case);
no pt2bot code.  TORCH_LOGS=+dynamo, filtered for frame starts, skips and breaks."""
import sys
sys.path.insert(0, sys.argv[1])
import torch
torch.set_num_threads(1)
import pt2bot_models as P
torch.manual_seed(0)
m = P.tiny_detr(backbone="resnet18", position_embedding="sine", hidden_dim=32, enc_layers=1, dec_layers=1,
                nheads=2, dim_feedforward=64, num_queries=5, aux_loss=False).eval()
c = torch.compile(m, backend="eager")
with torch.no_grad():
    c(**P.images(2, 64, 64))
from torch._dynamo.utils import counters
print("counters[frames]:", dict(counters["frames"]))
print("counters[graph_break]:", {k[:120]: v for k, v in counters["graph_break"].items()})
