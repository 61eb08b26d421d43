# Two commands do all set-up on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
PORT ?= 8501

.PHONY: run test lint seed bench clean browser eval

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
	$(PY) -m ruff check memory_core app.py pages tests bench eval
	$(PY) -m ruff format --check memory_core app.py pages tests bench eval
	$(PY) -m mypy memory_core
	# the clinical-facts package keeps every function small (issue 22: cyclomatic complexity <= 15)
	$(PY) -m ruff check --select C901 --config 'lint.mccabe.max-complexity=15' memory_core/facts memory_core/facts_llm.py

# The browser test drives Debian's Chromium (never a downloaded browser). Install it where
# missing and possible; without it the browser test is skipped with the reason.
browser:
	@command -v chromium >/dev/null 2>&1 || command -v /usr/bin/chromium >/dev/null 2>&1 || \
	  ( (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) \
	    >/dev/null 2>&1 && echo "installed chromium" ) || \
	  echo "chromium not available: the browser test will be skipped"

test: lint browser
	$(PY) -m pytest -q

# Benchmarks (issue 5): a separate venv with the app's requirements plus the peers (Mem0,
# FAISS, Qdrant, LangGraph) and profilers, which never go into the app's .venv.
bench:
	@test -x .venv-bench/bin/python || $(PYTHON) -m venv .venv-bench
	@if [ ! -f .venv-bench/.installed ] || [ requirements.txt -nt .venv-bench/.installed ] || \
	    [ bench/requirements.txt -nt .venv-bench/.installed ]; then \
	  .venv-bench/bin/python -m pip install --quiet --disable-pip-version-check \
	    -r requirements.txt -r bench/requirements.txt && touch .venv-bench/.installed; fi
	.venv-bench/bin/python -m bench

# Evaluation on public data (issue 12; not part of `make test`): REALTALK chats and SituatedQA's
# temporal dev split in EVAL_DATA (git-ignored; see the README's Evaluation section), plus the
# clinical pair set's test half and the section's current state on Synthea bundles in
# EVAL_DATA/synthea (issue 23, eval/section.py; docs/section.md). Writes docs/evaluation.md.
EVAL_DATA ?= data/eval
eval: $(STAMP)
	$(PY) -m eval --data $(EVAL_DATA)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
