# Two commands do all set-up on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
PORT ?= 8501

.PHONY: run test lint seed bench clean

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
	$(PY) -m ruff check memory_core app.py pages tests bench
	$(PY) -m ruff format --check memory_core app.py pages tests bench
	$(PY) -m mypy memory_core

test: lint
	$(PY) -m pytest -q

bench: $(STAMP)
	$(PY) -m bench

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
