"""heldout32_setting_repro.py (no pt2bot code): `torch._dynamo.config.capture_scalar_outputs =
True`, the dynamo setting the batch's proof verified with one case for deel-torchlip's
evaluate_lip_const (evaluate_lip_const.py:212, lip_kr_wasserstein) and refused on torch-nl's
linked-cell search, set as a review posts it ("set ... where the model is compiled": one flag for
the whole process), with torch-nl 0.3 as installed: nl_linked_cell_mixed's repulsion energy over
build_linked_cell_neighborhood on one periodic crystal of 6 atoms and one free molecule of 4,
eager and compiled (backend "eager"), without and then with the setting, each in a fresh dynamo.

    /work/venvs/realcode/bin/python benchmarks/results/heldout32_setting_repro.py \
        > benchmarks/results/heldout32_setting_repro.log 2>&1
"""
import sys

import torch

torch.set_num_threads(1)
sys.path.insert(0, "benchmarks/real_code")
import models  # noqa: E402


def main():
    print(f"torch {torch.__version__}")
    torch.manual_seed(0)
    model, cases = models.by_key()["torch-nl:nl_linked_cell_mixed"].build()
    model.eval()
    for setting in (False, True):
        torch._dynamo.reset()
        torch._dynamo.config.capture_scalar_outputs = setting
        fn = torch.compile(model, backend="eager")
        for i, (args, _) in enumerate(cases):
            with torch.no_grad():
                eager = model(*args)
                try:
                    comp = fn(*args)
                    res = f"ok, equal to eager: {torch.equal(comp, eager)}"
                except Exception as e:  # noqa: BLE001
                    res = f"raise {type(e).__name__}: {str(e).splitlines()[0][:200]}"
            print(f"capture_scalar_outputs={setting} case{i}: eager {eager.tolist()}; compiled {res}")


if __name__ == "__main__":
    main()
