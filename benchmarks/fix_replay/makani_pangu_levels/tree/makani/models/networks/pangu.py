# Replay excerpt of NVIDIA/makani at 474f2e79cfa3f53ad73c9bead3582ce6529a4987, makani/models/networks/pangu.py (Apache-2.0; the upstream licence header follows where the file has one).
# Kept verbatim: Pangu._precompute_channel_groups, Pangu.prepare_input, Pangu.prepare_output. Left out: all of pangu.py but Pangu's _precompute_channel_groups, prepare_input and prepare_output (verbatim): the network's layers and Pangu's real __init__ and forward (a stub of each, above the kept methods); makani/utils/features.py kept whole; the commit's change to makani/models/common/layers.py (SeededDropout2d put under torch.compiler.disable) is not replayed.
# SPDX-FileCopyrightText: Copyright (c) 2025 NVIDIA CORPORATION & AFFILIATES. All rights reserved.
# SPDX-License-Identifier: Apache-2.0
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
# http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

import torch
import torch.nn as nn
import numpy as np

from makani.utils import features


class Pangu(nn.Module):
    # trimmed: the network (patch embeddings, the 3-D transformer layers, the patch recovery) is
    # left out; __init__ is a stub that sets the attributes the kept methods read as the real one
    # does and calls _precompute_channel_groups as it does; forward stands for the real one's
    # prepare_input -> network -> prepare_output with one convolution per branch
    def __init__(self, num_surface=2, num_levels=1, channel_names=["u10m", "t2m", "u500", "z500", "t500"],
                 aux_channel_names=[]):
        super().__init__()
        self.num_surface = num_surface
        self.num_levels = num_levels
        self.channel_names = channel_names
        self.aux_channel_names = aux_channel_names
        self._precompute_channel_groups(self.channel_names, self.aux_channel_names)
        self.surface_net = nn.Conv2d(self.n_surf_chans + self.n_aux_chans, self.n_surf_chans, 3, padding=1)
        vars_per_level = (len(channel_names) - num_surface) // num_levels
        self.atmo_net = nn.Conv3d(vars_per_level, vars_per_level, 3, padding=1)

    def forward(self, input):
        surface_aux_inp, atmospheric_inp = self.prepare_input(input)
        return self.prepare_output(self.surface_net(surface_aux_inp), self.atmo_net(atmospheric_inp))

    def _precompute_channel_groups(
        self,
        channel_names=[],
        aux_channel_names=[],
    ):
        """
        Group the channels appropriately into atmospheric pressure levels and surface variables
        """

        atmo_chans, surf_chans, dyn_aux_chans, stat_aux_chans, pressure_lvls = features.get_channel_groups(channel_names, aux_channel_names)
        aux_chans = dyn_aux_chans + stat_aux_chans

        # compute how many channel groups will be kept internally
        self.n_atmo_groups = len(pressure_lvls)
        self.n_atmo_chans = len(atmo_chans) // self.n_atmo_groups

        # make sure they are divisible. Attention! This does not guarantee that the grrouping is correct
        if len(atmo_chans) % self.n_atmo_groups:
            raise ValueError(f"Expected number of atmospheric variables to be divisible by number of atmospheric groups but got {len(atmo_chans)} and {self.n_atmo_groups}")

        self.register_buffer("atmo_channels", torch.tensor(atmo_chans, dtype=torch.long), persistent=False)
        self.register_buffer("surf_channels", torch.tensor(surf_chans, dtype=torch.long), persistent=False)
        self.register_buffer("aux_channels", torch.tensor(aux_chans, dtype=torch.long), persistent=False)

        self.n_surf_chans = self.surf_channels.shape[0]
        self.n_aux_chans = self.aux_channels.shape[0]

        # Precompute the per-pressure-level channel layout used by prepare_input /
        # prepare_output. This depends only on channel_names (static config), so we
        # build it once here as index buffers instead of recomputing numpy ops
        # (np.unique / sorted) on every forward -- those would graph-break under
        # torch.compile.
        levels = np.unique([value[1:] for value in channel_names[self.num_surface:]]).tolist()
        levels = sorted(levels, key=lambda x: int(x))
        if len(levels) != self.num_levels:
            raise ValueError(
                f"Expected {self.num_levels} pressure levels from channel_names but parsed "
                f"{len(levels)}: {levels}"
            )
        level_dict = {level: [idx for idx, value in enumerate(channel_names) if value[1:] == level] for level in levels}

        # [vars_per_level, num_levels]: input[:, atmo_level_index, :, :] yields
        # [B, vars_per_level, num_levels, H, W], matching the original stack(dim=2).
        atmo_level_index = torch.tensor([level_dict[level] for level in levels], dtype=torch.long).t().contiguous()
        self.register_buffer("atmo_level_index", atmo_level_index, persistent=False)

        # flat permutation mapping each restructured atmospheric channel back to its
        # original global channel position (used to scatter the output back).
        reordered_ids = [idx for level in levels for idx in level_dict[level]]
        self.register_buffer("reordered_ids", torch.tensor(reordered_ids, dtype=torch.long), persistent=False)

        return

    def prepare_input(self, input):
        """
        Prepares the input tensor for the Pangu model by splitting it into surface * static variables and atmospheric,
        and reshaping the atmospheric variables into the required format.
        """

        # extract surface and static variables
        surface_inp = input[:, self.surf_channels, :, :]
        aux_inp = input[:, self.aux_channels, :, :]
        surface_aux_inp = torch.cat([surface_inp, aux_inp], dim=1)

        # extract atmospheric variables and restructure into [B, vars, levels, H, W]
        # using the precomputed level-index buffer (no numpy in the forward path).
        atmospheric_inp = input[:, self.atmo_level_index, :, :]

        return surface_aux_inp, atmospheric_inp

    def prepare_output(self, output_surface, output_atmospheric):
        """
        The output of the Pangu model gives separate outputs for surface and atmospheric variables
        Also the atmospheric variables are restructured before fed to the network --> see self.prepare_input()
        This functions reverts the restructuring and concatenates the output to a single tensor.
        """
        # Flatten & reorder the output atmospheric back to the original channel order
        # using the precomputed permutation buffer (vectorized scatter; no numpy and
        # no Python loop in the forward path).
        flattened_atmospheric = output_atmospheric.reshape(output_atmospheric.shape[0], -1, output_atmospheric.shape[3], output_atmospheric.shape[4])
        reordered_atmospheric = torch.cat([torch.zeros_like(output_surface), torch.zeros_like(flattened_atmospheric)], dim=1)
        reordered_atmospheric[:, self.reordered_ids, :, :] = flattened_atmospheric

        # Append the surface output, this has not been reordered.
        if output_surface is not None:
            reordered_atmospheric[:, self.surf_channels, :, :] = output_surface
            output = reordered_atmospheric
        else:
            output = reordered_atmospheric

        return output
