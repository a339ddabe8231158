"""The one input kind on which PR 2's verified fix differs from head (fix_check.log): a NaN in the
spectrogram. Counts the NaN entries of the input's gradient and of each parameter's, both sides."""
import torch, fix_check as F
torch.set_num_threads(1)
H, P = F.load("model_normalize_loudness.py"), F.load("model_normalize_loudness_fix.py")
g = torch.Generator().manual_seed(7)
x = torch.rand(2, 64, 32, generator=g) * 2
x.view(-1)[3] = float("nan")
for name, cls in (("head", H), ("fix", P)):
    r = F.run(cls, "none", x, True, False)
    print(name, "loss", r[1][1].item(), "| NaN entries per gradient (input, then parameters):",
          [int(t.isnan().sum()) for t in r[2]], "of", [t.numel() for t in r[2]])
