# Replay excerpt of mosaicml/llm-foundry at a8c7dc4786b5054247cd44dca452b2e06538eb6b, llmfoundry/models/mpt/modeling_mpt.py (Apache-2.0; the upstream licence header follows where the file has one).
# Kept verbatim: the signature and first statements of MPTModel.forward, up to `S = input_ids.size(1)` (in the preamble's class). Left out: the rest of modeling_mpt.py: MPTModel's __init__ is a stub setting the config and the attributes the kept lines read, and the rest of forward (attention bias, blocks, final norm) is an embedding, one masked linear layer and a LayerNorm; MPTPreTrainedModel, MPTForCausalLM and the blocks are left out.
# Copyright 2022 MosaicML LLM Foundry authors
# SPDX-License-Identifier: Apache-2.0

import warnings
from types import SimpleNamespace
from typing import Any, List, Mapping, MutableMapping, Optional, Tuple, Union

import torch
import torch.nn as nn


class MPTModel(nn.Module):
    # trimmed: MPTModel's __init__ is a stub setting the attributes the kept lines read (as the real
    # one does from the MPT config); forward keeps its signature and first statements verbatim, from
    # `return_dict = ...` to `S = input_ids.size(1)`, and stands in for the rest (the attention bias,
    # the transformer blocks, the final norm) with an embedding, one masked linear layer and a norm
    def __init__(self) -> None:
        super().__init__()
        self.config = SimpleNamespace(return_dict=True, use_cache=False, max_seq_len=16)
        self.attn_impl = 'torch'
        self.prefix_lm = False
        self.attn_uses_sequence_id = False
        self.wte = nn.Embedding(64, 16)
        self.block = nn.Linear(16, 16)
        self.norm_f = nn.LayerNorm(16)

    def forward(
        self,
        input_ids: torch.LongTensor,
        past_key_values: Optional[List[Tuple[torch.FloatTensor]]] = None,
        attention_mask: Optional[torch.ByteTensor] = None,
        prefix_mask: Optional[torch.ByteTensor] = None,
        sequence_id: Optional[torch.LongTensor] = None,
        return_dict: Optional[bool] = None,
        output_attentions: Optional[bool] = None,
        output_hidden_states: Optional[bool] = None,
        use_cache: Optional[bool] = None,
        inputs_embeds: Optional[torch.Tensor] = None,
    ):
        return_dict = (return_dict
                       if return_dict is not None else self.config.return_dict)
        use_cache = (use_cache
                     if use_cache is not None else self.config.use_cache)

        if attention_mask is not None:
            attention_mask = attention_mask.bool(
            )  # type: ignore (TODO to figure out the right type here)

        if prefix_mask is not None:
            prefix_mask = prefix_mask.bool(
            )  # type: ignore (TODO to figure out the right type here)

        # These args are passed in by keyword in huggingface's generate function
        # https://github.com/huggingface/transformers/blob/68287689f2f0d8b7063c400230b3766987abf18d/src/transformers/generation/utils.py#L2201-L2206
        # but have not yet been fully implemented in MPTModel
        if not return_dict:
            raise NotImplementedError(
                'return_dict False is not implemented yet for MPT')
        if output_attentions:
            if self.attn_impl != 'torch':
                raise NotImplementedError(
                    'output_attentions is not implemented for MPT when using attn_impl `flash` or `triton`.'
                )

        if (self.training and attention_mask is not None and
                attention_mask[:, 0].sum() != attention_mask.shape[0]):
            raise NotImplementedError(
                'MPT does not support training with left padding.')

        if self.prefix_lm and prefix_mask is None:
            raise ValueError(
                'prefix_mask is a required argument when MPT is configured with prefix_lm=True.'
            )

        # Raise a not implemented error if input_embeds is not None (this is an arg in huggingface transformers and we need to support it for PEFT)
        if inputs_embeds is not None:
            raise NotImplementedError(
                'inputs_embeds is not implemented for MPT.')

        if self.training:
            if self.attn_uses_sequence_id and sequence_id is None:
                raise ValueError(
                    'sequence_id is a required argument when MPT is configured with attn_uses_sequence_id=True '
                    + 'and the model is in train mode.')
            elif (self.attn_uses_sequence_id is False) and (sequence_id
                                                            is not None):
                warnings.warn(
                    'MPT received non-None input for `sequence_id` but is configured with attn_uses_sequence_id=False. '
                    +
                    'This input will be ignored. If you want the model to use `sequence_id`, set attn_uses_sequence_id to True.'
                )

        S = input_ids.size(1)

        # the embedding, blocks and final norm (not replayed)
        x = self.wte(input_ids)
        x = x + torch.relu(self.block(x)) * attention_mask[..., None]
        return self.norm_f(x)
