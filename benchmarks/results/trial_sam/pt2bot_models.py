"""Tiny SAM parts for pt2bot's smoke run: built from arguments, no checkpoint."""
import torch
from torch import nn

from segment_anything.modeling import MaskDecoder, PromptEncoder, TwoWayTransformer
from segment_anything.utils.transforms import ResizeLongestSide

EMBED = 32          # transformer_dim / prompt embed_dim
EMB_HW = 8          # image embedding is EMB_HW x EMB_HW
IMG = 16 * EMB_HW   # input image size the prompts live in (128)


class PromptAndMaskDecoder(nn.Module):
    """SamPredictor.predict_torch without the image encoder: prompts -> low-res masks, IoU."""

    def __init__(self, use_boxes: bool = True, use_mask: bool = True, multimask_output: bool = True):
        super().__init__()
        self.use_boxes, self.use_mask, self.multimask_output = use_boxes, use_mask, multimask_output
        self.prompt_encoder = PromptEncoder(
            embed_dim=EMBED, image_embedding_size=(EMB_HW, EMB_HW),
            input_image_size=(IMG, IMG), mask_in_chans=8,
        )
        self.mask_decoder = MaskDecoder(
            transformer_dim=EMBED,
            transformer=TwoWayTransformer(depth=2, embedding_dim=EMBED, num_heads=2, mlp_dim=64),
            num_multimask_outputs=3, iou_head_depth=2, iou_head_hidden_dim=32,
        )

    def forward(self, image_embeddings, point_coords, point_labels, boxes, mask_input):
        sparse, dense = self.prompt_encoder(
            points=(point_coords, point_labels),
            boxes=boxes if self.use_boxes else None,
            masks=mask_input if self.use_mask else None,
        )
        return self.mask_decoder(
            image_embeddings=image_embeddings,
            image_pe=self.prompt_encoder.get_dense_pe(),
            sparse_prompt_embeddings=sparse,
            dense_prompt_embeddings=dense,
            multimask_output=self.multimask_output,
        )


def prompt_inputs(batch, points):
    """Realistic prompts: pixel coordinates in [0, IMG), labels 1/0 with a -1 padding point,
    a box (x0 < x1, y0 < y1), a low-res mask logit map; one image embedding for all prompts."""
    g = torch.Generator().manual_seed(batch * 100 + points)
    coords = torch.rand(batch, points, 2, generator=g) * (IMG - 1)
    labels = torch.randint(0, 2, (batch, points), generator=g)
    if points > 1:
        labels[:, -1] = -1
    xy0 = torch.rand(batch, 2, generator=g) * (IMG / 2)
    boxes = torch.cat([xy0, xy0 + IMG / 4 + torch.rand(batch, 2, generator=g) * (IMG / 4)], dim=1)
    mask = torch.randn(batch, 1, 4 * EMB_HW, 4 * EMB_HW, generator=g) * 5
    emb = torch.randn(1, EMBED, EMB_HW, EMB_HW, generator=g)
    return {"image_embeddings": emb, "point_coords": coords, "point_labels": labels,
            "boxes": boxes, "mask_input": mask}


class ResizeTorch(nn.Module):
    """ResizeLongestSide's torch path, as SamPredictor.set_torch_image's caller uses it."""

    def __init__(self, target_length: int = 64):
        super().__init__()
        self.transform = ResizeLongestSide(target_length)

    def forward(self, image, coords):
        h, w = image.shape[-2:]
        return (self.transform.apply_image_torch(image),
                self.transform.apply_coords_torch(coords, (h, w)))
