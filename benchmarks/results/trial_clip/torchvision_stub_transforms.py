import enum


class InterpolationMode(enum.Enum):
    NEAREST = "nearest"
    BILINEAR = "bilinear"
    BICUBIC = "bicubic"


def _stub(name):
    class _T:
        def __init__(self, *a, **k):
            raise RuntimeError(f"torchvision stub: {name} is not available in this trial")
    _T.__name__ = name
    return _T


Compose = _stub("Compose")
Resize = _stub("Resize")
CenterCrop = _stub("CenterCrop")
ToTensor = _stub("ToTensor")
Normalize = _stub("Normalize")
