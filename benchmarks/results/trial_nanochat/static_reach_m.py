import torch
import torch.nn.functional as F

def attn_local(q, k, v, window):
    Tq = q.size(2)
    Tk = k.size(2)
    if window >= Tq and Tq == Tk:
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)
    return F.scaled_dot_product_attention(q, k, v)

def attn_inline(q, k, v, window):
    if window >= q.size(2):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)
    return F.scaled_dot_product_attention(q, k, v)

class M(torch.nn.Module):
    def forward(self, q, k, v):
        Tq = q.size(2)
        if Tq > 4:
            return q
        return attn_local(q, k, v, 4)
