"""On main: does F.scaled_dot_product_attention (inside `with torch.backends.cuda.sdp_kernel():`)
ever run inside a compiled graph? A wrapper records torch.compiler.is_compiling() at each call
(True: being traced into a graph; False: run eagerly). No pt2bot code; eager backend."""
import sys, warnings, torch, torch.nn.functional as F
warnings.filterwarnings('ignore'); sys.path.insert(0, '.')
import src.models.utils.modules as mod
import pt2bot_models as p
from src.models.vision_transformer import VisionTransformer
seen = []
orig = F.scaled_dot_product_attention
class _F:
    def __getattr__(self, k): return getattr(F, k)
    @staticmethod
    def scaled_dot_product_attention(*a, **k):
        seen.append(torch.compiler.is_compiling()); return orig(*a, **k)
mod.F = _F()
projs = []
torch.manual_seed(0)
m = VisionTransformer(img_size=32, patch_size=8, num_frames=4, tubelet_size=2, embed_dim=48, depth=2, num_heads=2, uniform_power=True).eval()
m.blocks[0].attn.proj.register_forward_hook(lambda *a: projs.append(torch.compiler.is_compiling()))
m.blocks[0].mlp.fc1.register_forward_hook(lambda *a: projs.append(('fc1', torch.compiler.is_compiling())))
c = torch.compile(m, backend='eager')
with torch.no_grad():
    for b in (2, 3):
        c(**p.clips(b, 4, 32))
print('sdpa calls: traced into a graph', seen.count(True), '| run eagerly', seen.count(False))
print('block 0 attn.proj / mlp.fc1 calls (is_compiling):', projs)
