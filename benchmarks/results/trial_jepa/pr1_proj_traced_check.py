"""PR 1 (787b04a replayed): is CrossAttention's new `q = self.proj(q)` (modules.py:157) ever
inside a compiled graph? Forward hooks on that Linear record torch.compiler.is_compiling() when it runs
(a hook traced by dynamo runs at trace time with is_compiling() True; an eager call, False).
No pt2bot code; eager backend; the attentive classifier's cases."""
import sys, warnings, torch
warnings.filterwarnings('ignore'); sys.path.insert(0, '.')
import pt2bot_models as p
from src.models.attentive_pooler import AttentiveClassifier
torch.manual_seed(0)
m = AttentiveClassifier(embed_dim=48, num_heads=2, depth=2, num_classes=10).eval()
seen = []
m.pooler.cross_attention_block.xattn.proj.register_forward_hook(lambda mod, i, o: seen.append(torch.compiler.is_compiling()))
other = []
m.pooler.cross_attention_block.mlp.fc1.register_forward_hook(lambda mod, i, o: other.append(torch.compiler.is_compiling()))
c = torch.compile(m, backend='eager')
with torch.no_grad():
    for b in (2, 3):
        for s in (16, 32, 72):
            c(**p.features(b, s))
print('xattn.proj (the PR line 157) calls: traced', seen.count(True), 'eager', seen.count(False))
print('for contrast, cross block mlp.fc1: traced', other.count(True), 'eager', other.count(False))
