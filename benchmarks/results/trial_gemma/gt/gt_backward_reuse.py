"""Does head's own decoder fail backward when the same input dict (its KV caches) is reused
for a second call? (no pt2bot code)  usage: python gt_backward_reuse.py REPO"""
import sys; sys.path.insert(0, sys.argv[1])
import torch; torch.set_num_threads(1)
import pt2bot_models as P
m = P.build_decoder()
for reuse in (False, True):
    inp = P.decoder_inputs(2, 4)
    try:
        for call in range(2):
            i = inp if reuse else P.decoder_inputs(2, 4)
            i["hidden_states"] = i["hidden_states"].clone().requires_grad_(True)
            m.zero_grad(); m(**i).sum().backward()
        print(f"reuse inputs={reuse}: two forward+backward calls OK")
    except Exception as e:
        print(f"reuse inputs={reuse}: {type(e).__name__}: {str(e)[:120]}")
