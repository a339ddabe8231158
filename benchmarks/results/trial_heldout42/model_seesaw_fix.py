"""A classifier for long-tailed labels: an MLP over pooled image features, trained with the
Seesaw loss (rare classes' negative gradients damped by the classes' running counts)."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from seesawloss import SeesawLoss


class CountingSeesawLoss(SeesawLoss):
    """SeesawLoss with the class counts added as the one-hot target's column sums (the
    library loops over target.unique() with .item(), which breaks the compiled graph)."""

    def forward(self, output, target):
        onehot_target = F.one_hot(target, self.num_classes)
        self.accumulate += onehot_target.sum(0)
        seesaw_weights = output.new_ones(onehot_target.size())
        if self.p > 0:
            matrix = self.accumulate[None, :].clamp(min=1) / self.accumulate[:, None].clamp(min=1)
            index = (matrix < 1.0).float()
            sample_weights = matrix.pow(self.p) * index + (1 - index)
            mitigation_factor = sample_weights[target.long(), :]
            seesaw_weights = seesaw_weights * mitigation_factor
        if self.q > 0:
            scores = F.softmax(output.detach(), dim=1)
            self_scores = scores[torch.arange(0, len(scores)).to(scores.device).long(), target.long()]
            score_matrix = scores / self_scores[:, None].clamp(min=self.eps)
            index = (score_matrix > 1.0).float()
            compensation_factor = score_matrix.pow(self.q) * index + (1 - index)
            seesaw_weights = seesaw_weights * compensation_factor
        output = output + (seesaw_weights.log() * (1 - onehot_target))
        return F.cross_entropy(output, target, weight=None, reduction='none').mean()


class LongTailClassifier(nn.Module):
    """x: [batch, 16] float32 pooled features; y: [batch] int64 class ids in [0, 8).

    Returns (loss, logits): the training loss and the [batch, 8] logits.
    """

    def __init__(self, num_classes: int = 8, dim: int = 16):
        super().__init__()
        self.num_classes = num_classes
        self.net = nn.Sequential(nn.Linear(dim, 32), nn.ReLU(), nn.Linear(32, num_classes))
        self.criterion = CountingSeesawLoss(num_classes=num_classes, p=0.8, q=2.0)

    def forward(self, x, y):
        logits = self.net(x)
        loss = self.criterion(logits, y)
        return loss, logits
