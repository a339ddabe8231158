"""PTC304's advice on prompt_encoder.py:88-90 (`x = torch.where(mask, x + v, x)`) written literally
for SAM's line, and with the mask unsqueezed (no pt2bot code)."""
import torch
torch.set_num_threads(1)
torch.manual_seed(0)
w = torch.randn(1, 32)
for B, N in [(3, 4), (2, 1), (1, 1), (2, 32)]:
    x = torch.randn(B, N, 32)
    labels = torch.randint(-1, 2, (B, N))
    ref = x.clone()
    ref[labels == -1] += w
    try:
        lit = torch.where(labels == -1, x + w, x)
        print(f'B={B} N={N}: literal advice -> shape {tuple(lit.shape)}, equal to head: '
              f'{lit.shape == ref.shape and torch.equal(lit, ref)}')
    except RuntimeError as e:
        print(f'B={B} N={N}: literal advice raises: {str(e).splitlines()[0]}')
    fixed = torch.where((labels == -1).unsqueeze(-1), x + w, x)
    print(f'B={B} N={N}: with (labels == -1).unsqueeze(-1): equal to head: {torch.equal(fixed, ref)}')
