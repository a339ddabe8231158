# Replay excerpt of chen0430tw/APT-Transformer at 45284c62ac782097ef2e407c62c4a34b79c9130b, apt/model/architectures/apt_model.py (MIT; the upstream licence header follows where the file has one).
# Kept verbatim: SwiGLU, TopKRouter, MoEFFN. Left out: the rest of apt/model/architectures/apt_model.py (the DBC-DAC gradient stabilizer, whose hook is the first hunk, skipped; attention, encoder/decoder layers and the APT model) and its imports of apt.core.fake_torch and the Left-Spin layers; the commit's other file (apt/model/layers/left_spin_smooth.py) is not replayed.
# Upstream LICENSE:
# MIT License
#
# Copyright (c) 2024-2026 APT-Transformer Team
#
# Permission is hereby granted, free of charge, to any person obtaining a copy
# of this software and associated documentation files (the "Software"), to deal
# in the Software without restriction, including without limitation the rights
# to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
# copies of the Software, and to permit persons to whom the Software is
# furnished to do so, subject to the following conditions:
#
# The above copyright notice and this permission notice shall be included in all
# copies or substantial portions of the Software.
#
# THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
# IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
# FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
# AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
# LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
# OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
# SOFTWARE.
#!/usr/bin/env python
# -*- coding: utf-8 -*-

# apt.core.fake_torch.get_torch() returns the real torch module when torch is
# installed (a stand-in for the replay, not upstream code):
import torch
nn = torch.nn
F = torch.nn.functional
from typing import Optional, Tuple, List, Dict, Union


class SwiGLU(nn.Module):
    """SwiGLU feed-forward: (xW1) * silu(xW2) then W3."""
    def __init__(self, in_dim: int, hidden_dim: int, out_dim: int, dropout: float = 0.0):
        super().__init__()
        self.w12 = nn.Linear(in_dim, hidden_dim * 2)
        self.w3 = nn.Linear(hidden_dim, out_dim)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x12 = self.w12(x)
        x1, x2 = x12.chunk(2, dim=-1)
        # silu = x * sigmoid(x)
        x = x1 * torch.sigmoid(x2)  # lightweight SiLU-ish gating (silu(x2) * x1 approximated)
        x = self.dropout(x)
        return self.w3(x)


class TopKRouter(nn.Module):
    """Top-K 门控路由器（Switch/ST-MoE 风格）

    职责:
      1. 将 token hidden state 映射到 num_experts 维 logits
      2. 选出 top_k 专家并返回归一化权重
      3. 计算 load-balancing aux loss + router z-loss

    参数:
        d_model:        隐藏维度
        num_experts:    专家总数
        top_k:          每个 token 选几个专家
        noisy_gating:   训练时是否加噪声探索
        noise_std:      噪声标准差
    """

    def __init__(
        self,
        d_model: int,
        num_experts: int,
        top_k: int = 1,
        noisy_gating: bool = True,
        noise_std: float = 1.0,
    ):
        super().__init__()
        self.num_experts = num_experts
        self.top_k = top_k
        self.noisy_gating = noisy_gating
        self.noise_std = noise_std

        self.gate = nn.Linear(d_model, num_experts, bias=False)
        if noisy_gating:
            self.noise_linear = nn.Linear(d_model, num_experts, bias=False)

    def forward(
        self,
        x: torch.Tensor,
    ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """
        参数:
            x: (B, T, D)  token hidden states

        返回:
            weights:   (B, T, top_k)   归一化路由权重
            indices:   (B, T, top_k)   所选专家下标
            aux_loss:  scalar          辅助损失 (balance + z-loss)
        """
        # logits: (B, T, E)
        logits = self.gate(x)

        # 训练时添加可学习噪声以促进探索
        if self.training and self.noisy_gating:
            noise = torch.randn_like(logits) * F.softplus(self.noise_linear(x)) * self.noise_std
            logits = logits + noise

        # --- 辅助损失 ---
        aux_loss = self._compute_aux_loss(logits)

        # top-k 选择
        top_k_logits, top_k_indices = torch.topk(logits, self.top_k, dim=-1)  # (B,T,k)
        top_k_weights = torch.softmax(top_k_logits, dim=-1)                    # (B,T,k)

        return top_k_weights, top_k_indices, aux_loss

    def _compute_aux_loss(self, logits: torch.Tensor) -> torch.Tensor:
        """计算 Switch-style load-balancing loss + router z-loss。

        balance loss = N * sum_i(f_i * P_i)
        z-loss       = mean(logsumexp(logits)^2)
        """
        # logits: (B, T, E)
        num_experts = logits.size(-1)
        probs = torch.softmax(logits, dim=-1)  # (B,T,E)

        # f_i: 每个专家被 top-k 选中的 token 比例
        _, top_indices = torch.topk(logits, self.top_k, dim=-1)          # (B,T,k)
        expert_mask = torch.zeros_like(probs)
        expert_mask.scatter_(-1, top_indices, 1.0)                        # (B,T,E)
        f = expert_mask.float().mean(dim=(0, 1))                          # (E,)

        # P_i: 每个专家获得的平均路由概率
        P = probs.mean(dim=(0, 1))                                        # (E,)

        # Switch Transformer balance loss
        balance_loss = num_experts * (f * P).sum()

        # Router z-loss: 防止 logits 过大导致数值不稳
        z_loss = torch.logsumexp(logits, dim=-1).pow(2).mean()

        return balance_loss + z_loss


class MoEFFN(nn.Module):
    """MoE-Ready FFN：支持 Dense / MoE 可切换的前馈网络

    当 use_moe=False 时退化为普通 Dense FFN (aux_loss=0)。
    当 use_moe=True 时：
      - 创建 num_experts 个 FFN 专家
      - 用 TopKRouter 选专家
      - 可选 shared_expert（always-on 的 dense 专家当底盘）
      - forward 返回 (output, aux_loss)

    后端策略（可扩展）:
      - 默认: 纯 PyTorch loop dispatch (兼容性最好)
      - 可选: megablocks / scattermoe / tutel (安装后自动启用)
    """

    def __init__(
        self,
        d_model: int,
        dim_feedforward: int,
        dropout: float = 0.0,
        activation: str = "gelu",
        use_swiglu: bool = True,
        # --- MoE 参数 ---
        use_moe: bool = False,
        num_experts: int = 8,
        top_k: int = 1,
        capacity_factor: float = 1.25,
        shared_expert: bool = True,
        noisy_gating: bool = True,
    ):
        super().__init__()
        self.use_moe = use_moe
        self.d_model = d_model
        self.top_k = top_k
        self.capacity_factor = capacity_factor
        self.use_shared_expert = shared_expert and use_moe

        if not use_moe:
            # --- Dense 模式 ---
            if use_swiglu:
                self.dense_ffn = SwiGLU(d_model, dim_feedforward, d_model, dropout=dropout)
            else:
                self.dense_ffn = nn.Sequential(
                    nn.Linear(d_model, dim_feedforward),
                    nn.GELU() if activation == "gelu" else nn.ReLU(),
                    nn.Dropout(dropout),
                    nn.Linear(dim_feedforward, d_model),
                )
        else:
            # --- MoE 模式 ---
            self.router = TopKRouter(
                d_model=d_model,
                num_experts=num_experts,
                top_k=top_k,
                noisy_gating=noisy_gating,
            )

            # 创建 num_experts 个独立 FFN 专家
            experts = []
            for _ in range(num_experts):
                if use_swiglu:
                    experts.append(SwiGLU(d_model, dim_feedforward, d_model, dropout=dropout))
                else:
                    experts.append(nn.Sequential(
                        nn.Linear(d_model, dim_feedforward),
                        nn.GELU() if activation == "gelu" else nn.ReLU(),
                        nn.Dropout(dropout),
                        nn.Linear(dim_feedforward, d_model),
                    ))
            self.experts = nn.ModuleList(experts)

            # 可选 shared expert (always-on dense 专家)
            if self.use_shared_expert:
                if use_swiglu:
                    self.shared_expert_ffn = SwiGLU(d_model, dim_feedforward, d_model, dropout=dropout)
                else:
                    self.shared_expert_ffn = nn.Sequential(
                        nn.Linear(d_model, dim_feedforward),
                        nn.GELU() if activation == "gelu" else nn.ReLU(),
                        nn.Dropout(dropout),
                        nn.Linear(dim_feedforward, d_model),
                    )
                # 融合门控：控制 shared_expert 和 routed_expert 的比例
                self.shared_gate = nn.Linear(d_model, 1, bias=True)

    def forward(self, x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        """
        参数:
            x: (B, T, D)

        返回:
            output:   (B, T, D)
            aux_loss: scalar (Dense 模式下为 0)
        """
        if not self.use_moe:
            return self.dense_ffn(x), torch.tensor(0.0, device=x.device, dtype=x.dtype)

        # --- MoE dispatch ---
        B, T, D = x.shape
        weights, indices, aux_loss = self.router(x)  # (B,T,k), (B,T,k), scalar

        # Token-level dispatch: 对每个 token 加权组合 top_k 专家输出
        # 使用高效的 batch 实现，避免 python-level loop over tokens
        x_flat = x.view(B * T, D)                                  # (N, D)
        weights_flat = weights.view(B * T, self.top_k)              # (N, k)
        indices_flat = indices.view(B * T, self.top_k)              # (N, k)

        # 向量化 dispatch：单层循环（仅遍历专家数），无嵌套 Python 循环，无 .any() CPU 同步
        # 对每个专家，合并来自所有 top_k 槽的权重之和，再加权累加专家输出
        # 未路由到该专家的 token 权重为 0，贡献自然为 0，无需掩码索引
        output = torch.zeros_like(x_flat)  # (N, D)

        for e_idx, expert in enumerate(self.experts):
            # combined_weight[i] = 分配给 expert e_idx 的总权重（多个 top_k 槽求和）
            combined_weight = (
                weights_flat * (indices_flat == e_idx).to(weights_flat.dtype)
            ).sum(dim=-1)  # (N,)
            expert_out = expert(x_flat)   # (N, D)
            output = output + combined_weight.unsqueeze(-1) * expert_out

        output = output.view(B, T, D)

        # --- Shared expert ---
        if self.use_shared_expert:
            shared_out = self.shared_expert_ffn(x)                      # (B,T,D)
            gate = torch.sigmoid(self.shared_gate(x.mean(dim=1, keepdim=True)))  # (B,1,1)
            output = gate * shared_out + (1.0 - gate) * output

        return output, aux_loss
