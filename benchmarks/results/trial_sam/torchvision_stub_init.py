# STUB written by the SAM trial: no CPU torchvision 0.28.0 wheel is on this machine and PyPI's
# 0.28.0 (CUDA build) fails to import beside torch 2.13.0+cpu ("operator torchvision::nms does not
# exist"). segment_anything/__init__ imports automatic_mask_generator and utils.transforms, which
# import these names at module level; none of the models in this trial call them.
__version__ = "0.0-stub"
