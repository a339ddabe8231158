# pt2bot for GPU runners: use it as a `container:` job image with `options: --gpus all`.
# It also runs on CPU. pt2bot needs no network at run time; your project's own
# dependencies must be installed by your job (or baked into an image built FROM this one).
#
# The base is an official PyTorch CUDA *runtime* image pinned by tag (torch + CUDA + cuDNN,
# no compilers). torch.compile's inductor backend needs a C compiler for CPU kernels and
# Triton for GPU kernels; Triton ships with the torch wheel in this image.
#
# torch 2.14.1 is a release pt2bot's suite runs on (`make test-torch TORCH=2.14.1`: the
# CUDA 13.0 build of the PyPI wheel, whose cuDNN is 9, hence this tag, following the
# official images' `<torch>-cuda<X.Y>-cudnn<N>-runtime` naming). NOT pulled or built here:
# the development machine has no Docker engine and no registry access; only hadolint read
# this file (tests/test_workflows.py). Check the tag exists before relying on the image.
FROM pytorch/pytorch:2.14.1-cuda13.0-cudnn9-runtime

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /opt/pt2bot
COPY pyproject.toml README.md ./
COPY pt2bot ./pt2bot

# torch is already in the image: pt2bot itself depends only on PyGithub, PyYAML, unidiff;
# tlparse (a wheel with its binary, pinned as the tlparse extra) renders the compile reports.
# UID 1001 is the GitHub-hosted runner's user, so files written to the mounted workspace
# stay writable by later steps.
RUN python -m pip install --no-cache-dir . "tlparse==0.4.3" \
 && useradd --create-home --uid 1001 --shell /usr/sbin/nologin pt2bot

USER 1001
WORKDIR /github/workspace
ENTRYPOINT ["pt2bot"]
CMD ["--help"]
