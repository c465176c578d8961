# Set-up is part of both entry points: a fresh clone needs only `make main` or `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# llama-cpp-python compiles from source (minutes on 2 cores): build the wheel once, reuse it.
WHEEL_CACHE ?= $(HOME)/.cache/voicebench/wheels
LLAMA_CPP_VERSION := 0.3.36

.PHONY: setup main test

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	@mkdir -p $(WHEEL_CACHE)
	@ls $(WHEEL_CACHE)/llama_cpp_python-$(LLAMA_CPP_VERSION)-*.whl >/dev/null 2>&1 || { \
	  echo "building llama-cpp-python $(LLAMA_CPP_VERSION) once (several minutes); cached in $(WHEEL_CACHE)"; \
	  CMAKE_ARGS="-DGGML_NATIVE=OFF" $(PY) -m pip wheel --quiet --no-deps \
	    "llama-cpp-python==$(LLAMA_CPP_VERSION)" -w $(WHEEL_CACHE); }
	$(PY) -m pip install --quiet --find-links $(WHEEL_CACHE) -e ".[local,dev]"
	touch $@

# The main job, offline on the embedded default (local ASR, local LLM, local TTS).
main: setup
	$(VENV)/bin/voicebench demo

test: setup
	$(PY) -m pytest
