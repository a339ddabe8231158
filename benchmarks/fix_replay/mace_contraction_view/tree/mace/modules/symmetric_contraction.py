# Replay excerpt of ACEsuit/mace at b005d9bcbb25e9a1b743ad5271d6aec74a50f224, mace/modules/symmetric_contraction.py (MIT; the upstream licence header follows where the file has one).
# Kept verbatim: Contraction.forward, Contraction.U_tensors. Left out: all of symmetric_contraction.py but Contraction.forward and U_tensors (verbatim): SymmetricContraction and Contraction's __init__ (a stub setting the buffers, parameters and contractions forward reads, for correlation 2 and an l=1 output, whose result is 3-D before the final view).
# Upstream LICENSE.md:
# MIT License
#
# Copyright (c) 2022 ACEsuit/mace
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
###########################################################################################
# Implementation of the symmetric contraction algorithm presented in the MACE paper
# (Batatia et al, MACE: Higher Order Equivariant Message Passing Neural Networks for Fast and Accurate Force Fields , Eq.10 and 11)
# Authors: Ilyes Batatia
# This program is distributed under the MIT License (see MIT.md)
###########################################################################################

from typing import Dict, Optional, Union

import torch
from torch import nn


class _Einsum(nn.Module):
    # stand-in for the torch.fx GraphModules that opt_einsum_fx.optimize_einsums_full returns:
    # the same contraction, unoptimised
    def __init__(self, equation: str) -> None:
        super().__init__()
        self.equation = equation

    def forward(self, *operands: torch.Tensor) -> torch.Tensor:
        return torch.einsum(self.equation, *operands)


class Contraction(torch.nn.Module):
    # trimmed: __init__ sets what the real one builds for correlation 2 and an l=1 output
    # (`1o`, 3 components): the einsum equations its loop writes, not traced and optimised by
    # opt_einsum_fx, and random U matrices in place of mace.tools.cg.U_matrix_real's
    def __init__(self, num_elements: int = 3, num_features: int = 4, num_ell: int = 4,
                 num_params: int = 2) -> None:
        super().__init__()
        self.num_features = num_features
        self.correlation = 2
        g = torch.Generator().manual_seed(0)
        self.register_buffer("U_matrix_1", torch.randn(3, num_ell, num_params, generator=g))
        self.register_buffer("U_matrix_2", torch.randn(3, num_ell, num_ell, num_params, generator=g))
        self.graph_opt_main = _Einsum("wxik,ekc,bci,be -> bcwx")
        self.weights_max = nn.Parameter(torch.randn(num_elements, num_params, num_features, generator=g))
        self.contractions_weighting = nn.ModuleList([_Einsum("wxk,ekc,be->bcwx")])
        self.contractions_features = nn.ModuleList([_Einsum("bcwi,bci->bcw")])
        self.weights = nn.ParameterList([nn.Parameter(torch.randn(num_elements, num_params, num_features,
                                                                  generator=g))])

    def forward(self, x: torch.Tensor, y: torch.Tensor):
        out = self.graph_opt_main(
            self.U_tensors(self.correlation),
            self.weights_max,
            x,
            y,
        )
        for i, (weight, contract_weights, contract_features) in enumerate(
            zip(self.weights, self.contractions_weighting, self.contractions_features)
        ):
            c_tensor = contract_weights(
                self.U_tensors(self.correlation - i - 1),
                weight,
                y,
            )
            c_tensor = c_tensor + out
            out = contract_features(c_tensor, x)

        return out.view(out.shape[0], -1)

    def U_tensors(self, nu: int):
        return dict(self.named_buffers())[f"U_matrix_{nu}"]
