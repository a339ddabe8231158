"""TextDecoder.positional_embedding is torch.empty: what a freshly built tiny decoder holds (no pt2bot code)."""
import sys, torch
sys.path.insert(0, sys.argv[1])
from whisper.model import TextDecoder, Whisper, ModelDimensions
for i in range(5):
    torch.manual_seed(0)
    d = TextDecoder(100, 16, 32, 2, 2).eval()
    pe = d.positional_embedding
    x = torch.randint(0, 100, (2, 8)); xa = torch.randn(2, 8, 32)
    with torch.no_grad():
        out = d(x, xa)
    print(f"build {i}: positional_embedding finite {int(torch.isfinite(pe).sum())}/{pe.numel()}, "
          f"|max| {float(pe[torch.isfinite(pe)].abs().max()):.3g}; logits finite {int(torch.isfinite(out).sum())}/{out.numel()}")
