# Quick start: `make demo` then `make test`. Both create or reuse .venv at the repo root.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-torch venv clean bench

# The publish step's pins (pt2bot/publish/constraints.txt) hold in the dev venv too: its tests
# resolve that step offline against what is installed here, so a newer release of a pinned
# package on the index (idna 3.21 over the pinned 3.20) must not be what `make test` installs.
$(STAMP): pyproject.toml pt2bot/publish/constraints.txt
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --disable-pip-version-check torch==2.13.0 numpy
	$(BIN)/pip install -q --disable-pip-version-check -e '.[test,charts]' -c pt2bot/publish/constraints.txt
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(BIN)/python examples/demo.py

test: $(STAMP)
	$(BIN)/python -m pytest -n 2 -q

# The torch-backed tests (marker `torch`: real dynamo, export, inductor) on another torch release,
# in a venv of its own: `make test-torch TORCH=2.14.1`. The default suite stays on 2.13.0.
TORCH ?= 2.14.1
TVENV := .venv-torch-$(TORCH)
test-torch:
	test -x $(TVENV)/bin/python || $(PY) -m venv $(TVENV)
	$(TVENV)/bin/python -c "import importlib.metadata as m, sys; sys.exit(m.version('torch').split('+')[0] != '$(TORCH)')" 2>/dev/null \
		|| $(TVENV)/bin/pip install -q --disable-pip-version-check torch==$(TORCH) numpy
	$(TVENV)/bin/pip install -q --disable-pip-version-check -e '.[test,charts]' -c pt2bot/publish/constraints.txt
	$(TVENV)/bin/python -m pytest -n 2 -q -m torch

# Speed and accuracy benchmarks (minutes; figures are in the README, not asserted).
bench: $(STAMP)
	for b in benchmarks/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info
