"""PR 1's head and its verified suggestion compiled (backend "eager") and called on 12 batches of
one shape [4, 32] whose sentence lengths differ (as a data loader's padded batches do), with no
pt2bot code: the unique graphs after each call and the breaks (TORCH_LOGS=recompiles on stderr)."""
import importlib.util
import sys
import torch
from torch._dynamo.utils import counters

torch.set_num_threads(1)


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


for path in sys.argv[1:]:
    mod = load(path, "m_" + str(abs(hash(path))))
    torch.manual_seed(0)
    model = mod.BiLSTMCRF().eval()
    torch._dynamo.reset()
    counters.clear()
    fn = torch.compile(model, backend="eager")
    g = torch.Generator().manual_seed(3)
    graphs = []
    for i in range(12):
        lengths = torch.randint(1, 33, (4,), generator=g)
        lengths[0] = 32
        mask = torch.arange(32)[None, :] < lengths[:, None]
        tokens = torch.randint(1, 1000, (4, 32), generator=g).masked_fill(~mask, 0)
        tags = torch.randint(0, 9, (4, 32), generator=g).masked_fill(~mask, 0)
        with torch.no_grad():
            out = fn(tokens, mask, tags)
            ref = model(tokens, mask, tags)
        assert torch.equal(out, ref)
        graphs.append(counters["stats"]["unique_graphs"])
    print(f"{path}: unique graphs after each of 12 calls {graphs}; graph breaks "
          f"{sum(counters['graph_break'].values())} ({dict((k.split(chr(10))[0][:60], v) for k, v in counters['graph_break'].items())})")
