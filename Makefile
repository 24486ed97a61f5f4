# rag_lab: `make reproduce` runs every notebook; `make test` runs the test suite (CI calls this);
# `make lab` opens the notebooks in JupyterLab (127.0.0.1, the rag_lab kernel).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
export HF_HUB_OFFLINE := 1
export RAGAS_DO_NOT_TRACK := true
export TOKENIZERS_PARALLELISM := false
LAB_PORT ?= 8888
# test processes at most (each loads the model and starts notebook kernels, a Dask cluster, browsers)
PYTEST_WORKERS ?= 2

.PHONY: setup test reproduce lab screenshots notebooks benchmark clean

setup: $(STAMP)
	@bash scripts/ensure_chromium.sh

# CPU torch first (the local wheel), so nothing later pulls a CUDA build.
$(STAMP): requirements.txt constraints.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -r requirements.txt -c constraints.txt
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	$(PY) -m ipykernel install --sys-prefix --name rag_lab --display-name "rag_lab (.venv)"
	$(PY) -m pip check
	touch $(STAMP)

# The suite on one process per core, at most PYTEST_WORKERS (pytest-xdist): a test file, or an xdist_group, is
# one unit of work (tests/conftest.py's scheduler: xdist 3.8's own loadgroup no longer groups under pytest 9.2),
# the long ones handed out first in the order tests/conftest.py sorts them (hence --no-loadscope-reorder).
# --durations=40 lists the 40 slowest tests (where the time goes, docs/performance.md). PYTEST_ARGS adds options or picks tests.
test: setup
	$(PY) -m pytest -n auto --maxprocesses $(PYTEST_WORKERS) --dist loadgroup --no-loadscope-reorder --durations=40 $(PYTEST_ARGS)

# Every notebook; independent ones side by side, REPRODUCE_JOBS at a time (auto: 2 on a machine with 2+ cores;
# the notebooks that time builds run alone, after the others: rag_lab/runs/waves.py).
REPRODUCE_JOBS ?= auto
reproduce: setup
	$(PY) -m rag_lab run --jobs $(REPRODUCE_JOBS)

# JupyterLab from .venv on 127.0.0.1:$(LAB_PORT), opening notebooks/ (rag_lab/runs/lab.py); Ctrl-C stops it.
lab: setup
	$(PY) -m rag_lab.runs.lab --port $(LAB_PORT)

# Re-make the README's screenshots (docs/*.png) with the browser tests.
screenshots: setup
	RAG_LAB_SCREENSHOTS=docs $(PY) -m pytest tests/test_browser_lab.py tests/test_browser_report.py

benchmark: setup
	$(PY) benchmarks/run.py --out benchmarks/report.json

# Run folders and the figures' HTML go; figures/ goes back to the committed reference.
clean:
	rm -rf .pytest_cache
	find papermill_runs -mindepth 1 -maxdepth 1 -type d -exec rm -rf {} +
	find figures -name '*.html' -delete
	git checkout -- figures 2>/dev/null || true
