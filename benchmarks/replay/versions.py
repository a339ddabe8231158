"""The releases replayed as "PRs" (pinned; consecutive on the local registry's index).

Each list is oldest → newest and ends at the release benchmarks/real_code judged line by line
(benchmarks/real_code/requirements.lock), so the newest tree's findings can be matched against
that benchmark's dynamo truth and hand labels. local-attention is in no real_code run: its red
PRs are judged by hand alone.

FRESH: histories added after the rules had been worked on against the others' red PRs; report.py
gives their figures apart, as the replay's held-out set.
"""

from __future__ import annotations

# package name on the index → (import package directory inside the wheel, releases)
LIBRARIES: dict[str, tuple[str, list[str]]] = {
    "x-transformers": ("x_transformers", [
        "2.28.3", "2.28.4", "2.28.5", "2.28.6", "2.28.7", "2.28.8", "2.28.9", "2.28.10",
        "2.28.11", "2.29.0", "2.29.1", "2.29.2", "2.29.3", "2.29.4", "2.30.0", "2.30.1",
        "2.30.2", "2.30.3", "2.30.4", "2.30.5", "2.31.0", "2.31.2", "2.31.4", "2.31.5",
        "2.31.6", "2.31.7", "2.31.8", "2.31.10",
    ]),
    "vit-pytorch": ("vit_pytorch", [
        "1.23.0", "1.23.1", "1.23.2", "1.23.4", "1.23.5", "1.23.6", "1.23.7", "1.23.8",
        "1.24.0", "1.24.1", "1.24.2", "1.25.0", "1.26.0", "1.26.1", "1.26.2", "1.26.4",
        "1.26.5", "1.26.6", "1.26.7", "1.26.8", "1.26.9", "1.26.10", "1.26.11", "1.26.14",
    ]),
    "denoising-diffusion-pytorch": ("denoising_diffusion_pytorch", [
        "2.0.14", "2.0.15", "2.0.16", "2.0.17", "2.0.18", "2.1.0", "2.1.1", "2.2.0",
        "2.2.1", "2.2.2", "2.2.3", "2.2.4", "2.2.5", "2.2.6", "2.3.0", "2.3.1", "2.3.2",
        "2.3.4",
    ]),
    "kornia": ("kornia", ["0.7.2", "0.7.3", "0.7.4", "0.8.0", "0.8.1", "0.8.2", "0.8.3", "0.9.0"]),
    "vector-quantize-pytorch": ("vector_quantize_pytorch", [
        "1.27.8", "1.27.9", "1.27.10", "1.27.11", "1.27.12", "1.27.14", "1.27.15", "1.27.16",
        "1.27.17", "1.27.18", "1.27.19", "1.27.20", "1.27.21", "1.28.0", "1.28.1", "1.28.2",
        "1.28.3", "1.29.0", "1.29.1", "1.30.0", "1.30.1", "1.31.0", "1.31.1", "1.31.2",
        "1.31.4", "1.31.6", "1.32.0",
    ]),
    "segmentation-models-pytorch": ("segmentation_models_pytorch", [
        "0.3.0", "0.3.1", "0.3.2", "0.3.3", "0.3.4", "0.4.0", "0.5.0", "0.6.0",
    ]),
    "local-attention": ("local_attention", [
        "1.9.0", "1.9.1", "1.9.2", "1.9.3", "1.9.4", "1.9.6", "1.9.8", "1.9.9", "1.9.10",
        "1.9.11", "1.9.14", "1.9.15", "1.10.0", "1.10.1", "1.11.0", "1.11.1", "1.11.2",
    ]),
}
FRESH: frozenset[str] = frozenset({"vector-quantize-pytorch", "segmentation-models-pytorch",
                                   "local-attention"})
