# Replay excerpt of naver/roma at 4faa9af66f361b9b4a12ae0b9eb788d70012148a, roma/mappings.py (BSD-3-Clause; the upstream licence header follows where the file has one).
# Kept verbatim: inv_sinc, unitquat_to_rotvec. Left out: the rest of mappings.py (the other conversions, Procrustes and its autograd Function); roma/internal.py, which unitquat_to_rotvec calls for its batch dimensions, is kept whole as its own file; the package's __init__.py (the replay's is empty).
# Upstream LICENSE:
# RoMa
# Copyright (c) 2020 NAVER Corp.
#
# Redistribution and use in source and binary forms, with or without modification, are permitted provided that the following conditions are met:
#
# 1. Redistributions of source code must retain the above copyright notice, this list of conditions and the following disclaimer.
#
# 2. Redistributions in binary form must reproduce the above copyright notice, this list of conditions and the following disclaimer in the documentation and/or other materials provided with the distribution.
#
# 3. Neither the name of the copyright holder nor the names of its contributors may be used to endorse or promote products derived from this software without specific prior written permission.
#
# THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS “AS IS” AND ANY EXPRESS OR IMPLIED WARRANTIES, INCLUDING, BUT NOT LIMITED TO, THE IMPLIED WARRANTIES OF MERCHANTABILITY AND FITNESS FOR A PARTICULAR PURPOSE ARE DISCLAIMED. IN NO EVENT SHALL THE COPYRIGHT HOLDER OR CONTRIBUTORS BE LIABLE FOR ANY DIRECT, INDIRECT, INCIDENTAL, SPECIAL, EXEMPLARY, OR CONSEQUENTIAL DAMAGES (INCLUDING, BUT NOT LIMITED TO, PROCUREMENT OF SUBSTITUTE GOODS OR SERVICES; LOSS OF USE, DATA, OR PROFITS; OR BUSINESS INTERRUPTION) HOWEVER CAUSED AND ON ANY THEORY OF LIABILITY, WHETHER IN CONTRACT, STRICT LIABILITY, OR TORT (INCLUDING NEGLIGENCE OR OTHERWISE) ARISING IN ANY WAY OUT OF THE USE OF THIS SOFTWARE, EVEN IF ADVISED OF THE POSSIBILITY OF SUCH DAMAGE.
# RoMa
# Copyright (c) 2020 NAVER Corp.
# 3-Clause BSD License.

import torch
import roma.internal


def inv_sinc(x, threshold=1e-3):
    r"""
    Inverse of the sinc function :math:`\mathrm{inv\_sinc}(x) = x / \sin(x)`.

    Args:
        x (... tensor): input values.
    Returns:
        batch of inv_sinc values (... tensor).
    """
    mask = torch.abs(x) < threshold
    return torch.where(mask, 1 + x**2 / 6 + 7 * x**4 / 360, x / torch.sin(x).clamp_min(threshold))


def unitquat_to_rotvec(quat, shortest_arc=True):
    r"""
    Converts unit quaternion into rotation vector representation.

    Based on the representation of a rotation of angle :math:`{\theta}` and unit axis :math:`(x,y,z)` 
    by the unit quaternions :math:`\pm [\sin({\theta} / 2) (x i + y j + z k) + \cos({\theta} / 2)]`.

    Args:
        quat (...x4 tensor, XYZW convention): batch of unit quaternions.
            No normalization is applied before computation.
        shortest_arc (bool): if True, the function returns the smallest rotation vectors corresponding 
            to the input 3D rotations, i.e. rotation vectors with a norm smaller than :math:`\pi`.
            If False, the function may return rotation vectors of norm larger than :math:`\pi`, depending on the sign of the input quaternions.
    Returns:
        batch of rotation vectors (...x3 tensor).
    Note:
        Behavior is undefined for inputs ``quat=torch.as_tensor([0.0, 0.0, 0.0, -1.0])`` and ``shortest_arc=False``, 
        as any rotation vector of angle :math:`2 \pi` could be a valid representation in such case.
    """
    quat, batch_shape = roma.internal.flatten_batch_dims(quat, end_dim=-2)
    # We perform a copy to support auto-differentiation.
    quat = quat.clone()
    # Adapted from SciPy:
    # https://github.com/scipy/scipy/blob/adc4f4f7bab120ccfab9383aba272954a0a12fb0/scipy/spatial/transform/rotation.py#L1006-L1073
    if shortest_arc:
        # Enforce w > 0 to ensure 0 <= angle <= pi.
        # (Otherwise angle can be arbitrary within ]-2pi, 2pi]).
        sign = torch.where(quat[:, 3:4] < 0, -1.0, 1.0)
        quat = quat * sign
    half_angle = torch.atan2(torch.norm(quat[:, :3], dim=1), quat[:, 3])
    scale = 2. * inv_sinc(half_angle, 1e-3)
    rotvec = scale[:, None] * quat[:, :3]
    return roma.internal.unflatten_batch_dims(rotvec, batch_shape)
