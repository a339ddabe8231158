"""Inputs for pt2bot: padded sentences as the data loader gives them (every sentence at least
one token long, padding at the end), gold tags below the model's 9."""
import torch


def make_inputs(batch, seq):
    g = torch.Generator().manual_seed(batch * 1000 + seq)
    lengths = torch.randint(1, seq + 1, (batch,), generator=g)
    lengths[0] = seq                                   # the longest sentence fills the batch
    mask = torch.arange(seq)[None, :] < lengths[:, None]
    tokens = torch.randint(1, 1000, (batch, seq), generator=g).masked_fill(~mask, 0)
    tags = torch.randint(0, 9, (batch, seq), generator=g).masked_fill(~mask, 0)
    return {"tokens": tokens, "mask": mask, "tags": tags}
