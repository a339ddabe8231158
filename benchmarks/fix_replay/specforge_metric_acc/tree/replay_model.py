# The replay's model (written for the benchmark, not upstream code).
import torch
from torch import nn

from specforge.core.eagle3 import _compute_metric_acc


class Replay(nn.Module):
    """One speculative step of an Eagle3 draft head: its logits against the target model's
    distribution, the soft cross-entropy over the positions the masks keep, and the step's
    accuracy as SpecForge records it (argmax agreement over the loss mask)."""

    def __init__(self) -> None:
        super().__init__()
        self.draft = nn.Linear(8, 16)
        self.target = nn.Linear(8, 16)

    def forward(self, h: torch.Tensor, position_mask: torch.Tensor, loss_mask: torch.Tensor):
        logits = self.draft(h)
        target_p = self.target(h).softmax(-1).detach()
        with torch.no_grad():
            acc = _compute_metric_acc(logits=logits, target_p=target_p, position_mask=position_mask,
                                      loss_mask=loss_mask)
        loss = -(target_p * logits.log_softmax(-1) * position_mask).sum(-1).mean()
        return loss, acc


def make_inputs(batch: int):
    g = torch.Generator().manual_seed(batch)
    mask = (torch.rand(batch, 6, 1, generator=g) > 0.3).int()
    return {"h": torch.randn(batch, 6, 8, generator=g), "position_mask": mask, "loss_mask": mask}
