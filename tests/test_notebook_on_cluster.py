"""A notebook with ``address`` set to the session's Dask LocalCluster (two worker processes on 127.0.0.1):
the quickstart at tests/test_notebook_00.py's small parameters, over an empty cache of its own, against the
session's local run of the same parameters (``notebook_run``, which test_notebook_00 and
test_browser_report read too, so no second local run is made): every table is identical (columns and rows
that measure the machine aside), the workers did the per-document work (their cache gained sentence
vectors) and the manifest names the cluster.

Why the quickstart and not notebook 04: its naive and semantic builds take the same path to the cluster
(``cluster.prepare``: partitions, the workers' vectors returned into the driver's cache) at a fraction of
notebook 04's time; that each paper's method builds the same index on the cluster is
tests/test_cluster_build.py's job."""
from pathlib import Path

import pandas as pd
import pytest

from conftest import empty_cache
from rag_lab.caching.inventory import info
from rag_lab.runs.reference import volatile
from rag_lab.runs.runner import run_notebooks
from test_notebook_00 import SMALL

pytestmark = pytest.mark.notebook
NOTEBOOK = "00_quickstart"


def stable(csv: Path) -> pd.DataFrame:
    """A table as text, without the columns and rows that measure the machine."""
    df = pd.read_csv(csv, dtype=str, keep_default_na=False)
    df = df[[c for c in df.columns if not volatile(c)]]
    return df[~df.apply(lambda row: any(volatile(v) for v in row), axis=1)].reset_index(drop=True)


def vectors_in(cache: Path) -> int:
    return {row.kind: row.entries for row in info(cache)}.get("embeddings") or 0


def test_a_notebook_on_a_local_cluster_writes_the_local_tables(tmp_path, monkeypatch, dask_cluster, notebook_run):
    encoded_before = vectors_in(dask_cluster.cache)
    monkeypatch.setenv("RAG_LAB_CACHE", str(empty_cache(tmp_path / "cluster-cache")))
    manifest = run_notebooks([NOTEBOOK], SMALL, runs_dir=tmp_path / "runs", figures_root=tmp_path / "figures",
                             progress=False, address=dask_cluster.address)
    entry = manifest["notebooks"][0]
    assert entry["status"] == "ok", entry.get("traceback", entry.get("error"))
    assert manifest["cluster"] == dask_cluster.address
    assert vectors_in(dask_cluster.cache) > encoded_before, "the workers encoded nothing"
    # asked for after the cluster run: by then the other worker has usually made it (test_notebook_00)
    local = notebook_run(NOTEBOOK, SMALL).root / "figures" / NOTEBOOK
    clustered = tmp_path / "figures" / NOTEBOOK
    tables = sorted(p.name for p in local.glob("*.csv"))
    assert tables == sorted(p.name for p in clustered.glob("*.csv")) and len(tables) >= 3
    for name in tables:
        pd.testing.assert_frame_equal(stable(clustered / name), stable(local / name), obj=name)
