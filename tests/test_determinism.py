"""The same command gives the same table: ``python -m rag_lab eval`` over every registered method on
a shipped data set, run in three processes with different hash seeds (so any dependence on set or
dict order of strings shows):
1. in an empty cache: every index built, and kept with its vectors and the offline reasoner's replies;
2. in another cache holding only the first run's vectors: every index built again under another seed
   (so a build that depended on string order would differ, and a cached vector must give what a
   fresh one gave);
3. in the first run's cache: every index, vector and reply replayed (so a persisted index or a cached
   reply must give what a fresh one gave; a cache key that depended on the hash seed would show as a
   new entry, a missed index as an unused one).
Index reuse is on in all three (conftest turns it off for the other tests): within a run, methods that
share an index (SSG's traversals) build it once. Timing rows are left out."""
from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from contextlib import closing

import pandas as pd
import pytest

from conftest import empty_cache
from rag_lab.caching.inventory import index_entries, info
from rag_lab.methods import available_methods

pytestmark = pytest.mark.heavy
TIMING = ("latency", "seconds")


def run_eval(out, cache, hash_seed: int) -> pd.DataFrame:
    env = {**os.environ, "PYTHONHASHSEED": str(hash_seed), "RAG_LAB_CACHE": str(cache), "HF_HUB_OFFLINE": "1",
           "RAG_LAB_REUSE": "1"}
    cmd = [sys.executable, "-m", "rag_lab", "eval", "--data", "italian_cuisine", "--methods",
           ",".join(available_methods()), "--k", "1,3", "--limit", "2", "--out", str(out)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stderr[-4000:]
    table = pd.read_csv(out)
    return table[~table["metric"].str.contains("|".join(TIMING))].reset_index(drop=True)


def kept(cache) -> tuple[dict, dict]:
    """Entries per kind of cached value, and each persisted index with its last use (its marker's mtime)."""
    entries = {row.kind: row.entries for row in info(cache)}
    used = {entry: (entry / "COMPLETE").stat().st_mtime_ns for entry in index_entries(cache / "indexes")}
    return entries, used


def vectors_only(source, folder):
    """An empty cache (sharing the session's ONNX export) holding a copy of ``source``'s vectors."""
    empty_cache(folder)
    with closing(sqlite3.connect(source / "embeddings.sqlite")) as src, \
            closing(sqlite3.connect(folder / "embeddings.sqlite")) as dst:
        src.backup(dst)
    return folder


# three `eval` processes over every method (two of them building every index): minutes each with the other
# core busy, more than the suite's 300 s default
@pytest.mark.timeout(900)
def test_eval_three_times_gives_identical_tables(tmp_path, embedder):
    embedder.model  # noqa: B018 - the session's ONNX export, which the caches share
    cache = empty_cache(tmp_path / "cache")
    first = run_eval(tmp_path / "first.csv", cache, hash_seed=1)
    entries, used = kept(cache)
    assert entries["embeddings"] > 0 and entries["offline_reasoner"] > 0 and used, entries
    assert set(first["method"]) == set(available_methods())
    assert len(first) > 0 and {"doc_recall", "ctx_recall", "query_embedding_tokens"} <= set(first["metric"])

    rebuilt_in = vectors_only(cache, tmp_path / "vectors-only")
    rebuilt = run_eval(tmp_path / "rebuilt.csv", rebuilt_in, hash_seed=2)
    assert kept(rebuilt_in)[0]["embeddings"] == entries["embeddings"], "the rebuild encoded a text the first did not"
    pd.testing.assert_frame_equal(first, rebuilt, check_exact=True)

    replayed = run_eval(tmp_path / "replayed.csv", cache, hash_seed=3)
    entries_after, used_after = kept(cache)
    assert entries_after == entries, "the replay computed something the first run had kept"
    assert used_after.keys() == used.keys() and all(used_after[e] > used[e] for e in used), "an index was not replayed"
    pd.testing.assert_frame_equal(first, replayed, check_exact=True)
