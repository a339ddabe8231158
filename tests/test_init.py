"""`pt2bot init`: static discovery and input inference, the written config (validated by the
project's loader), --force, and --check with real smoke workers on the bundled example and
on two real model libraries from the registry (g-mlp-pytorch, conformer: pure PyTorch +
einops, pinned in the test extra)."""
from __future__ import annotations

import importlib.util
import json
import os
import shutil
import textwrap
from pathlib import Path

import pytest

from pt2bot.cli import main
from pt2bot.configfile import load_config
from pt2bot.init import _guess, discover

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
    # the faster setting the comment offers for a small CPU runner is a valid one
    advice = next(ln for ln in text.splitlines() if "`run: {" in ln)
    faster = advice[advice.index("`run: {") + 1:advice.index("}`") + 1]
    (root / "pt2bot.yml").write_text(text.replace("run: {device: auto}\n", faster + "\n"))
    run = load_config(str(root / "pt2bot.yml")).run
    assert (run.backend, run.latency) == ("eager", False)


def test_refuses_to_overwrite_without_force(tmp_path, capsys):
    root = _zoo(tmp_path)
    (root / "pt2bot.yml").write_text("version: 1\n# mine\n")
    assert main(["init", str(root)]) == 2
    err = capsys.readouterr().err
    assert "exists; pass --force" in err and "pt2bot run --config " in err
    assert (root / "pt2bot.yml").read_text() == "version: 1\n# mine\n"
    # `init` then `init --check`, as the README has them: the refusal says how to check
    assert main(["init", str(root), "--check"]) == 2
    err = capsys.readouterr().err
    assert "exists; `pt2bot init --check --force` proposes again and keeps the models that run" in err
    assert (root / "pt2bot.yml").read_text() == "version: 1\n# mine\n"
    assert main(["init", str(root), "--force"]) == 0
    assert "tiny_encoder" in (root / "pt2bot.yml").read_text()
    # what it replaced is kept, and said (a new user's hand-written entry was lost to
    # `init --check --force`, which proposed `models: []`)
    assert (root / "pt2bot.yml.bak").read_text() == "version: 1\n# mine\n"
    assert "; the file it replaced is kept as " in capsys.readouterr().out


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
        from typing import List, Tuple

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

            def forward(self, x, y):
                return self.fc(x) * y


        class Stepper(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)

            def forward(self, x, step: int):
                return self.fc(x) * step


        class Cached(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)

            def forward(self, x, kv_caches: List[Tuple[torch.Tensor, torch.Tensor]],
                        scale: float | None):
                return self.fc(x) + kv_caches[0][0]


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


INDICES = {
    "pkg/__init__.py": "",
    "pkg/gathered.py": """
        import torch
        from torch import nn

        from pkg.util import keep


        class Gathered(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 8)

            def forward(self, x, masks, other):
                \"\"\"
                :param x: tokens
                :params masks: indices of patch tokens to keep
                \"\"\"
                return keep(self.fc(x), masks) + other.sum()
        """,
    "pkg/util.py": """
        import torch


        def keep(x, idx):
            return torch.gather(x, 1, idx)
        """,
}


def test_a_towers_own_sizes_are_lowered_as_their_kind_is(tmp_path):
    """MAE's decoder kept `decoder_embed_dim=512, decoder_depth=8, decoder_num_heads=16` beside an
    encoder made tiny: 99.9 % of the "tiny" model's 25 M parameters."""
    root = _repo(tmp_path, {"mae.py": """
        import torch
        from torch import nn


        class MAE(nn.Module):
            def __init__(self, img_size=224, embed_dim=1024, depth=24, num_heads=16,
                         decoder_embed_dim=512, decoder_depth=8, decoder_num_heads=16, mlp_ratio=4.0):
                super().__init__()
                self.enc = nn.Conv2d(3, embed_dim, 16, 16)
                self.dec = nn.Linear(embed_dim, decoder_embed_dim)

            def forward(self, imgs):
                return self.dec(self.enc(imgs).flatten(2).transpose(1, 2))
        """})
    (p,) = discover(str(root))[0]
    assert {k: p.kwargs.get(k) for k in ("decoder_embed_dim", "decoder_depth", "decoder_num_heads")} == {
        "decoder_embed_dim": 32, "decoder_depth": 2, "decoder_num_heads": 2}, p.kwargs
    assert "mlp_ratio" not in p.kwargs


def test_a_class_built_on_an_installed_packages_class_is_listed_with_why(tmp_path):
    """MAE's fine-tuning `models_vit.VisionTransformer` derives from timm's and writes only
    `forward_features`: init read no module in it and left it out in silence."""
    root = _repo(tmp_path, {"models_vit.py": """
        import timm.models.vision_transformer
        from torch import nn


        class VisionTransformer(timm.models.vision_transformer.VisionTransformer):
            def forward_features(self, x):
                return self.norm(x)


        class Config(dict):
            def forward_ref(self):
                return None


        class Head(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 2)

            def forward(self, x):
                return self.fc(x)


        class Wider(Head):
            def forward_features(self, x):
                return x
        """})
    proposals, blocks = discover(str(root))
    assert [b for b in blocks if "installed package" in b] == [
        "models_vit:VisionTransformer (on `timm.models.vision_transformer.VisionTransformer`, an installed "
        "package's class init does not read: its constructor and `forward` are there; add it with its "
        "arguments, or an entry function that builds it)"]
    assert main(["init", str(root)]) == 0
    assert "#   models_vit:VisionTransformer (on `timm.models.vision_transformer.VisionTransformer`" in \
        (root / "pt2bot.yml").read_text()


def test_token_ids_by_name_where_a_config_gives_no_first_layer(tmp_path):
    """recurrentgemma's `Griffin(config)` embeds its `tokens` with an `Embedder` whose `encode`
    is no layer init knows: the config route found no shape and init stopped there ("cannot
    infer the input 'tokens'"), never reaching the guess by the parameter's name."""
    root = _repo(tmp_path, {"m.py": """
        from dataclasses import dataclass

        import torch
        from torch import nn


        @dataclass
        class Config:
            num_words: int
            width: int


        class Embedder(nn.Module):
            def __init__(self, vocab_size, width):
                super().__init__()
                self.table = nn.Parameter(torch.randn(vocab_size, width))

            def encode(self, x):
                return self.table[x]


        class Net(nn.Module):
            def __init__(self, config: Config):
                super().__init__()
                self.embedder = Embedder(config.num_words, config.width)
                self.out = nn.Linear(config.width, config.width)

            def forward(self, tokens):
                return self.out(self.embedder.encode(tokens))
        """})
    proposals, _ = discover(str(root))
    [p] = [p for p in proposals if p.entry == "m:Net"]
    # the config field no size guess names is still the user's to give; the input is ids
    assert p.problems == ("no value for the config field 'num_words' of Config",), p.problems
    [ids] = p.inputs
    assert (ids.shape, ids.dtype, ids.high) == (("batch", "seq"), "int64", 4), ids
    assert p.how == ("from forward's parameter 'tokens' (token ids below 4: the vocabulary size is "
                     "not in the source)"), p.how


def test_a_forward_with_overload_stubs_is_read_as_its_last_definition(tmp_path):
    """recurrentgemma types its blocks' `forward` with `@overload` stubs (`...` bodies) before
    the definition; init read the first stub as abstract and proposed none of them."""
    root = _repo(tmp_path, {"m.py": """
        from typing import Literal, overload

        import torch
        from torch import nn


        class Block(nn.Module):
            def __init__(self, width: int):
                super().__init__()
                self.proj = nn.Linear(width, width)

            @overload
            def forward(self, x: torch.Tensor, flag: Literal[True] = True) -> torch.Tensor: ...

            @overload
            def forward(self, x: torch.Tensor, flag: Literal[False] = False) -> None: ...

            def forward(self, x: torch.Tensor, flag: bool = True):
                return self.proj(x) if flag else None
        """})
    proposals, _ = discover(str(root))
    [p] = proposals
    assert p.entry == "m:Block" and p.inputs[0].shape[-1] == p.kwargs["width"], p


def test_an_input_its_docstring_calls_indices_is_a_few_ids_not_a_float_like_the_data(tmp_path):
    """V-JEPA's masks, "indices of patch tokens to mask", reach `torch.gather` in another
    module: init guessed them "like the data input", float32, which gather refuses. Its
    predictor's docstring also writes `:params`."""
    (p,) = discover(str(_repo(tmp_path, INDICES)))[0]
    by = {i.name: i for i in p.inputs}
    assert (by["masks"].shape, by["masks"].dtype, by["masks"].high) == (("batch", 4), "int64", 4)
    assert "masks: indices by forward's docstring, 4 per example below 4: set their real count" in p.how
    # a parameter its docstring says nothing of stays like the data
    assert (by["other"].shape, by["other"].dtype) == (by["x"].shape, "float32")
    assert "other: guessed like the data input" in p.how


def test_inference_through_sequential_conditionals_and_repo_classes(tmp_path):
    root = _repo(tmp_path, INFER)
    proposals, blocks = discover(str(root))
    by = {p.name: p for p in proposals}
    assert set(by) == {"conv_net", "tokens", "head", "two_inputs", "stepper", "cached",
                       "needs_something"}
    assert blocks == ["pkg.blocks:Stem"]       # built by ConvNet; Base is abstract

    conv = by["conv_net"]                       # Stem(channels * 2) → Conv2d(2, ...)
    assert conv.inputs[0].shape == ("batch", 2, "height", "width")
    assert conv.shapes == {"batch": (2, 4), "height": (28,), "width": (28,)}
    assert "nn.Conv2d(2, ...) in Stem" in conv.how and not conv.problems

    tok = by["tokens"]                          # the Embedding branch, num_tokens guessed
    assert tok.inputs[0].dtype == "int64" and tok.inputs[0].high == 100
    assert tok.kwargs == {"dim": 32, "num_tokens": 100} and set(tok.guessed) == {"dim", "num_tokens"}

    assert by["head"].inputs[0].shape == ("batch", 12)        # inherited forward overridden
    # a further tensor input nothing says more of is guessed like the first one
    two = by["two_inputs"]
    assert [(i.name, i.shape, i.dtype) for i in two.inputs] == [
        ("x", ("batch", 4), "float32"), ("y", ("batch", 4), "float32")]
    assert not two.problems and "y: guessed like the data input" in two.how
    # a parameter annotated as a Python number is no tensor input: left to the user
    assert "forward() also needs step, not one tensor by its annotation (`step: int`)" in \
        by["stepper"].problems[0]
    # a list of tensor pairs (a decoder's KV caches) is no one tensor either, nor `float | None`
    assert "forward() also needs kv_caches, scale, not one tensor by their annotations " \
        "(`kv_caches: List[Tuple[torch.Tensor, torch.Tensor]]`; `scale: float | None`)" in \
        by["cached"].problems[0] and not by["cached"].inputs[1:]
    assert "backbone" in by["needs_something"].problems[0]

    assert main(["init", str(root)]) == 0
    text = (root / "pt2bot.yml").read_text()
    config = load_config(str(root / "pt2bot.yml"))
    assert {m.name for m in config.models} == {"conv_net", "tokens", "head", "two_inputs"}
    # what could not be inferred is a commented-out entry saying why
    assert "# pkg.models:Stepper (pkg/models.py:" in text and "forward() also needs step" in text
    assert "  # - name: needs_something" in text
    assert "no value for the constructor argument 'backbone'" in text


SEVERAL_INPUTS = {
    "kg/__init__.py": "",
    "kg/models.py": """\
        import torch
        import torch.nn.functional as F
        from torch import nn


        class Scorer(nn.Module):
            \"\"\"A knowledge-graph scorer: entity and relation ids of a batch of facts.\"\"\"
            def __init__(self, n_entities: int, n_relations: int, dim: int = 8):
                super().__init__()
                self.ent = nn.Parameter(torch.randn(n_entities, dim))
                self.rel = nn.Parameter(torch.randn(n_relations, dim))

            def forward(self, heads, tails, relations):
                h, t, r = self.ent[heads], self.ent[tails], self.rel[relations]
                return -(h + r - t).norm(dim=-1)


        class Translational(Scorer):
            \"\"\"A base whose subclasses write the distance: no model of its own.\"\"\"
            def forward(self, heads, tails, relations):
                return self.distance(heads, tails, relations)

            def distance(self, h, t, r):
                raise NotImplementedError


        class Pooled(nn.Module):
            \"\"\"Ids indexed through F.embedding, a mask over them, and a condition vector
            that goes through a layer of its own.\"\"\"
            def __init__(self, dim: int = 8):
                super().__init__()
                self.table = nn.Parameter(torch.randn(20, dim))
                self.cond = nn.Linear(6, dim)

            def forward(self, x, padding_mask, c):
                e = F.embedding(x, self.table)
                e = e * padding_mask.unsqueeze(-1)
                return e.sum(1) + self.cond(c)


        class Denoiser(nn.Module):
            \"\"\"torchcfm's UNet order: the time first, then the image.\"\"\"
            def __init__(self, image_size: int, in_channels: int, num_res_blocks: int = 2):
                super().__init__()
                self.time = nn.Linear(1, in_channels)
                self.blocks = nn.ModuleList(nn.Conv2d(in_channels, in_channels, 3, padding=1)
                                            for _ in range(num_res_blocks))

            def forward(self, t, x):
                h = x + self.time(t[:, None])[:, :, None, None]
                for block in self.blocks:
                    h = block(h)
                return h


        class Staged(nn.Module):
            \"\"\"torchvision's ResNet style: forward hands its input to a method of its own.\"\"\"
            def __init__(self, c_in: int = 5):
                super().__init__()
                self.stem = nn.Conv2d(c_in, 4, 3)

            def forward(self, x):
                return self._forward_impl(2.0, x)

            def _forward_impl(self, scale, img):
                return self.stem(img) * scale


        class Encoder(nn.Module):
            def __init__(self, vocab_size: int, dim: int = 8):
                super().__init__()
                self.emb = nn.Embedding(vocab_size, dim)

            def forward(self, input_ids, attention_mask):
                h = self.emb(input_ids)
                return (h * attention_mask.unsqueeze(-1)).sum(1) / attention_mask.sum(1, keepdim=True)
        """,
}


GRAPH = {
    "gnn/__init__.py": "",
    "gnn/models.py": """\
        import torch
        from torch import nn


        class MeanConv(nn.Module):
            \"\"\"A message-passing layer written out: each node's neighbours averaged.\"\"\"
            def __init__(self, in_channels: int, out_channels: int):
                super().__init__()
                self.lin = nn.Linear(in_channels, out_channels)

            def forward(self, x, edge_index):
                src, dst = edge_index
                out = torch.zeros_like(x).index_add_(0, dst, x[src])
                deg = torch.zeros(x.shape[0]).index_add_(0, dst, torch.ones(dst.shape[0]))
                return self.lin(out / deg.clamp(min=1)[:, None])


        class NodeClassifier(nn.Module):
            def __init__(self, in_channels: int, num_classes: int):
                super().__init__()
                self.conv = MeanConv(in_channels, num_classes)

            def forward(self, x, edge_index):
                return self.conv(x, edge_index).log_softmax(-1)
        """,
}


def test_a_graph_network_gets_node_features_and_edges(tmp_path):
    """PyTorch Geometric's `forward(x, edge_index)`: x is [nodes, in_channels] (its layer is
    the graph library's, so no first layer says so), edge_index [2, edges] of node indices
    that every case's nodes hold. On the old code: "cannot infer the input 'x'"."""
    root = _repo(tmp_path, GRAPH)
    by = {p.name: p for p in discover(str(root))[0]}
    node = by["node_classifier"]
    assert not node.problems, node.problems
    assert [(i.name, i.shape, i.dtype, i.high) for i in node.inputs] == [
        ("x", ("batch", 3), "float32", None), ("edge_index", (2, "edges"), "int64", 2)]
    assert node.shapes == {"batch": (2, 4), "edges": (6,)} and node.dynamic == ("batch",)
    assert "x: node features [nodes, in_channels], beside `edge_index`" in node.how


@pytest.mark.torch
@pytest.mark.slow
def test_check_runs_the_graph_inputs(tmp_path):
    root = _repo(tmp_path, GRAPH)
    assert main(["init", str(root), "--check"]) == 0
    config = load_config(str(root / "pt2bot.yml"))
    assert "node_classifier" in [m.name for m in config.models]


def test_several_inputs_ids_masks_and_counts(tmp_path):
    root = _repo(tmp_path, SEVERAL_INPUTS)
    by = {p.name: p for p in discover(str(root))[0]}

    assert "translational" not in by      # its forward calls a method it leaves abstract
    kg = by["scorer"]       # counts guessed; ids by name, below the count their kind names
    assert kg.kwargs == {"n_entities": 10, "n_relations": 10} and not kg.problems
    assert [(i.name, i.shape, i.dtype, i.high) for i in kg.inputs] == [
        ("heads", ("batch",), "int64", 10), ("tails", ("batch",), "int64", 10),
        ("relations", ("batch",), "int64", 10)]
    assert kg.shapes == {"batch": (2, 4)}

    pooled = by["pooled"]   # ids by use (F.embedding), a bool mask over their dims, a layer's input
    assert [(i.name, i.shape, i.dtype) for i in pooled.inputs] == [
        ("x", ("batch", "seq"), "int64"), ("padding_mask", ("batch", "seq"), "bool"),
        ("c", ("batch", 6), "float32")]
    assert "x: ids below 4, it goes through an embedding in forward" in pooled.how
    assert "c: from its first layer, nn.Linear(6, ...)" in pooled.how

    # a count of things is guessed; a part of the architecture is not a count (a UNet's blocks
    # per level are a depth, the smallest that builds: guessed by name, not as a count)
    assert (_guess("n_entities"), _guess("num_items"), _guess("num_res_blocks"),
            _guess("num_stages")) == (10, 10, 1, None)
    den = by["denoiser"]    # the time one number per example, the image after it
    assert [(i.name, i.shape, i.dtype) for i in den.inputs] == [
        ("t", ("batch",), "float32"), ("x", ("batch", 3, "height", "width"), "float32")]
    assert "t: a time per example, by its name; x: from the constructor's image_size" in den.how

    staged = by["staged"]   # `x` followed into `_forward_impl` by its position there
    assert staged.inputs[0].shape == ("batch", 5, "height", "width")
    assert staged.how == "from the first layer, nn.Conv2d(5, ...)"

    enc = by["encoder"]     # a tokenizer's attention mask: 1s and 0s as integers, like the ids
    assert [(i.name, i.shape, i.dtype, i.high) for i in enc.inputs] == [
        ("input_ids", ("batch", "seq"), "int64", 100),
        ("attention_mask", ("batch", "seq"), "int64", 2)]


WHISPER_LIKE = {
    "speech/model.py": """
        from dataclasses import dataclass

        import torch
        import torch.nn.functional as F
        from torch import nn


        @dataclass
        class ModelDimensions:
            n_mels: int
            n_audio_ctx: int
            n_audio_state: int
            n_audio_head: int
            n_vocab: int
            n_text_ctx: int
            n_text_state: int


        class Conv1d(nn.Conv1d):
            def _conv_forward(self, x, weight, bias):
                return super()._conv_forward(x, weight.to(x.dtype), None if bias is None else bias.to(x.dtype))


        class Wide(nn.Linear):
            def __init__(self, n_state):
                super().__init__(2 * n_state, n_state)


        class AudioEncoder(nn.Module):
            def __init__(self, n_mels, n_ctx, n_state, n_head):
                super().__init__()
                self.conv1 = Conv1d(n_mels, n_state, kernel_size=3, padding=1)
                self.conv2 = Conv1d(n_state, n_state, kernel_size=3, stride=2, padding=1)
                self.register_buffer("positional_embedding", torch.zeros(n_ctx, n_state))

            def forward(self, x):
                x = F.gelu(self.conv2(F.gelu(self.conv1(x)))).permute(0, 2, 1)
                assert x.shape[1:] == self.positional_embedding.shape, "incorrect audio shape"
                return x + self.positional_embedding


        class Mixer(nn.Module):
            def __init__(self, n_state):
                super().__init__()
                self.wide = Wide(n_state)

            def forward(self, h):
                return self.wide(h)


        class Whisper(nn.Module):
            def __init__(self, dims: ModelDimensions):
                super().__init__()
                self.dims = dims
                self.encoder = AudioEncoder(self.dims.n_mels, self.dims.n_audio_ctx,
                                            self.dims.n_audio_state, self.dims.n_audio_head)
                self.embed = nn.Embedding(self.dims.n_vocab, self.dims.n_audio_state)

            def forward(self, mel, tokens):
                return self.encoder(mel).mean(1, keepdim=True) + self.embed(tokens)
    """,
}


def test_a_whisper_like_config_and_a_subclassed_torch_layer_are_read(tmp_path):
    """whisper's first hour: init proposed nothing ("no value for the config field 'n_mels'
    ... 'n_audio_ctx' ..."), then, once the sizes were guessed, could not read the input
    through `class Conv1d(nn.Conv1d)`, a subclass that only changes how it computes. A count
    of one part (`n_audio_head`, `n_text_ctx`) is guessed as the count (`n_head`, `n_ctx`);
    a subclass of a torch layer without a constructor of its own takes what the layer takes;
    one with its own constructor (`Wide(n_state)`) is not read as the layer."""
    root = _repo(tmp_path, WHISPER_LIKE)
    by = {p.name: p for p in discover(str(root))[0]}
    w = by["whisper"]
    assert not w.problems, w.problems
    [cfg] = w.config
    assert cfg.kwargs == {"n_mels": 80, "n_audio_ctx": 16, "n_audio_state": 32, "n_audio_head": 2,
                          "n_vocab": 100, "n_text_ctx": 16, "n_text_state": 32}
    assert [(i.name, i.shape, i.dtype) for i in w.inputs] == [
        ("mel", ("batch", 80, "length"), "float32"), ("tokens", ("batch", "seq"), "int64")]
    assert "nn.Conv1d(80, ...) in AudioEncoder" in w.how
    # the mel's frames: the 32 the convolution's stride halves to the 16 positions asserted
    assert w.shapes["length"] == (32,) and w.shapes["seq"] == (8, 16)
    assert any("cannot infer the input 'h'" in p for p in by["mixer"].problems), by["mixer"].problems


@pytest.mark.torch
@pytest.mark.slow
def test_check_runs_the_whisper_like_model(tmp_path, capsys):
    root = _repo(tmp_path, WHISPER_LIKE)
    assert main(["init", str(root), "--check"]) == 0
    out = capsys.readouterr().out
    assert "whisper (speech.model:Whisper): ran OK" in out, out


@pytest.mark.parametrize("call", ["noisy[:, None]", "noisy.unsqueeze(1)", "noisy[:, None, :]"])
def test_a_waveform_made_the_one_channel_of_a_conv_is_read_without_that_dim(tmp_path, call):
    """fast-bss-eval's trial: `self.encoder(noisy[:, None])` with `nn.Conv1d(1, ...)`; init said
    "cannot infer the input 'noisy' (no known first layer)" and proposed nothing."""
    root = _repo(tmp_path, {"enh/model.py": f"""
        import torch
        from torch import nn


        class Enhancer(nn.Module):
            def __init__(self, n_filters: int = 8):
                super().__init__()
                self.encoder = nn.Conv1d(1, n_filters, 16, stride=8, padding=8)

            def forward(self, noisy):
                return torch.relu(self.encoder({call}))
    """})
    [p] = discover(str(root))[0]
    assert not p.problems, p.problems
    assert [(i.name, i.shape) for i in p.inputs] == [("noisy", ("batch", "length"))]
    assert p.how == "from the first layer, nn.Conv1d(1, ...), after a dim of 1 inserted at 1"


OPTIONAL_TARGETS = {
    "lm.py": """
        import torch
        import torch.nn.functional as F
        from torch import nn


        class TinyLM(nn.Module):
            def __init__(self, vocab_size: int, dim: int):
                super().__init__()
                self.emb = nn.Embedding(vocab_size, dim)
                self.out = nn.Linear(dim, vocab_size)

            def forward(self, tokens, targets=None, cache=None, temperature=1.0):
                logits = self.out(self.emb(tokens))
                if targets is not None:
                    return F.cross_entropy(logits.flatten(0, 1), targets.flatten())
                return logits[:, -1]
    """,
}


def test_an_optional_target_that_a_branch_tests_is_offered_commented_out(tmp_path):
    """llama2.c's `forward(tokens, targets=None)`: the proposed inputs never give `targets`,
    so the training path (`if targets is not None:`) never ran, and nothing in pt2bot.yml
    said so. It is written as a commented-out input, the line that tests it named; `cache`,
    tested nowhere, and `temperature`, a number, are not."""
    root = _repo(tmp_path, OPTIONAL_TARGETS)
    assert main(["init", str(root)]) == 0
    text = (root / "pt2bot.yml").read_text()
    [line] = [ln for ln in text.splitlines() if "targets" in ln]
    assert line == ("      # - {name: targets, shape: [batch, seq], dtype: int64, low: 0, high: 100}   "
                    "# optional: uncomment to run the branch on `targets` (lm.py:15), which None "
                    "skips; guessed like the data input")
    assert "cache" not in text and "temperature" not in text
    assert [i.name for i in _model(load_config(str(root / "pt2bot.yml")), "tiny_lm").inputs] == ["tokens"]
    (root / "pt2bot.yml").write_text(text.replace("      # - {name: targets", "      - {name: targets"))
    [tokens, targets] = _model(load_config(str(root / "pt2bot.yml")), "tiny_lm").inputs
    assert (targets.name, targets.shape, targets.dtype, targets.high) == (
        "targets", ("batch", "seq"), "int64", tokens.high)


CACHED_LM = {
    "lm.py": """
        import torch
        from torch import nn


        class CachedLM(nn.Module):
            def __init__(self, vocab_size: int, dim: int):
                super().__init__()
                self.emb = nn.Embedding(vocab_size, dim)
                self.out = nn.Linear(dim, vocab_size)

            def init_weights(self):
                nn.init.zeros_(self.out.weight)

            def forward(self, tokens, kv_cache=None):
                start = 0 if kv_cache is None else kv_cache.get_pos()
                return self.out(self.emb(tokens))[:, start:]
    """,
}


@pytest.mark.torch
def test_an_optional_object_is_said_and_an_uncalled_weight_init_too(tmp_path):
    """nanochat's GPT: `kv_cache=None` is tested against None like a target, but forward reads
    `kv_cache.get_pos()`, which no tensor has: offered as a tensor input, uncommented, it
    raised AttributeError. And its constructor leaves the weights to `init_weights()`, which
    init never said."""
    root = _repo(tmp_path, CACHED_LM)
    assert main(["init", str(root)]) == 0
    text = (root / "pt2bot.yml").read_text()
    assert "name: kv_cache" not in text
    [line] = [ln for ln in text.splitlines() if "kv_cache" in ln]
    assert line.startswith("      # `kv_cache` is left None, so the branch on it (lm.py:16) is not run: "
                           "forward reads `kv_cache.get_pos`, which no tensor has"), line
    [line] = [ln for ln in text.splitlines() if "init_weights" in ln]
    assert line.startswith("    # the constructor never calls init_weights() (lm.py:12)"), line
    # a constructor that calls it is not told of it
    (root / "lm.py").write_text((root / "lm.py").read_text().replace(
        "self.out = nn.Linear(dim, vocab_size)", "self.out = nn.Linear(dim, vocab_size)\n        self.init_weights()"))
    assert main(["init", str(root), "--force"]) == 0
    assert "init_weights" not in (root / "pt2bot.yml").read_text()


@pytest.mark.torch
@pytest.mark.slow
def test_check_runs_the_guessed_inputs(tmp_path, capsys):
    root = _repo(tmp_path, SEVERAL_INPUTS)
    assert main(["init", str(root), "--check"]) == 0
    config = load_config(str(root / "pt2bot.yml"))
    # all three build and run on what init guessed: ids in range, masks that broadcast
    # the time-first model too: a time per example and the image after it
    assert [m.name for m in config.models] == ["scorer", "pooled", "denoiser", "staged",
                                               "encoder"]
    assert "5 model(s) proposed" in capsys.readouterr().out



# Models whose first layer is a library's (timm's PatchEmbed), so that only forward's docstring
# says what goes in; and one whose docstring names a dim init cannot size.
DOCUMENTED = {
    "dit/__init__.py": "",
    "dit/models.py": """\
        import torch
        from torch import nn
        from timm.models.vision_transformer import PatchEmbed


        class DiT(nn.Module):
            def __init__(self, input_size=32, patch_size=2, in_channels=4, hidden_size=1152,
                         depth=28, num_classes=1000):
                super().__init__()
                self.x_embedder = PatchEmbed(input_size, patch_size, in_channels, hidden_size)
                self.y_embedder = nn.Embedding(num_classes + int(depth > 0), hidden_size)

            def forward(self, x, t, y):
                \"\"\"
                Forward pass of DiT.
                x: (N, C, H, W) tensor of spatial inputs (images or latent representations of images)
                t: (N,) tensor of diffusion timesteps
                y: (N,) tensor of class labels
                \"\"\"
                return self.x_embedder(x).mean() + self.y_embedder(y).mean() + t.mean()


        class Mixer(nn.Module):
            def __init__(self, dim=512, vocab_size=5000):
                super().__init__()
                self.mix = Library(dim)

            def forward(self, x, tokens):
                \"\"\"Mixes.

                Args:
                    x (Tensor): features of shape [B, T, C].
                    tokens (LongTensor): token ids, (B, L).
                \"\"\"
                return self.mix(x)


        class Keyed(nn.Module):
            def __init__(self, dim=64, n_classes=7):
                super().__init__()
                self.score = Library(dim)

            def forward(self, keys, negative_labels):
                \"\"\"
                Parameters
                ----------
                keys: torch.Tensor, dtype: torch.long, shape: (batch_size)
                    Integer keys of the batch's entities.
                negative_labels: torch.Tensor, dtype: torch.long, shape: (batch_size)
                    Sampled classes.
                \"\"\"
                return self.score(keys)


        class Spectral(nn.Module):
            def __init__(self, n_freq=64):
                super().__init__()
                self.encoder = nn.Conv1d(n_freq, 8, 3)

            def forward(self, spec):
                \"\"\"spec: [batch, n_freq, frames], non-negative magnitudes.\"\"\"
                return self.encoder(spec)


        class Grouped(nn.Module):
            def __init__(self, dim=64):
                super().__init__()
                self.mix = Library(dim)

            def forward(self, x):
                \"\"\"x: (B, G, K) grouped features\"\"\"
                return self.mix(x)
        """,
}


def test_a_forward_docstring_gives_the_shapes_a_library_layer_hides(tmp_path):
    by = {p.name: p for p in discover(str(_repo(tmp_path, DOCUMENTED)))[0]}
    dit = by["di_t"]     # an image at the constructor's input_size, a time, class labels
    assert [(i.name, i.shape, i.dtype, i.high) for i in dit.inputs] == [
        ("x", ("batch", 3, "height", "width"), "float32", None),
        ("t", ("batch",), "float32", None),
        ("y", ("batch",), "int64", 10)]
    assert dit.shapes == {"batch": (2, 4), "height": (32,), "width": (32,)} and not dit.problems
    assert ("x: from forward's docstring, (N, C, H, W); t: a time per example, by its name; "
            "y: from forward's docstring, (N,) class labels, below 10") == dit.how
    mixer = by["mixer"]  # (B, T, C): C is the model's width after a sequence; token ids
    assert [(i.name, i.shape, i.dtype, i.high) for i in mixer.inputs] == [
        ("x", ("batch", "seq", 32), "float32", None), ("tokens", ("batch", "seq"), "int64", 100)]
    assert mixer.how.startswith("x: from forward's docstring, [B, T, C]; tokens: ")
    keyed = by["keyed"]  # numpy style, its dtype said: integers, below a few
    assert [(i.name, i.shape, i.dtype, i.high) for i in keyed.inputs] == [
        ("keys", ("batch",), "int64", 4), ("negative_labels", ("batch",), "int64", 7)]
    assert keyed.how == ("keys: from forward's docstring, (batch_size) integers, below 4; "
                         "negative_labels: from forward's docstring, (batch_size) integers, below 7")
    # the shape from the first layer, the range from the docstring: magnitudes are not
    # negative (a standard normal made a KL divergence NaN on every case, and --check said ok)
    spectral = by["spectral"]
    assert [(i.shape, i.nonnegative) for i in spectral.inputs] == [(("batch", 64, "length"), True)]
    assert spectral.how.endswith("; spec in [0, 1), as forward's docstring says not negative")
    from pt2bot.init import entry_lines
    assert "      - {name: spec, shape: [batch, 64, length], dtype: float32, low: 0.0, high: 1.0}" in \
        entry_lines(spectral)
    assert not any(i.nonnegative for i in dit.inputs)
    # a dim the docstring names that init cannot size: the constructor's guess, as before
    assert by["grouped"].inputs[0].shape == ("batch", "seq", 32)
    assert "docstring" not in by["grouped"].how


def test_the_class_docstring_and_a_constructor_argument_size_the_input(tmp_path):
    """A new user's torchhd classifier says what forward takes in its class docstring, the
    width by the constructor's argument: init proposed `x [batch, seq, 32]` from `dim` (a
    hypervector width), and --check dropped the model on a shape error."""
    root = _repo(tmp_path, {"hdc/__init__.py": "", "hdc/model.py": """\
        import torch
        import torch.nn as nn


        class ActivityHD(nn.Module):
            \"\"\"Classifies a window of sensor features into activities.

            forward(x): x is [batch, n_features], each feature a reading scaled to [0, 1];
            returns the similarity of each window to each activity, [batch, n_classes].
            \"\"\"

            def __init__(self, n_features: int = 16, n_classes: int = 4, dim: int = 1024):
                super().__init__()
                self.keys = nn.Parameter(torch.randn(n_features, dim))
                self.protos = nn.Parameter(torch.randn(n_classes, dim))

            def forward(self, x):
                return (x @ self.keys) @ self.protos.t()
        """})
    [p] = discover(str(root))[0]
    assert [(i.name, i.shape, i.dtype, i.nonnegative) for i in p.inputs] == [
        ("x", ("batch", 16), "float32", True)]
    assert p.how == ("from the class's docstring, [batch, n_features]; x in [0, 1), as the "
                     "docstring says not negative")


@pytest.mark.torch
@pytest.mark.slow
def test_check_says_where_the_model_breaks(tmp_path, capsys):
    """"7 graph(s) and 2 graph break(s) in the break pass" left a user to find out from a
    review that both breaks were an installed package's: the console names each site."""
    root = _repo(tmp_path, {"pkg/__init__.py": "", "pkg/m.py": """\
        import torch
        from torch import nn


        class Gated(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 8)

            def forward(self, x):
                h = self.fc(x)
                if h.sum() > 0:
                    h = h * 2
                return h
        """})
    assert main(["init", str(root), "--check"]) == 0
    out = capsys.readouterr().out
    assert "graph break(s) in the break pass (GB0170 at pkg/m.py:12)" in out, out
    assert "NaN" not in out


@pytest.mark.torch
@pytest.mark.slow
def test_check_says_when_an_output_is_nan(tmp_path, capsys):
    """A KL loss of a standard normal target is NaN on every case: `init --check` said "ran OK"
    and `pt2bot run` "match" (NaN against NaN). Kept, and said, on the console and in the run."""
    root = _repo(tmp_path, {"pkg/__init__.py": "", "pkg/m.py": """\
        import torch
        from torch import nn


        class Loss(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 8)

            def forward(self, x):
                rec = self.fc(x)
                return rec, (x * x.log()).mean()
        """})
    assert main(["init", str(root), "--check"]) == 0
    out = capsys.readouterr().out
    assert ("ran OK" in out and "; but an output is NaN or inf on shape cases batch=2, batch=4: "
            "check the inputs' values (`low`, `high`)") in out, out


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
    # a repository whose own code imports `src.` (V-JEPA: the root on the path, src/ a
    # namespace package) is named as it imports itself
    (root / "src" / "pkg" / "head.py").write_text("from src.pkg.net import Net\n")
    proposals, _ = discover(str(root))
    assert [(p.entry, p.path) for p in proposals] == [("src.pkg.net:Net", "src/pkg/net.py")]


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


# A small LLM library in the style of litgpt / Hugging Face: models built from a config object
# (a dataclass with large defaults, a Hugging Face-style config class, a preset through
# `from_name`, two configs at once), an embedding reached through a ModuleDict, a LoRA layer made
# by a helper function, and a model that fails when run.
LLM = {
    "llm/__init__.py": "",
    "llm/config.py": """\
        from dataclasses import dataclass, field
        from typing import Optional


        @dataclass
        class Config:
            name: str = ""
            block_size: int = 4096
            vocab_size: int = 50254
            padding_multiple: int = 512
            padded_vocab_size: Optional[int] = None
            n_layer: int = 16
            n_head: int = 32
            n_embd: int = 4096
            head_size: Optional[int] = None
            intermediate_size: Optional[int] = None
            n_expert: int = 0
            bias: bool = True
            extra: dict = field(default_factory=dict)

            def __post_init__(self):
                if self.padded_vocab_size is None:
                    m = self.padding_multiple
                    self.padded_vocab_size = -(-self.vocab_size // m) * m
                if self.head_size is None:
                    self.head_size = self.n_embd // self.n_head
                if self.intermediate_size is None:
                    self.intermediate_size = 4 * self.n_embd
        """,
    "llm/lora.py": """\
        import torch.nn as nn


        class LoRALinear(nn.Module):
            def __init__(self, in_features: int, out_features: int, r: int = 4) -> None:
                super().__init__()
                self.linear = nn.Linear(in_features, out_features)
                self.a = nn.Linear(in_features, r, bias=False)
                self.b = nn.Linear(r, out_features, bias=False)

            def forward(self, x):
                return self.linear(x) + self.b(self.a(x))


        def make_proj(config):
            return LoRALinear(config.n_embd, config.n_embd)
        """,
    "llm/model.py": """\
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        from llm.config import Config
        from llm.lora import make_proj


        class CausalSelfAttention(nn.Module):
            def __init__(self, config: Config) -> None:
                super().__init__()
                assert config.n_embd % config.n_head == 0
                self.qkv = nn.Linear(config.n_embd, 3 * config.n_head * config.head_size)
                self.proj = make_proj(config)
                self.n_head, self.head_size = config.n_head, config.head_size

            def forward(self, x):
                B, T, C = x.shape
                qkv = self.qkv(x).view(B, T, 3, self.n_head, self.head_size)
                q, k, v = qkv.permute(2, 0, 3, 1, 4)
                y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
                return self.proj(y.transpose(1, 2).reshape(B, T, C))


        class Block(nn.Module):
            def __init__(self, config: Config) -> None:
                super().__init__()
                self.ln = nn.LayerNorm(config.n_embd)
                self.attn = CausalSelfAttention(config)
                self.mlp = nn.Sequential(nn.Linear(config.n_embd, config.intermediate_size),
                                         nn.GELU(), nn.Linear(config.intermediate_size, config.n_embd))

            def forward(self, x):
                x = x + self.attn(self.ln(x))
                return x + self.mlp(x)


        class MoE(nn.Module):
            # given the whole config, fed a hidden state: a layer of GPT, not a model
            def __init__(self, config: Config) -> None:
                super().__init__()
                self.experts = nn.ModuleList(nn.Linear(config.n_embd, config.n_embd)
                                             for _ in range(max(config.n_expert, 1)))

            def forward(self, x):
                B, T, C = x.size()
                x = x.view(-1, C)
                return sum(e(x) for e in self.experts).view(B, T, C)


        class GPT(nn.Module):
            def __init__(self, config: Config) -> None:
                super().__init__()
                self.config = config
                self.transformer = nn.ModuleDict(dict(
                    wte=nn.Embedding(config.padded_vocab_size, config.n_embd),
                    wpe=nn.Embedding(config.block_size, config.n_embd),
                    h=nn.ModuleList(Block(config) for _ in range(config.n_layer)),
                    ln_f=nn.LayerNorm(config.n_embd)))
                self.lm_head = nn.Linear(config.n_embd, config.padded_vocab_size, bias=False)

            def forward(self, idx, targets=None):
                b, t = idx.size()
                assert t <= self.config.block_size, f"sequence of {t} > block size"
                pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
                x = self.transformer.wte(idx) + self.transformer.wpe(pos)
                for block in self.transformer.h:
                    x = block(x)
                return self.lm_head(self.transformer.ln_f(x))


        class Broken(nn.Module):
            def __init__(self, config: Config) -> None:
                super().__init__()
                self.wte = nn.Embedding(config.vocab_size, config.n_embd)

            def forward(self, idx):
                return self.wte(idx).view(3, 7)
        """,
    "llm/hf.py": """\
        import torch.nn as nn


        class PretrainedConfig:
            # the shape of Hugging Face's base class: what __init__ is given becomes attributes
            def __init__(self, **kwargs):
                for k, v in kwargs.items():
                    setattr(self, k, v)


        class TinyLlamaConfig(PretrainedConfig):
            def __init__(self, vocab_size=32000, hidden_size=4096, intermediate_size=11008,
                         num_hidden_layers=32, num_attention_heads=32, num_key_value_heads=None,
                         max_position_embeddings=2048, rms_norm_eps=1e-6, **kwargs):
                self.vocab_size = vocab_size
                self.hidden_size = hidden_size
                self.intermediate_size = intermediate_size
                self.num_hidden_layers = num_hidden_layers
                self.num_attention_heads = num_attention_heads
                self.num_key_value_heads = num_key_value_heads or num_attention_heads
                self.max_position_embeddings = max_position_embeddings
                self.rms_norm_eps = rms_norm_eps
                super().__init__(**kwargs)


        class PreTrainedModel(nn.Module):
            config_class = None

            def __init__(self, config):
                super().__init__()
                self.config = config


        class DecoderLayer(nn.Module):
            def __init__(self, config, layer_idx):
                super().__init__()
                self.norm = nn.RMSNorm(config.hidden_size, eps=config.rms_norm_eps)
                self.mlp = nn.Sequential(nn.Linear(config.hidden_size, config.intermediate_size),
                                         nn.SiLU(), nn.Linear(config.intermediate_size, config.hidden_size))

            def forward(self, hidden_states):
                return hidden_states + self.mlp(self.norm(hidden_states))


        class TinyLlamaModel(PreTrainedModel):
            config_class = TinyLlamaConfig

            def __init__(self, config):
                super().__init__(config)
                self.embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size)
                self.layers = nn.ModuleList([DecoderLayer(config, i)
                                             for i in range(config.num_hidden_layers)])

            def forward(self, input_ids=None, attention_mask=None):
                h = self.embed_tokens(input_ids)
                for layer in self.layers:
                    h = layer(h)
                return h


        class TinyLlamaForCausalLM(PreTrainedModel):
            config_class = TinyLlamaConfig

            def __init__(self, config):
                super().__init__(config)
                self.model = TinyLlamaModel(config)
                self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)

            def forward(self, input_ids=None, attention_mask=None):
                return self.lm_head(self.model(input_ids=input_ids, attention_mask=attention_mask))
        """,
    "llm/preset.py": """\
        from dataclasses import dataclass

        import torch.nn as nn

        configs = [
            dict(name="mix-160m", norm="rms", n_layer=12, n_head=12, n_embd=768,
                 vocab_size=1000, block_size=256),
        ]
        name_to_config = {c["name"]: c for c in configs}


        @dataclass
        class MixConfig:
            name: str
            norm: str          # no default and no size: only a preset says it
            n_layer: int = 12
            n_head: int = 12
            n_embd: int = 768
            vocab_size: int = 1000
            block_size: int = 256

            @classmethod
            def from_name(cls, name: str, **kwargs) -> "MixConfig":
                conf = dict(name_to_config[name])
                conf.update(kwargs)
                return cls(**conf)


        class MixGPT(nn.Module):
            def __init__(self, config: MixConfig) -> None:
                super().__init__()
                norm = nn.RMSNorm if config.norm == "rms" else nn.LayerNorm
                self.wte = nn.Embedding(config.vocab_size, config.n_embd)
                self.layers = nn.ModuleList()
                for _ in range(config.n_layer):
                    self.layers.append(nn.Sequential(norm(config.n_embd),
                                                     nn.Linear(config.n_embd, config.n_embd)))

            def forward(self, idx):
                x = self.wte(idx)
                for layer in self.layers:
                    x = x + layer(x)
                return x
        """,
    "llm/clip.py": """\
        from dataclasses import dataclass

        import torch.nn as nn


        @dataclass
        class VisionCfg:
            width: int = 768
            image_size: int = 224
            patch_size: int = 16


        @dataclass
        class TextCfg:
            width: int = 512
            vocab_size: int = 49408


        class TwoTower(nn.Module):
            def __init__(self, embed_dim: int, vision_cfg: VisionCfg, text_cfg: TextCfg) -> None:
                super().__init__()
                self.patch = nn.Conv2d(3, vision_cfg.width, vision_cfg.patch_size,
                                       stride=vision_cfg.patch_size)
                self.proj = nn.Linear(vision_cfg.width, embed_dim)
                self.text = nn.Embedding(text_cfg.vocab_size, text_cfg.width)

            def forward(self, image):
                x = self.patch(image).flatten(2).mean(-1)
                return self.proj(x)
        """,
}


def test_config_built_models_are_proposed_from_source(tmp_path):
    proposals, blocks = discover(str(_repo(tmp_path, LLM)))
    by = {p.entry: p for p in proposals}
    assert list(by) == ["llm.clip:TwoTower", "llm.hf:TinyLlamaForCausalLM", "llm.model:GPT",
                        "llm.model:Broken", "llm.preset:MixGPT"]
    assert all(not p.problems for p in proposals)
    # a dataclass config: its size fields small, None ones (computed in __post_init__) set,
    # a zero expert count not switched on, the other fields left alone
    gpt = by["llm.model:GPT"]
    [cfg] = gpt.config
    assert (cfg.entry, cfg.arg, cfg.kind) == ("llm.config:Config", None, "dataclass config")
    assert cfg.kwargs == {"block_size": 16, "vocab_size": 100, "n_layer": 2, "n_head": 2,
                          "n_embd": 32, "head_size": 16, "intermediate_size": 64}
    # the input through `self.transformer.wte` of a ModuleDict: ids below the vocabulary size
    # (the embedding's own size, padded_vocab_size, is computed at run time; ids below the
    # vocabulary fit it)
    [ids] = gpt.inputs
    assert (ids.shape, ids.dtype, ids.high) == (("batch", "seq"), "int64", 100)
    assert gpt.how == "from the first layer, nn.Embedding(100, ...)"
    # the config's block_size is a maximum: two lengths up to it, both dynamic
    assert gpt.shapes == {"batch": (2, 4), "seq": (8, 16)} and gpt.dynamic == ("batch", "seq")
    # Hugging Face style: the config class named by `config_class`, its __init__ kwargs; the
    # input passed on by keyword (`self.model(input_ids=...)`) into the inner model's embedding
    llama = by["llm.hf:TinyLlamaForCausalLM"]
    [cfg] = llama.config
    assert (cfg.entry, cfg.kind) == ("llm.hf:TinyLlamaConfig", "Hugging Face-style config")
    assert cfg.kwargs == {"vocab_size": 100, "hidden_size": 32, "intermediate_size": 64,
                          "num_hidden_layers": 2, "num_attention_heads": 2,
                          "num_key_value_heads": 2, "max_position_embeddings": 16}
    assert llama.how == "from the first layer, nn.Embedding(100, ...) in TinyLlamaModel"
    assert llama.inputs[0].name == "input_ids"
    # a required field no size guess fills: the preset through the factory classmethod,
    # its sizes overridden
    [cfg] = by["llm.preset:MixGPT"].config
    assert cfg.entry == "llm.preset:MixConfig.from_name"
    assert cfg.kwargs == {"name": "mix-160m", "n_layer": 2, "n_head": 2, "n_embd": 32,
                          "vocab_size": 100, "block_size": 16}
    # two configs: each by its keyword
    two = by["llm.clip:TwoTower"]
    assert [(c.entry, c.arg, c.kwargs) for c in two.config] == [
        ("llm.clip:VisionCfg", "vision_cfg", {"width": 32, "image_size": 32, "patch_size": 8}),
        ("llm.clip:TextCfg", "text_cfg", {"width": 32, "vocab_size": 100})]
    assert two.kwargs == {"embed_dim": 32}
    assert two.inputs[0].shape == ("batch", 3, "height", "width")
    # building blocks and layers, not models: what constructors build (directly, or through a
    # helper function: the LoRA layer), and a layer given GPT's config but fed a hidden state
    assert {"llm.lora:LoRALinear", "llm.model:MoE", "llm.model:Block",
            "llm.hf:TinyLlamaModel"} <= set(blocks)


def test_written_config_builds_models_from_config_objects(tmp_path, capsys):
    root = _repo(tmp_path, LLM)
    assert main(["init", str(root)]) == 0
    text = (root / "pt2bot.yml").read_text()
    config = load_config(str(root / "pt2bot.yml"))
    gpt = _model(config, "gpt")
    assert gpt.entry == "llm.model:GPT" and gpt.kwargs == {}
    assert [(c.entry, c.arg) for c in gpt.config] == [("llm.config:Config", None)]
    assert gpt.config[0].kwargs["n_layer"] == 2
    assert _model(config, "two_tower").config[1].arg == "text_cfg"
    assert "    config:   # a dataclass config, llm/config.py:6" in text
    assert "kwargs: {name: mix-160m, n_layer: 2" in text
    out = capsys.readouterr().out
    # the file exists now: the command that checks it must be one that runs as written
    assert "nothing was run; `pt2bot init --check --force` proposes again, builds and runs each model" in out


@pytest.mark.torch
@pytest.mark.slow
def test_check_runs_config_built_models_and_says_what_it_ran(tmp_path, capsys, monkeypatch):
    # (the Hugging Face-style and two-config models are built in tests/test_entry.py, in-process)
    root = _repo(tmp_path, {k: v for k, v in LLM.items() if k not in ("llm/clip.py", "llm/hf.py")})
    assert main(["init", str(root), "--check"]) == 0
    out = capsys.readouterr().out
    # what it ran, and what it kept
    assert "--check ran 3 model(s) on the CPU, each in its own worker" in out
    for name, entry in (("gpt", "llm.model:GPT"), ("mix_gpt", "llm.preset:MixGPT")):
        line = next(ln for ln in out.splitlines() if f"  {name} ({entry})" in ln)
        assert "ran OK: built, 4 shape case(s) run eagerly, 1 graph(s) and 0 graph break(s)" in line
        assert line.endswith("-> kept")
    broken = next(ln for ln in out.splitlines() if "  broken (llm.model:Broken)" in ln)
    assert "failed" in broken and "at llm/model.py:" in broken and broken.endswith("-> commented out")
    config = load_config(str(root / "pt2bot.yml"))
    assert [m.name for m in config.models] == ["gpt", "mix_gpt"]
    # and `pt2bot run` builds one from the written config (run from the repository)
    cfg = root / "pt2bot.yml"
    cfg.write_text(cfg.read_text().replace("run: {device: auto}",
                                           "run: {device: cpu, backend: eager, latency: false}"))
    res = tmp_path / "results.json"
    monkeypatch.chdir(root)
    assert main(["run", "--model", "mix_gpt", "--out", str(res)]) == 0
    [run] = json.loads(res.read_text())["models"]
    assert (run["name"], run["status"], run["graph_count"]) == ("mix_gpt", "ok", 1)


CHAINS = {
    "nets/__init__.py": "",
    "nets/chains.py": """\
        import torch.nn as nn


        class Stem(nn.Module):
            def __init__(self, channels):
                super().__init__()
                self.conv = nn.Conv2d(channels, 8, 3)

            def forward(self, x):
                return self.conv(x)


        class DictNet(nn.Module):            # a dict display, a key read by subscript
            def __init__(self, vocab_size, dim):
                super().__init__()
                self.parts = nn.ModuleDict({"emb": nn.Embedding(vocab_size, dim),
                                            "out": nn.Linear(dim, 2)})

            def forward(self, ids):
                return self.parts["out"](self.parts["emb"](ids))


        class ListNet(nn.Module):            # a ModuleList of a local list, indexed
            def __init__(self, in_features):
                super().__init__()
                layers = [nn.Linear(in_features, 16), nn.ReLU()]
                self.layers = nn.ModuleList(layers)

            def forward(self, x):
                return self.layers[1](self.layers[0](x))


        class Encoder(nn.Module):            # an attribute chain into the repo's own module
            def __init__(self):
                super().__init__()
                self.backbone = Backbone(4)

            def forward(self, x):
                return self.backbone.stem(x)


        class Backbone(nn.Module):
            def __init__(self, channels):
                super().__init__()
                self.stem = Stem(channels)

            def forward(self, x):
                return self.stem(x)
        """,
    "nets/mingpt.py": """\
        import torch.nn as nn


        class GPTConfig:
            # minGPT's style: sizes as class attributes, __init__ takes what it is given
            n_layer = 12
            n_embd = 768
            n_head = 12

            def __init__(self, vocab_size, block_size, **kwargs):
                self.vocab_size = vocab_size
                self.block_size = block_size
                for k, v in kwargs.items():
                    setattr(self, k, v)


        class MinGPT(nn.Module):
            def __init__(self, config):
                super().__init__()
                self.tok_emb = nn.Embedding(config.vocab_size, config.n_embd)
                self.blocks = nn.Sequential(*[nn.Linear(config.n_embd, config.n_embd)
                                              for _ in range(config.n_layer)])

            def forward(self, idx):
                return self.blocks(self.tok_emb(idx))
        """,
}


def test_inputs_traced_through_module_dicts_lists_and_attribute_chains(tmp_path):
    proposals, blocks = discover(str(_repo(tmp_path, CHAINS)))
    by = {p.entry.rpartition(":")[2]: p for p in proposals}
    assert (by["DictNet"].inputs[0].dtype, by["DictNet"].inputs[0].high) == ("int64", 100)
    assert by["ListNet"].inputs[0].shape == ("batch", 32)
    assert by["Encoder"].inputs[0].shape == ("batch", 4, "height", "width")
    assert by["Encoder"].how == "from the first layer, nn.Conv2d(4, ...) in Stem in Backbone"
    # a plain config class: its __init__ arguments and the class-level sizes it keeps
    [cfg] = by["MinGPT"].config
    assert (cfg.entry, cfg.kind) == ("nets.mingpt:GPTConfig", "class config")
    assert cfg.kwargs == {"vocab_size": 100, "block_size": 16, "n_layer": 2, "n_embd": 32,
                          "n_head": 2}
    assert by["MinGPT"].inputs[0].high == 100 and not by["MinGPT"].problems


@pytest.mark.torch
@pytest.mark.slow
def test_check_says_when_no_model_could_be_imported(tmp_path, capsys):
    # every model failing at import is the set-up (a package the repository imports is not
    # installed), said once, as `pt2bot run` says it
    root = _repo(tmp_path, {
        "pkg/__init__.py": "import not_installed_anywhere  # noqa: F401\n",
        "pkg/net.py": NET,
    })
    assert main(["init", str(root), "--check"]) == 0
    out = capsys.readouterr().out
    assert "pt2bot:   net (pkg.net:Net): failed" in out
    assert ("pt2bot: no model could be imported or built: that is usually the set-up (the install, "
            'a package the repository imports), not the models; first: pkg.net:Net: "pkg.net" '
            'imports "not_installed_anywhere", which is not installed at pkg/__init__.py:1') in out


MINGPT_LIKE = {
    "mg/__init__.py": "",
    "mg/utils.py": """\
        class CfgNode:
            def __init__(self, **kwargs):
                self.__dict__.update(kwargs)

            def merge_from_dict(self, d):
                self.__dict__.update(d)
        """,
    "mg/model.py": """\
        from torch import nn
        from mg.utils import CfgNode as CN


        class Block(nn.Module):
            def __init__(self, cfg):
                super().__init__()
                self.drop = nn.Dropout(cfg.attn_pdrop)
                self.fc = nn.Linear(cfg.n_embd, cfg.n_embd)

            def forward(self, x):
                return self.drop(self.fc(x))


        class GPT(nn.Module):
            @staticmethod
            def get_default_config():
                C = CN()
                C.n_layer = None
                return C

            def __init__(self, config):
                super().__init__()
                if config.n_layer is None:
                    config.merge_from_dict({"n_layer": 2})
                self.wte = nn.Embedding(config.vocab_size, config.n_embd)
                self.h = nn.ModuleList([Block(config) for _ in range(config.n_layer)])

            def forward(self, idx):
                x = self.wte(idx)
                for b in self.h:
                    x = b(x)
                return x
        """,
}


def test_config_parameter_no_class_fits_says_what_to_add_and_the_fields_read(tmp_path, capsys):
    """minGPT's `GPT(config)` takes a `CfgNode(**kwargs)` whose fields are set one by one:
    no class reads as its config. The commented-out entry says to add a `config:` and lists
    the fields the constructors read, those of `Block(config)` too (a model built with only
    GPT's own fields fails on `attn_pdrop`), and no method called on it."""
    root = _repo(tmp_path, MINGPT_LIKE)
    proposals, _ = discover(str(root))
    [gpt] = [p for p in proposals if p.entry == "mg.model:GPT"]
    [problem] = gpt.problems
    assert problem.startswith("no value for the constructor argument 'config', a config no class "
                              "of the repository fits: add a `config:`")
    assert "Models built from a config object" in problem
    assert problem.endswith("it reads attn_pdrop, n_embd, n_layer, vocab_size")
    assert main(["init", str(root)]) == 0
    text = (root / "pt2bot.yml").read_text()
    assert "is not proposed: no value for the constructor argument 'config', a config" in text
    assert "it reads attn_pdrop, n_embd, n_layer, vocab_size\n" in text


PERCEIVER_LIKE = {
    "pc/__init__.py": "",
    "pc/io.py": """\
        import torch
        from torch import nn


        class Core(nn.Module):
            def __init__(self, *, depth, dim, queries_dim, num_latents=512, latent_dim=512,
                         latent_heads=8):
                super().__init__()
                self.latents = nn.Parameter(torch.zeros(num_latents, latent_dim))
                self.layers = nn.ModuleList([nn.Linear(latent_dim, latent_dim) for _ in range(depth)])
                self.to_out = nn.Linear(dim, queries_dim)

            def forward(self, x):
                return self.to_out(x)


        class Middle(nn.Module):
            def __init__(self, dim, **kwargs):
                super().__init__()
                self.core = Core(dim=dim, queries_dim=dim, **kwargs)

            def forward(self, x):
                return self.core(x)


        class LM(nn.Module):
            def __init__(self, *, dim, num_tokens, **rest):
                super().__init__()
                self.emb = nn.Embedding(num_tokens, dim)
                self.body = Middle(dim, **rest)

            def forward(self, x):
                return self.body(self.emb(x))
        """,
}


def test_constructor_kwargs_followed_to_the_classes_they_are_passed_to(tmp_path):
    # LM takes Core's `depth` and `latent_dim` only through **rest, passed on through Middle's
    # **kwargs: without following them, LM is proposed with no depth (it does not build) and,
    # with one, at its 512-wide latents
    root = _repo(tmp_path, PERCEIVER_LIKE)
    by = {p.name: p for p in discover(str(root))[0]}
    lm = by["lm"]
    assert lm.kwargs == {"dim": 32, "num_tokens": 100, "depth": 2, "num_latents": 16,
                         "latent_dim": 32, "latent_heads": 2}
    assert not lm.problems
    # what a call passes itself (`queries_dim=`, `dim` by position) is not the caller's to give
    assert "queries_dim" not in lm.kwargs
    assert main(["init", str(root)]) == 0
    config = load_config(str(root / "pt2bot.yml"))
    assert _model(config, "lm").kwargs["depth"] == 2


# guided diffusion's UNet (copied into many repositories; torchcfm 1.0.7 ships one) and its
# super-resolution subclass, which passes its other arguments to the UNet by `*args, **kwargs`
GUIDED_UNET = {
    "gd/__init__.py": "",
    "gd/unet.py": """\
        import torch
        from torch import nn


        class UNetModel(nn.Module):
            def __init__(self, image_size, in_channels, model_channels, out_channels,
                         num_res_blocks, attention_resolutions, dropout=0, channel_mult=(1, 2, 4, 8)):
                super().__init__()
                assert model_channels % 32 == 0, "GroupNorm32"
                self.inp = nn.Conv2d(in_channels, model_channels, 3, padding=1)
                self.attn = [2 ** i in attention_resolutions for i in range(len(channel_mult))]
                self.blocks = nn.ModuleList(nn.Conv2d(model_channels, model_channels, 3, padding=1)
                                            for _ in range(num_res_blocks))
                self.out = nn.Conv2d(model_channels, out_channels, 3, padding=1)

            def forward(self, x, timesteps):
                h = self.inp(x) + timesteps[:, None, None, None]
                for b in self.blocks:
                    h = b(h)
                return self.out(h)


        class SuperResModel(UNetModel):
            def __init__(self, image_size, in_channels, *args, **kwargs):
                super().__init__(image_size, in_channels * 2, *args, **kwargs)
        """,
}


def test_a_guided_diffusion_unet_and_a_subclass_that_passes_its_arguments_on(tmp_path):
    root = _repo(tmp_path, GUIDED_UNET)
    by = {p.name: p for p in discover(str(root))[0]}
    unet = by["u_net_model"]
    assert unet.kwargs == {"image_size": 32, "in_channels": 3, "model_channels": 32, "out_channels": 3,
                           "num_res_blocks": 1, "attention_resolutions": [2]}
    assert not unet.problems
    # `super().__init__(image_size, in_channels * 2, *args, **kwargs)`: the UNet's arguments after
    # the two it is given are SuperResModel's to give, by keyword
    sr = by["super_res_model"]
    assert sr.kwargs == unet.kwargs and not sr.problems
    assert main(["init", str(root)]) == 0
    config = load_config(str(root / "pt2bot.yml"))
    assert _model(config, "super_res_model").kwargs["attention_resolutions"] == [2]


@pytest.mark.torch
def test_the_guided_diffusion_guesses_build_and_run(tmp_path, monkeypatch):
    import torch
    root = _repo(tmp_path, GUIDED_UNET)
    by = {p.name: p for p in discover(str(root))[0]}
    monkeypatch.syspath_prepend(str(root))
    from gd.unet import SuperResModel, UNetModel   # noqa: E402 - the repository just written
    x, t = torch.randn(2, 3, 32, 32), torch.rand(2)
    assert UNetModel(**by["u_net_model"].kwargs)(x, t).shape == (2, 3, 32, 32)
    assert SuperResModel(**by["super_res_model"].kwargs)(torch.randn(2, 6, 32, 32), t).shape == (2, 3, 32, 32)


UNFOLLOWED = {
    "uf/__init__.py": "",
    "uf/net.py": """\
        from torch import nn


        class Inner(nn.Module):
            def __init__(self, n_stages):
                super().__init__()
                self.fc = nn.Linear(4, n_stages)

            def forward(self, x):
                return self.fc(x)


        def make(**kw):
            return Inner(**kw)


        class Outer(nn.Module):
            def __init__(self, dim, **kwargs):
                super().__init__()
                self.proj = nn.Linear(dim, 4)
                self.inner = make(**kwargs)

            def forward(self, x):
                return self.inner(self.proj(x))
        """,
}


@pytest.mark.torch
@pytest.mark.slow
def test_check_says_when_the_constructors_refuse_the_guessed_arguments(tmp_path, capsys):
    # every build failing on its arguments is reported as not built, like an import failure,
    # but the set-up is fine: the summary says what to set instead of blaming the install
    root = _repo(tmp_path, UNFOLLOWED)
    assert main(["init", str(root), "--check"]) == 0
    out = capsys.readouterr().out
    assert "pt2bot:   outer (uf.net:Outer): failed" in out
    assert "no model could be built: each constructor refused the arguments init guessed" in out
    assert "n_stages" in out
    assert "usually the set-up" not in out


def test_a_forward_that_differentiates_gets_grad_and_runs_in_check(tmp_path, capsys):
    """A force field's forward returns -dE/dx by `torch.autograd.grad`: under the smoke run's
    default no_grad it raises, so `init` writes `grad: true` for it, and `--check` keeps it."""
    root = _repo(tmp_path, {"ff/__init__.py": "", "ff/pair.py": """\
        import torch
        from torch import nn


        class PairForces(nn.Module):
            def __init__(self, dim: int = 3) -> None:
                super().__init__()
                self.proj = nn.Linear(dim, 1)

            def forward(self, pos):
                pos = pos.detach().requires_grad_(True)
                energy = self.proj(pos).sum()
                return -torch.autograd.grad(energy, pos)[0]
        """})
    assert main(["init", str(root), "--check"]) == 0
    text = (root / "pt2bot.yml").read_text()
    assert "    grad: true   # forward differentiates inside itself (autograd.grad): autograd on" in text
    [m] = load_config(str(root / "pt2bot.yml")).models
    assert m.grad and m.name == "pair_forces"


def test_dims_a_docstring_names_in_its_own_words_and_a_complex_input(tmp_path):
    """complextorch's radar classifier: "z is [batch, 2, range, doppler] complex64"; init gave
    up ("its first layer ... tells no input shape") and the user wrote the input by hand."""
    root = _repo(tmp_path, {"radar/__init__.py": "", "radar/model.py": """\
        import torch
        from torch import nn


        class RangeDoppler(nn.Module):
            \"\"\"z is [batch, 2, range, doppler] complex64: two receive channels after the FFTs.\"\"\"

            def __init__(self, width: int = 8) -> None:
                super().__init__()
                self.w = nn.Parameter(torch.ones(width))

            def forward(self, z):
                return z.abs().mean(dim=(2, 3)) * self.w[:2]
        """})
    assert main(["init", str(root), "--check"]) == 0
    [m] = load_config(str(root / "pt2bot.yml")).models
    [i] = m.inputs
    assert (i.shape, i.dtype) == (("batch", 2, "range", "doppler"), "complex64")
    assert m.shapes["range"] == (16,) and m.shapes["doppler"] == (16,)


def test_a_dim_the_docstring_says_is_a_multiple_gets_multiples_of_it(tmp_path):
    """A new user's audio model: "audio: [batch, 2, samples] ... (samples a multiple of 256)",
    framed by 256; init gave `samples` 16, and `--check` dropped the model ("maximum size for
    tensor at dimension 1 is 16 but size is 256"). A sequence named `T` is one too."""
    root = _repo(tmp_path, {"mix/__init__.py": "", "mix/model.py": """\
        import torch
        from torch import nn


        class AutoEQ(nn.Module):
            def __init__(self, bands: int = 4) -> None:
                super().__init__()
                self.head = nn.Linear(129, bands)

            def forward(self, audio):
                \"\"\"
                audio: [batch, 2, samples] float32 stereo waveform, values in [-1, 1] (samples a multiple of 256)
                \"\"\"
                frames = audio.mean(1).unfold(-1, 256, 256)
                return self.head(torch.fft.rfft(frames).abs()).mean(1)


        class Tokens(nn.Module):
            def __init__(self, dim: int = 8) -> None:
                super().__init__()
                self.proj = nn.Linear(dim, dim)

            def forward(self, x):
                \"\"\"x: (B, T, D) features, where T must be a multiple of 4\"\"\"
                b, t, d = x.shape
                return self.proj(x.reshape(b, t // 4, 4, d).mean(2))
        """})
    assert main(["init", str(root), "--check"]) == 0
    models = {m.name: m for m in load_config(str(root / "pt2bot.yml")).models}
    eq, tok = models["auto_eq"], models["tokens"]
    assert eq.inputs[0].shape == ("batch", 2, "samples") and eq.shapes["samples"] == (512, 1024)
    assert tok.inputs[0].shape == ("batch", "seq", 8) and tok.shapes["seq"] == (8, 16)
    text = (root / "pt2bot.yml").read_text()
    assert "samples a multiple of 256, as the docstring says" in text


def test_a_size_rule_on_a_line_of_its_own_counts_for_the_dim_it_names(tmp_path):
    """Held-out batch 38's registration net: its class docstring gives both scans as
    `[batch, 1, size, size, size]`, then "size is a multiple of 4." on a line of its own; init
    gave `size: [16]`, one size, so the matrix never showed that size cannot be dynamic."""
    root = _repo(tmp_path, {"reg/__init__.py": "", "reg/model.py": """\
        import torch
        from torch import nn


        class Reg(nn.Module):
            \"\"\"Registers a moving scan onto a static one.

            forward(moving, static)
              moving: [batch, 1, size, size, size] float32, intensities in [0, 1]
              static: [batch, 1, size, size, size] float32, intensities in [0, 1]
              size is a multiple of 4.
            \"\"\"

            def __init__(self) -> None:
                super().__init__()
                self.conv = nn.Conv3d(2, 3, 3, padding=1)

            def forward(self, moving, static):
                return self.conv(torch.cat([moving, static], dim=1))
        """})
    assert main(["init", str(root)]) == 0
    (m,) = load_config(str(root / "pt2bot.yml")).models
    assert m.inputs[0].shape == ("batch", 1, "size", "size", "size")
    assert len(m.shapes["size"]) == 2 and all(s % 4 == 0 for s in m.shapes["size"]), m.shapes
    # a word that names no dim of the inputs is no rule of theirs
    text = (root / "reg" / "model.py").read_text()
    (root / "reg" / "model.py").write_text(text.replace("size is a multiple of 4.", "depth is a multiple of 4."))
    (root / "pt2bot.yml").unlink()
    assert main(["init", str(root)]) == 0
    (m,) = load_config(str(root / "pt2bot.yml")).models
    assert len(m.shapes["size"]) == 1, m.shapes
    # the sizes listed (held-out batch 39's "size is 32 or 48", where init proposed 16)
    for said in ("size is 32 or 48.", "size: 32 or 48", "size in {32, 48}", "size is one of 32, 48"):
        (root / "reg" / "model.py").write_text(text.replace("size is a multiple of 4.", said))
        (root / "pt2bot.yml").unlink()
        assert main(["init", str(root)]) == 0
        (m,) = load_config(str(root / "pt2bot.yml")).models
        assert m.shapes["size"] == (32, 48), (said, m.shapes)
        assert "size 32 or 48, as the docstring says" in (root / "pt2bot.yml").read_text()


def test_an_integer_input_the_docstring_bounds_by_an_argument_is_drawn_below_it(tmp_path):
    """A new user's BiLSTM-CRF tagger: "tags: [batch, seq] int64 gold BIO tags below num_tags";
    init drew the tags below 4 (its count guess), where the model has 9 tags."""
    root = _repo(tmp_path, {"ner/__init__.py": "", "ner/model.py": """\
        import torch
        from torch import nn


        class Tagger(nn.Module):
            \"\"\"A tagger; forward returns the tag scores summed over the gold tags.

            tokens: [batch, seq] int64 token ids
            tags:   [batch, seq] int64 gold BIO tags below num_tags
            \"\"\"

            def __init__(self, vocab_size: int = 50, num_tags: int = 9, dim: int = 8) -> None:
                super().__init__()
                self.embed = nn.Embedding(vocab_size, dim)
                self.proj = nn.Linear(dim, num_tags)

            def forward(self, tokens, tags):
                scores = self.proj(self.embed(tokens))
                return scores.gather(-1, tags.unsqueeze(-1)).sum()
        """})
    assert main(["init", str(root), "--check"]) == 0
    [m] = load_config(str(root / "pt2bot.yml")).models
    tags = next(i for i in m.inputs if i.name == "tags")
    assert (tags.dtype, tags.high) == ("int64", 9), tags


def test_a_class_handed_to_a_constructor_to_build_is_a_building_block(tmp_path):
    """Swin: `downsample=PatchMerging if (i_layer < self.num_layers - 1) else None`, which each
    stage builds as `downsample(input_resolution, dim=dim, ...)`; init proposed `PatchMerging`
    as a model of its own in each of four files, and none of them ran."""
    root = _repo(tmp_path, {"net/__init__.py": "", "net/model.py": """\
        import torch
        from torch import nn


        class Merge(nn.Module):
            def __init__(self, dim: int = 8) -> None:
                super().__init__()
                self.lin = nn.Linear(2 * dim, dim)

            def forward(self, x):
                return self.lin(torch.cat([x, x], -1))


        class Stage(nn.Module):
            def __init__(self, dim: int = 8, downsample=None) -> None:
                super().__init__()
                self.down = downsample(dim) if downsample is not None else nn.Identity()

            def forward(self, x):
                return self.down(x)


        class Net(nn.Module):
            def __init__(self, dim: int = 8, depth: int = 2) -> None:
                super().__init__()
                self.stages = nn.ModuleList([Stage(dim, downsample=Merge if i < depth - 1 else None)
                                             for i in range(depth)])

            def forward(self, x):
                for s in self.stages:
                    x = s(x)
                return x
        """})
    proposals, blocks = discover(str(root))
    assert [p.entry for p in proposals] == ["net.model:Net"]
    assert {"net.model:Merge", "net.model:Stage"} <= set(blocks)


def test_a_class_an_annotation_names_is_no_building_block(tmp_path):
    """litgpt's `LLM.__init__(self, model: GPT, ...)` names GPT as a type; read as a class handed
    on to be built, GPT became a building block and init proposed its MLPs instead (bench_init:
    litgpt 3 of 4 models kept, 3 layers beside them)."""
    root = _repo(tmp_path, {"net/__init__.py": "", "net/model.py": """\
        from torch import nn


        class GPT(nn.Module):
            def __init__(self, dim: int = 8) -> None:
                super().__init__()
                self.lin = nn.Linear(dim, dim)

            def forward(self, x):
                return self.lin(x)


        class Wrapper(nn.Module):
            def __init__(self, model: GPT, scale: float = 1.0) -> None:
                super().__init__()
                self.model = model
                self.best: GPT | None = None

            def forward(self, x):
                return self.model(x)
        """})
    proposals, blocks = discover(str(root))
    assert "net.model:GPT" in [p.entry for p in proposals] and "net.model:GPT" not in blocks


def test_a_forward_that_passes_star_args_on_is_read_through_to_the_method_it_calls(tmp_path):
    """dinov2's backbone: `def forward(self, *args, is_training=False, **kwargs)` calls
    `self.forward_features(*args, **kwargs)`; init named the image `is_training`, a flag, and
    `--check` blamed dinov2 ("forward_features() missing 1 required positional argument: 'x'")."""
    root = _repo(tmp_path, {"bb/__init__.py": "", "bb/model.py": """\
        import torch
        from torch import nn


        class Backbone(nn.Module):
            def __init__(self, img_size: int = 224, in_chans: int = 3, embed_dim: int = 96) -> None:
                super().__init__()
                self.embed = nn.Conv2d(in_chans, embed_dim, 8, 8)

            def forward_features(self, x, masks=None):
                return self.embed(x).flatten(2).mean(-1)

            def forward(self, *args, is_training=False, **kwargs):
                out = self.forward_features(*args, **kwargs)
                return out if is_training else out * 2
        """})
    assert main(["init", str(root), "--check"]) == 0
    [m] = load_config(str(root / "pt2bot.yml")).models
    assert [(i.name, i.shape) for i in m.inputs] == [("x", ("batch", 3, "height", "width"))]


def test_a_staged_model_keeps_its_widths_and_windows_consistent(tmp_path):
    """Swin: `embed_dim=96, num_heads=[3, 6, 12, 24], window_size=7, img_size=224`; init's
    `embed_dim: 32` is no multiple of 3 heads, and its `img_size: 32` a token grid of 8 that
    windows of 7 do not tile: none of its models built. The width is raised to one each stage's
    heads divide, and the image size is left at its default beside a window size."""
    root = _repo(tmp_path, {"win/__init__.py": "", "win/model.py": """\
        import torch
        from torch import nn


        class Staged(nn.Module):
            def __init__(self, img_size=224, patch_size=4, embed_dim=96, num_heads=[3, 6, 12, 24],
                         window_size=7, num_classes=1000):
                super().__init__()
                grid = img_size // patch_size
                assert grid % window_size == 0 and embed_dim % num_heads[0] == 0
                self.embed = nn.Conv2d(3, embed_dim, patch_size, patch_size)
                self.head = nn.Linear(embed_dim, num_classes)

            def forward(self, x):
                return self.head(self.embed(x).mean((2, 3)))
        """})
    assert main(["init", str(root), "--check"]) == 0
    [m] = load_config(str(root / "pt2bot.yml")).models
    assert m.kwargs == {"embed_dim": 48, "num_classes": 10}
    assert m.shapes["height"] == (224,) and m.shapes["width"] == (224,)


def test_the_set_a_batch_holds_in_a_docstrings_own_words_is_the_sequence(tmp_path):
    """egnn-pytorch's molecule model: "coors: [batch, atoms, 3] float32 positions"; init guessed
    `[batch, seq] int64` like the atom codes, and the model failed to build its inputs. The
    atoms are the sequence dim the other inputs (the codes through an nn.Embedding, the mask)
    share."""
    root = _repo(tmp_path, {"mol/__init__.py": "", "mol/model.py": """\
        import torch
        from torch import nn


        class Mol(nn.Module):
            \"\"\"Predicts one value per molecule.

            atoms: [batch, atoms] int64 atomic-number codes below num_types (0 is padding),
            coors: [batch, atoms, 3] float32 positions in angstrom,
            mask:  [batch, atoms] bool, True where the atom is real.
            \"\"\"

            def __init__(self, num_types: int = 10, dim: int = 8) -> None:
                super().__init__()
                self.embed = nn.Embedding(num_types, dim)
                self.pos = nn.Linear(3, dim)

            def forward(self, atoms, coors, mask):
                h = (self.embed(atoms) + self.pos(coors)) * mask.unsqueeze(-1)
                return h.sum((1, 2))
        """})
    assert main(["init", str(root), "--check"]) == 0
    [m] = load_config(str(root / "pt2bot.yml")).models
    got = {i.name: (i.shape, i.dtype) for i in m.inputs}
    assert got == {"atoms": (("batch", "seq"), "int64"), "coors": (("batch", "seq", 3), "float32"),
                   "mask": (("batch", "seq"), "bool")}


def test_an_autograd_function_of_the_package_brings_a_grad_hint(tmp_path):
    """guided-diffusion's attention blocks run `checkpoint(...)`, a custom autograd.Function
    whose backward calls `th.autograd.grad`: with autograd on dynamo breaks there, and the
    default no_grad run said "0 graph break(s)". init writes `grad: true` commented out, with
    why; a package without such a Function gets no such line."""
    files = {"net/__init__.py": "", "net/nn.py": """\
        import torch as th


        class CheckpointFunction(th.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2
        """, "net/model.py": """\
        import torch
        from torch import nn

        from .nn import CheckpointFunction


        class Block(nn.Module):
            def __init__(self, dim: int = 8) -> None:
                super().__init__()
                self.proj = nn.Linear(dim, dim)

            def forward(self, x):
                return CheckpointFunction.apply(self.proj(x))
        """}
    root = _repo(tmp_path / "with", files)
    assert main(["init", str(root)]) == 0
    text = (root / "pt2bot.yml").read_text()
    [line] = [ln for ln in text.splitlines() if "grad: true" in ln]
    assert line.startswith("    # grad: true   # `CheckpointFunction` (net/nn.py): an autograd.Function's backward")
    assert not load_config(str(root / "pt2bot.yml")).models[0].grad
    plain = _repo(tmp_path / "without", {**files, "net/nn.py": "CheckpointFunction = None\n",
                                         "net/model.py": files["net/model.py"].replace("CheckpointFunction.apply(", "(")})
    assert main(["init", str(plain)]) == 0
    assert "grad: true" not in (plain / "pt2bot.yml").read_text()
    # a Function in a module the model's imports do not reach is no hint of it: DINOv2's 26
    # proposals were each told of one in a segmentation head none of them imports
    apart = _repo(tmp_path / "apart", {**files, "net/seg.py": files["net/nn.py"],
                                       "net/nn.py": "CheckpointFunction = None\n",
                                       "net/model.py": files["net/model.py"].replace("CheckpointFunction.apply(", "(")})
    assert main(["init", str(apart)]) == 0
    assert "grad: true" not in (apart / "pt2bot.yml").read_text()


def test_a_config_built_model_whose_forward_takes_nothing_is_said_not_a_crash(tmp_path):
    """PyTorch Geometric holds such a class; `init` raised IndexError on the whole repository."""
    root = _repo(tmp_path, {"pkg/__init__.py": "", "pkg/m.py": """\
        from dataclasses import dataclass

        from torch import nn


        @dataclass
        class Config:
            dim: int = 8


        class Prior(nn.Module):
            def __init__(self, config: Config):
                super().__init__()
                self.mean = nn.Parameter(nn.init.zeros_(nn.Linear(config.dim, 1).weight))

            def forward(self):
                return self.mean
        """})
    (prior,) = [p for p in discover(str(root))[0] if p.name == "prior"]
    assert prior.problems == ("forward() takes no input",)


LIBRARY_FIRST = {
    "snn/__init__.py": "",
    "snn/model.py": """\
        import torch
        from norse.torch import LIFCell, PoissonEncoder


        class Classifier(torch.nn.Module):
            def __init__(self, steps: int = 8):
                super().__init__()
                self.encoder = PoissonEncoder(seq_length=steps, f_max=100)
                self.fc = torch.nn.Linear(16, 4)
                self.lif = LIFCell()

            def forward(self, x):
                spikes = self.encoder(x)
                return self.lif(self.fc(spikes[0]))[0]
        """,
}


def test_where_init_stops_at_a_first_layer_it_cannot_read_it_names_it(tmp_path):
    # a new user's spiking classifier: its first layer is an installed package's encoder (which
    # adds a time dim), so no shape can be read from it; the reason said "(no known first layer)"
    root = _repo(tmp_path, LIBRARY_FIRST)
    by = {p.name: p for p in discover(str(root))[0]}
    assert by["classifier"].problems == (
        "cannot infer the input 'x' (its first layer, `self.encoder = PoissonEncoder(seq_length=steps, "
        "f_max=100)`, tells no input shape: add the input to `inputs:`)",)
    assert main(["init", str(root)]) == 0
    text = (root / "pt2bot.yml").read_text()
    assert "# snn.model:Classifier (snn/model.py:5) is not proposed: cannot infer the input 'x' (its first " \
           "layer, `self.encoder = PoissonEncoder(" in text
    load_config(str(root / "pt2bot.yml"))      # the comment leaves the file valid


STANDARDISED = {
    "scorer/__init__.py": "",
    "scorer/model.py": """
        import torch
        from torch import nn
        from somewhere import make_flow


        class FlowScorer(nn.Module):
            def __init__(self, num_features: int = 6) -> None:
                super().__init__()
                self.flow = make_flow(num_features)
                self.register_buffer("mean", torch.zeros(num_features))
                self.scale = nn.Parameter(torch.ones(num_features))

            def forward(self, x):
                z = (x - self.mean) / self.scale
                return -self.flow.log_prob(z)


        class Shifted(nn.Module):
            def __init__(self, width: int = 5) -> None:
                super().__init__()
                self.shift = nn.Parameter(torch.zeros(width, width))

            def forward(self, x):
                return x + self.shift
    """,
}


def test_an_input_standardised_by_a_buffer_takes_the_buffers_size(tmp_path):
    """A new user's flowtorch anomaly scorer: no layer before the flow, its input first met
    in `(x - self.mean) / self.std` with buffers of `torch.zeros(num_features)`. init said
    "cannot infer the input 'x' (no known first layer)"; the buffer's size is the input's
    last one. A buffer of more than one dim says nothing of its own."""
    root = _repo(tmp_path, STANDARDISED)
    by = {p.name: p for p in discover(str(root))[0]}
    scorer = by["flow_scorer"]
    assert not scorer.problems, scorer.problems
    assert [(i.name, i.shape, i.dtype) for i in scorer.inputs] == [("x", ("batch", 6), "float32")]
    assert scorer.how == "from `self.mean`, the size-6 buffer it meets first"
    assert by["shifted"].problems == ("cannot infer the input 'x' (no known first layer)",)


FACTORY_BUILT = {
    # minDiffusion's layout: the first layer is built by a function of the repository, a def
    # or a module-level lambda, and the constructor's sizes have names of their own
    "ddpm/__init__.py": "",
    "ddpm/models.py": """\
        import torch
        import torch.nn as nn


        def conv_block(ic, oc):
            return nn.Sequential(nn.Conv2d(ic, oc, 3, padding=1), nn.GroupNorm(8, oc), nn.ReLU())

        blk = lambda ic, oc: nn.Sequential(nn.Conv2d(ic, oc, 7, padding=3), nn.LeakyReLU())


        class EpsModel(nn.Module):
            def __init__(self, n_channel: int, n_feat: int = 256) -> None:
                super().__init__()
                self.conv = nn.Sequential(conv_block(n_channel, n_feat),
                                          nn.Conv2d(n_feat, n_channel, 3, padding=1))

            def forward(self, x, t):
                return self.conv(x) * t.view(-1, 1, 1, 1)


        class DummyEpsModel(nn.Module):
            def __init__(self, n_channel: int) -> None:
                super().__init__()
                self.conv = nn.Sequential(blk(n_channel, 16), nn.Conv2d(16, n_channel, 3, padding=1))

            def forward(self, x, t):
                return self.conv(x)


        class DDPM(nn.Module):
            def __init__(self, eps_model: nn.Module, betas: tuple, n_T: int) -> None:
                super().__init__()
                self.eps_model, self.n_T = eps_model, n_T

            def forward(self, x):
                return self.eps_model(x, torch.rand(x.shape[0]))
        """,
}


def test_a_first_layer_built_by_a_function_of_the_repository(tmp_path: Path, capsys) -> None:
    root = _repo(tmp_path, FACTORY_BUILT)
    by = {p.name: p for p in discover(str(root))[0]}
    eps, dummy = by["eps_model"], by["dummy_eps_model"]
    assert not eps.problems and not dummy.problems, (eps.problems, dummy.problems)
    # a channel count by its name, and a UNet's base width lowered from its real 256
    assert eps.kwargs == {"n_channel": 3, "n_feat": 32}, eps.kwargs
    assert "nn.Conv2d(3, ...) from conv_block()" in eps.how, eps.how
    assert "nn.Conv2d(3, ...) from blk()" in dummy.how, dummy.how
    assert [i.shape for i in dummy.inputs][0] == ("batch", 3, "height", "width")
    # several arguments with no value are one reason, so the console line has room for the rest
    assert by["ddpm"].problems[0] == "no value for the constructor arguments 'eps_model', 'betas', 'n_T'"

    # without --check nothing ran: the line says what was guessed, not "ok"
    assert main(["init", str(root)]) == 0
    out = capsys.readouterr().out
    assert ("dummy_eps_model (ddpm.models:DummyEpsModel): proposed, not run: x [batch, 3, height, "
            "width]; t [batch]") in out, out
    # and what was proposed builds and runs: `--check` keeps both
    assert main(["init", str(root), "--check", "--force"]) == 0
    config = load_config(str(root / "pt2bot.yml"))
    assert {m.name for m in config.models} == {"eps_model", "dummy_eps_model"}
    out = capsys.readouterr().out
    assert "dummy_eps_model (ddpm.models:DummyEpsModel): ran OK" in out, out


def test_a_long_reason_on_the_console_ends_in_an_ellipsis() -> None:
    from pt2bot.init import _comment

    assert _comment("a;  b\n c", 20) == "a; b c"
    cut = _comment("no value for the constructor arguments 'a'; cannot infer the input 'x'", 50)
    assert len(cut) <= 50 and cut.endswith(" …") and cut.startswith("no value for"), cut
    # at a word's end (Swin's MoE model read "... swin_transformer_moe.py:712 (build_rai")
    assert _comment("raised ValueError: no group at models/moe.py:712 (build_raised)", 60) == \
        "raised ValueError: no group at models/moe.py:712 …"


def test_a_head_built_from_a_list_of_layers_and_an_image_size_in_a_list(tmp_path):
    """DINO, read as a new user's first hour: `DINOHead` builds `layers = [nn.Linear(in_dim,
    hidden_dim)]` ... `self.mlp = nn.Sequential(*layers)` and got `x [batch, seq, 32]` from
    `hidden_dim`; `VisionTransformer(img_size=[224])` kept 224 while every image was 32, so
    only the position table's interpolation path ever ran."""
    root = _repo(tmp_path, {"vit.py": """\
        import torch
        from torch import nn


        class Head(nn.Module):
            def __init__(self, in_dim, out_dim, nlayers=3, hidden_dim=2048, bottleneck_dim=256):
                super().__init__()
                if nlayers == 1:
                    self.mlp = nn.Linear(in_dim, bottleneck_dim)
                else:
                    layers = [nn.Linear(in_dim, hidden_dim)]
                    layers.append(nn.GELU())
                    layers.append(nn.Linear(hidden_dim, bottleneck_dim))
                    self.mlp = nn.Sequential(*layers)
                self.last_layer = nn.Linear(bottleneck_dim, out_dim)

            def forward(self, x):
                return self.last_layer(self.mlp(x))


        class ViT(nn.Module):
            def __init__(self, img_size=[224], patch_size=16, in_chans=3, embed_dim=768):
                super().__init__()
                self.proj = nn.Conv2d(in_chans, embed_dim, patch_size, patch_size)
                self.pos = nn.Parameter(torch.zeros(1, (img_size[0] // patch_size) ** 2, embed_dim))

            def forward(self, x):
                return self.proj(x).flatten(2).transpose(1, 2) + self.pos
        """})
    by = {p.name: p for p in discover(str(root))[0]}
    head = by["head"]
    assert [(i.name, i.shape) for i in head.inputs] == [("x", ("batch", head.kwargs["in_dim"]))]
    assert head.how == f"from the first layer, nn.Linear({head.kwargs['in_dim']}, ...)"
    vit = by["vit"]
    assert vit.kwargs["img_size"] == [32] and "img_size" in vit.guessed
    assert vit.shapes["height"] == (32,) and vit.shapes["width"] == (32,)


def test_a_size_annotated_as_a_tuple_of_ints_is_guessed_as_one(tmp_path):
    """SAM's `PromptEncoder(embed_dim: int, image_embedding_size: Tuple[int, int], ...)`: one
    int for the tuple made the constructor raise at `image_embedding_size[0]`."""
    root = _repo(tmp_path, {"enc.py": """\
        from typing import Tuple

        import torch
        from torch import nn


        class Prompts(nn.Module):
            def __init__(self, embed_dim: int, image_embedding_size: Tuple[int, int]) -> None:
                super().__init__()
                self.size = (4 * image_embedding_size[0], 4 * image_embedding_size[1])
                self.proj = nn.Linear(embed_dim, embed_dim)

            def forward(self, x):
                return self.proj(x)
        """})
    [p] = discover(str(root))[0]
    assert p.kwargs["image_embedding_size"] == [32, 32] and isinstance(p.kwargs["embed_dim"], int)


CLIP_LIKE = """\
    from typing import Tuple, Union

    import torch
    from torch import nn


    class Tower(nn.Module):
        def __init__(self, input_resolution: int, patch_size: int, width: int, layers: int, heads: int,
                     output_dim: int):
            super().__init__()
            self.conv1 = nn.Conv2d(3, width, kernel_size=patch_size, stride=patch_size, bias=False)
            self.attn = nn.MultiheadAttention(width, heads)
            self.proj = nn.Linear(width, output_dim)

        def forward(self, x):
            x = self.conv1(x).flatten(2).permute(2, 0, 1)
            return self.proj(self.attn(x, x, x)[0].mean(0))


    class CLIP(nn.Module):
        def __init__(self, embed_dim: int, image_resolution: int,
                     vision_layers: Union[Tuple[int, int, int, int], int], vision_width: int,
                     vision_patch_size: int, context_length: int, vocab_size: int,
                     transformer_width: int, transformer_heads: int, transformer_layers: int):
            super().__init__()
            if isinstance(vision_layers, (tuple, list)):   # a ResNet tower in CLIP
                self.visual = nn.Identity()
            else:
                vision_heads = vision_width // 64
                self.visual = Tower(input_resolution=image_resolution, patch_size=vision_patch_size,
                                    width=vision_width, layers=vision_layers, heads=vision_heads,
                                    output_dim=embed_dim)
            self.token_embedding = nn.Embedding(vocab_size, transformer_width)
            self.text = nn.MultiheadAttention(transformer_width, transformer_heads)
            self.text_projection = nn.Linear(transformer_width, embed_dim)

        @property
        def dtype(self):
            return self.text_projection.weight.dtype

        def encode_image(self, image):
            return self.visual(image.type(self.dtype))

        def forward(self, image, text):
            image_features = self.encode_image(image)
            x = self.token_embedding(text).permute(1, 0, 2)
            text_features = self.text_projection(self.text(x, x, x)[0].mean(0))
            return image_features @ text_features.t()
    """


def test_clip_s_towers_are_sized_by_their_prefixed_names_and_its_image_is_an_image(tmp_path):
    """openai/CLIP's constructor: `vision_width`, `transformer_heads`, `transformer_layers` are
    a tower's sizes by their last word (init left them unguessed: a bare `width` or `layers`
    says nothing after any prefix); `vision_heads = vision_width // 64` needs a width of 64 at
    least (32 made 0 heads and the constructor raised); and `forward(image, text)` got token ids
    for its image, from the vocabulary the text's embedding names."""
    root = _repo(tmp_path, {"clip/model.py": CLIP_LIKE})
    by = {p.name: p for p in discover(str(root))[0]}
    clip = by["clip"]
    assert not clip.problems, clip.problems
    k = clip.kwargs
    assert (k["vision_width"], k["image_resolution"]) == (64, 32)
    assert (k["transformer_heads"], k["transformer_layers"], k["vision_layers"]) == (2, 2, 2)
    assert k["transformer_width"] % k["transformer_heads"] == 0
    image, text = clip.inputs
    assert (image.name, image.shape, image.dtype) == ("image", ("batch", 3, "height", "width"), "float32")
    assert (text.name, text.shape, text.dtype, text.high) == ("text", ("batch", "seq"), "int64", k["vocab_size"])
    assert clip.shapes["height"] == clip.shapes["width"] == (32,)
    assert clip.how.startswith("image: an image, by its name, its side the constructor's image_resolution")


def test_a_general_size_word_after_a_prefix_that_names_no_tower_stays_unguessed():
    from pt2bot.init import _guess

    assert _guess("vision_width") == _guess("width")
    assert _guess("encoder_layers") == 2 and _guess("text_heads") == 2
    assert _guess("conv_width") is None and _guess("group_heads") is None


@pytest.mark.torch
def test_clip_s_proposal_builds_and_runs(tmp_path):
    import torch

    root = _repo(tmp_path, {"clip/model.py": CLIP_LIKE})
    clip = {p.name: p for p in discover(str(root))[0]}["clip"]
    ns: dict = {}
    exec(compile(textwrap.dedent(CLIP_LIKE), "clip_like", "exec"), ns)
    model = ns["CLIP"](**clip.kwargs)
    side = clip.shapes["height"][0]
    out = model(torch.randn(2, 3, side, side), torch.randint(0, clip.kwargs["vocab_size"], (2, clip.shapes["seq"][0])))
    assert out.shape == (2, 2)


def test_a_volume_s_docstring_shape_and_its_negative_intensities(tmp_path):
    """Held-out batch 33's new user: "x is [batch, 1, depth, height, width] float32 intensities
    (HU / 1000)". init proposed `x [batch, seq, 32] in [0, 1)`: `depth` was no dim it knew,
    so the docstring was dropped for the constructor's `dim`, and "intensities" read as not
    negative, which air in HU / 1000 is."""
    root = _repo(tmp_path, {"volcls/model.py": """\
        import torch
        from torch import nn


        class VolumePatchClassifier(nn.Module):
            \"\"\"Classify single-channel volumes from their non-overlapping 3-D patches.

            forward(x): x is [batch, 1, depth, height, width] float32 intensities (HU / 1000);
            depth, height and width are multiples of `patch`. Returns logits [batch, num_classes].
            \"\"\"

            def __init__(self, num_classes: int = 3, patch: int = 4, dim: int = 32):
                super().__init__()
                self.unfold = SomeUnfold(patch, stride=patch)
                self.proj = nn.Linear(patch ** 3, dim)

            def forward(self, x):
                return self.proj(self.unfold(x).transpose(1, 2)).mean(1)
        """})
    [p] = discover(str(root))[0]
    [x] = p.inputs
    assert (x.name, x.shape, x.dtype, x.nonnegative) == ("x", ("batch", 1, "depth", "height", "width"), "float32",
                                                          False)
    assert p.shapes["depth"] == p.shapes["height"] == p.shapes["width"] == (32,)
    assert p.how == "from the class's docstring, [batch, 1, depth, height, width]"


def test_a_model_in_a_module_that_runs_a_script_at_import_says_so(tmp_path):
    """S4's example.py parses its command line and downloads CIFAR-10 at module level: init
    wrote "no value for the constructor argument 'd_input'", and giving it one made the
    worker import the script (with pt2bot's argv)."""
    root = _repo(tmp_path, {"example.py": """
        import argparse
        import torch
        from torch import nn

        parser = argparse.ArgumentParser()
        parser.add_argument("--lr", default=0.01, type=float)
        args = parser.parse_args()


        class S4Model(nn.Module):
            def __init__(self, d_input, d_model=32):
                super().__init__()
                self.encoder = nn.Linear(d_input, d_model)

            def forward(self, x):
                return self.encoder(x)
        """, "script_guarded.py": """
        import argparse
        from torch import nn

        KEEP = [x for x in range(3)]
        handler = lambda: input()


        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(8, 8)

            def forward(self, x):
                return self.lin(x)


        if __name__ == "__main__":
            args = argparse.ArgumentParser().parse_args()
        """})
    by = {p.entry: p for p in discover(str(root))[0]}
    assert by["example:S4Model"].problems[0] == (
        "example.py runs a script when imported (`args = parser.parse_args()` at line 8): the "
        "worker that builds the model imports it and would run that too; move S4Model into a "
        "module of its own, or that code under `if __name__ == \"__main__\":`")
    # the script's own guard and a lambda's body run nothing at import
    assert by["script_guarded:Model"].problems == ()
