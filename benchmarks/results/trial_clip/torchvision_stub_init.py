"""Stub torchvision for the CLIP trial: PyPI's torchvision 0.28.0 (and the realcode venv's) is a
CUDA build that fails beside torch 2.13.0+cpu ("operator torchvision::nms does not exist").
clip/clip.py needs only the names below at import time; none of the trial's models calls them."""
from . import transforms  # noqa: F401
__version__ = "0.0.0+stub"
