"""PR 1 (567662b reverted): what base and head's ResizeLongestSide.apply_image_torch return, and
what dynamo does with batch sizes past 3 (no pt2bot code). Run from the segment-anything checkout:
  TORCH_LOGS=recompiles python pr1_check.py"""
import subprocess, sys, types
import torch
torch.set_num_threads(1)


def load(ref):
    src = subprocess.run(['git', 'show', f'{ref}:segment_anything/utils/transforms.py'],
                         capture_output=True, text=True, check=True).stdout
    name = 'tr_' + ref.split('-')[0]
    mod = types.ModuleType(name)
    sys.modules[name] = mod
    exec(compile(src, f'{name}.py', 'exec'), mod.__dict__)
    return mod.ResizeLongestSide(64)


base, head = load('main'), load('replay-567662b-resize-shape')
for b, h, w in [(1, 48, 64), (1, 80, 100), (2, 48, 100), (4, 48, 64), (5, 80, 100)]:
    x = torch.rand(b, 3, h, w)
    print(f'input {tuple(x.shape)}: base -> {tuple(base.apply_image_torch(x).shape)}, '
          f'head -> {tuple(head.apply_image_torch(x).shape)}', flush=True)
print('--- head compiled (eager backend), batch 2..6 at 48x64, batch marked dynamic')
f = torch.compile(head.apply_image_torch, backend='eager')
for b in (2, 3, 4, 5, 6):
    x = torch.rand(b, 3, 48, 64)
    torch._dynamo.mark_dynamic(x, 0)
    print('batch', b, tuple(f(x).shape), flush=True)
print('--- base compiled (eager backend), same inputs')
torch._dynamo.reset()
f = torch.compile(base.apply_image_torch, backend='eager')
for b in (2, 3, 4, 5, 6):
    x = torch.rand(b, 3, 48, 64)
    torch._dynamo.mark_dynamic(x, 0)
    print('batch', b, tuple(f(x).shape), flush=True)
print('stats', dict(torch._dynamo.utils.counters['stats']))
