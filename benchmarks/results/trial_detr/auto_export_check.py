"""detr_r50_dc5: export with width Dim.AUTO (batch static) and run on widths not multiples of 16."""
import sys
sys.path.insert(0, sys.argv[1])
import torch
torch.set_num_threads(1)
import pt2bot_models as P
from torch.export import Dim
torch.manual_seed(0)
m = P.tiny_detr(backbone="resnet50", dilation=True, hidden_dim=32, enc_layers=1, dec_layers=1, nheads=2,
                dim_feedforward=64, num_queries=5, aux_loss=True).eval()
ep = torch.export.export(m, (), P.images(2, 64, 64), dynamic_shapes={"samples": {3: Dim.AUTO}})
print("export, width Dim.AUTO:", ep.range_constraints)
for w in (17, 70, 100, 801):
    k2 = P.images(2, 64, w)
    with torch.no_grad():
        ref = m(**k2)
        try:
            out = ep.module()(**k2)
            print(f"  width {w}: runs; equal to eager: {all(torch.equal(out[k], ref[k]) for k in ('pred_logits', 'pred_boxes'))}")
        except Exception as e:  # noqa: BLE001
            print(f"  width {w}: refused: {type(e).__name__}: {str(e).splitlines()[0][:150]}")
