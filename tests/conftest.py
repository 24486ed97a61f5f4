"""Shared fixtures: one embedder for the session, a private cache, and a notebook runner."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# Every test (and every notebook kernel the tests start) uses a fresh cache, and so a fresh data cache
# (downloads live in $RAG_LAB_DATA, else <cache>/data): a user's downloaded data sets never leak into tests.
os.environ["RAG_LAB_CACHE"] = tempfile.mkdtemp(prefix="rag_lab_test_cache_")
os.environ.pop("RAG_LAB_DATA", None)
# The key that signs cached indexes (rag_lab/caching/trust.py) is made in a private folder too, never in the
# user's ~/.config; notebook kernels inherit the variable.
os.environ["RAG_LAB_CONFIG"] = tempfile.mkdtemp(prefix="rag_lab_test_config_")
# Each test sees the build it asks for: persisted indexes and cached offline results are off unless a test
# turns them on (tests/test_index_store.py, tests/test_offline_cache.py).
os.environ["RAG_LAB_REUSE"] = "0"

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def embedder():
    from rag_lab.core.embedding import Embedder
    return Embedder()


def run_notebook_smoke(name: str, parameters: dict, tmp_path: Path) -> dict:
    """Execute one notebook under papermill with small parameters; fail with its traceback, or when its
    executed output holds a Python warning, a traceback or a progress-bar fragment (rag_lab/runs/outputs.py)."""
    from rag_lab.runs.outputs import output_problems
    from rag_lab.runs.runner import run_notebooks

    manifest = run_notebooks([name], parameters, runs_dir=tmp_path / "runs", figures_root=tmp_path / "figures",
                             progress=False)
    entry = manifest["notebooks"][0]
    assert entry["status"] == "ok", f"{name} failed:\n{entry.get('traceback', entry.get('error'))}"
    problems = output_problems(tmp_path / "runs" / manifest["run_id"] / entry["output"])
    assert not problems, f"{name}: the executed notebook shows clutter a reader meets:\n" + "\n".join(problems)
    return manifest


def assert_captions_name_reasoners(manifest: dict, paper_only: tuple[str, ...] = ()) -> None:
    """Every table the notebook wrote (``name.md``, caption on the first line) names the reasoner that
    built the index and the one that answered; ``paper_only``: tables of paper-reported numbers alone."""
    tables = [Path(p) for p in manifest["notebooks"][0]["files"] if p.endswith(".md")]
    assert tables, "the notebook wrote no table"
    for table in tables:
        if table.stem not in paper_only:
            caption = table.read_text(encoding="utf-8").splitlines()[0]
            assert "answers by:" in caption, f"{table.name}: {caption!r}"
            assert "index built by:" in caption or "index built without a reasoner" in caption, \
                f"{table.name}: {caption!r}"
            assert "built by: none" not in caption and "judge: None" not in caption, f"{table.name}: {caption!r}"
