"""What the reviews' shape advice states, checked on base (model_base.py) with no pt2bot code:
(a) the advice's Python block as printed (`Dim('batch')`, `Dim('size')` for dims 0, 2 and 3, no
bounds) passed to torch.export.export; (b) the same with size bounded below (min=4); (c) the
advice's mark_dynamic block compiled (backend eager) over the 4 shape cases of pt2bot.yml, counting
compiles."""
import importlib.util, warnings
import torch
from torch.export import Dim
warnings.filterwarnings("ignore")
spec = importlib.util.spec_from_file_location("m", "model_base.py"); mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
torch.manual_seed(0)
model = mod.AgeNet().eval()
args = (torch.rand(2, 3, 32, 32),)
kwargs = {}
for label, size in (("(a) as printed: Dim('size')", Dim('size')), ("(b) Dim('size', min=4)", Dim('size', min=4))):
    batch = Dim('batch')
    dynamic_shapes = {'images': {0: batch, 2: size, 3: size}}
    try:
        ep = torch.export.export(model, args, kwargs, dynamic_shapes=dynamic_shapes)
        outs = []
        for b, n in ((2, 32), (2, 48), (4, 32), (4, 48), (3, 40)):
            x = torch.rand(b, 3, n, n)
            outs.append(all(torch.equal(p, q) for p, q in zip(ep.module()(x), model(x))))
        print(label, "-> exports; exported == eager on (2,32) (2,48) (4,32) (4,48) (3,40):", outs)
    except Exception as e:
        print(label, "->", type(e).__name__, str(e).split("\n")[0][:300])
        for ln in str(e).split("\n")[1:4]:
            print("     ", ln[:300])
torch._dynamo.reset()
cnt = {"n": 0}
def backend(gm, ex):
    cnt["n"] += 1
    return gm.forward
compiled = torch.compile(model, backend=backend)
for b, n in ((2, 32), (2, 48), (4, 32), (4, 48)):
    images = torch.rand(b, 3, n, n)
    torch._dynamo.mark_dynamic(images, 0); torch._dynamo.mark_dynamic(images, 2); torch._dynamo.mark_dynamic(images, 3)
    compiled(images)
print("(c) mark_dynamic(images, 0/2/3), torch.compile over the 4 shape cases: compiles", cnt["n"])
