"""The same command twice gives the same table: ``python -m rag_lab eval`` over every registered
method on a shipped data set, run in two processes with different hash seeds (so any dependence
on set or dict order of strings shows) — the first with an empty cache, the second replaying it
(so a cached vector or reply must give what a fresh one gave). Timing rows are left out."""
from __future__ import annotations

import os
import subprocess
import sys

import pandas as pd

from rag_lab.methods import available_methods

TIMING = ("latency", "seconds")


def run_eval(out, cache, hash_seed: int) -> pd.DataFrame:
    env = {**os.environ, "PYTHONHASHSEED": str(hash_seed), "RAG_LAB_CACHE": str(cache), "HF_HUB_OFFLINE": "1"}
    cmd = [sys.executable, "-m", "rag_lab", "eval", "--data", "italian_cuisine", "--methods",
           ",".join(available_methods()), "--k", "1,3", "--limit", "2", "--out", str(out)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stderr[-4000:]
    table = pd.read_csv(out)
    return table[~table["metric"].str.contains("|".join(TIMING))].reset_index(drop=True)


def test_eval_twice_gives_identical_tables(tmp_path):
    first = run_eval(tmp_path / "first.csv", tmp_path / "cache", hash_seed=1)
    second = run_eval(tmp_path / "second.csv", tmp_path / "cache", hash_seed=2)
    assert set(first["method"]) == set(available_methods())
    assert len(first) > 0 and {"doc_recall", "ctx_recall", "query_embedding_tokens"} <= set(first["metric"])
    pd.testing.assert_frame_equal(first, second, check_exact=True)
