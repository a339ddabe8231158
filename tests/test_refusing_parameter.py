"""A parameter whose subclass refuses torch's own functions on itself (hypll's
ManifoldParameter raises on `numel`) must not fail the model in pt2bot's bookkeeping, before
its eager run and torch.compile have told what they do with it: the state kept for every call
(`remember_state`, `start_call`) reads and writes its values with subclasses' torch functions
off."""
from __future__ import annotations

import torch

from pt2bot.smoke.inputs import forget_state, remember_state, start_call

REFUSED = {torch.Tensor.numel, torch.Tensor.element_size, torch.Tensor.detach, torch.Tensor.clone,
           torch.Tensor.data.__get__}


class Refusing(torch.nn.Parameter):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if func in REFUSED:
            raise TypeError(f"Attempting to apply the torch function {func} on a {cls.__name__}")
        return super().__torch_function__(func, types, args, kwargs or {})


class Scaled(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w = Refusing(torch.ones(3))

    def forward(self, x):
        with torch.no_grad():
            torch.Tensor.mul_(self.w, 2.0)   # changes its parameter in place, on every call
        return x * self.w


def test_state_of_a_refusing_parameter_is_kept_and_put_back():
    model = Scaled()
    try:
        remember_state(model)
        x = torch.ones(3)
        start_call(model)
        first = model(x)
        start_call(model)
        assert torch.equal(model(x), first)      # from the values as built, not doubled again
        assert torch.equal(first, torch.full((3,), 2.0))
    finally:
        forget_state(model)
