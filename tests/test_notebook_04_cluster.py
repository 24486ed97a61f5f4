"""Notebook 04 with small parameters with ``address`` set to the session's Dask LocalCluster (two worker
processes on 127.0.0.1), over an empty cache of its own, against the session's local run of the same
parameters (``notebook_run``, also over an empty cache): every table is identical (columns and rows that
measure the machine aside, e.g. Table 3's seconds), the workers did the per-document work (their cache
gained token embeddings) and the manifest names the cluster."""
from pathlib import Path

import pandas as pd
import pytest

from conftest import empty_cache
from rag_lab.runs.reference import volatile
from rag_lab.runs.runner import run_notebooks
from test_notebook_04 import SMALL

pytestmark = pytest.mark.notebook


def stable(csv: Path) -> pd.DataFrame:
    """A table as text, without the columns and rows that measure the machine."""
    df = pd.read_csv(csv, dtype=str, keep_default_na=False)
    df = df[[c for c in df.columns if not volatile(c)]]
    return df[~df.apply(lambda row: any(volatile(v) for v in row), axis=1)].reset_index(drop=True)


def test_gralc_notebook_on_a_local_cluster_writes_the_local_tables(tmp_path, monkeypatch, dask_cluster, notebook_run):
    encoded_before = set((dask_cluster.cache / "token_embeddings").glob("*.npz"))
    monkeypatch.setenv("RAG_LAB_CACHE", str(empty_cache(tmp_path / "cluster-cache")))
    manifest = run_notebooks(["04_gralc_rag"], SMALL, runs_dir=tmp_path / "runs", figures_root=tmp_path / "figures",
                             progress=False, address=dask_cluster.address)
    entry = manifest["notebooks"][0]
    assert entry["status"] == "ok", entry.get("traceback", entry.get("error"))
    assert manifest["cluster"] == dask_cluster.address
    encoded = set((dask_cluster.cache / "token_embeddings").glob("*.npz")) - encoded_before
    assert encoded, "the workers encoded nothing"
    # asked for after the cluster run: by then the other worker has usually made it (test_notebook_04)
    local = notebook_run("04_gralc_rag", SMALL).root / "figures" / "04_gralc_rag"
    clustered = tmp_path / "figures" / "04_gralc_rag"
    tables = sorted(p.name for p in local.glob("*.csv"))
    assert tables == sorted(p.name for p in clustered.glob("*.csv")) and len(tables) >= 6
    for name in tables:
        pd.testing.assert_frame_equal(stable(clustered / name), stable(local / name), obj=name)
