"""PTC117's advice checked with no pt2bot code: V-JEPA's `with torch.backends.cuda.sdp_kernel():`
(all backends allowed, the default) replaced by `torch.nn.attention.sdpa_kernel([...all...])`;
count graph breaks and compare outputs on the attentive classifier (eager backend)."""
import sys, warnings, torch, torch.nn.functional as F
warnings.filterwarnings("ignore")
sys.path.insert(0, '.')
import src.models.utils.modules as mod
from src.models.attentive_pooler import AttentiveClassifier
from torch.nn.attention import SDPBackend, sdpa_kernel
torch.manual_seed(0)
m = AttentiveClassifier(embed_dim=48, num_heads=2, depth=2, num_classes=10).eval()
x = torch.randn(3, 16, 48)
ref = m(x)
def count(model):
    torch._dynamo.reset()
    cnt = torch._dynamo.utils.counters; cnt.clear()
    out = torch.compile(model, backend='eager')(x)
    return sum(cnt['graph_break'].values()), out
print('as is: graph breaks', count(m)[0])
ALL = [SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH, SDPBackend.CUDNN_ATTENTION]
class _Shim:  # stands in for torch.backends.cuda inside modules.py
    @staticmethod
    def sdp_kernel(): return sdpa_kernel(ALL)
class _Backends: cuda = _Shim
class _Torch:
    def __getattr__(self, k): return getattr(torch, k)
    backends = _Backends
mod.torch = _Torch()
b, out = count(m)
print('sdpa_kernel(all backends): graph breaks', b, 'equal to eager as is:', torch.equal(out, ref))
