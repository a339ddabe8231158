"""pt2bot.yml: parsing, defaults, located errors, and agreement with the editor JSON Schema."""
from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import textwrap
from importlib import resources
from pathlib import Path

import jsonschema
import pytest
import yaml

from pt2bot.config import (
    Config,
    ConfigObject,
    FixesConfig,
    DimBounds,
    InputSpec,
    ModelConfig,
    RunConfig,
    StaticConfig,
    Thresholds,
)
from pt2bot.configfile import MAX_BYTES, ConfigErrors, load_config, parse_config
from pt2bot.errors import ConfigError, UserError

# The README's example pt2bot.yml, its input without a `name`.
README_EXAMPLE = """\
version: 1
static:
  paths: [src/]
  filter: added          # added | diff_context | file | nofilter
  fail_on: error         # error | warning | never
  ignore: [PTC301]
models:
  - name: tiny_gpt
    entry: mypkg.models:build_tiny_gpt     # nn.Module class or factory
    kwargs: {n_layer: 2}
    inputs:
      - {shape: [batch, seq], dtype: int64, high: 1000}
    shapes:                                # the shape matrix: every combination is run
      batch: [1, 4, 16]
      seq: [32, 128]
    dynamic: [batch, seq]                  # dims that must not cause recompiles
    export: true
run: {device: auto, backend: inductor, timeout_s: 600}
thresholds:
  new_graph_breaks: 0
  new_recompiles: 0
  latency_regression_pct: 10               # only statistically significant changes count
  export_regression: fail
  compile_regression_pct: 30               # first compile's CPU time, when the compile grew
"""

# Every key set to a non-default value.
FULL = """\
version: 1
static:
  paths: [src/, lib/]
  exclude: ["**/test_*.py"]
  filter: diff_context
  fail_on: warning
  select: [PTC1, PTC301]
  ignore: [PTC4]
  severity: {PTC101: warning}
  per_file_ignores:
    "tests/*.py": [PTC1]
models:
  - name: mlp
    entry: pkg.models:MLP
    kwargs: {hidden: 32, act: relu}
    inputs:
      - {shape: [batch, 16], dtype: float16, low: -1, high: 1.5, name: x}
      - {shape: [batch], dtype: int64, low: 0, high: 10, name: labels}
    shapes:
      batch: [1, 8]
    dynamic: [batch]
    export: false
    tolerance: {float16: [0.001, 0.01]}
    timeout_s: 30
  - name: gen
    entry: pkg.models:Generator.build
    inputs: {entry: pkg.data:make_inputs}
    cases:
      - {batch: 1, seq: 8}
      - {batch: 4, seq: 64}
    dynamic: [seq]
run:
  device: cpu
  backend: aot_eager
  mode: max-autotune
  timeout_s: 120.5
  warmup: 0
  repeats: 5
  threads: null
  jobs: 2
  recompile_limit: 4
  cache_dir: .cache/inductor
  latency: false
  rounds: 1
thresholds:
  new_graph_breaks: 1
  new_recompiles: 2
  latency_regression_pct: 5.5
  export_regression: warn
  accuracy: ignore
  require_gpu: true
  compile_regression_pct: 45
"""


def errors_of(text: str, path: str = "pt2bot.yml") -> list[str]:
    with pytest.raises(ConfigErrors) as info:
        parse_config(text, path)
    assert str(info.value) == "\n".join(str(e) for e in info.value.errors)
    return [str(e) for e in info.value.errors]


def one_error(text: str) -> str:
    errs = errors_of(text)
    assert len(errs) == 1, errs
    return errs[0]


def model_yaml(body: str) -> str:
    """A config with one model; `body` is indented under the list item (line 5 onwards)."""
    return "version: 1\nmodels:\n  - name: m\n    entry: pkg.m:M\n" + textwrap.indent(
        textwrap.dedent(body), "    ")


# --------------------------------------------------------------------------- good configs

def test_design_example_parses() -> None:
    c = parse_config(README_EXAMPLE, "pt2bot.yml")
    assert c.static == StaticConfig(paths=("src/",), ignore=("PTC301",))
    (m,) = c.models
    assert m == ModelConfig(
        name="tiny_gpt", entry="mypkg.models:build_tiny_gpt", kwargs={"n_layer": 2},
        inputs=(InputSpec(shape=("batch", "seq"), dtype="int64", high=1000),),
        shapes={"batch": (1, 4, 16), "seq": (32, 128)}, dynamic=("batch", "seq"),
        export=True, line=8)
    assert len(m.shape_cases()) == 6 and m.shape_cases()[0] == {"batch": 1, "seq": 32}
    assert c.run == RunConfig(device="auto", backend="inductor", timeout_s=600.0)
    assert c.thresholds == Thresholds()
    assert c.raw == yaml.safe_load(README_EXAMPLE)
    assert c.path == "pt2bot.yml"


def test_every_key_round_trips() -> None:
    c = parse_config(FULL, "cfg/pt2bot.yml")
    assert c.static == StaticConfig(
        paths=("src/", "lib/"), exclude=("**/test_*.py",), filter="diff_context",
        fail_on="warning", select=("PTC1", "PTC301"), ignore=("PTC4",),
        severity={"PTC101": "warning"}, per_file_ignores={"tests/*.py": ("PTC1",)})
    mlp, gen = c.models
    assert mlp == ModelConfig(
        name="mlp", entry="pkg.models:MLP", kwargs={"hidden": 32, "act": "relu"},
        inputs=(InputSpec(("batch", 16), "float16", -1, 1.5, "x"),
                InputSpec(("batch",), "int64", 0, 10, "labels")),
        shapes={"batch": (1, 8)}, dynamic=("batch",), export=False,
        tolerance={"float16": (0.001, 0.01)}, timeout_s=30.0, line=13)
    assert gen == ModelConfig(
        name="gen", entry="pkg.models:Generator.build", inputs=(), inputs_entry="pkg.data:make_inputs",
        cases=({"batch": 1, "seq": 8}, {"batch": 4, "seq": 64}), dynamic=("seq",), line=25)
    assert gen.shape_cases() == [{"batch": 1, "seq": 8}, {"batch": 4, "seq": 64}]
    assert c.run == RunConfig(device="cpu", backend="aot_eager", mode="max-autotune",
                              timeout_s=120.5, warmup=0, repeats=5, threads=None, jobs=2,
                              recompile_limit=4, cache_dir=".cache/inductor", latency=False,
                              rounds=1)
    assert c.thresholds == Thresholds(1, 2, 5.5, "warn", "ignore", True, 45)
    assert c.raw == yaml.safe_load(FULL)
    # frozen: stages cannot change the config under each other
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.run.jobs = 3  # type: ignore[misc]


def test_defaults_and_empty_sections() -> None:
    c = parse_config("version: 1\nstatic:\nrun:\nthresholds:\nmodels:\n", "p.yml")
    assert c == Config(path="p.yml")
    assert parse_config("models: []\n", "p.yml") == Config(path="p.yml")


REPO = Path(__file__).resolve().parent.parent


def test_bundled_example_configs_parse_and_match_the_schema() -> None:
    found = sorted(REPO.glob("examples/**/pt2bot.yml"))
    assert found, "the examples ship at least one pt2bot.yml"
    for p in found:
        c = load_config(str(p))
        assert c.models and all(m.line for m in c.models), p
        assert schema_accepts(p.read_text()), p


def test_digest_follows_content_not_layout() -> None:
    a = parse_config(README_EXAMPLE, "a.yml")
    b = parse_config("# moved around\n" + README_EXAMPLE.replace("version: 1\n", "") + "version: 1\n",
                     "b.yml")
    c = parse_config(README_EXAMPLE.replace("n_layer: 2", "n_layer: 3"), "a.yml")
    assert a.digest == b.digest != c.digest


def test_anchors_and_merge_keys() -> None:
    text = textwrap.dedent("""\
        version: 1
        models:
          - &base
            name: a
            entry: pkg.m:A
            shapes: {batch: [1, 2]}
            dynamic: [batch]
          - <<: *base
            name: b
        """)
    a, b = parse_config(text).models
    assert (b.name, b.entry, b.shapes, b.dynamic) == ("b", "pkg.m:A", {"batch": (1, 2)}, ("batch",))
    assert (a.line, b.line) == (3, 8)


def test_cases_without_shapes_name_the_dims() -> None:
    (m,) = parse_config(model_yaml("""\
        cases: [{b: 2, s: 3}]
        dynamic: [s]
        inputs: [{shape: [b, s]}]
        """)).models
    assert m.shape_cases() == [{"b": 2, "s": 3}] and m.dynamic == ("s",)


def test_load_config_reads_the_file_and_names_it(tmp_path: Path) -> None:
    p = tmp_path / "pt2bot.yml"
    p.write_text(README_EXAMPLE)
    assert load_config(str(p)).models[0].name == "tiny_gpt"
    p.write_text("version: 1\nrun:\n  jobs: 0\n")
    with pytest.raises(ConfigError) as info:
        load_config(str(p))
    assert str(info.value) == f"{p}:3: run.jobs: expected a positive integer, got 0"
    assert isinstance(info.value, UserError) and info.value.exit_code == 2
    assert (info.value.file, info.value.line, info.value.key) == (str(p), 3, "run.jobs")


def test_cli_prints_every_located_error_and_exits_2(tmp_path: Path) -> None:
    cfg = tmp_path / "pt2bot.yml"
    cfg.write_text("version: 1\nmodels:\n  - name: m\n    entry: a.b\nrun: {devcie: cpu}\n")
    proc = subprocess.run([sys.executable, "-m", "pt2bot", "run", "--config", str(cfg),
                           "--out", str(tmp_path / "r.json")],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        f'pt2bot: error: {cfg}:4: models[0].entry: expected an entry "module.path:attr" '
        '(e.g. "mypkg.models:TinyGPT"), got "a.b" (put ":" before the attribute: "a:b")',
        f'{cfg}:5: run.devcie: unknown key; did you mean "device"? (expected one of: device, '
        "backend, mode, timeout_s, warmup, repeats, threads, jobs, recompile_limit, cache_dir, "
        "latency, shape_advice, rounds)",
    ]
    assert not (tmp_path / "r.json").exists()


# --------------------------------------------------------------------------- one test per error class

def test_wrong_type_names_file_line_key_and_expectation() -> None:
    text = README_EXAMPLE.replace("batch: [1, 4, 16]", 'batch: "8"')
    assert one_error(text) == 'pt2bot.yml:14: models[0].shapes.batch: expected a list of positive ' \
                              'integers, got "8" (write [8])'


def test_list_items_are_located() -> None:
    assert errors_of(model_yaml("shapes: {batch: [0, 4, 4, true]}\n")) == [
        "pt2bot.yml:5: models[0].shapes.batch[0]: expected a positive integer, got 0",
        "pt2bot.yml:5: models[0].shapes.batch[2]: 4 is listed twice",
        "pt2bot.yml:5: models[0].shapes.batch[3]: expected a positive integer, got true",
    ]


@pytest.mark.parametrize("text, message", [
    ("version: 1\nmodel:\n  - name: a\n",
     'pt2bot.yml:2: model: unknown key; did you mean "models"? '
     "(expected one of: version, static, models, run, thresholds, fixes)"),
    ("version: 1\nrun:\n  devcie: cpu\n",
     'pt2bot.yml:3: run.devcie: unknown key; did you mean "device"? (expected one of: device, '
     "backend, mode, timeout_s, warmup, repeats, threads, jobs, recompile_limit, cache_dir, "
     "latency, shape_advice, rounds)"),
    (model_yaml("shaeps: {batch: [1]}\n"),
     'pt2bot.yml:5: models[0].shaeps: unknown key; did you mean "shapes"? (expected one of: '
     "name, entry, kwargs, config, inputs, shapes, cases, dynamic, export, train, grad, tolerance, timeout_s)"),
    (model_yaml("inputs: [{shape: [2], dtpye: int64}]\n"),
     'pt2bot.yml:5: models[0].inputs[0].dtpye: unknown key; did you mean "dtype"? '
     "(expected one of: shape, dtype, low, high, name)"),
    ("version: 1\nzzz: 1\n",
     "pt2bot.yml:2: zzz: unknown key (expected one of: version, static, models, run, thresholds, fixes)"),
])
def test_unknown_keys_get_did_you_mean(text: str, message: str) -> None:
    assert one_error(text) == message


def test_yaml_syntax_error_has_the_line() -> None:
    text = "version: 1\nrun:\n  device: cpu\n  backend: [inductor\nthresholds: {}\n"
    assert errors_of(text) == [
        "pt2bot.yml:5: YAML syntax error: did not find expected ',' or ']' (column 11), "
        "while parsing a flow sequence that starts at line 4"]


def test_tab_indentation_is_a_located_syntax_error() -> None:
    (msg,) = errors_of("version: 1\nrun:\n\tdevice: cpu\n")
    assert msg.startswith("pt2bot.yml:3: YAML syntax error: ")
    assert msg.endswith(" (YAML indents with spaces, not tabs)")


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n"])
def test_empty_file(text: str) -> None:
    assert errors_of(text) == [
        "pt2bot.yml: the file is empty; expected a mapping such as `version: 1` then `models:`"]


@pytest.mark.parametrize("text, got", [("- a\n- b\n", "a list"), ("hello\n", '"hello"'),
                                       ("42\n", "42")])
def test_top_level_must_be_a_mapping(text: str, got: str) -> None:
    assert errors_of(text) == [
        "pt2bot.yml:1: expected a mapping of sections (version, static, models, run, "
        f"thresholds, fixes), got {got}"]


def test_duplicate_model_names() -> None:
    text = "version: 1\nmodels:\n  - {name: a, entry: p:A}\n  - {name: b, entry: p:B}\n" \
           "  - {name: a, entry: p:C}\n"
    assert one_error(text) == 'pt2bot.yml:5: models[2].name: duplicate model name "a" (first at line 3)'


def test_dynamic_dim_not_in_shapes() -> None:
    assert one_error(model_yaml("shapes: {batch: [1, 2], seq: [8]}\ndynamic: [batch, seqlen]\n")) == (
        'pt2bot.yml:6: models[0].dynamic[1]: "seqlen" is not a dim in models[0].shapes; '
        'did you mean "seq"? (declared: batch, seq)')
    assert one_error(model_yaml("dynamic: [batch]\n")) == (
        'pt2bot.yml:5: models[0].dynamic[0]: "batch" is not a dim in models[0].shapes '
        "(declared: (none))")


def test_dynamic_mapping_declares_bounds_and_divisibility() -> None:
    text = model_yaml("shapes: {batch: [2, 4], seq: [16, 64]}\ninputs: [{shape: [batch, seq]}]\n"
                      "dynamic:\n  batch:\n  seq: {max: 128, multiple_of: 8}\n")
    (m,) = parse_config(text, "pt2bot.yml").models
    assert m.dynamic == ("batch", "seq")
    assert m.bounds == {"seq": DimBounds(min=None, max=128, multiple_of=8)}
    # the list form is unchanged: no bounds
    (m,) = parse_config(model_yaml("shapes: {batch: [2, 4]}\ninputs: [{shape: [batch]}]\n"
                                   "dynamic: [batch]\n"), "pt2bot.yml").models
    assert m.dynamic == ("batch",) and m.bounds == {}


def test_dynamic_bounds_errors_are_located() -> None:
    head = "shapes: {batch: [2, 4], seq: [16, 64]}\ninputs: [{shape: [batch, seq]}]\ndynamic:\n"
    assert errors_of(model_yaml(head + "  seq: {min: 32, max: 48, multiple_of: 3}\n"
                                       "  sq: {}\n  batch: {mn: 1}\n")) == [
        "pt2bot.yml:8: models[0].dynamic.seq.min: the shape matrix gives seq = 16, below min 32 "
        "(the bounds must hold every size of the matrix)",
        "pt2bot.yml:8: models[0].dynamic.seq.max: the shape matrix gives seq = 64, above max 48 "
        "(the bounds must hold every size of the matrix)",
        "pt2bot.yml:8: models[0].dynamic.seq.multiple_of: the shape matrix gives seq = 16, not a "
        "multiple of 3 (the bounds must hold every size of the matrix)",
        'pt2bot.yml:9: models[0].dynamic.sq: "sq" is not a dim in models[0].shapes; did you mean '
        '"seq"? (declared: batch, seq)',
        'pt2bot.yml:10: models[0].dynamic.batch.mn: unknown key; did you mean "min"? (expected '
        "one of: min, max, multiple_of)"]
    assert one_error(model_yaml(head + "  seq: {min: 100, max: 8}\n")) == (
        "pt2bot.yml:8: models[0].dynamic.seq.max: must be at least min (100), got 8")
    assert one_error(model_yaml(head + "  seq: 128\n")) == (
        "pt2bot.yml:8: models[0].dynamic.seq: expected a mapping {min: ..., max: ..., "
        "multiple_of: ...} or null, got 128")


def test_input_shape_names_an_unknown_dim() -> None:
    assert one_error(model_yaml("shapes: {batch: [1], seq: [8]}\ninputs:\n  - {shape: [batch, sq]}\n")) == (
        'pt2bot.yml:7: models[0].inputs[0].shape[1]: unknown dim "sq"; did you mean "seq"? '
        "(dims declared in models[0].shapes: batch, seq)")


@pytest.mark.parametrize("entry, hint", [
    ("mypkg.models.TinyGPT", ' (put ":" before the attribute: "mypkg.models:TinyGPT")'),
    ("mypkg/models.py:TinyGPT", ""),
    ('"mypkg.models:"', ""),
])
def test_bad_entry_format(entry: str, hint: str) -> None:
    text = f"version: 1\nmodels:\n  - name: m\n    entry: {entry}\n"
    assert one_error(text) == (
        'pt2bot.yml:4: models[0].entry: expected an entry "module.path:attr" '
        f'(e.g. "mypkg.models:TinyGPT"), got {json.dumps(entry.strip(chr(34)))}{hint}')


def test_a_model_built_from_config_objects() -> None:
    # `Model(Config(...))` and `CLIP(vision_cfg=..., text_cfg=...)`: one object, or a list
    c = parse_config(model_yaml("""\
        config: {entry: pkg.cfg:Config.from_name, kwargs: {name: tiny, n_layer: 2}}
        """))
    assert c.models[0].config == (ConfigObject("pkg.cfg:Config.from_name",
                                               {"name": "tiny", "n_layer": 2}),)
    c = parse_config(model_yaml("""\
        config:
          - {entry: pkg.cfg:VisionCfg, kwargs: {width: 32}, arg: vision_cfg}
          - {entry: pkg.cfg:TextCfg, arg: text_cfg}
        """))
    assert c.models[0].config == (ConfigObject("pkg.cfg:VisionCfg", {"width": 32}, "vision_cfg"),
                                  ConfigObject("pkg.cfg:TextCfg", {}, "text_cfg"))
    assert parse_config(model_yaml("kwargs: {a: 1}\n")).models[0].config == ()


def test_config_object_mistakes_are_located() -> None:
    assert errors_of(model_yaml("""\
        config:
          - {entry: pkg.cfg.Vision, kwargs: {width: 32}}
          - {entry: pkg.cfg:Text, bogus: 1}
          - {entry: pkg.cfg:Other}
        """)) == [
        'pt2bot.yml:6: models[0].config[0].entry: expected an entry "module.path:attr" '
        '(e.g. "mypkg.config:Config" or "mypkg.config:Config.from_name"), got "pkg.cfg.Vision" '
        '(put ":" before the attribute: "pkg.cfg:Vision")',
        'pt2bot.yml:7: models[0].config[1].bogus: unknown key (expected one of: entry, kwargs, arg)',
    ]
    assert errors_of(model_yaml("config: [{entry: a:V}, {entry: a:T}]\n")) == [
        'pt2bot.yml:5: models[0].config[1]: only one config can be the first positional '
        'argument: give the others an "arg"']
    assert errors_of(model_yaml("config: {entry: a:C, arg: cfg}\nkwargs: {cfg: 1}\n")) == [
        'pt2bot.yml:5: models[0].config.arg: "cfg" is set twice: by this config and in kwargs']


def test_bad_inputs_factory_entry() -> None:
    assert errors_of(model_yaml("inputs: {entry: pkg.data.make, shape: [1]}\n")) == [
        'pt2bot.yml:5: models[0].inputs.entry: expected an entry "module.path:attr" '
        '(e.g. "mypkg.data:make_inputs"), got "pkg.data.make" (put ":" before the attribute: '
        '"pkg.data:make")',
        'pt2bot.yml:5: models[0].inputs.shape: unknown key (expected one of: entry)',
    ]


@pytest.mark.parametrize("dtype, hint", [("long", '; did you mean "int64"?'),
                                         ("float23", '; did you mean "float32"?'),
                                         ("tensor", "")])
def test_unknown_dtype(dtype: str, hint: str) -> None:
    assert one_error(model_yaml(f"inputs: [{{shape: [3], dtype: {dtype}}}]\n")) == (
        "pt2bot.yml:5: models[0].inputs[0].dtype: expected one of float32, float16, bfloat16, "
        "float64, int64, int32, int16, int8, uint8, bool, complex64, "
        f'got "{dtype}"{hint}')


@pytest.mark.parametrize("value, got", [("2", "2"), ('"1"', '"1"'), ("1.0", "1.0")])
def test_version_other_than_1(value: str, got: str) -> None:
    assert one_error(f"version: {value}\n") == (
        f"pt2bot.yml:1: version: this pt2bot (0.1.0) understands config version 1 only, got {got}")


def test_duplicate_yaml_keys() -> None:
    text = "version: 1\nrun:\n  device: cpu\n  jobs: 2\n  device: cuda\n"
    assert one_error(text) == ("pt2bot.yml:5: run.device: duplicate key (first given at line 3); "
                               "YAML would silently keep only the last one")


def test_missing_required_keys() -> None:
    assert errors_of("version: 1\nmodels:\n  - kwargs: {}\n") == [
        'pt2bot.yml:3: models[0]: missing required key "name"',
        'pt2bot.yml:3: models[0]: missing required key "entry"',
    ]


def test_cases_must_set_every_dim() -> None:
    assert errors_of(model_yaml("""\
        shapes: {batch: [1], seq: [8]}
        cases:
          - {batch: 1, seq: 8}
          - {batch: 2}
          - {batch: 2, seq: 4, sq: 3}
        """)) == [
        "pt2bot.yml:8: models[0].cases[1]: missing dim seq (every case sets all of: batch, seq)",
        'pt2bot.yml:9: models[0].cases[2].sq: unknown dim "sq"; did you mean "seq"? '
        "(dims in shapes: batch, seq)",
    ]


def test_every_dim_is_used_by_an_input() -> None:
    assert one_error(model_yaml("shapes: {batch: [1, 2], seq: [8]}\ninputs: [{shape: [batch, 4]}]\n")) == (
        'pt2bot.yml:5: models[0].shapes.seq: no input uses dim "seq", so its cases would all be '
        "the same (name it in an inputs[].shape)")
    # a factory receives every dim: nothing to check
    parse_config(model_yaml("shapes: {batch: [1, 2], seq: [8]}\ninputs: {entry: a:b}\n"))


def test_low_must_be_below_high() -> None:
    assert one_error(model_yaml("inputs: [{shape: [2], low: 5, high: 5}]\n")) == (
        "pt2bot.yml:5: models[0].inputs[0].high: must be greater than low (5), got 5")


def test_enums_suggest_the_right_spelling() -> None:
    assert errors_of("run:\n  device: gpu\n  mode: max_autotune\nstatic: {filter: add}\n") == [
        'pt2bot.yml:2: run.device: expected one of auto, cpu, cuda, got "gpu"; did you mean "cuda"?',
        "pt2bot.yml:3: run.mode: expected one of default, reduce-overhead, max-autotune, "
        'max-autotune-no-cudagraphs, got "max_autotune"; did you mean "max-autotune"?',
        "pt2bot.yml:4: static.filter: expected one of added, diff_context, file, nofilter, "
        'got "add"; did you mean "added"?',
    ]


def test_python_tags_are_refused_not_executed(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    text = f"version: 1\nrun:\n  cache_dir: !!python/object/apply:os.system ['touch {marker}']\n"
    (msg,) = errors_of(text)
    assert msg == 'pt2bot.yml:3: run.cache_dir: unsupported YAML tag "!!python/object/apply:os.system"'
    assert not marker.exists()


def test_all_errors_reported_together_ordered_by_line() -> None:
    # run comes before models in the file; the report is in file order, not check order
    text = textwrap.dedent("""\
        version: 1
        run:
          jobs: -1
        models:
          - name: a b
            entry: pkg:M
            export: maybe
        thresholds: {accuracy: strict}
        static: {paths: src/}
        """)
    assert errors_of(text) == [
        "pt2bot.yml:3: run.jobs: expected a positive integer, got -1",
        'pt2bot.yml:5: models[0].name: expected a name of letters, digits, _ . - (at most 100), '
        'got "a b"',
        'pt2bot.yml:7: models[0].export: expected true or false, got "maybe"',
        'pt2bot.yml:8: thresholds.accuracy: expected one of fail, warn, ignore, got "strict"',
        'pt2bot.yml:9: static.paths: expected a list of strings, got "src/" (write [src/])',
    ]


def test_non_string_keys() -> None:
    assert errors_of(model_yaml("shapes: {on: [1], 3: [2]}\n")) == [
        "pt2bot.yml:5: models[0].shapes: expected a string key, got true "
        "(YAML reads on/off/yes/no as booleans: quote the key)",
        "pt2bot.yml:5: models[0].shapes: expected a string key, got 3",
    ]


def test_many_problems_are_capped_in_the_message_but_all_kept() -> None:
    text = "version: 1\nmodels:\n" + "".join(f"  - {{name: m{i}}}\n" for i in range(150))
    with pytest.raises(ConfigErrors) as info:
        parse_config(text)
    assert len(info.value.errors) == 150
    lines = str(info.value).splitlines()
    assert len(lines) == 101 and lines[-1] == "pt2bot.yml: ... and 50 more problems"
    assert lines[0] == 'pt2bot.yml:3: models[0]: missing required key "entry"'


def test_untrusted_text_is_escaped_in_messages() -> None:
    (msg,) = errors_of('version: 1\nrun:\n  device: "\\e[31mred\\nx"\n')
    assert "\x1b" not in msg and "\n" not in msg
    assert msg == 'pt2bot.yml:3: run.device: expected one of auto, cpu, cuda, got "\\u001b[31mred\\nx"'


# --------------------------------------------------------------------------- the JSON Schema

def load_schema() -> dict:
    text = resources.files("pt2bot").joinpath("schemas/pt2bot.schema.json").read_text()
    return json.loads(text)


def schema_accepts(text: str) -> bool:
    validator = jsonschema.Draft202012Validator(load_schema())
    return validator.is_valid(yaml.safe_load(text))


def validator_accepts(text: str) -> bool:
    try:
        parse_config(text)
    except ConfigError:
        return False
    return True


GOOD = [README_EXAMPLE, FULL, "version: 1\n", "models: []\n", "static:\nrun:\n",
        model_yaml("inputs: {entry: a.b:c}\ncases: [{b: 1}]\ndynamic: [b]\n"),
        model_yaml("tolerance: {float32: [0, 0.1]}\ntimeout_s: null\nkwargs: null\n"),
        model_yaml("train: true\n"),
        "run: {mode: null, threads: 4, cache_dir: null}\n",
        'static: {conditional: hide, torch: "2.14"}\n', "static: {conditional: keep, torch: '2.13.0'}\n",
        "static: {torch: null}\n", "fixes: {verify: false, budget_s: 60}\n", "fixes:\n",
        model_yaml("config: {entry: a.b:Config.from_name, kwargs: {name: tiny, n_layer: 2}}\n"),
        model_yaml("config: [{entry: a:V, arg: vision}, {entry: a:T, arg: text}, {entry: a:C}]\n"),
        model_yaml("config: {entry: a:C, kwargs: null, arg: null}\n"),
        model_yaml("shapes: {b: [2, 4], s: [16, 64]}\ninputs: [{shape: [b, s]}]\n"
                   "dynamic: {b: null, s: {min: 16, max: 128, multiple_of: 8}}\n"),
        model_yaml("shapes: {b: [2, 4]}\ninputs: [{shape: [b]}]\ndynamic: {b: {}}\n")]

# Mistakes both can see (a schema cannot express cross-key rules; those are validator-only).
BAD_FOR_BOTH = [
    "version: 2\n", 'version: "1"\n', "- a\n", "bogus: 1\n", "run: {devcie: cpu}\n",
    "run: {jobs: 0}\n", "run: {warmup: true}\n", "run: {timeout_s: 0}\n", "run: {mode: fast}\n",
    "run: {cache_dir: ''}\n", "run: {backend: 'not a name'}\n", "run: []\n",
    "static: {paths: src/}\n", "static: {filter: add}\n", "static: {select: [ptc1]}\n",
    "static: {severity: {PTC1: fatal}}\n", "static: {per_file_ignores: {'a/*': PTC1}}\n",
    "static: {conditional: drop}\n", "static: {torch: 2.14}\n", "static: {torch: latest}\n",
    "thresholds: {new_graph_breaks: -1}\n", "thresholds: {export_regression: maybe}\n",
    "thresholds: {require_gpu: 1}\n", "fixes: {budget_s: 0}\n", "fixes: {verify: 1}\n",
    "fixes: {budgt_s: 5}\n", "fixes: []\n", "models: {a: 1}\n", "models: [7]\n",
    "models: [{name: a}]\n", "models: [{entry: a:b}]\n",
    "models: [{name: a, entry: a.b}]\n", "models: [{name: 'a b', entry: a:b}]\n",
    model_yaml('shapes: {batch: "8"}\n'), model_yaml("shapes: {batch: []}\n"),
    model_yaml("shapes: {batch: [0]}\n"), model_yaml("shapes: {batch: [2, 2]}\n"),
    model_yaml("shapes: {'b-1': [2]}\n"), model_yaml("inputs: [{dtype: int64}]\n"),
    model_yaml("inputs: [{shape: [0]}]\n"), model_yaml("inputs: [{shape: [2], dtype: long}]\n"),
    model_yaml("inputs: [{shape: [2], name: 'x y'}]\n"), model_yaml("inputs: {entry: a.b}\n"),
    model_yaml("inputs: {entry: a:b, x: 1}\n"), model_yaml("inputs: 3\n"),
    model_yaml("cases: []\n"), model_yaml("cases: [{b: 0}]\n"), model_yaml("dynamic: batch\n"),
    model_yaml("export: yesplease\n"), model_yaml("tolerance: {float32: [1e-4]}\n"),
    model_yaml("tolerance: {float99: [0, 0]}\n"), model_yaml("timeout_s: -1\n"),
    model_yaml("kwargs: {'not-ident': 1}\n"), model_yaml("kwargs: [1]\n"),
    model_yaml("config: {kwargs: {n: 1}}\n"), model_yaml("config: {entry: a.b}\n"),
    model_yaml("config: {entry: a:b, x: 1}\n"), model_yaml("config: a:b\n"),
    model_yaml("config: []\n"), model_yaml("config: {entry: a:b, arg: 'x y'}\n"),
    model_yaml("config: {entry: a:b, kwargs: {'not-ident': 1}}\n"),
    model_yaml("shapes: {b: [2]}\ninputs: [{shape: [b]}]\ndynamic: {b: {max: 0}}\n"),
    model_yaml("shapes: {b: [2]}\ninputs: [{shape: [b]}]\ndynamic: {b: {maximum: 8}}\n"),
    model_yaml("shapes: {b: [2]}\ninputs: [{shape: [b]}]\ndynamic: {b: 8}\n"),
]

# Cross-key and YAML-level mistakes only pt2bot's validator catches.
BAD_FOR_VALIDATOR_ONLY = [
    model_yaml("dynamic: [batch]\n"),
    model_yaml("shapes: {b: [1]}\ninputs: [{shape: [c]}]\n"),
    model_yaml("inputs: [{shape: [1], low: 3, high: 2}]\n"),
    "models: [{name: a, entry: a:b}, {name: a, entry: a:c}]\n",
    "run: {device: cpu, device: cuda}\n",
    model_yaml("shapes: {b: [1]}\ncases: [{c: 1}]\n"),
    model_yaml("shapes: {b: [1]}\ninputs: [{shape: [2]}]\n"),
    model_yaml("config: [{entry: a:V}, {entry: a:T}]\n"),
    model_yaml("config: [{entry: a:V, arg: v}, {entry: a:T, arg: v}]\n"),
    model_yaml("config: {entry: a:C, arg: cfg}\nkwargs: {cfg: 1}\n"),
    model_yaml("shapes: {b: [2, 16]}\ninputs: [{shape: [b]}]\ndynamic: {b: {max: 8}}\n"),
    model_yaml("shapes: {b: [2]}\ninputs: [{shape: [b]}]\ndynamic: {b: {min: 4, max: 3}}\n"),
]


@pytest.mark.parametrize("text", GOOD)
def test_schema_and_validator_accept_the_same_good_configs(text: str) -> None:
    assert validator_accepts(text) and schema_accepts(text)


@pytest.mark.parametrize("text", BAD_FOR_BOTH)
def test_schema_and_validator_reject_the_same_bad_configs(text: str) -> None:
    assert not validator_accepts(text)
    assert not schema_accepts(text)


@pytest.mark.parametrize("text", BAD_FOR_VALIDATOR_ONLY)
def test_validator_catches_what_a_schema_cannot(text: str) -> None:
    assert not validator_accepts(text)
    assert schema_accepts(text)  # really beyond the schema: keeps the two lists honest


def test_schema_is_valid_draft_2020_12() -> None:
    schema = load_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)


def _field_names(cls: type) -> set[str]:
    return {f.name for f in dataclasses.fields(cls)}


def test_schema_property_names_equal_dataclass_fields() -> None:
    schema = load_schema()
    defs = schema["$defs"]
    # path/raw are not user keys; line is where the model is; inputs_entry is `inputs: {entry:}`;
    # bounds is the mapping form of `dynamic`
    assert set(schema["properties"]) == _field_names(Config) - {"path", "raw"}
    assert set(defs["static"]["properties"]) == _field_names(StaticConfig)
    assert set(defs["model"]["properties"]) == _field_names(ModelConfig) - {"line", "inputs_entry", "bounds"}
    assert set(defs["inputSpec"]["properties"]) == _field_names(InputSpec)
    assert set(defs["configObject"]["properties"]) == _field_names(ConfigObject)
    assert set(defs["run"]["properties"]) == _field_names(RunConfig)
    assert set(defs["thresholds"]["properties"]) == _field_names(Thresholds)


@pytest.mark.parametrize("cls, section", [(StaticConfig, "static"), (RunConfig, "run"),
                                          (Thresholds, "thresholds"), (InputSpec, "inputSpec"),
                                          (ModelConfig, "model")])
def test_schema_defaults_equal_dataclass_defaults(cls: type, section: str) -> None:
    props = load_schema()["$defs"][section]["properties"]
    checked = 0
    for f in dataclasses.fields(cls):
        if f.name not in props or "default" not in props[f.name]:
            continue
        default = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
        if isinstance(default, tuple):
            default = list(default)
        assert props[f.name]["default"] == default, f"{section}.{f.name}"
        checked += 1
    assert checked >= 3


def test_every_schema_property_has_a_description() -> None:
    schema = load_schema()
    props = [("", k, v) for k, v in schema["properties"].items()]
    for section in ("static", "model", "inputSpec", "inputsFactory", "run", "thresholds"):
        props += [(section, k, v) for k, v in schema["$defs"][section]["properties"].items()]
    missing = [f"{s}.{k}" for s, k, v in props
               if not (v.get("description") or schema["$defs"].get(v.get("$ref", "#/$defs/-")[8:], {})
                       .get("description"))]
    assert missing == []


# --------------------------------------------------------------------------- hostile config files
# pt2bot.yml comes from the pull request under review: each of these used to run for minutes,
# exhaust memory, hang or print a traceback. The CLI must answer with exit 2 and a located
# message, fast. The child gets an address-space limit so that a regression fails the test
# instead of eating the machine, and the time bound is generous (the old code took a minute or
# never returned).

def run_pt2bot(argv: list[str], cwd: Path, timeout: float = 30.0) -> tuple[subprocess.CompletedProcess, float]:
    import resource
    import time

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))

    t = time.monotonic()
    try:
        proc = subprocess.run([sys.executable, "-m", "pt2bot", *argv], capture_output=True, text=True,
                              timeout=timeout, cwd=cwd, preexec_fn=limit)
    except subprocess.TimeoutExpired:
        pytest.fail(f"pt2bot {' '.join(argv)} did not answer within {timeout} s")
    return proc, time.monotonic() - t


def laughs(levels: int, width: int) -> str:
    """The billion laughs: each anchor is a list of `width` aliases of the previous one."""
    names = "abcdefghijklmnop"
    out = ["version: 1\nbombs:\n", "  - &a lol\n"]
    for i in range(1, levels):
        out.append(f"  - &{names[i]} [{','.join('*' + names[i - 1] for _ in range(width))}]\n")
    out.append(f"models:\n  - name: m\n    entry: a:b\n    kwargs: {{x: *{names[levels - 1]}}}\n")
    return "".join(out)


BILLION_LAUGHS = laughs(10, 9)     # 9**9 strings once expanded
assert len(BILLION_LAUGHS) < 482


def _mapping_bomb() -> str:
    """The same with mappings instead of lists, in under 333 bytes: 4**9 values once expanded."""
    out = ["version: 1\nx:\n", "- &a lol\n"]
    for i in range(1, 10):
        p = "abcdefghij"[i - 1]
        out.append(f"- &{'abcdefghij'[i]} {{a: *{p},b: *{p},c: *{p},d: *{p}}}\n")
    out.append("run: {cache_dir: *j}\n")
    return "".join(out)


MAPPING_BOMB = _mapping_bomb()
assert len(MAPPING_BOMB) < 333


def _big_valid_config(size: int) -> str:
    head = "version: 1\nmodels:\n  - name: m\n    entry: pkg.m:M\n    kwargs:\n"
    n = (size - len(head)) // 19 + 1  # 19 bytes a line
    return head + "".join(f"      k{i:08d}: 1\n" for i in range(n))


def _quadratic_config(n: int) -> str:
    """Under the size cap, but every dim is listed in every message and compared with every other."""
    dims = ", ".join(f"d{i}: [1]" for i in range(n))
    wrong = ", ".join(f"x{i}" for i in range(n))
    sizes = ", ".join(str(i) for i in range(1, n + 1))
    return (f"version: 1\nmodels:\n  - name: m\n    entry: pkg.m:M\n    shapes: {{{dims}, s: [{sizes}]}}\n"
            f"    dynamic: [{wrong}]\n    inputs: [{{shape: [{wrong}]}}]\n")


ALIAS_MESSAGE = (r"YAML aliases expand to more than 100000 values \(nested aliases, as in a "
                 r"'billion laughs'\); write the repeated part out or alias less")
assert len(_quadratic_config(6_000)) < MAX_BYTES
# Chained merge keys are allowed now (test_chained_merge_keys): they must not become a bomb.
MERGE_BOMB = "version: 1\nx:\n- &a {a: 1, b: 1, c: 1, d: 1}\n" + "".join(
    f"- &{n} {{<<: [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}]}}\n" for p, n in zip("abcdefghijk", "bcdefghijkl")
) + "run: {cache_dir: *l}\n"
HOSTILE = {
    # name: (file content, the message it must get; {cfg} is the file's path)
    "billion-laughs": (BILLION_LAUGHS, r"{cfg}:\d+: bombs(\[\d\])+: " + ALIAS_MESSAGE),
    "merge-key-bomb": (MERGE_BOMB, r"{cfg}:\d+: x\[\d+\]: " + ALIAS_MESSAGE),
    "alias-bomb-in-mappings": (MAPPING_BOMB, r"{cfg}:\d+: x\[\d\](\.[a-d])+: " + ALIAS_MESSAGE),
    "too-large": (_big_valid_config(3 << 20), r"{cfg}: the file is 3\.0 MiB; pt2bot\.yml may be at "
                                              r"most 256 KiB"),
    "deep-nesting": ("version: 1\nmodels:\n  - name: m\n    entry: a:b\n    kwargs: {x: "
                     + "[" * 600 + "]" * 600 + "}\n",
                     r"{cfg}:5: models\[0\]\.kwargs\.x(\[0\])+: nested deeper than 64 levels"),
    "invalid-utf8": (b"version: 1\nrun:\n  cache_dir: \"caf\xe9\"\n",
                     r"{cfg}:3: not valid UTF-8 \(byte 0xe9 at column 18\)"),
    "long-key-in-every-message": (
        # an explicit key (`? k`): an implicit key may not be longer than 1024 characters
        "version: 1\nstatic:\n  per_file_ignores:\n    ? " + "k" * 100_000 + "\n    : ["
        + ", ".join(["x"] * 30_000) + "]\n",
        r'{cfg}:5: static\.per_file_ignores\["k{{57}}\.\.\."\]\[0\]: expected a rule code or prefix such as '
        r'PTC101 or PTC1, got "x"'),
    "quadratic-messages": (_quadratic_config(6_000),
                           r'{cfg}:6: models\[0\]\.dynamic\[0\]: "x0" is not a dim in models\[0\]\.shapes '
                           r"\(declared: d0, d1, [^()]*, and \d+ more\)"),
}


@pytest.mark.parametrize("command", ["check", "run"])
@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_config_gets_exit_2_and_a_located_message_fast(tmp_path: Path, name: str,
                                                               command: str) -> None:
    import re

    content, pattern = HOSTILE[name]
    cfg = tmp_path / "pt2bot.yml"
    if isinstance(content, bytes):
        cfg.write_bytes(content)
    else:
        cfg.write_text(content)
    argv = [command, "--config", str(cfg)] + (["--out", str(tmp_path / "r.json")] if command == "run" else [])
    proc, elapsed = run_pt2bot(argv, tmp_path)
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    first = proc.stderr.splitlines()[0]
    assert re.fullmatch("pt2bot: error: " + pattern.format(cfg=re.escape(str(cfg))), first), first
    assert len(proc.stderr) < 200_000   # every message bounded, however many problems
    assert elapsed < 10, f"{elapsed:.1f} s"


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "directory"])
def test_config_that_is_not_a_regular_file_is_refused_without_reading(tmp_path: Path, kind: str) -> None:
    import os

    if kind == "fifo":
        cfg = str(tmp_path / "pt2bot.yml")
        os.mkfifo(cfg)          # nobody writes: open() without O_NONBLOCK would wait forever
        what = "a FIFO"
    elif kind == "dev-zero":
        cfg, what = "/dev/zero", "a character device"   # endless: read() would fill memory
    else:
        cfg, what = str(tmp_path), "a directory"
    proc, elapsed = run_pt2bot(["check", "--config", cfg], tmp_path, timeout=30)
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert proc.stderr == f"pt2bot: error: {cfg}: not a regular file ({what})\n"
    assert elapsed < 10


def test_a_config_just_under_the_size_cap_loads_quickly(tmp_path: Path) -> None:
    cfg = tmp_path / "pt2bot.yml"
    cfg.write_text(_big_valid_config(MAX_BYTES - 100))
    assert cfg.stat().st_size <= MAX_BYTES
    proc, elapsed = run_pt2bot(["check", "--config", str(cfg)], tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert elapsed < 10, f"{elapsed:.1f} s"


def test_chained_merge_keys() -> None:
    # A merge source may itself merge: YAML merges the flattened mapping (explicit keys win,
    # then earlier sources). This used to be refused as "unsupported YAML tag !!merge".
    text = textwrap.dedent("""\
        version: 1
        models:
          - &a {name: a, entry: pkg.m:A, export: false}
          - &b {<<: *a, name: b, timeout_s: 5}
          - {<<: [*b, {entry: pkg.m:Z, kwargs: {k: 1}}], name: c}
        """)
    a, b, c = parse_config(text).models
    assert (b.name, b.entry, b.export, b.timeout_s) == ("b", "pkg.m:A", False, 5.0)
    assert (c.name, c.entry, c.export, c.timeout_s, c.kwargs) == ("c", "pkg.m:A", False, 5.0, {"k": 1})
    assert (a.line, b.line, c.line) == (3, 4, 5)


def test_an_int_too_large_for_a_float_is_a_located_error_not_a_crash() -> None:
    # math.isfinite(10**400) raises OverflowError: it used to escape as a traceback.
    (msg,) = errors_of("version: 1\nrun:\n  timeout_s: " + "9" * 400 + "\n")
    assert msg == ("pt2bot.yml:3: run.timeout_s: expected a positive number of seconds, got "
                   + "9" * 57 + "...")


def test_conditional_and_torch_keys() -> None:
    """`static.conditional` (default demote) and `static.torch` (a quoted release)."""
    assert StaticConfig().conditional == "demote" and StaticConfig().torch is None
    c = parse_config('static:\n  conditional: hide\n  torch: "2.14.1"\n')
    assert (c.static.conditional, c.static.torch) == ("hide", "2.14.1")
    msg = one_error("static:\n  torch: 2.10\n")
    assert "static.torch" in msg and "got 2.1 (quote it" in msg
    assert "one of keep, demote, hide" in one_error("static: {conditional: never}\n")


def test_fixes_section_defaults_and_values() -> None:
    assert parse_config("version: 1\n").fixes == FixesConfig(verify=True, budget_s=None)
    got = parse_config("fixes: {verify: false, budget_s: 45}\n").fixes
    assert got == FixesConfig(verify=False, budget_s=45.0)
    assert errors_of("fixes: {budget_s: -3}\n") == [
        "pt2bot.yml:1: fixes.budget_s: expected a positive number of seconds, got -3"]
