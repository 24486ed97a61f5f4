"""Persistent cache of the offline reasoner's results, kept the way LLM replies are kept.

Why: the offline jobs are deterministic but not free. Parsing a chunk with spaCy for entities or
triples, or ranking a document's keyphrases for its themes, is repeated by every method and
notebook that indexes the same chunks (SKETCH and the KG baseline parse the same pieces; every
notebook run parses them again). As ``llm_cache`` does for a chat model, one SQLite file
(default ``<rag_lab cache dir>/offline_reasoner.sqlite``) keys each result by the sha256 of the
reasoner's fingerprint (its class, its knobs, the embedder's ``model_key``, the spaCy pipeline
and the code of the reasoner), the job and the job's input. A row holds the result as JSON and
the embedding tokens the original call cost, so a replayed job reports the same usage.

Only results that pass the job's shape check are stored; a row that fails it on the way back
(damaged by hand or by a bug) is moved to the ``rejected`` table with a warning and the job is
computed afresh; a damaged file is moved aside and rebuilt (``rag_lab.caching.sqlite_cache``).
Turned off with ``RAG_LAB_REUSE=0`` (see ``rag_lab.caching.code_version`` and docs/performance.md) or
``OfflineReasoner(cache=False)``.
"""
from __future__ import annotations

import hashlib
import json
import logging
import time
from typing import Any

from ..caching.sqlite_cache import KeyedCache
from .base import Entity, Triple

log = logging.getLogger(__name__)
FILENAME = "offline_reasoner.sqlite"

def result_key(fingerprint: str, job: str, payload: Any) -> str:
    """sha256 over a canonical JSON of (reasoner fingerprint, job, input)."""
    text = json.dumps({"reasoner": fingerprint, "job": job, "input": payload}, sort_keys=True, ensure_ascii=False,
                      separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _strings(value, n: int | None = None) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value) and (n is None or len(value) == n)


# job -> (to JSON-ready, from JSON-ready, shape check of the JSON-ready form)
CODECS = {
    "entities": (lambda es: [[e.name, e.type, e.description] for e in es],
                 lambda rows: [Entity(*r) for r in rows],
                 lambda v: isinstance(v, list) and all(_strings(r, 3) for r in v)),
    "triples": (lambda ts: [[t.subject, t.relation, t.object, t.subject_type, t.object_type] for t in ts],
                lambda rows: [Triple(*r) for r in rows],
                lambda v: isinstance(v, list) and all(_strings(r, 5) for r in v)),
    "query_entities": (list, list, _strings),
    "themes": (list, list, _strings),
    "answer": (str, str, lambda v: isinstance(v, str)),
    "summarize": (str, str, lambda v: isinstance(v, str)),
}


class OfflineResultCache(KeyedCache):
    """SQLite store of offline results by key. ``directory`` defaults to rag_lab's cache folder
    (``RAG_LAB_CACHE`` or ``~/.cache/rag_lab``). Safe to share between threads and processes."""

    SCHEMA = ("CREATE TABLE IF NOT EXISTS results (key TEXT PRIMARY KEY, job TEXT, value TEXT, "
              "embedding_tokens INTEGER, created REAL)",)
    FILENAME, TABLE, WHAT, AGAIN = FILENAME, "results", "offline reasoner cache", "computing it again"

    def get(self, key: str, job: str) -> tuple[Any, int] | None:
        """(result, embedding tokens) stored under ``key``, or None (a miss, or an entry that failed
        its check and was moved to ``rejected``)."""
        row = self.store.run(lambda db: db.execute(
            "SELECT job, value, embedding_tokens FROM results WHERE key=?", (key,)).fetchone())
        if row is None:
            return None
        stored_job, text, tokens = row
        try:
            value = json.loads(text) if isinstance(text, str) else None
        except json.JSONDecodeError:
            value = None
        if stored_job == job and CODECS[job][2](value) and isinstance(tokens, int) and tokens >= 0:
            return CODECS[job][1](value), tokens
        self.discard(key, f"unreadable entry for job {job!r} (stored job {stored_job!r}, "
                          f"value {str(text)[:60]!r}, tokens {tokens!r})")
        return None

    def put(self, key: str, job: str, result: Any, tokens: int) -> None:
        value = CODECS[job][0](result)
        if not CODECS[job][2](value):
            raise ValueError(f"offline reasoner cache: refusing to store a malformed {job} result: {value!r:.80}")
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        self.store.write(lambda db: db.execute("INSERT OR REPLACE INTO results VALUES (?, ?, ?, ?, ?)",
                                               (key, job, text, int(tokens), time.time())))

