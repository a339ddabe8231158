"""PR 1 (f69a9bc reverted): does head's AttentionPool2d give base's outputs, and what does it cost?
No pt2bot code. Loads clip/model.py from two git refs as separate modules; same weights
(state_dict copied), same inputs; eager and torch.compile(backend="eager"); counts aten ops in
the captured graph. Usage (from the CLIP checkout): python pr1_check.py BASE HEAD"""
import subprocess, sys, types, time
import torch
torch.set_num_threads(1)


def load(ref, name):
    src = subprocess.check_output(["git", "show", f"{ref}:clip/model.py"], text=True)
    mod = types.ModuleType(name)
    sys.modules[name] = mod
    exec(compile(src, f"{name}/clip/model.py", "exec"), mod.__dict__)
    return mod


base, head = load(sys.argv[1], "base"), load(sys.argv[2], "head")
torch.manual_seed(0)
KW = dict(embed_dim=32, image_resolution=64, vision_layers=(1, 1, 1, 1), vision_width=16,
          vision_patch_size=None, context_length=16, vocab_size=320, transformer_width=64,
          transformer_heads=2, transformer_layers=2)
mb = base.CLIP(**KW).eval()
mh = head.CLIP(**KW).eval()
mh.load_state_dict(mb.state_dict())
# ModifiedResNet's init zeroes every bn3.weight (residual branches are identity at init): give
# them values so the features are not trivially the identity path
g = torch.Generator().manual_seed(1)
with torch.no_grad():
    for (n, pb), (_, ph) in zip(mb.named_parameters(), mh.named_parameters()):
        if n.endswith("bn3.weight"):
            v = torch.randn(pb.shape, generator=g) * 0.2
            pb.copy_(v); ph.copy_(v)

nodes = {}
def counting(tag):
    def be(gm, ex):
        nodes[tag] = nodes.get(tag, 0) + sum(1 for n in gm.graph.nodes if n.op == "call_function")
        return gm.forward
    return be

eq_total = n_total = 0
maxdiff = 0.0
for compiled in (False, True):
    fb = torch.compile(mb.encode_image, backend=counting("base")) if compiled else mb.encode_image
    fh = torch.compile(mh.encode_image, backend=counting("head")) if compiled else mh.encode_image
    for batch in (1, 3, 5):
        for kind in ("randn", "zeros", "huge", "tiny", "negative"):
            x = torch.randn(batch, 3, 64, 64, generator=torch.Generator().manual_seed(batch))
            x = {"randn": x, "zeros": torch.zeros_like(x), "huge": x * 1e4, "tiny": x * 1e-30,
                 "negative": -x.abs()}[kind]
            with torch.no_grad():
                a, b = fb(x), fh(x)
            same = torch.equal(a, b)
            d = (a - b).abs().max().item()
            maxdiff = max(maxdiff, d)
            eq_total += same; n_total += 1
            print(f"compiled={compiled} batch={batch} {kind:8s}: shape {tuple(a.shape)} vs {tuple(b.shape)}, "
                  f"bitwise equal {same}, max |diff| {d:.3g}, max |out| {a.abs().max().item():.3g}")
print(f"bitwise equal on {eq_total} of {n_total}; largest difference {maxdiff:.3g}")
print("FX call_function nodes in the compiled encode_image (summed over compiles):", nodes)

# cost: eager time of AttentionPool2d alone, base vs head, at a real RN50's attnpool size
# (embed 2048, 7x7 grid, 32 heads), batch 8
for tag, mod in (("base", base), ("head", head)):
    torch.manual_seed(0)
    ap = mod.AttentionPool2d(7, 2048, 32, 1024).eval()
    x = torch.randn(8, 2048, 7, 7)
    with torch.no_grad():
        for _ in range(2): ap(x)
        t = time.perf_counter()
        for _ in range(10): ap(x)
        dt = (time.perf_counter() - t) / 10
    print(f"RN50-size AttentionPool2d, batch 8, one thread, eager: {tag} {dt*1e3:.1f} ms per call")
