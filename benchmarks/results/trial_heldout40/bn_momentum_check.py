import torch, torchbnn as bnn
from torch._dynamo.utils import counters
for mom in (None, 0.1):
    torch._dynamo.reset(); counters.clear()
    bn = bnn.BayesBatchNorm2d(prior_mu=0, prior_sigma=0.1, num_features=6, momentum=mom).train()
    c = torch.compile(bn, backend="eager")
    for b in (4, 6): c(torch.randn(b, 6, 8, 8))
    print(f"BayesBatchNorm2d momentum={mom}, training, compiled twice: graph breaks {sum(counters['graph_break'].values())}")
