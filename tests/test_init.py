"""`pt2bot init`: static discovery and input inference, the written config (validated by the
project's loader), --force, and --check with real smoke workers on the bundled example and
on two real model libraries from the registry (g-mlp-pytorch, conformer: pure PyTorch +
einops, pinned in the test extra)."""
from __future__ import annotations

import importlib.util
import os
import shutil
import textwrap
from pathlib import Path

import pytest

from pt2bot.cli import main
from pt2bot.configfile import load_config
from pt2bot.init import discover

ROOT = Path(__file__).resolve().parents[1]


def _repo(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "repo"
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(text))
    return root


def _zoo(tmp_path: Path) -> Path:
    """The example project as `make demo` lays it out: zoo/ at the repository root."""
    root = tmp_path / "repo"
    shutil.copytree(ROOT / "examples" / "zoo", root / "zoo")
    return root


def _model(config, name):
    return next(m for m in config.models if m.name == name)


def test_bundled_example_proposes_both_models(tmp_path, capsys):
    root = _zoo(tmp_path)
    assert main(["init", str(root)]) == 0
    text = (root / "pt2bot.yml").read_text()
    config = load_config(str(root / "pt2bot.yml"))
    assert [m.name for m in config.models] == ["tiny_encoder", "tiny_mlp"]
    enc = _model(config, "tiny_encoder")
    assert enc.entry == "zoo.encoder:TinyEncoder" and enc.kwargs == {}
    [ids] = enc.inputs
    assert (ids.name, ids.shape, ids.dtype, ids.low, ids.high) == (
        "tokens", ("batch", "seq"), "int64", 0, 100)   # nn.Embedding(vocab=100, dim)
    assert enc.dynamic == ("batch", "seq") and len(enc.shape_cases()) == 4
    mlp = _model(config, "tiny_mlp")
    [x] = mlp.inputs
    assert (x.name, x.shape, x.dtype) == ("x", ("batch", 32), "float32")  # Sequential(Linear(32
    assert "# from the first layer, nn.Embedding(100, ...)" in text
    assert "#   zoo.layers:FeedForward" in text     # a building block, not a model
    assert config.static.paths == ("zoo/",)
    assert "wrote" in capsys.readouterr().out


def test_refuses_to_overwrite_without_force(tmp_path, capsys):
    root = _zoo(tmp_path)
    (root / "pt2bot.yml").write_text("version: 1\n# mine\n")
    assert main(["init", str(root)]) == 2
    assert "exists; pass --force" in capsys.readouterr().err
    assert (root / "pt2bot.yml").read_text() == "version: 1\n# mine\n"
    assert main(["init", str(root), "--force"]) == 0
    assert "tiny_encoder" in (root / "pt2bot.yml").read_text()


INFER = {
    "pkg/__init__.py": "",
    "pkg/blocks.py": """\
        from torch import nn


        class Stem(nn.Module):
            def __init__(self, in_ch, width=16):
                super().__init__()
                self.conv = nn.Conv2d(in_ch, width, 3)

            def forward(self, img):
                return self.conv(img)
        """,
    "pkg/models.py": """\
        import torch
        import torch.nn as nn

        from .blocks import Stem


        class ConvNet(nn.Module):
            def __init__(self, channels: int = 1, image_size: int = 28) -> None:
                super().__init__()
                self.stem = Stem(channels * 2, width=8)

            def forward(self, x):
                return self.stem(x).mean()


        class Tokens(nn.Module):
            def __init__(self, *, num_tokens=None, dim):
                super().__init__()
                emb = nn.Embedding(num_tokens, dim) if num_tokens else nn.Identity()
                self.embed = emb
                self.out = nn.Linear(dim, 2)

            def forward(self, ids):
                return self.out(self.embed(ids))


        class Base(nn.Module):
            def forward(self, x):
                raise NotImplementedError


        class Head(Base):
            def __init__(self, d=12):
                super().__init__()
                self.net = nn.Sequential(nn.Linear(d, 4), nn.ReLU())

            def forward(self, x):
                y = torch.tanh(x)
                return self.net(x) + y.sum()


        class TwoInputs(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)

            def forward(self, x, t):
                return self.fc(x) * t


        class NeedsSomething(nn.Module):
            def __init__(self, backbone):
                super().__init__()
                self.backbone = backbone

            def forward(self, x):
                return self.backbone(x)


        class NotAModel:
            def forward(self, x):
                return x
        """,
}


def test_inference_through_sequential_conditionals_and_repo_classes(tmp_path):
    root = _repo(tmp_path, INFER)
    proposals, blocks = discover(str(root))
    by = {p.name: p for p in proposals}
    assert set(by) == {"conv_net", "tokens", "head", "two_inputs", "needs_something"}
    assert blocks == ["pkg.blocks:Stem"]       # built by ConvNet; Base is abstract

    conv = by["conv_net"]                       # Stem(channels * 2) → Conv2d(2, ...)
    assert conv.inputs[0].shape == ("batch", 2, "height", "width")
    assert conv.shapes == {"batch": (2, 4), "height": (28,), "width": (28,)}
    assert "nn.Conv2d(2, ...) in Stem" in conv.how and not conv.problems

    tok = by["tokens"]                          # the Embedding branch, num_tokens guessed
    assert tok.inputs[0].dtype == "int64" and tok.inputs[0].high == 100
    assert tok.kwargs == {"dim": 32, "num_tokens": 100} and set(tok.guessed) == {"dim", "num_tokens"}

    assert by["head"].inputs[0].shape == ("batch", 12)        # inherited forward overridden
    assert "t" in by["two_inputs"].problems[0]
    assert "backbone" in by["needs_something"].problems[0]

    assert main(["init", str(root)]) == 0
    text = (root / "pt2bot.yml").read_text()
    config = load_config(str(root / "pt2bot.yml"))
    assert {m.name for m in config.models} == {"conv_net", "tokens", "head"}
    # what could not be inferred is a commented-out entry saying why
    assert "# pkg.models:TwoInputs (pkg/models.py:" in text and "forward() also needs t" in text
    assert "  # - name: needs_something" in text
    assert "no value for the constructor argument 'backbone'" in text


CHECK_EXTRA = {
    "zoo/broken.py": """\
        from torch import nn


        class Reshaper(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 4)

            def forward(self, x):
                return self.fc(x).view(3, 7)
        """,
}


@pytest.mark.torch
@pytest.mark.slow
def test_check_keeps_the_entries_that_run(tmp_path, capsys):
    root = _zoo(tmp_path)
    for rel, text in CHECK_EXTRA.items():
        (root / rel).write_text(textwrap.dedent(text))
    assert main(["init", str(root), "--check"]) == 0
    text = (root / "pt2bot.yml").read_text()
    config = load_config(str(root / "pt2bot.yml"))
    assert [m.name for m in config.models] == ["tiny_encoder", "tiny_mlp"]
    assert "# zoo.broken:Reshaper (zoo/broken.py:4) is not proposed: --check: error" in text
    why = text.split("zoo.broken:Reshaper", 1)[1].splitlines()[0]
    assert "at zoo/broken.py:10" in why and "shape '[3, 7]' is invalid" in why
    out = capsys.readouterr().out
    assert "2 model(s) proposed, 1 commented out" in out


def _installed(dist: str, package: str) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        pytest.skip(f"{dist} is not installed (pip install '.[test]' pins it)")
    return Path(list(spec.submodule_search_locations)[0])


@pytest.mark.torch
@pytest.mark.slow
def test_real_libraries_g_mlp_and_conformer(tmp_path, capsys):
    # Their sources as a repository of their own (as if unzipped from the wheels), imported
    # from there by the smoke workers.
    libs = {"g-mlp-pytorch": "g_mlp_pytorch", "conformer": "conformer"}
    root = tmp_path / "repo"
    for dist, pkg in libs.items():
        shutil.copytree(_installed(dist, pkg), root / pkg,
                        ignore=shutil.ignore_patterns("__pycache__"))
    proposals, blocks = discover(str(root))
    by = {p.entry: p for p in proposals}
    gmlp = by["g_mlp_pytorch.g_mlp_pytorch:gMLP"]
    assert (gmlp.inputs[0].shape, gmlp.inputs[0].dtype) == (("batch", "seq"), "int64")
    assert gmlp.shapes["seq"] == (16,) and gmlp.kwargs["seq_len"] == 16   # seq must be seq_len
    vision = by["g_mlp_pytorch.g_mlp_pytorch:gMLPVision"]
    assert vision.inputs[0].shape == ("batch", 3, "height", "width")
    assert "conformer.conformer:ConformerBlock" in blocks
    assert by["g_mlp_pytorch.autoregressive_wrapper:AutoregressiveWrapper"].problems

    assert main(["init", str(root), "--check"]) == 0
    config = load_config(str(root / "pt2bot.yml"))
    kept = {m.entry for m in config.models}
    assert {"g_mlp_pytorch.g_mlp_pytorch:gMLP", "g_mlp_pytorch.g_mlp_pytorch:gMLPVision",
            "conformer.conformer:Conformer"} <= kept
    print(capsys.readouterr().out)   # the per-model verdicts, for the log
    assert os.path.isfile(root / "pt2bot.yml")


SHARED = {
    # torch's private bases (the analysis engine's list, pt2bot/analysis/torch_modules.py)
    "losses/__init__.py": "from .dice import *\n",
    "losses/dice.py": """\
        import torch
        from torch.nn.modules.loss import _Loss


        class DiceLoss(_Loss):
            def forward(self, input, target):
                return (input - target).abs().mean()


        class SmoothConv(torch.nn.modules.conv._ConvNd):
            def forward(self, x):
                return x
        """,
    # a class built through a star import's re-export, one through a constructor's own import
    "nets/head.py": """\
        from torch import nn

        import losses


        class Head(nn.Module):
            def __init__(self, dim):
                super().__init__()
                from nets.blocks import Block
                self.block = Block()
                self.loss = losses.DiceLoss()
                self.fc = nn.Linear(dim, 2)

            def forward(self, x):
                return self.fc(x)
        """,
    "nets/blocks.py": """\
        from torch import nn


        class Block(nn.Module):
            def forward(self, x):
                return x
        """,
}


def test_discovery_shares_the_engines_names_and_torch_modules(tmp_path):
    # The classes and names `pt2bot check` sees (pt2bot/analysis/graph.py): models deriving from
    # torch's private `_Loss` and `_ConvNd` are modules (init once took only public upper-case
    # torch.nn names), a class named through a package's star import resolves to its definition
    # (so DiceLoss, which Head builds, is a building block), and a constructor's own imports count.
    proposals, blocks = discover(str(_repo(tmp_path, SHARED)))
    assert [p.entry for p in proposals] == ["losses.dice:SmoothConv", "nets.head:Head"]
    assert blocks == ["losses.dice:DiceLoss", "nets.blocks:Block"]


NET = """\
    from torch import nn


    class Net(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.fc = nn.Linear(dim, 2)

        def forward(self, x):
            return self.fc(x)
    """
LAYOUT = {
    "src/pkg/__init__.py": "",
    "src/pkg/net.py": NET,
    **{path: NET for path in (
        "src/pkg/test_net.py", "src/pkg/net_test.py", "src/conftest.py", "setup.py",
        "tests/nets.py", "docs/nets.py", "benchmarks/nets.py", "env/nets.py", "build/nets.py",
        ".hidden/nets.py", "myvenv/lib/nets.py", "node_modules/nets.py", "not-a-package/nets.py")},
    "myvenv/pyvenv.cfg": "home = /usr/bin\n",
}


def test_files_are_the_checks_less_tests_docs_and_environments(tmp_path):
    # `pt2bot check`'s files (pt2bot/static/discover.py), less what holds no model to propose;
    # a src layout's modules are named as installed
    root = _repo(tmp_path, LAYOUT)
    proposals, _ = discover(str(root))
    assert [(p.entry, p.path) for p in proposals] == [("pkg.net:Net", "src/pkg/net.py")]


def _gpt(extra: str = "") -> str:
    return f"""\
        from torch import nn


        class GPT(nn.Module):
            def __init__(self):
                super().__init__()
                self.wte = nn.Embedding(100, 8)

            def forward(self, idx):
                return self.wte(idx)
        {extra}"""


def _leaf(name: str) -> str:
    return f"""

        class {name}(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 8)

            def forward(self, x):
                return self.fc(x)
        """


NAMING = {
    "llm/__init__.py": "",
    "llm/model.py": _gpt(),
    "llm/lora.py": _gpt(_leaf("LoRAMix")),
    "llm/adapter.py": _gpt(),
    "llm/adapter_v2.py": _gpt(),
    "llm/moe.py": _gpt(_leaf("LLaMAMoE") + _leaf("SimpleViT") + _leaf("TinyMLP")
                       + _leaf("GPT2LMHead") + _leaf("gMLPVision") + _leaf("Conv2dNet")),
    "other/__init__.py": "",
    "other/model.py": _gpt(),
}


def test_model_names_keep_acronyms_whole_and_qualify_duplicates_by_module(tmp_path):
    proposals, _ = discover(str(_repo(tmp_path, NAMING)))
    assert {p.entry: p.name for p in proposals} == {
        # the same class name in several modules: each named by as much of its module as
        # tells it apart, never by a counter (`gpt_4`)
        "llm.adapter:GPT": "adapter_gpt",
        "llm.adapter_v2:GPT": "adapter_v2_gpt",
        "llm.lora:GPT": "lora_gpt",
        "llm.model:GPT": "llm_model_gpt",
        "other.model:GPT": "other_model_gpt",
        "llm.moe:GPT": "moe_gpt",
        # acronyms stay whole (not `lo_ra_linear`, `l_la_ma_moe`)
        "llm.lora:LoRAMix": "lora_mix",
        "llm.moe:LLaMAMoE": "llama_moe",
        "llm.moe:SimpleViT": "simple_vit",
        "llm.moe:TinyMLP": "tiny_mlp",
        "llm.moe:GPT2LMHead": "gpt2_lm_head",
        "llm.moe:gMLPVision": "g_mlp_vision",
        "llm.moe:Conv2dNet": "conv2d_net",
    }
