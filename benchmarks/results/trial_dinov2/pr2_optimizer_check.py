"""PR 2: what the None-vs-zeros gradient of mask_token does in a training step (no pt2bot code).
One AdamW step (DINOv2's default weight decay 0.04) after a batch in which no token is masked,
head vs the verified suggestion; each tree imported in its own process."""
import os, subprocess, sys
os.environ["XFORMERS_DISABLED"] = "1"
if len(sys.argv) == 2:
    sys.path.insert(0, sys.argv[1])
    import torch
    torch.set_num_threads(1)
    from dinov2.models.vision_transformer import DinoVisionTransformer
    torch.manual_seed(0)
    m = DinoVisionTransformer(img_size=56, patch_size=14, embed_dim=48, depth=2, num_heads=2, block_chunks=0, init_values=1e-5, interpolate_offset=0.0)
    with torch.no_grad():
        m.mask_token.normal_()
    opt = torch.optim.AdamW(m.parameters(), lr=1e-3, weight_decay=0.04)
    before = m.mask_token.detach().clone()
    for compiled in (False, True):
        fn = torch.compile(m.forward_features, backend="eager") if compiled else m.forward_features
        x = torch.randn(2, 3, 56, 56, generator=torch.Generator().manual_seed(1))
        masks = torch.zeros(2, 16, dtype=torch.bool)  # a batch where no token is masked
        opt.zero_grad()
        fn(x, masks)["x_norm_patchtokens"].sum().backward()
        g = m.mask_token.grad
        opt.step()
        print(f"compiled={compiled}: mask_token.grad is {'None' if g is None else 'a tensor, all zero: %s' % bool((g == 0).all())}; "
              f"mask_token changed by the step: {not torch.equal(before, m.mask_token.detach())}; max |change| {float((before - m.mask_token.detach()).abs().max()):.3e}")
        before = m.mask_token.detach().clone()
else:
    for v in ("head", "sugg"):
        print(f"== {v}", flush=True)
        subprocess.run([sys.executable, __file__, f"/tmp/fh-dinov2/sc/skip-empty-masks/{v}"], check=True, stderr=subprocess.DEVNULL)
