"""rag_lab/evaluation/index_reuse.py: two processes that need the same index at the same time (two notebooks
side by side, ``rag_lab run --jobs 2``) build it once: the second waits for the first and loads what it saved."""
import json
import os
import subprocess
import sys

from conftest import empty_cache

# a BM25 index (no encoder) whose build takes two seconds, so the two processes overlap
BUILD = """
import json, sys, time
from rag_lab.core.types import Document
from rag_lab.evaluation.harness import build
from rag_lab.methods import get_retriever
r = get_retriever("bm25")
real = type(r).build
def slow(self, docs):
    time.sleep(2)
    return real(self, docs)
type(r).build = slow
build(r, [Document("a", "Pesto comes from Genoa."), Document("b", "Risotto alla milanese is yellow.")])
print(json.dumps(r.index_reuse["reused"]))
"""


def test_the_same_index_is_built_once_by_two_processes(tmp_path, embedder):
    embedder.model  # noqa: B018 - the session's ONNX export, which the cache shares
    env = {**os.environ, "RAG_LAB_CACHE": str(empty_cache(tmp_path / "cache")), "RAG_LAB_REUSE": "1"}
    procs = [subprocess.Popen([sys.executable, "-c", BUILD], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err[-2000:] for _, err in outs]
    reused = sorted(json.loads(out.strip().splitlines()[-1]) for out, _ in outs)
    assert reused == [False, True], outs            # one built it, the other waited and loaded it
    entries = [p for p in (tmp_path / "cache" / "indexes" / "bm25").iterdir() if p.is_dir()]
    assert len(entries) == 1 and (entries[0] / "COMPLETE").exists()
