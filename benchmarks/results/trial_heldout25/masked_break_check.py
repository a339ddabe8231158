"""PR 1's own break, masked by norse's: compiles model_early_stop.py (batch 2, eager backend,
TORCH_LOGS=graph_breaks) against norse as installed ("head") and against a copy with every
`state.v.requires_grad = True` of the model's cells kept out of compiled code (heldout25's hand1
plus LICell's, leaky_integrator.py:93, which no benchmark model reaches: "hand1"). No pt2bot code.

    for s in head hand1; do TORCH_LOGS=graph_breaks /work/venvs/realcode/bin/python \
        benchmarks/results/trial_heldout25/masked_break_check.py $s 2>&1 | grep -o 'Graph break.*'; done
"""
import importlib.util
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import heldout25_rerun as R  # noqa: E402

side = sys.argv[1]
with open(os.path.join(os.path.dirname(HERE), "heldout25_hand_edits.json")) as f:
    hand1 = json.load(f)["models"]["norse:poisson_lif_mlp"]["candidates"][0]
hand1["edits"].append({"path": "norse/torch/module/leaky_integrator.py", "start_line": 93,
                       "end_line": 93, "lines": ["        if not torch.compiler.is_compiling():",
                                                 "            state.v.requires_grad = True"]})
d = R.make_copy("norse", hand1 if side == "hand1" else None, tempfile.mkdtemp())
sys.path.insert(0, d)
import torch  # noqa: E402
import norse  # noqa: E402
assert norse.__file__.startswith(d)
spec = importlib.util.spec_from_file_location("m", os.path.join(HERE, "model_early_stop.py"))
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
torch.manual_seed(0)
torch.compile(m.SpikingClassifier(), backend="eager")(torch.rand(2, 16))
