"""PTC110 at clip/model.py:186 (`self.attn_mask = self.attn_mask.to(dtype=x.dtype, ...)` in
compiled code): does it recompile? No pt2bot code. Calls a compiled encode_text three times,
the model in float32 (as configured) and in float16 as clip.load builds it (clip.model.
convert_weights: attn_mask is a plain attribute, not a buffer, so it stays float32 and the first
call stores a new float16 tensor on the module).
TORCH_LOGS=recompiles shows each recompile."""
import sys, os
import torch
torch.set_num_threads(1)
sys.path.insert(0, os.getcwd())
import pt2bot_models as m

from clip.model import convert_weights
for dtype in (torch.float32, torch.float16):
    torch._dynamo.reset()
    model = m.EncodeText("vit", 16, 16).eval()
    if dtype == torch.float16:
        convert_weights(model)
    n = {"graphs": 0}
    def be(gm, ex):
        n["graphs"] += 1
        return gm.forward
    f = torch.compile(model, backend=be)
    for i in range(3):
        t = m.tokens(3, 16, seed=i)
        with torch.no_grad():
            f(t)
        print(f"{dtype}: call {i + 1}: graphs compiled so far {n['graphs']}; attn_mask dtype now "
              f"{model.clip.transformer.resblocks[0].attn_mask.dtype}", flush=True)
