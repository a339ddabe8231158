"""PR 1's head and the verified suggestion compiled (eager backend) on 12 training-like batches
of ONE shape (batch 4, 1600 samples): how many frames dynamo compiles (the `.item()` value crosses
the graph break as a Python float, and the review shows the resumed frame guarding on it,
`___stack0 == -36.088...`), and on how many steps the "SI-SDR below -30 dB" warning is given,
eager and compiled.
No pt2bot code.

    TORCH_LOGS=recompiles /work/venvs/realcode/bin/python recompile_check.py > recompile_check.log 2>&1
"""
import importlib.util
import os
import warnings

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
torch.set_num_threads(1)
for fname in ("model_warn_low_sdr.py", "model_warn_low_sdr_fix.py"):
    spec = importlib.util.spec_from_file_location(fname[:-3], os.path.join(HERE, fname))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    torch.manual_seed(0)
    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()
    model = mod.Enhancer()
    warned = {}
    for mode in ("eager", "compiled"):
        fn = torch.compile(model, backend="eager") if mode == "compiled" else model
        g = torch.Generator().manual_seed(3)
        warned[mode] = 0
        for step in range(12):
            clean = torch.randn(4, 1600, generator=g)
            noisy = clean + 0.3 * torch.randn(4, 1600, generator=g)
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                fn(noisy, clean)
            warned[mode] += any(str(x.message).startswith("enhancer") for x in w)
    c = torch._dynamo.utils.counters
    print(f"{fname}: 12 steps of one shape: frames compiled {c['frames']['ok']}, "
          f"recompile-limit hits {sum(v for k, v in c['recompile_limit'].items()) if 'recompile_limit' in c else 0}, "
          f"steps that warned: eager {warned['eager']} of 12, compiled {warned['compiled']} of 12", flush=True)
