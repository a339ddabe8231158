"""Ground truth, no pt2bot code: pr4 (jaxtyping+typeguard re-enabled), RGLRU and Griffin compiled
(eager backend, 1 thread). (a) plain torch.compile over batch 2,4 x seq 8,12 (automatic dynamic
shapes after the first recompile); (b) with batch marked dynamic (mark_dynamic) from the first call."""
import sys; sys.path.insert(0, "/tmp/fh-rg/gt/trees/pr4-typecheck")
import torch; torch.set_num_threads(1)
import pt2bot_models as m
for name, build, inp in [("rglru", m.build_rglru, m.rglru_inputs), ("griffin", m.build_griffin, m.griffin_inputs)]:
  for mark in (False, True):
    torch._dynamo.reset()
    torch.manual_seed(0); net = build().eval()
    c = torch.compile(net, backend="eager")
    for b, s in [(2, 8), (2, 12), (4, 8), (4, 12)]:
      torch.manual_seed(1); kw = inp(b, s)
      if mark:
        for t in kw.values(): torch._dynamo.mark_dynamic(t, 0)
      try:
        with torch.no_grad(): c(**kw)
        r = "ok"
      except Exception as e:
        r = f"RAISED {type(e).__name__}: {' '.join(str(e).split())[:260]}"
      print(f"{name} {'mark_dynamic(batch)' if mark else 'plain compile'} batch={b} seq={s}: {r}", flush=True)
