import torch
import torch.nn.functional as F

def sdpa_like(q, k, v, window_size, enable_gqa):
    Tq = q.size(2)
    Tk = k.size(2)
    window = window_size[0]
    if (window < 0 or window >= Tq) and Tq == Tk:
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=enable_gqa)
    return F.scaled_dot_product_attention(q, k, v)

def no_paren(q, k, v, window):
    Tq = q.size(2)
    Tk = k.size(2)
    if window < 0 or window >= Tq:
        return q
    return k

def inline(q, window):
    if window >= q.size(2):
        return q
    return q * 2
