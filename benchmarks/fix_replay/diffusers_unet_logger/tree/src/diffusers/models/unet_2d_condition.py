# Replay excerpt of huggingface/diffusers at a0198676d7eb73ebb1e409cf90bd963308025423, src/diffusers/models/unet_2d_condition.py (Apache-2.0; the upstream licence header follows where the file has one).
# Kept verbatim: the first statements of UNet2DConditionModel.forward, up to the line after the fix (from `# By default samples` to `forward_upsample_size = True`). Left out: the rest of UNet2DConditionModel: __init__ is a stub setting `num_upsamplers` as the real one does, and the rest of forward() is one convolution standing for the down/up blocks.
# Copyright 2023 The HuggingFace Team. All rights reserved.
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

import logging

import torch
import torch.nn as nn
import torch.nn.functional as F

logger = logging.getLogger(__name__)  # pylint: disable=invalid-name


class UNet2DConditionModel(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.num_upsamplers = 3
        self.conv_in = nn.Conv2d(4, 8, 3, padding=1)
        self.conv_out = nn.Conv2d(8, 4, 3, padding=1)

    def forward(self, sample: torch.Tensor) -> torch.Tensor:
        # By default samples have to be AT least a multiple of the overall upsampling factor.
        # The overall upsampling factor is equal to 2 ** (# num of upsampling layers).
        # However, the upsampling interpolation output size can be forced to fit any upsampling size
        # on the fly if necessary.
        default_overall_up_factor = 2**self.num_upsamplers

        # upsample size should be forwarded when sample is not a multiple of `default_overall_up_factor`
        forward_upsample_size = False
        upsample_size = None

        if any(s % default_overall_up_factor != 0 for s in sample.shape[-2:]):
            # Forward upsample size to force interpolation output size.
            forward_upsample_size = True

        # the down and up blocks (not replayed)
        h = self.conv_in(sample)
        if forward_upsample_size:
            upsample_size = sample.shape[-2:]
            h = F.interpolate(F.avg_pool2d(h, 2), size=upsample_size)
        return self.conv_out(h)
