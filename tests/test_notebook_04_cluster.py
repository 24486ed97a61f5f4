"""Notebook 04 with small parameters, once locally and once with ``address`` set to a Dask LocalCluster
(two worker processes on 127.0.0.1), each over its own empty cache: every table is identical (columns
and rows that measure the machine aside, e.g. Table 3's seconds), the workers did the per-document
work (their cache holds the token embeddings) and the manifest names the cluster."""
import os
from pathlib import Path

import pandas as pd
import pytest

from rag_lab.evaluation import cluster as cluster_module
from rag_lab.runs.reference import volatile
from rag_lab.runs.runner import run_notebooks
from test_notebook_04 import SMALL

pytestmark = pytest.mark.notebook
SESSION_CACHE = Path(os.environ["RAG_LAB_CACHE"])


def empty_cache(folder: Path) -> Path:
    """An empty rag_lab cache sharing the session's ONNX export (exported once, not what is compared)."""
    folder.mkdir()
    if (SESSION_CACHE / "onnx").exists():
        (folder / "onnx").symlink_to(SESSION_CACHE / "onnx")
    return folder


def stable(csv: Path) -> pd.DataFrame:
    """A table as text, without the columns and rows that measure the machine."""
    df = pd.read_csv(csv, dtype=str, keep_default_na=False)
    df = df[[c for c in df.columns if not volatile(c)]]
    return df[~df.apply(lambda row: any(volatile(v) for v in row), axis=1)].reset_index(drop=True)


def run(tmp_path: Path, name: str, monkeypatch, address=None) -> tuple[dict, Path]:
    monkeypatch.setenv("RAG_LAB_CACHE", str(empty_cache(tmp_path / f"{name}-cache")))
    manifest = run_notebooks(["04_gralc_rag"], SMALL, runs_dir=tmp_path / f"{name}-runs",
                             figures_root=tmp_path / f"{name}-figures", progress=False, address=address)
    entry = manifest["notebooks"][0]
    assert entry["status"] == "ok", entry.get("traceback", entry.get("error"))
    return manifest, tmp_path / f"{name}-figures" / "04_gralc_rag"


def test_gralc_notebook_on_a_local_cluster_writes_the_local_tables(tmp_path, monkeypatch, embedder):
    from distributed import LocalCluster

    embedder.model  # noqa: B018 - the session's ONNX export exists before the caches share it
    workers = empty_cache(tmp_path / "workers-cache")
    _, local = run(tmp_path, "local", monkeypatch)
    with LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1", dashboard_address=None, processes=True,
                      env={"RAG_LAB_CACHE": str(workers), "RAG_LAB_QUIET": "1"}) as cluster:
        manifest, clustered = run(tmp_path, "cluster", monkeypatch, cluster.scheduler_address)
        cluster_module.close_clients()
    assert manifest["cluster"] == cluster.scheduler_address
    assert list((workers / "token_embeddings").glob("*.npz")), "the workers encoded nothing"
    tables = sorted(p.name for p in local.glob("*.csv"))
    assert tables == sorted(p.name for p in clustered.glob("*.csv")) and len(tables) >= 6
    for name in tables:
        pd.testing.assert_frame_equal(stable(clustered / name), stable(local / name), obj=name)
