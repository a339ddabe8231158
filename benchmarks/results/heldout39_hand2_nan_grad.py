"""hand2 (corn_loss by torch.where) against head on a NaN in one row: where the gradients differ."""
import torch, torch.nn.functional as F
from coral_pytorch.losses import corn_loss as head

def hand2(logits, y_train, num_classes):
    num_examples = 0
    losses = 0.
    for task_index in range(num_classes-1):
        label_mask = y_train > task_index-1
        train_labels = (y_train > task_index).to(torch.int64)
        pred = logits[:, task_index]
        loss = -(F.logsigmoid(pred)*train_labels + (F.logsigmoid(pred) - pred)*(1-train_labels))
        losses = losses + torch.where(label_mask, loss, 0.).sum()
        num_examples = num_examples + label_mask.sum()
    return losses/num_examples

y = torch.tensor([0, 1, 3, 2])
for name, fill in (("nan", float("nan")), ("inf", float("inf"))):
    for f in (head, hand2):
        lg = torch.randn(4, 4, generator=torch.Generator().manual_seed(0))
        lg[0, 3] = fill  # row 0 (label 0) is outside task 3's subset
        lg.requires_grad_(True)
        l = f(lg, y, 5); l.backward()
        print(name, f.__name__, "loss", l.item(), "grad row 0", lg.grad[0].tolist())
