# Replay excerpt of facebookresearch/multimodal at 1cccc584d0c4b6c632ace3cf9426609b03aef276, torchmultimodal/modules/layers/transformer.py (BSD-3-Clause; the upstream licence header follows where the file has one).
# Kept verbatim: TransformerDecoderLayer. Left out: the encoder layers, TransformerOutput and TransformerDecoder of transformer.py, and its import of torchvision's StochasticDepth (only the encoder layer uses it; torchvision is not in this environment); the package's __init__ files (the replay's are empty).
# Upstream LICENSE:
# BSD 3-Clause License
#
# Copyright (c) Meta Platforms, Inc. and affiliates. All rights reserved.
#
# Redistribution and use in source and binary forms, with or without modification,
# are permitted provided that the following conditions are met:
#
#  * Redistributions of source code must retain the above copyright notice, this
#    list of conditions and the following disclaimer.
#
#  * Redistributions in binary form must reproduce the above copyright notice,
#    this list of conditions and the following disclaimer in the documentation
#    and/or other materials provided with the distribution.
#
#  * Neither the name Meta nor the names of its contributors may be used to
#    endorse or promote products derived from this software without specific
#    prior written permission.
#
# THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS "AS IS" AND
# ANY EXPRESS OR IMPLIED WARRANTIES, INCLUDING, BUT NOT LIMITED TO, THE IMPLIED
# WARRANTIES OF MERCHANTABILITY AND FITNESS FOR A PARTICULAR PURPOSE ARE
# DISCLAIMED. IN NO EVENT SHALL THE COPYRIGHT HOLDER OR CONTRIBUTORS BE LIABLE FOR
# ANY DIRECT, INDIRECT, INCIDENTAL, SPECIAL, EXEMPLARY, OR CONSEQUENTIAL DAMAGES
# (INCLUDING, BUT NOT LIMITED TO, PROCUREMENT OF SUBSTITUTE GOODS OR SERVICES;
# LOSS OF USE, DATA, OR PROFITS; OR BUSINESS INTERRUPTION) HOWEVER CAUSED AND ON
# ANY THEORY OF LIABILITY, WHETHER IN CONTRACT, STRICT LIABILITY, OR TORT
# (INCLUDING NEGLIGENCE OR OTHERWISE) ARISING IN ANY WAY OUT OF THE USE OF THIS
# SOFTWARE, EVEN IF ADVISED OF THE POSSIBILITY OF SUCH DAMAGE.
# Copyright (c) Meta Platforms, Inc. and affiliates.
# All rights reserved.
#
# This source code is licensed under the BSD-style license found in the
# LICENSE file in the root directory of this source tree.

from typing import Callable, List, NamedTuple, Optional, Tuple

import torch

from torch import nn, Tensor
from torchmultimodal.modules.layers.mlp import MLP
from torchmultimodal.modules.layers.multi_head_attention import (
    MHAWithCacheOutput,
    MultiHeadAttentionWithCache,
    MultiHeadSelfAttention,
)
from torchmultimodal.modules.layers.normalizations import Fp32LayerNorm


class TransformerDecoderLayer(nn.Module):
    """
    Transformer decoder layer consisting of multihead self-attention, optional
    cross-attention, and feedforward network.

    Args:
        d_model (int): size of hidden dimension of input
        n_head (int): number of attention heads
        dim_feedforward (int): size of hidden dimension of feedforward network
        dropout (float): dropout probability for all dropouts. Defaults to 0.
        activation (Callable): activation function in feedforward network.
            Defaults to ``nn.ReLU``.
        layer_norm_eps (float): the eps value in layer norms. Default is 1e-12.
        norm_first (bool): if True, layer norm is done prior to each of self-attention,
            (optional) cross-attention, and feedforward. Otherwise, layer norm is done
            after. Defaults to False.
        use_cross_attention (bool): if True, cross-attention is applied before
            feedforward network. If False, no cross-attention is applied.
            Defaults to True.
        dim_kv (Optional[int]): dimension for key and value tensors in cross-attention.
            If None, K and V are assumed to have dimension d_model. Defaults to None.
    """

    def __init__(
        self,
        d_model: int,
        n_head: int,
        dim_feedforward: int,
        dropout: float = 0.0,
        activation: Callable[..., nn.Module] = nn.ReLU,
        layer_norm_eps: float = 1e-12,
        norm_first: bool = False,
        use_cross_attention: bool = True,
        dim_kv: Optional[int] = None,
    ) -> None:
        super().__init__()
        if dim_kv is not None:
            dim_kv = dim_kv
        else:
            dim_kv = d_model

        # Self-attention block
        self.attention = MultiHeadAttentionWithCache(
            dim_q=d_model,
            dim_kv=d_model,
            num_heads=n_head,
            dropout=dropout,
        )
        self.attention_dropout = nn.Dropout(dropout)

        # Optional cross-attention block
        self.cross_attention: Optional[MultiHeadAttentionWithCache] = None
        self.use_cross_attention = use_cross_attention
        if self.use_cross_attention:
            self.cross_attention = MultiHeadAttentionWithCache(
                dim_q=d_model,
                dim_kv=dim_kv,
                num_heads=n_head,
                dropout=dropout,
            )
            self.cross_attention_layernorm = Fp32LayerNorm(d_model, eps=layer_norm_eps)
            self.cross_attention_dropout = nn.Dropout(dropout)

        # Feedforward
        self.feedforward = MLP(
            d_model,
            d_model,
            dim_feedforward,
            dropout=dropout,
            activation=activation,
        )
        self.feedforward_dropout = nn.Dropout(dropout)

        # Layernorms
        self.attention_layernorm = Fp32LayerNorm(d_model, eps=layer_norm_eps)
        self.feedforward_layernorm = Fp32LayerNorm(d_model, eps=layer_norm_eps)
        self.norm_first = norm_first

    def _self_attention_block(
        self,
        hidden_states: Tensor,
        attention_mask: Optional[Tensor] = None,
        past_key_value: Optional[Tuple[Tensor, Tensor]] = None,
        use_cache: bool = False,
    ) -> Tuple[Tensor, Optional[Tuple[Tensor, Tensor]]]:
        attn_output = self.attention(
            query=hidden_states,
            key=hidden_states,
            value=hidden_states,
            attn_mask=attention_mask,
            past_key_value=past_key_value,
            use_cache=use_cache,
        )
        present_key_value: Optional[Tuple[Tensor, Tensor]] = None
        if use_cache:
            assert isinstance(attn_output, MHAWithCacheOutput)
            attn_output_value = attn_output.attn_output
            present_key_value = attn_output.past_key_value
        else:
            assert isinstance(attn_output, Tensor)
            attn_output_value = attn_output
        output = self.attention_dropout(attn_output_value)
        return output, present_key_value

    def _cross_attention_block(
        self,
        hidden_states: Tensor,
        encoder_hidden_states: Tensor,
        cross_attention_mask: Optional[Tensor] = None,
    ) -> Tensor:
        assert (
            self.cross_attention is not None
        ), """
            Cannot use cross-attention unless self.cross_attention and
            self.cross_attention_dropout are defined.
        """
        output = self.cross_attention(
            query=hidden_states,
            key=encoder_hidden_states,
            value=encoder_hidden_states,
            attn_mask=cross_attention_mask,
            # TODO: figure out caching for cross-attention
            use_cache=False,
        )
        assert isinstance(output, Tensor), "cross-attention output must be Tensor."

        attention_output = self.cross_attention_dropout(output)
        return attention_output

    def _feedforward_block(self, hidden_states: Tensor) -> Tensor:
        h = self.feedforward(hidden_states)
        h = self.feedforward_dropout(h)
        return h

    def _forward_prenorm(
        self,
        hidden_states: Tensor,
        encoder_hidden_states: Optional[Tensor] = None,
        attention_mask: Optional[Tensor] = None,
        cross_attention_mask: Optional[Tensor] = None,
        past_key_value: Optional[Tuple[Tensor, Tensor]] = None,
        use_cache: bool = False,
    ) -> Tuple[Tensor, Optional[Tuple[Tensor, Tensor]]]:

        # Self-attention
        self_attn_input = self.attention_layernorm(hidden_states)
        attn_output, present_key_value = self._self_attention_block(
            self_attn_input,
            attention_mask=attention_mask,
            past_key_value=past_key_value,
            use_cache=use_cache,
        )
        self_attn_output = attn_output + hidden_states

        # Optional cross-attention
        if self.use_cross_attention:
            assert (
                encoder_hidden_states is not None
            ), "encoder_hidden_states must be provided for cross attention"
            assert hasattr(
                self, "cross_attention_layernorm"
            ), "Cross-attention layernorm not initialized"
            cross_attn_input = self.cross_attention_layernorm(self_attn_output)
            cross_attn_output = self._cross_attention_block(
                cross_attn_input,
                encoder_hidden_states,
                cross_attention_mask=cross_attention_mask,
            )
            attn_output = cross_attn_output + self_attn_output
        else:
            attn_output = self_attn_output

        # Feedforward
        ff_input = self.feedforward_layernorm(attn_output)
        output = attn_output + self._feedforward_block(ff_input)

        return output, present_key_value

    def _forward_postnorm(
        self,
        hidden_states: Tensor,
        encoder_hidden_states: Optional[Tensor] = None,
        attention_mask: Optional[Tensor] = None,
        cross_attention_mask: Optional[Tensor] = None,
        past_key_value: Optional[Tuple[Tensor, Tensor]] = None,
        use_cache: bool = False,
    ) -> Tuple[Tensor, Optional[Tuple[Tensor, Tensor]]]:

        # Self-attention
        attn_output, present_key_value = self._self_attention_block(
            hidden_states,
            attention_mask=attention_mask,
            past_key_value=past_key_value,
            use_cache=use_cache,
        )
        attn_residual = attn_output + hidden_states
        self_attn_output = self.attention_layernorm(attn_residual)

        # Optional cross-attention
        if self.use_cross_attention:
            if encoder_hidden_states is None:
                raise ValueError(
                    "encoder_hidden_states must be provided for cross attention"
                )
            assert hasattr(
                self, "cross_attention_layernorm"
            ), "Cross-attention layernorm not initialized"
            cross_attn_output = self._cross_attention_block(
                self_attn_output, encoder_hidden_states, cross_attention_mask
            )
            cross_attn_residual = cross_attn_output + self_attn_output
            attn_output = self.cross_attention_layernorm(cross_attn_residual)
        else:
            attn_output = self_attn_output

        # Feedforward
        ff_residual = attn_output + self._feedforward_block(attn_output)
        output = self.feedforward_layernorm(ff_residual)

        return output, present_key_value

    def forward(
        self,
        hidden_states: Tensor,
        encoder_hidden_states: Optional[Tensor] = None,
        attention_mask: Optional[Tensor] = None,
        cross_attention_mask: Optional[Tensor] = None,
        past_key_value: Optional[Tuple[Tensor, Tensor]] = None,
        use_cache: bool = False,
    ) -> Tuple[Tensor, Optional[Tuple[Tensor, Tensor]]]:
        """
        Inputs:
            hidden_states (Tensor): input query of shape bsz x seq_len x embed_dim
            encoder_hidden_states (Optional[Tensor]): input key/values of shape
                bsz x seq_len x embed_dim, only used for cross-attention.
                Default is None.
            attention_mask (Optional[Tensor]): attention mask for self-attention,
                supported mask type is described in MultiHeadAttentionWithCache class.
                Default is None.
            cross_attention_mask (Optional[Tensor]): attention mask for cross-attention,
                similar to attention_mask. Default is None.
            past_key_value (Optional[Tuple[Tensor, Tensor]]): cached key/value tuple
                for self-attention. Default is None.
            use_cache (bool): whether to use cache for key and value tensors.
                Can be used for faster autoregressive decoding during inference.
                    Default is False.

        Returns:
            A tuple including
                output (Tensor): layer output of shape bsz x seq_len x embed_dim
                present_key_value (Optional[Tuple[Tensor, Tensor]]): key/value tuple for
                    self-attention if use_cache set to True else None
        """
        if self.norm_first is True:
            return self._forward_prenorm(
                hidden_states,
                encoder_hidden_states,
                attention_mask,
                cross_attention_mask,
                past_key_value,
                use_cache,
            )
        else:
            return self._forward_postnorm(
                hidden_states,
                encoder_hidden_states,
                attention_mask,
                cross_attention_mask,
                past_key_value,
                use_cache,
            )
