"""pt2bot init's commented-out proposal: `- {name: kv_cache, shape: [batch, seq], dtype: int64,
low: 0, high: 100}` ("uncomment to run the branch on `kv_cache`"). What happens when a user does?
The GPT init proposed (vocab 100, 2 layers, 2 heads, n_embd 32), idx and kv_cache as proposed."""
import sys, torch
sys.path.insert(0, ".")
from nanochat.gpt import GPT, GPTConfig
m = GPT(GPTConfig(vocab_size=100, n_layer=2, n_head=2, n_kv_head=2, n_embd=32))
idx = torch.randint(0, 100, (2, 16)); kv = torch.randint(0, 100, (2, 16))
try:
    m(idx, kv_cache=kv)
except Exception as ex:
    print(f"{type(ex).__name__}: {ex}")
