import sys, importlib.util, torch
torch.set_num_threads(1)
torch._dynamo.config.capture_dynamic_output_shape_ops = (sys.argv[1] == "on")
spec = importlib.util.spec_from_file_location("m", "model_trace_level.py"); mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
torch.manual_seed(0); m = mod.SpectralMaskEnhancer().eval()
c = torch.compile(m, backend="eager")
g = torch.Generator().manual_seed(3)
for b, t in [(2, 16), (4, 16), (4, 32), (3, 20), (1, 8)]:
    re, im = torch.randn(b, 33, t, generator=g), torch.randn(b, 33, t, generator=g)
    with torch.no_grad():
        e = m(re, im)
        try:
            o = c(re, im); print((b, t), "equal", all(torch.equal(x, y) for x, y in zip(e, o)))
        except Exception as ex:
            print((b, t), "compiled raised", type(ex).__name__, " ".join(str(ex).split())[:160])
