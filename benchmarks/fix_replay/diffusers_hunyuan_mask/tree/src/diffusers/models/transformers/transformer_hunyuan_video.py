# Replay excerpt of huggingface/diffusers at c86511586fdbf50e8071929d42b1c13786ef05d3, src/diffusers/models/transformers/transformer_hunyuan_video.py (Apache-2.0; the upstream licence header follows where the file has one).
# Kept verbatim: step 3 of HunyuanVideoTransformer3DModel.forward (`# 3. Attention mask preparation`, down to the mask's unsqueeze). Left out: the rest of HunyuanVideoTransformer3DModel: the embedders are linear layers and the transformer blocks one masked scaled-dot-product attention over the joint sequence.
# Copyright 2024 The Hunyuan Team and The HuggingFace Team. All rights reserved.
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

import torch
import torch.nn as nn
import torch.nn.functional as F


class HunyuanVideoTransformer3DModel(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.x_embedder = nn.Linear(8, 8)
        self.context_embedder = nn.Linear(8, 8)

    def forward(self, hidden_states: torch.Tensor, encoder_hidden_states: torch.Tensor,
                encoder_attention_mask: torch.Tensor) -> torch.Tensor:
        batch_size = hidden_states.shape[0]
        hidden_states = self.x_embedder(hidden_states)
        encoder_hidden_states = self.context_embedder(encoder_hidden_states)

        # 3. Attention mask preparation
        latent_sequence_length = hidden_states.shape[1]
        condition_sequence_length = encoder_hidden_states.shape[1]
        sequence_length = latent_sequence_length + condition_sequence_length
        attention_mask = torch.ones(
            batch_size, sequence_length, device=hidden_states.device, dtype=torch.bool
        )  # [B, N]
        effective_condition_sequence_length = encoder_attention_mask.sum(dim=1, dtype=torch.int)  # [B,]
        effective_sequence_length = latent_sequence_length + effective_condition_sequence_length
        indices = torch.arange(sequence_length, device=hidden_states.device).unsqueeze(0)  # [1, N]
        mask_indices = indices >= effective_sequence_length.unsqueeze(1)  # [B, N]
        attention_mask = attention_mask.masked_fill(mask_indices, False)
        attention_mask = attention_mask.unsqueeze(1).unsqueeze(1)  # [B, 1, 1, N]

        # 4. Transformer blocks (one masked attention over the joint sequence, not replayed)
        joint = torch.cat([hidden_states, encoder_hidden_states], dim=1).unsqueeze(1)
        out = F.scaled_dot_product_attention(joint, joint, joint, attn_mask=attention_mask)
        return out[:, 0, :latent_sequence_length]
