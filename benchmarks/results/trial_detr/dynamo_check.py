"""Check pt2bot's break / recompile / export claims with dynamo directly (no pt2bot code).

python dynamo_check.py SRC_DIR MODEL MARK   (MARK 1: mark_dynamic the declared dims, 0: none,
2: as 1 but batch of a batched-tensor input with maybe_mark_dynamic, since DETR's forward pins it
and mark_dynamic then raises ConstraintViolationError on every call)
Run with TORCH_LOGS=graph_breaks,recompiles; eager backend; one thread.  The same models,
inputs and cases (in the same order) as pt2bot.yml, built from SRC_DIR's pt2bot_models.py.
"""
import itertools
import sys
import traceback

src, name, mark = sys.argv[1], sys.argv[2], sys.argv[3] in ("1", "2")
relax_batch = sys.argv[3] == "2"
sys.path.insert(0, src)
import torch  # noqa: E402

torch.set_num_threads(1)
import pt2bot_models as P  # noqa: E402
from models.transformer import Transformer  # noqa: E402

R18 = dict(backbone="resnet18", position_embedding="sine", hidden_dim=32, enc_layers=1,
           dec_layers=1, nheads=2, dim_feedforward=64, num_queries=5, aux_loss=False)
CFG = {
    "detr_r18_sine": (lambda: P.tiny_detr(**R18), P.images,
                      dict(batch=[2, 3], height=[64, 96], width=[64, 128]), ["batch", "height", "width"]),
    "detr_r18_learned_aux_nested": (
        lambda: P.NestedDETR(backbone="resnet18", position_embedding="learned", hidden_dim=64,
                             enc_layers=2, dec_layers=2, nheads=4, dim_feedforward=64,
                             num_queries=8, aux_loss=True),
        P.padded_images, dict(batch=[2, 3], height=[64, 96], width=[64, 128]), ["batch", "height", "width"]),
    "detr_r50_dc5": (lambda: P.tiny_detr(backbone="resnet50", dilation=True, hidden_dim=32, enc_layers=1,
                                         dec_layers=1, nheads=2, dim_feedforward=64, num_queries=5,
                                         aux_loss=True),
                     P.images, dict(batch=[2, 3], height=[64], width=[64, 96]), ["batch", "width"]),
    "detr_segm_r50": (lambda: P.tiny_detr(backbone="resnet50", masks=True, hidden_dim=128, nheads=8,
                                          enc_layers=1, dec_layers=1, dim_feedforward=128,
                                          num_queries=5, aux_loss=False),
                      P.images, dict(batch=[2, 3], height=[64], width=[64, 96]), ["batch", "width"]),
    "transformer": (lambda: Transformer(d_model=32, nhead=2, num_encoder_layers=1, num_decoder_layers=2,
                                        dim_feedforward=64, dropout=0.0, return_intermediate_dec=True),
                    P.transformer_inputs, dict(batch=[2, 3], fh=[2, 3], fw=[3, 4]), ["batch", "fh", "fw"]),
}
AXES = {  # input -> {axis: dim}
    "samples": {0: "batch", 2: "height", 3: "width"},
    "images": {0: "batch", 2: "height", 3: "width"},
    "mask": {0: "batch", 1: "height", 2: "width"},
    "src": {0: "batch", 2: "fh", 3: "fw"},
    "pos_embed": {0: "batch", 2: "fh", 3: "fw"},
}
AXES_T = {"mask": {0: "batch", 1: "fh", 2: "fw"}}

build, make, shapes, dyn = CFG[name]
torch.manual_seed(0)
model = build().eval()
graphs = []


def backend(gm, example_inputs):
    graphs.append(len(gm.graph.nodes))
    return gm.forward


compiled = torch.compile(model, backend=backend)
keys = list(shapes)
cases = [dict(zip(keys, v)) for v in itertools.product(*[shapes[k] for k in keys])]
axes = dict(AXES, **(AXES_T if name == "transformer" else {}))
print(f"== {name} mark_dynamic={mark} cases={cases}", flush=True)
for case in cases:
    kw = make(**case)
    if mark:
        for k, t in kw.items():
            for ax, d in axes.get(k, {}).items():
                if d in dyn and t.dim() > ax:
                    if relax_batch and k == "samples" and d == "batch":
                        torch._dynamo.maybe_mark_dynamic(t, ax)
                    else:
                        torch._dynamo.mark_dynamic(t, ax)
    before = len(graphs)
    try:
        with torch.no_grad():
            out = compiled(**kw)
            ref = model(**kw)
        flat_o = [v for v in torch.utils._pytree.tree_leaves(out) if torch.is_tensor(v)]
        flat_r = [v for v in torch.utils._pytree.tree_leaves(ref) if torch.is_tensor(v)]
        same = all(torch.equal(a, b) for a, b in zip(flat_o, flat_r))
        print(f"case {case}: new graphs {len(graphs) - before}, outputs equal to eager: {same}", flush=True)
    except Exception as e:  # noqa: BLE001
        print(f"case {case}: raised {type(e).__name__}: {str(e).splitlines()[0][:300]}", flush=True)
print(f"total graphs compiled: {len(graphs)}; nodes per graph: {graphs}")

# export with every declared dim dynamic (Dim), then with Dim.AUTO
from torch.export import Dim  # noqa: E402

kw = make(**cases[0])
for kind in ("Dim", "AUTO"):
    dims = {d: Dim(d) for d in dyn}
    ds = {}
    for k, t in kw.items():
        spec = {}
        for ax, d in axes.get(k, {}).items():
            if d in dyn and t.dim() > ax:
                spec[ax] = dims[d] if kind == "Dim" else Dim.AUTO
        ds[k] = spec or None
    try:
        ep = torch.export.export(model, (), kw, dynamic_shapes=ds)
        print(f"export ({kind}): OK; range constraints: {ep.range_constraints}")
        for case in cases:
            k2 = make(**case)
            try:
                with torch.no_grad():
                    o = ep.module()(**k2)
                print(f"  exported program on {case}: runs")
            except Exception as e:  # noqa: BLE001
                print(f"  exported program on {case}: {type(e).__name__}: {str(e).splitlines()[0][:200]}")
    except Exception as e:  # noqa: BLE001
        msg = str(e)
        print(f"export ({kind}): {type(e).__name__}: " + "\n    ".join(msg.splitlines()[:12])[:2500])
