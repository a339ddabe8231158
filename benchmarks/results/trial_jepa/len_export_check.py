"""Does `len(x)` pin the batch in torch.export (default, non-strict) where `x.shape[0]` does not? No pt2bot code."""
import torch, sys
sys.path.insert(0, '.')
from torch.export import Dim
from src.models.attentive_pooler import AttentiveClassifier
import src.models.attentive_pooler as ap
torch.manual_seed(0)
m = AttentiveClassifier(embed_dim=48, num_heads=2, depth=2, num_classes=10).eval()
x = torch.randn(2, 16, 48)
ds = {'x': {0: Dim('batch', min=2), 1: Dim('seq')}}
for strict in (False, True):
    try:
        ep = torch.export.export(m, (), {'x': x}, dynamic_shapes=ds, strict=strict)
        print('as is, strict=%s: OK' % strict, torch.equal(ep.module()(x=torch.ones(3, 20, 48)), m(x=torch.ones(3, 20, 48))))
    except Exception as e:
        print('as is, strict=%s: FAIL' % strict, type(e).__name__, str(e).splitlines()[0][:200])
# the one-word fix: len(x) -> x.shape[0]
def fwd(self, x):
    q = self.query_tokens.repeat(x.shape[0], 1, 1)
    q = self.cross_attention_block(q, x)
    if self.blocks is not None:
        for blk in self.blocks:
            q = blk(q)
    return q
ap.AttentivePooler.forward = fwd
for strict in (False, True):
    try:
        ep = torch.export.export(m, (), {'x': x}, dynamic_shapes=ds, strict=strict)
        xs = torch.randn(3, 20, 48)
        print('x.shape[0], strict=%s: OK' % strict, torch.equal(ep.module()(x=xs), m(x=xs)))
    except Exception as e:
        print('x.shape[0], strict=%s: FAIL' % strict, type(e).__name__, str(e).splitlines()[0][:200])
