# Replay excerpt of Knowledgator/GLiClass at f7b326ef135f72f9d3a154508ad45cf9baea9817, gliclass/model.py (Apache-2.0; the upstream licence header follows where the file has one).
# Kept verbatim: GLiClassBaseModel._extract_class_features, GLiClassBaseModel._extract_class_features_first, GLiClassBaseModel._extract_class_features_averaged. Left out: all of model.py but GLiClassBaseModel's three class-feature methods (verbatim): the encoders, scorers, losses and the model classes; __init__ is a stub setting the config, a stand-in holding the fields the methods read.

import torch
from torch import nn


class GLiClassModelConfig:
    # stand-in for gliclass.config.GLiClassModelConfig: the fields the kept methods read
    class_token_index = 30
    text_token_index = 31
    extract_text_features = True
    embed_class_token = True
    max_num_classes = 4


class GLiClassBaseModel(nn.Module):
    # trimmed: __init__ sets only the config (the encoder, scorer and poolings are left out)
    def __init__(self, config: GLiClassModelConfig) -> None:
        super().__init__()
        self.config = config

    def _extract_class_features(self, token_embeds, input_ids, attention_mask, max_num_classes=None):
        batch_size, sequence_length, embed_dim = token_embeds.shape

        class_token_mask = input_ids == self.config.class_token_index
        num_class_tokens = torch.sum(class_token_mask, dim=-1, keepdim=True)

        # max_num_classes from caller (CPU int) avoids GPU→CPU sync via .item()
        max_embed_dim = max_num_classes if max_num_classes is not None else self.config.max_num_classes
        
        # Get class token pooling method from config (default to "first" for backward compatibility)
        class_token_pooling = getattr(self.config, 'class_token_pooling', 'first')
        
        if class_token_pooling == 'average':
            # Average all tokens belonging to each class label
            classes_embedding, classes_embedding_mask = self._extract_class_features_averaged(
                token_embeds, input_ids, attention_mask, class_token_mask, 
                num_class_tokens, max_embed_dim, batch_size, embed_dim
            )
        else:
            # Original behavior: use only the class token (or token after it)
            classes_embedding, classes_embedding_mask = self._extract_class_features_first(
                token_embeds, input_ids, attention_mask, class_token_mask,
                num_class_tokens, max_embed_dim, batch_size, embed_dim
            )
        
        # Text features extraction
        if self.config.extract_text_features:
            text_token_mask = input_ids == self.config.text_token_index
            text_token_indices = text_token_mask.int().argmax(dim=-1)  # (batch,)
            max_text_length = input_ids.shape[-1]  # static, no GPU→CPU sync

            # (batch, max_text_length): source position in token_embeds for each target slot
            aranged_target_idx = torch.arange(
                max_text_length, device=token_embeds.device
            ).unsqueeze(0).expand(batch_size, -1)
            valid_mask = aranged_target_idx < (input_ids.shape[-1] - text_token_indices).unsqueeze(1)

            source_indices = (text_token_indices.unsqueeze(1) + aranged_target_idx).clamp(
                max=input_ids.shape[-1] - 1
            )
            batch_arange = torch.arange(batch_size, device=token_embeds.device).unsqueeze(1)

            # Gather then zero-out invalid positions — no nonzero/scatter needed
            text_tokens_embeddings = token_embeds[batch_arange, source_indices] * valid_mask.unsqueeze(-1).to(token_embeds.dtype)
            text_tokens_mask = attention_mask[batch_arange, source_indices] * valid_mask
        else:
            text_tokens_embeddings = token_embeds
            text_tokens_mask = attention_mask
        return classes_embedding, classes_embedding_mask, text_tokens_embeddings, text_tokens_mask

    def _extract_class_features_first(self, token_embeds, input_ids, attention_mask,
                                       class_token_mask, num_class_tokens, max_embed_dim,
                                       batch_size, embed_dim):
        """Extract only the class token embedding (or token after it). Fully vectorized."""
        class_cum = class_token_mask.long().cumsum(dim=-1)  # (batch, seq)
        k_range = torch.arange(max_embed_dim, device=token_embeds.device).view(1, -1, 1)

        # select_mask[b, k, s] = True at the position of the k-th class token
        select_mask = class_token_mask.unsqueeze(1) & ((class_cum.unsqueeze(1) - 1) == k_range)

        if not self.config.embed_class_token:
            # Shift right by 1: select the token immediately after each class token
            shifted = torch.zeros_like(select_mask)
            shifted[:, :, 1:] = select_mask[:, :, :-1]
            select_mask = shifted

        classes_embedding = torch.einsum('bks,bsd->bkd', select_mask.to(token_embeds.dtype), token_embeds)

        arange_k = torch.arange(max_embed_dim, device=token_embeds.device).unsqueeze(0)
        classes_embedding_mask = (arange_k < num_class_tokens).to(attention_mask.dtype)

        return classes_embedding, classes_embedding_mask

    def _extract_class_features_averaged(self, token_embeds, input_ids, attention_mask,
                                          class_token_mask, num_class_tokens, max_embed_dim,
                                          batch_size, embed_dim):
        """Average all tokens belonging to each class label. Fully vectorized."""
        # class_cum[b, s] = cumulative count of class tokens up to position s
        class_cum = class_token_mask.long().cumsum(dim=-1)  # (batch, seq)

        if self.config.extract_text_features:
            text_token_mask = (input_ids == self.config.text_token_index)
        else:
            text_token_mask = torch.zeros_like(class_token_mask)
        # text_cum[b, s] >= 1 at and after the text token → use as exclusion boundary
        text_cum = text_token_mask.long().cumsum(dim=-1)  # (batch, seq)

        # span_mask[b, k, s] = True if token s belongs to the span of class k
        k_range = torch.arange(max_embed_dim, device=token_embeds.device).view(1, -1, 1)
        span_mask = (
            (class_cum.unsqueeze(1) == (k_range + 1))  # in the span of class k
            & (text_cum.unsqueeze(1) == 0)             # before the text boundary
            & attention_mask.unsqueeze(1).bool()        # real token (not padding)
        )
        if not self.config.embed_class_token:
            span_mask = span_mask & ~class_token_mask.unsqueeze(1)

        span_float = span_mask.to(token_embeds.dtype)  # (batch, max_embed_dim, seq)
        class_counts = span_float.sum(dim=-1, keepdim=True).clamp(min=1)
        classes_embedding = torch.einsum('bks,bsd->bkd', span_float, token_embeds) / class_counts

        arange_k = torch.arange(max_embed_dim, device=token_embeds.device).unsqueeze(0)
        classes_embedding_mask = (arange_k < num_class_tokens).to(attention_mask.dtype)

        return classes_embedding, classes_embedding_mask
