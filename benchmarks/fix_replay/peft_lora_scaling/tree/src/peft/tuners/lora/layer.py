# Replay excerpt of huggingface/peft at 37266c1baba367a9a31fc31f22e992a486e84f19, src/peft/tuners/lora/layer.py (Apache-2.0; the upstream licence header follows where the file has one).
# Kept verbatim: Linear.forward. Left out: all of lora/layer.py but Linear.forward (verbatim): LoraLayer, the other layer types, and Linear's __init__ (a stub setting the attributes forward reads, as update_layer sets them for one adapter).
# Copyright 2023-present the HuggingFace Inc. team.
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

from __future__ import annotations

from typing import Any

import torch
from torch import nn


class Linear(nn.Module):
    # trimmed: LoraLayer and BaseTunerLayer are left out; __init__ sets what update_layer sets for
    # one adapter "default" of rank 2 (no dropout, no DoRA); the two LoraLayer helpers forward
    # calls are stand-ins (no `adapter_names`; the cast as LoraLayer._cast_input_dtype does it)
    def __init__(self, base_layer: nn.Linear, r: int = 2, lora_alpha: int = 4) -> None:
        super().__init__()
        self.base_layer = base_layer
        self.lora_A = nn.ModuleDict({"default": nn.Linear(base_layer.in_features, r, bias=False)})
        self.lora_B = nn.ModuleDict({"default": nn.Linear(r, base_layer.out_features, bias=False)})
        self.lora_dropout = nn.ModuleDict({"default": nn.Identity()})
        self.scaling = {"default": lora_alpha / r}
        self.use_dora = {"default": False}
        self.lora_magnitude_vector = nn.ModuleDict()
        self.active_adapters = ["default"]
        self.disable_adapters = False
        self.merged = False
        self.cast_input_dtype_enabled = True

    def _check_forward_args(self, x, *args, **kwargs):
        if kwargs.get("adapter_names") is not None:
            raise ValueError("the replay passes no adapter_names")

    def _cast_input_dtype(self, x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
        if (not self.cast_input_dtype_enabled) or (x.dtype == dtype):
            return x
        return x.to(dtype=dtype)

    def forward(self, x: torch.Tensor, *args: Any, **kwargs: Any) -> torch.Tensor:
        self._check_forward_args(x, *args, **kwargs)
        adapter_names = kwargs.pop("adapter_names", None)

        if self.disable_adapters:
            if self.merged:
                self.unmerge()
            result = self.base_layer(x, *args, **kwargs)
        elif adapter_names is not None:
            result = self._mixed_batch_forward(x, *args, adapter_names=adapter_names, **kwargs)
        elif self.merged:
            result = self.base_layer(x, *args, **kwargs)
        else:
            result = self.base_layer(x, *args, **kwargs)
            torch_result_dtype = result.dtype

            lora_A_keys = self.lora_A.keys()
            for active_adapter in self.active_adapters:
                if active_adapter not in lora_A_keys:
                    continue

                lora_A = self.lora_A[active_adapter]
                lora_B = self.lora_B[active_adapter]
                dropout = self.lora_dropout[active_adapter]
                scaling = self.scaling[active_adapter]
                x = self._cast_input_dtype(x, lora_A.weight.dtype)

                if not self.use_dora[active_adapter]:
                    result = result + lora_B(lora_A(dropout(x))) * scaling
                else:
                    if isinstance(dropout, nn.Identity) or not self.training:
                        base_result = result
                    else:
                        x = dropout(x)
                        base_result = None

                    result = result + self.lora_magnitude_vector[active_adapter](
                        x,
                        lora_A=lora_A,
                        lora_B=lora_B,
                        scaling=scaling,
                        base_layer=self.get_base_layer(),
                        base_result=base_result,
                    )

            result = result.to(torch_result_dtype)

        return result
