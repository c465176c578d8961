# Set-up is part of both entry points: a fresh clone needs only `make main` or `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
RUN_DIR ?= reports/runs/scripted-builtin

.PHONY: setup main test

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[dev]"
	touch $@

# The main job, offline: synthesize missing fixtures, replay the built-in set, print the table.
main: setup
	$(VENV)/bin/voicebench synth
	$(VENV)/bin/voicebench run --agent agents/scripted.toml --out $(RUN_DIR)

test: setup
	$(PY) -m pytest
