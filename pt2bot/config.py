"""pt2bot.yml: the configuration's data model and defaults (pure dataclasses, no YAML).

The dataclasses below are the interface every stage uses. Loading and validation live in
pt2bot/configfile/ (`load_config` raises `ConfigError` naming file, line and key path), which
imports this module and is never imported by it.
"""
from __future__ import annotations

import hashlib
import itertools
import json
import os
import re
from dataclasses import dataclass, field
from typing import Any


from pt2bot.findings import FILTERS  # noqa: F401  (static.filter's choices; defined there once)

DEFAULT_CONFIG_NAMES = ("pt2bot.yml", "pt2bot.yaml", ".github/pt2bot.yml")
# A model's entry, "module.path:attr": checked at load time (pt2bot/configfile/schema.py) and
# by pt2bot/smoke/entry.py for callers that skip the config.
ENTRY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*"
                   r":[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")
FAIL_ON = ("error", "warning", "never")
# What to do with a finding on a path the default call does not take (its `condition`):
# keep its severity, demote it one level (error -> warning -> info), or hide it.
CONDITIONAL = ("keep", "demote", "hide")
# `static.torch`: the torch release the code runs on ("2.14" or "2.14.1"), when the environment
# running `pt2bot check` has none (pre-commit) or a different one.
TORCH_VERSION = re.compile(r"[0-9]+\.[0-9]+(\.[0-9]+)?")
DEVICES = ("auto", "cpu", "cuda")


@dataclass(frozen=True)
class StaticConfig:
    paths: tuple[str, ...] = ()            # what to check (dirs, files, globs); empty: the repo
    exclude: tuple[str, ...] = ()          # globs never checked
    filter: str = "added"                  # see FILTERS
    fail_on: str = "error"                 # see FAIL_ON
    select: tuple[str, ...] = ()           # codes or prefixes; empty: the default set
    ignore: tuple[str, ...] = ()           # codes or prefixes
    severity: dict[str, str] = field(default_factory=dict)       # code -> error|warning
    per_file_ignores: dict[str, tuple[str, ...]] = field(default_factory=dict)  # glob -> codes
    conditional: str = "demote"            # see CONDITIONAL
    torch: str | None = None               # see TORCH_VERSION; None: the installed torch


@dataclass(frozen=True)
class InputSpec:
    shape: tuple[str | int, ...]           # dim names (keys of `shapes`) or fixed ints
    dtype: str = "float32"
    low: float | None = None
    high: float | None = None
    name: str | None = None                # forward() argument name (default: positional)


@dataclass(frozen=True)
class ConfigObject:
    """A model's `config:`, the object built first and passed to the model's constructor:
    `Model(Config(**kwargs))`, or `Model(Config.from_name(**kwargs))` with a factory entry."""
    entry: str                             # "pkg.mod:Config" or "pkg.mod:Config.from_name"
    kwargs: dict[str, Any] = field(default_factory=dict)
    arg: str | None = None                 # the constructor's keyword for it; None: first positional


@dataclass(frozen=True)
class DimBounds:
    """A dynamic dim's declared range and divisibility (`dynamic: {seq: {min: 16, max: 128,
    multiple_of: 8}}`): what the model accepts, which the matrix cannot show. None: not
    declared (export's own default for an end, no divisibility)."""
    min: int | None = None
    max: int | None = None
    multiple_of: int | None = None


@dataclass(frozen=True)
class ModelConfig:
    name: str
    entry: str                             # "pkg.mod:attr", nn.Module class or factory
    kwargs: dict[str, Any] = field(default_factory=dict)
    # built first, passed to the entry (see ConfigObject); several when the constructor takes
    # several (`CLIP(embed_dim, vision_cfg, text_cfg)`), each but one named by its `arg`
    config: tuple[ConfigObject, ...] = ()
    inputs: tuple[InputSpec, ...] = ()
    inputs_entry: str | None = None        # "pkg.mod:make_inputs", called with the dims as kwargs
    shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)
    cases: tuple[dict[str, int], ...] | None = None   # explicit cases instead of the product
    dynamic: tuple[str, ...] = ()
    # the dims of `dynamic` declared with a range or divisibility (its mapping form)
    bounds: dict[str, DimBounds] = field(default_factory=dict)
    export: bool = True
    # built in training mode (`model.train()`): the code a training step compiles, `self.training`
    # branches, dropout, batch statistics; eval mode otherwise (inference)
    train: bool = False
    # calls run with autograd on (`torch.enable_grad()`) instead of `torch.no_grad()`: for a
    # forward that differentiates inside itself (forces as `-dE/dx`, an implicit layer's
    # Jacobian term), which raises with autograd off; `train: true` in pt2bot.yml brings it
    # unless the file sets it
    grad: bool = False
    tolerance: dict[str, tuple[float, float]] = field(default_factory=dict)  # dtype -> (rtol, atol)
    timeout_s: float | None = None         # overrides run.timeout_s
    line: int | None = None                # where the model is declared in the config file

    def shape_cases(self) -> list[dict[str, int]]:
        """The shape matrix: the explicit cases, else the product of the dims' values."""
        if self.cases is not None:
            return [dict(c) for c in self.cases]
        if not self.shapes:
            return [{}]
        names = list(self.shapes)
        return [dict(zip(names, combo)) for combo in itertools.product(*self.shapes.values())]


@dataclass(frozen=True)
class RunConfig:
    device: str = "auto"
    backend: str = "inductor"
    mode: str | None = None                # torch.compile mode
    timeout_s: float = 600.0
    warmup: int = 10
    repeats: int = 50      # per process; benchmarks/results/latency_verdict.md for why
    threads: int | None = 1                # torch.set_num_threads in workers (CPU timing)
    jobs: int = 1                          # models run in parallel
    recompile_limit: int = 8
    cache_dir: str | None = None           # TORCHINDUCTOR_CACHE_DIR
    latency: bool = True
    shape_advice: bool = True              # the "advice" phase (pt2bot/smoke/advice.py)
    rounds: int = 3     # review: the most alternating base/head latency rounds (pt2bot/stats.py)


@dataclass(frozen=True)
class Thresholds:
    new_graph_breaks: int = 0
    new_recompiles: int = 0
    latency_regression_pct: float = 10.0
    export_regression: str = "fail"        # fail | warn | ignore
    accuracy: str = "fail"                 # fail | warn | ignore
    require_gpu: bool = False              # neutral conclusion when no GPU was available
    compile_regression_pct: float = 30.0   # the first compile's cost (pt2bot/compare.py)


DEFAULT_FIX_BUDGET_S = 300.0


@dataclass(frozen=True)
class FixesConfig:
    """`fixes:`: the review's proof of the fixes it suggests (pt2bot/fixes.py)."""
    verify: bool = True                    # prove candidate fixes; only proven ones are posted
    # the most the proof adds to one review (to each shard), s; None: as long as head's smoke run
    # of the models it proves on took, at least DEFAULT_FIX_BUDGET_S (pt2bot/fixes.py `proof_budget`)
    budget_s: float | None = None


@dataclass(frozen=True)
class Config:
    version: int = 1
    static: StaticConfig = field(default_factory=StaticConfig)
    models: tuple[ModelConfig, ...] = ()
    run: RunConfig = field(default_factory=RunConfig)
    thresholds: Thresholds = field(default_factory=Thresholds)
    fixes: FixesConfig = field(default_factory=FixesConfig)
    path: str | None = None                # the file it came from
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def root(self) -> str:
        """The directory the config's relative paths are relative to."""
        if not self.path:
            return os.getcwd()
        d = os.path.dirname(os.path.abspath(self.path))
        return os.path.dirname(d) if os.path.basename(d) == ".github" else d

    @property
    def digest(self) -> str:
        blob = json.dumps(self.raw, sort_keys=True, default=str).encode()
        return "sha256:" + hashlib.sha256(blob).hexdigest()[:16]

    def model(self, name: str) -> ModelConfig:
        for m in self.models:
            if m.name == name:
                return m
        raise KeyError(name)
