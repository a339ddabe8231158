"""PTC201's verified edit of dasp-pytorch's range check (modules.py:83-84), run where the benchmark's
and the re-run's inputs cannot reach: parameters out of [0, 1]. No pt2bot code: the edit's lines are
read from realcode_proof_heldout36.json (candidate c0 of dp_gain_ctl) and put into a copy of the
installed package; head is another copy. Each side, in its own process, calls
Processor.process_normalized (Gain, and the six-parameter Compressor) on a stereo clip with normalised
parameters 0.5, 0.0, 1.0, 1.5, -0.1, NaN, +inf, eager and under torch.compile (backends eager,
aot_eager, inductor), and prints what each call returned or raised.

    /work/venvs/realcode/bin/python benchmarks/results/heldout36_assert_check.py > benchmarks/results/heldout36_assert_check.log
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def side(pkgdir: str) -> None:
    sys.path.insert(0, pkgdir)
    import torch
    import dasp_pytorch
    assert dasp_pytorch.__file__.startswith(pkgdir), dasp_pytorch.__file__
    torch.manual_seed(0)
    x = 0.3 * torch.randn(2, 2, 1024)
    for proc in (dasp_pytorch.Gain(44100), dasp_pytorch.Compressor(44100)):
        def f(x, p, proc=proc):
            return proc.process_normalized(x, p)
        for val in (0.5, 0.0, 1.0, 1.5, -0.1, float("nan"), float("inf")):
            p = torch.full((2, proc.num_params), 0.5)
            p[1, 0] = val
            for mode in ("eager", "compiled/eager", "compiled/aot_eager", "compiled/inductor"):
                torch._dynamo.reset()
                fn = f if mode == "eager" else torch.compile(f, backend=mode.split("/")[1])
                try:
                    y = fn(x, p)
                    res = f"ok, sum {float(y.sum()):.6g}, finite {bool(torch.isfinite(y).all())}"
                except Exception as e:  # noqa: BLE001 - what it raised is the result
                    res = f"raised {type(e).__name__}: {str(e).splitlines()[0][:150]}"
                print(f"{type(proc).__name__} param[1,0]={val}: {mode}: {res}", flush=True)


def main() -> int:
    if len(sys.argv) > 2 and sys.argv[1] == "--side":
        side(sys.argv[2])
        return 0
    import importlib.util
    src = importlib.util.find_spec("dasp_pytorch").submodule_search_locations[0]
    d = json.load(open(os.path.join(HERE, "realcode_proof_heldout36.json")))
    cand = d["models"]["dasp-pytorch:dp_gain_ctl"]["candidates"][0]
    assert cand["verified"] and cand["path"] == "dasp_pytorch/modules.py", cand
    work = tempfile.mkdtemp(prefix="h36assert_")
    try:
        outs = {}
        for name in ("head", "patched"):
            root = os.path.join(work, name)
            shutil.copytree(src, os.path.join(root, "dasp_pytorch"))
            if name == "patched":
                path = os.path.join(root, cand["path"])
                lines = open(path).read().splitlines(keepends=True)
                lines[cand["start_line"] - 1:cand["end_line"]] = [ln + "\n" for ln in cand["lines"]]
                open(path, "w").writelines(lines)
                print(f"patched {cand['path']}:{cand['start_line']}-{cand['end_line']} ({cand['rule']}):")
                print("    " + "\n    ".join(cand["lines"]))
            p = subprocess.run([sys.executable, __file__, "--side", root], capture_output=True, text=True,
                               env=dict(os.environ, PYTHONWARNINGS="ignore"), timeout=3000)
            if p.returncode:
                print(p.stderr[-3000:])
                return 2
            outs[name] = p.stdout.splitlines()
        same = 0
        for h, q in zip(outs["head"], outs["patched"]):
            if h == q:
                same += 1
                print(f"same     {h}")
            else:
                k = h.split(": ", 1)[0] + ": " + h.split(": ")[1]
                print(f"DIFFER   {k}\n           head:    {h.split(': ', 2)[2]}\n           patched: {q.split(': ', 2)[2]}")
        print(f"{same} of {len(outs['head'])} calls the same")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
