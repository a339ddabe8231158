# The replay's model (written for the benchmark, not upstream code).
import torch
from torch import nn

from gliclass.model import GLiClassBaseModel, GLiClassModelConfig


class Replay(nn.Module):
    """GLiClass's class and text features from token embeddings: prompts of 2 or 3 class tokens
    (id 30), a text token (id 31) and a text of varying length, padded."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(32, 8)
        self.base = GLiClassBaseModel(GLiClassModelConfig())

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        embeds = self.embed(input_ids)
        classes, classes_mask, text, text_mask = self.base._extract_class_features(embeds, input_ids,
                                                                                  attention_mask)
        return ((classes * classes_mask.unsqueeze(-1)).sum((1, 2))
                + (text * text_mask.unsqueeze(-1)).sum((1, 2)))


def make_inputs(batch: int):
    ids = torch.zeros(batch, 12, dtype=torch.long)
    mask = torch.zeros(batch, 12, dtype=torch.long)
    for i in range(batch):
        n_classes, n_text = 2 + i % 2, 3 + i % 3
        row = []
        for c in range(n_classes):
            row += [30, 1 + c]
        row += [31] + [10 + t for t in range(n_text)]
        ids[i, : len(row)] = torch.tensor(row)
        mask[i, : len(row)] = 1
    return {"input_ids": ids, "attention_mask": mask}
