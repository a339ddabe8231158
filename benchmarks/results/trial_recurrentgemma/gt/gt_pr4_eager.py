"""Ground truth: pr4 (typeguard/jaxtyping on) in eager, no compile (output: gt_pr4_eager.log)."""
import sys; sys.path.insert(0, "/tmp/fh-rg/gt/trees/pr4-typecheck")
import torch; torch.set_num_threads(1)
import pt2bot_models as m
for name, b_, inp in [("rglru", m.build_rglru, m.rglru_inputs), ("griffin", m.build_griffin, m.griffin_inputs), ("griffin_decode", m.build_griffin, m.griffin_decode_inputs), ("local_attention", m.build_local_attention, m.attention_inputs)]:
  torch.manual_seed(0); net = b_().eval()
  try:
    with torch.no_grad(): net(**inp(2, 1 if name == "griffin_decode" else 8))
    print(f"pr4 eager {name}: ok")
  except Exception as e:
    print(f"pr4 eager {name}: raised {type(e).__name__}: {' '.join(str(e).split())[:700]}")
