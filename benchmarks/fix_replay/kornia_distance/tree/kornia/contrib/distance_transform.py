# Replay excerpt of kornia/kornia at 8f0ec5ac993d663fd6ada1db7093718b48068621, kornia/contrib/distance_transform.py (Apache-2.0; the upstream licence header follows where the file has one).
# Kept verbatim: _distance_transform_2d_impl. Left out: the 3-D implementation, the public wrappers and the module class; kornia.filters.filter2d and kornia.geometry.grid.create_meshgrid are replaced by stand-ins of the same signature (a replicate-padded conv2d, a meshgrid).
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

from __future__ import annotations

import math
from typing import Optional, Union

import torch
import torch.nn.functional as F
from torch import nn


def create_meshgrid(height: int, width: int, normalized_coordinates: bool = True, device=None, dtype=None):
    # stand-in for kornia.geometry.grid.create_meshgrid (pixel coordinates only)
    xs = torch.arange(width, device=device, dtype=dtype)
    ys = torch.arange(height, device=device, dtype=dtype)
    return torch.stack(torch.meshgrid([xs, ys], indexing="xy"), dim=-1).unsqueeze(0)


def filter2d(input: torch.Tensor, kernel: torch.Tensor, border_type: str = "reflect") -> torch.Tensor:
    # stand-in for kornia.filters.filter2d: a depthwise correlation with same-size output
    c = input.shape[1]
    kh, kw = kernel.shape[-2:]
    padded = F.pad(input, [kw // 2, kw // 2, kh // 2, kh // 2], mode=border_type)
    return F.conv2d(padded, kernel.unsqueeze(0).expand(c, 1, kh, kw), groups=c)


def _distance_transform_2d_impl(image: torch.Tensor, kernel_size: int, h: float) -> torch.Tensor:
    device = image.device
    dtype = image.dtype
    k_half = kernel_size // 2

    n_iters = math.ceil(max(image.shape[2], image.shape[3]) / k_half)
    grid = create_meshgrid(kernel_size, kernel_size, False, device, dtype)
    grid = grid - k_half

    dist = torch.hypot(grid[0, ..., 0], grid[0, ..., 1])
    kernel = torch.exp(-dist / h).unsqueeze(0)

    out = torch.zeros_like(image)
    boundary = image.clone()
    signal_ones = torch.ones_like(boundary)

    for i in range(n_iters):
        cdt = filter2d(boundary, kernel, border_type="replicate")
        cdt = -h * torch.log(cdt)
        cdt = torch.nan_to_num(cdt, nan=0.0, posinf=0.0, neginf=0.0)

        mask = cdt > 0
        # Early exit is a pure optimization: once no pixels remain, the remaining
        # iterations are no-ops (out += 0*mask, where(False,...) leaves boundary). Skip
        # the data-dependent break under compile so the graph stays static/fullgraph-safe.
        if not torch.compiler.is_compiling() and not mask.any():
            break

        offset: int = i * k_half
        out = out + (offset + cdt) * mask.to(dtype=out.dtype)
        boundary = torch.where(mask, signal_ones, boundary)

    return out
