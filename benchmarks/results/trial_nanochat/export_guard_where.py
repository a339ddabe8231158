"""Where does export's upper bound on seq come from? torch.export with seq declared dynamic
(Dim('seq')), TORCH_LOGS=+dynamic set by the caller; the log's 'eval ... [guard added]' lines
name the user line. No pt2bot code."""
import sys, torch
torch.set_num_threads(1)
sys.path.insert(0, ".")
import pt2bot_models as pm
from torch.export import Dim
m = pm.tiny_gpt(sequence_len=32, vocab_size=64, n_layer=1, n_head=2, n_kv_head=1, n_embd=32, window_pattern="L")
inp = pm.logits_v64(3, 17)
try:
    torch.export.export(m, (), inp, dynamic_shapes={"idx": {0: Dim("batch"), 1: Dim("seq")}})
except Exception as ex:
    print(type(ex).__name__, str(ex)[:600])
