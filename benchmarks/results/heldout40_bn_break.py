# Held-out batch 40: BayesBatchNorm2d(momentum=None) in training breaks at torchbnn/modules/batchnorm.py:109
# (`1.0 / float(self.num_batches_tracked)`), which neither proof run lists as a site: not a miss of
# pt2bot's, bench_realcode_proof.py calls model.eval() on every model (lines 106-107) and this
# batch's spec bnn_cnn_cumavg_train did not keep training (models.py's _keep_training), so the
# benchmark and the re-run ran it in eval mode, where the line is not reached. Here: training mode.
#   TORCH_LOGS=graph_breaks /work/venvs/realcode/bin/python benchmarks/results/heldout40_bn_break.py > benchmarks/results/heldout40_bn_break.log 2>&1
import sys, torch, torch._dynamo as dy
from torch._dynamo.utils import counters
sys.path.insert(0, "/work/h40/benchmarks/real_code")
import models
specs = {s.name: s for s in models.SPECS}
m, cases = specs["bnn_cnn_cumavg_train"].build()
c = torch.compile(m, backend="eager")
c(*cases[0][0]); c(*cases[1][0])
