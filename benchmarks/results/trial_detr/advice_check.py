"""Checks pt2bot's shape advice on main with torch alone (no pt2bot code). Run from DETR's main.
1. the `torch.compile(model, dynamic=True)` advice: compiles over the matrix, against the config's
   mark_dynamic (pt2bot: "compiles over the matrix: 1 -> 2" and "2 -> 3" with dynamic=True);
2. mark_dynamic with the advised min=33 (pt2bot's tried "mark_dynamic" raised
   "not simple sympy type");
3. detr_r50_dc5's advised export, `width = 16*_width`, on widths that are and are not multiples
   of 16, against eager."""
import itertools, sys
sys.path.insert(0, sys.argv[1])
import torch
torch.set_num_threads(1)
import pt2bot_models as P

graphs = []


def backend(gm, ex):
    graphs.append(1)
    return gm.forward


def cases(shapes):
    keys = list(shapes)
    return [dict(zip(keys, v)) for v in itertools.product(*[shapes[k] for k in keys])]


NESTED = dict(backbone="resnet18", position_embedding="learned", hidden_dim=64, enc_layers=2, dec_layers=2,
              nheads=4, dim_feedforward=64, num_queries=8, aux_loss=True)
R18 = dict(backbone="resnet18", position_embedding="sine", hidden_dim=32, enc_layers=1, dec_layers=1,
           nheads=2, dim_feedforward=64, num_queries=5, aux_loss=False)
M = dict(batch=[2, 3], height=[64, 96], width=[64, 128])
for label, build, make in (("detr_r18_learned_aux_nested", lambda: P.NestedDETR(**NESTED), P.padded_images),
                           ("detr_r18_sine", lambda: P.tiny_detr(**R18), P.images)):
    torch.manual_seed(0)
    model = build().eval()
    for how in ("config marks (mark_dynamic batch, height, width)", "dynamic=True, no marks",
                "mark_dynamic height/width min=33 (the advice's range)"):
        torch._dynamo.reset(); graphs.clear()
        c = torch.compile(model, backend=backend, dynamic=True if how.startswith("dynamic=True") else None)
        err = None
        for case in cases(M):
            kw = make(**case)
            if how.startswith("config"):
                for t in kw.values():
                    for ax in ([0, 2, 3] if t.dim() == 4 else [0, 1, 2]):
                        (torch._dynamo.maybe_mark_dynamic if (ax == 0 and label == "detr_r18_sine")
                         else torch._dynamo.mark_dynamic)(t, ax)
            elif how.startswith("mark_dynamic"):
                for t in kw.values():
                    for ax in ([2, 3] if t.dim() == 4 else [1, 2]):
                        torch._dynamo.mark_dynamic(t, ax, min=33)
            try:
                with torch.no_grad():
                    c(**kw)
            except Exception as e:  # noqa: BLE001
                err = f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"
                break
        print(f"{label}: {how}: {len(graphs)} compiles over the 8 cases" + (f"; raised {err}" if err else ""))

# 3. detr_r50_dc5: the advised export
from torch.export import Dim
torch.manual_seed(0)
m = P.tiny_detr(backbone="resnet50", dilation=True, hidden_dim=32, enc_layers=1, dec_layers=1, nheads=2,
                dim_feedforward=64, num_queries=5, aux_loss=True).eval()
kw = P.images(2, 64, 64)
_w = Dim("_width")
ep = torch.export.export(m, (), kw, dynamic_shapes={"samples": {3: 16 * _w}})
print("detr_r50_dc5: export with the advised width = 16*_width: OK;", ep.range_constraints)
for w in (64, 80, 96, 70, 100, 801):
    k2 = P.images(2, 64, w)
    with torch.no_grad():
        ref = m(**k2)
        try:
            out = ep.module()(**k2)
            print(f"  width {w}: exported program runs; equal to eager: "
                  f"{all(torch.equal(out[k], ref[k]) for k in ('pred_logits', 'pred_boxes'))}")
        except Exception as e:  # noqa: BLE001
            print(f"  width {w}: exported program refuses ({type(e).__name__}: {str(e).splitlines()[0][:120]}); eager runs")
for lo in (17, 64):
    try:
        torch.export.export(m, (), kw, dynamic_shapes={"samples": {3: Dim("width", min=lo)}})
        print(f"detr_r50_dc5: export with width = Dim(min={lo}): OK")
    except Exception as e:  # noqa: BLE001
        print(f"detr_r50_dc5: export with width = Dim(min={lo}): {type(e).__name__}: " +
              " | ".join(str(e).splitlines()[:4])[:600])
