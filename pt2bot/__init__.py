"""pt2bot: reviews PyTorch pull requests for torch.compile / torch.export friendliness."""
from __future__ import annotations

__version__ = "0.1.0"
