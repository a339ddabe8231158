# Replay excerpt of kornia/kornia at e21b288b2b22e306e13ff606b8cfd4866d79c963, kornia/augmentation/_2d/intensity/color_jitter.py (Apache-2.0; the upstream licence header follows where the file has one).
# Kept verbatim: ColorJitter.apply_transform. Left out: all of ColorJitter but apply_transform (verbatim): the base class, the parameter generator and __init__ (a stub that keeps the fix's new `order` argument, which the model passes: the fix is fullgraph only with a fixed order); kornia.enhance's four colour functions are replaced by elementwise stand-ins of the same signature.
# LICENSE HEADER MANAGED BY add-license-header
#
# Copyright 2018 Kornia Team
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
#

from collections.abc import Sequence
from math import pi
from typing import Any, Dict, List, Optional, Tuple, Union

import torch
from torch import nn


def _per_sample(factor: torch.Tensor, img: torch.Tensor) -> torch.Tensor:
    return factor.view(-1, *([1] * (img.dim() - 1)))


# stand-ins for kornia.enhance's adjust_* functions (elementwise, same signatures)
def adjust_brightness_accumulative(image: torch.Tensor, factor: torch.Tensor) -> torch.Tensor:
    return (image + _per_sample(factor, image)).clamp(0, 1)


def adjust_contrast_with_mean_subtraction(image: torch.Tensor, factor: torch.Tensor) -> torch.Tensor:
    mean = image.mean((-2, -1), True)
    return ((image - mean) * _per_sample(factor, image) + mean).clamp(0, 1)


def adjust_saturation(image: torch.Tensor, factor: torch.Tensor) -> torch.Tensor:
    gray = image.mean(-3, True)
    return ((image - gray) * _per_sample(factor, image) + gray).clamp(0, 1)


def adjust_hue(image: torch.Tensor, factor: torch.Tensor) -> torch.Tensor:
    return torch.remainder(image + _per_sample(factor, image) / (2 * pi), 1.0)


class ColorJitter(nn.Module):
    # trimmed: the augmentation base class and the parameter generator are left out; the four
    # colour functions are the stand-ins above, set as the real __init__ sets them
    def __init__(self, order: Optional[Sequence[int]] = None) -> None:
        super().__init__()
        self._fixed_order: Optional[Tuple[int, ...]] = tuple(order) if order is not None else None
        self._brightness_fn = adjust_brightness_accumulative
        self._contrast_fn = adjust_contrast_with_mean_subtraction
        self._saturation_fn = adjust_saturation
        self._hue_fn = adjust_hue

    def forward(self, input: torch.Tensor, params: Dict[str, torch.Tensor]) -> torch.Tensor:
        # the augmentation base class's forward calls apply_transform with the generated params
        return self.apply_transform(input, params, {})

    def apply_transform(
        self,
        input: torch.Tensor,
        params: Dict[str, torch.Tensor],
        flags: Dict[str, Any],
        transform: Optional[torch.Tensor] = None,
    ) -> torch.Tensor:
        # torch.where (compute-then-select) rather than a Python `if ... .any() else img`:
        # numerically identical (the op runs on the whole batch or not at all, exactly as the
        # guard decided) but without a data-dependent branch, so it stays fullgraph-compilable.
        transforms = [
            lambda img: torch.where(
                (params["brightness_factor"] != 0).any(), self._brightness_fn(img, params["brightness_factor"]), img
            ),
            lambda img: torch.where(
                (params["contrast_factor"] != 1).any(), self._contrast_fn(img, params["contrast_factor"]), img
            ),
            lambda img: torch.where(
                (params["saturation_factor"] != 1).any(), self._saturation_fn(img, params["saturation_factor"]), img
            ),
            lambda img: torch.where(
                (params["hue_factor"] != 0).any(), self._hue_fn(img, params["hue_factor"] * 2 * pi), img
            ),
        ]

        # A fixed order is a static Python sequence (fullgraph); otherwise iterate the random
        # per-call `order` tensor (inherently data-dependent, not fullgraph-compilable).
        order: Sequence[int] = self._fixed_order if self._fixed_order is not None else params["order"]

        jittered = input
        for idx in order:
            jittered = transforms[idx](jittered)

        return jittered
