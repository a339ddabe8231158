"""PR 4's candidate was dropped for detr_r18_learned_aux_nested because "no tensor argument of
DETR.forward can hold values a check may refuse (... NaN ...)". The model's own inputs reach the
check: a NaN pixel in `images` makes PR 4's head raise. No pt2bot code."""
import sys
sys.path.insert(0, sys.argv[1])
import torch
torch.set_num_threads(1)
import pt2bot_models as P
torch.manual_seed(0)
m = P.NestedDETR(backbone="resnet18", position_embedding="learned", hidden_dim=64, enc_layers=2, dec_layers=2,
                 nheads=4, dim_feedforward=64, num_queries=8, aux_loss=True).eval()
kw = P.padded_images(2, 64, 64)
for label, v in (("clean", None), ("one NaN pixel", float("nan")), ("one +inf pixel", float("inf"))):
    k = {n: t.clone() for n, t in kw.items()}
    if v is not None:
        k["images"][0, 1, 10, 10] = v
    try:
        with torch.no_grad():
            m(**k)
        print(f"{label}: returns")
    except Exception as e:  # noqa: BLE001
        print(f"{label}: raised {type(e).__name__}: {e}")
