# Two commands do all set-up on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
PORT ?= 8501

.PHONY: help run test lint seed bench clean browser eval

# `make help`: the targets and the variables a newcomer may set.
help:
	@echo "make run      seed the demo patients if the store is empty, start the dashboard"
	@echo "              on http://localhost:$(PORT) (PORT=8502 make run, or make run PORT=8502)"
	@echo "make test     lint, install Debian's chromium if missing, then the whole pytest suite"
	@echo "              on every core (TEST_WORKERS=0 for one process; needs node/npm for the"
	@echo "              Cosmos-protocol test server)"
	@echo "make lint     ruff check, ruff format --check, mypy memory_core"
	@echo "make seed     seed the demo patients if the store is empty"
	@echo "make eval     the evaluation on public data in EVAL_DATA (default data/eval;"
	@echo "              docs/running-the-evaluation.md), writes docs/evaluation.md"
	@echo "make bench    the benchmarks in their own venv (.venv-bench; docs/performance.md);"
	@echo "              BENCH_ARGS=--only=section,caches runs some of them"
	@echo "make clean    remove .venv and the tools' caches"
	@echo "make help     this list"

$(PY):
	$(PYTHON) -m venv $(VENV)

$(STAMP): requirements.txt requirements-dev.txt | $(PY)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	touch $(STAMP)

seed: $(STAMP)
	$(PY) -m memory_core seed-demo --if-empty

run: seed
	$(PY) -m streamlit run app.py --server.port $(PORT)

lint: $(STAMP)
	$(PY) -m ruff check memory_core app.py views tests bench eval
	$(PY) -m ruff format --check memory_core app.py views tests bench eval
	$(PY) -m mypy memory_core
	# the clinical-facts package keeps every function small (issue 22: cyclomatic complexity <= 15)
	$(PY) -m ruff check --select C901 --config 'lint.mccabe.max-complexity=15' memory_core/facts memory_core/facts_llm.py

# The browser tests drive Debian's Chromium (never a downloaded browser). `make test` installs it
# where it is missing, waiting for apt while another install holds its lock; when apt cannot
# install it (no network, no package, not root) `make test` stops with apt's own message. Only
# where the README says the environment cannot have Chromium, MEMORY_CORE_NO_BROWSER=<why> skips
# the browser tests, saying why. CHROMIUM, APT_GET, APT_TRIES and APT_WAIT_S: see tests/test_make_browser.py.
CHROMIUM ?= chromium
APT_GET ?= apt-get
APT_TRIES ?= 10
APT_WAIT_S ?= 30
browser:
	@if command -v $(CHROMIUM) >/dev/null 2>&1; then \
	  : ; \
	elif [ -n "$$MEMORY_CORE_NO_BROWSER" ]; then \
	  echo "no chromium: the browser tests will be skipped (MEMORY_CORE_NO_BROWSER=$$MEMORY_CORE_NO_BROWSER)"; \
	else \
	  echo "installing Debian's chromium for the browser tests (apt-get)"; \
	  log=$$(mktemp); try=1; \
	  until ( $(APT_GET) -o DPkg::Lock::Timeout=$(APT_WAIT_S) update -qq && \
	          DEBIAN_FRONTEND=noninteractive $(APT_GET) -o DPkg::Lock::Timeout=$(APT_WAIT_S) \
	            install -y -qq chromium ) >$$log 2>&1; do \
	    if ! grep -qi "lock" $$log || [ $$try -ge $(APT_TRIES) ]; then \
	      cat $$log >&2; rm -f $$log; \
	      echo "error: apt-get could not install chromium (its message above); the browser tests need it." >&2; \
	      echo "Only where this environment cannot have Chromium, set MEMORY_CORE_NO_BROWSER=<why> (README)." >&2; \
	      exit 1; \
	    fi; \
	    echo "apt is busy (another install holds its lock): try $$try of $(APT_TRIES), again in $(APT_WAIT_S) s"; \
	    try=$$((try + 1)); sleep $(APT_WAIT_S); \
	  done; \
	  rm -f $$log; \
	  command -v $(CHROMIUM) >/dev/null 2>&1 || { \
	    echo "error: apt-get installed chromium but '$(CHROMIUM)' is not on PATH" >&2; exit 1; }; \
	  echo "installed chromium"; \
	fi

# The suite runs on every core (pytest-xdist; each test file on one worker, so a file's
# fixtures are built once); TEST_WORKERS=0 make test runs it in one process.
TEST_WORKERS ?= auto
test: lint browser
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile

# Benchmarks (issue 5; BENCH_ARGS passes options, e.g. --only=section): a separate venv with the app's requirements plus the peers (Mem0,
# FAISS, Qdrant, LangGraph) and profilers, which never go into the app's .venv.
bench:
	@test -x .venv-bench/bin/python || $(PYTHON) -m venv .venv-bench
	@if [ ! -f .venv-bench/.installed ] || [ requirements.txt -nt .venv-bench/.installed ] || \
	    [ bench/requirements.txt -nt .venv-bench/.installed ]; then \
	  .venv-bench/bin/python -m pip install --quiet --disable-pip-version-check \
	    -r requirements.txt -r bench/requirements.txt && touch .venv-bench/.installed; fi
	.venv-bench/bin/python -m bench $(BENCH_ARGS)

# Evaluation on public data (issue 12; not part of `make test`): REALTALK chats and SituatedQA's
# temporal dev split in EVAL_DATA (git-ignored; see docs/running-the-evaluation.md), plus the
# clinical pair set's test half and the section's current state on Synthea bundles in
# EVAL_DATA/synthea (issue 23, eval/section.py; docs/section.md). Writes docs/evaluation.md.
EVAL_DATA ?= data/eval
eval: $(STAMP)
	$(PY) -m eval --data $(EVAL_DATA)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
