"""Which classes of torch itself are `nn.Module`s, as a resolved dotted name spells them.

Real code derives from torch's private bases as well as its public ones: monai's losses from
`torch.nn.modules.loss._Loss`, norm layers from `torch.nn.modules.batchnorm._BatchNorm`, custom
convolutions from `torch.nn.modules.conv._ConvNd` (without those, monai's `DiceLoss.forward` was
not seen as compiled code, so its `.tolist()` break went unflagged). Public names are taken by their
spelling (an upper-case class under `torch.nn.`), so a module class a later torch adds still counts;
the private ones and the public non-modules cannot be told by spelling and are listed.

Both lists are checked against the installed torch by tests/test_torch_modules.py (every private
`nn.Module` subclass in `torch.nn.modules.*` is listed, every listed name is one; every listed
non-module is not): regenerate them from torch when that test fails.
"""
from __future__ import annotations

# Every class in torch.nn.modules.* whose name starts with "_" and that subclasses nn.Module
# (torch 2.13 and 2.14).
PRIVATE_MODULE_CLASSES = frozenset({
    "_AdaptiveAvgPoolNd", "_AdaptiveMaxPoolNd", "_AvgPoolNd", "_BatchNorm", "_CircularPadNd",
    "_ConstantPadNd", "_ConvNd", "_ConvTransposeMixin", "_ConvTransposeNd", "_DropoutNd",
    "_InstanceNorm", "_LPPoolNd", "_LazyNormBase", "_Loss", "_MaxPoolNd", "_MaxUnpoolNd",
    "_NormBase", "_ReflectionPadNd", "_ReplicationPadNd", "_WeightedLoss",
})

# Upper-case names under torch.nn that are not modules (tensors, mixins, records, options).
NOT_MODULE_CLASSES = frozenset({
    "Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer", "LazyModuleMixin",
    "PackedSequence", "LinearCrossEntropyOptions",
})


def is_torch_module_class(dotted: str) -> bool:
    """`dotted` (a resolved name: `torch.nn.Linear`, `torch.nn.modules.loss._Loss`) names a class
    of torch's that is an `nn.Module`."""
    if not dotted.startswith("torch.nn.") or dotted.startswith("torch.nn.functional."):
        return False
    last = dotted.rpartition(".")[2]
    if last[:1] == "_":
        return last in PRIVATE_MODULE_CLASSES
    return last[:1].isupper() and last not in NOT_MODULE_CLASSES
