"""Persistent cache of ragas' non-LLM answer scores, so a rerun does not score the same answers again.

Why: every evaluation scores each answer with ragas' string and ID metrics (ROUGE-L, BLEU, string
similarity, non-LLM and ID-based context precision/recall). They are deterministic functions of
the answered question, yet a rerun imported ragas and scored everything afresh in every notebook.
One SQLite file (default ``<rag_lab cache dir>/answer_scores.sqlite``) keys each score by the
sha256 of (ragas' version, the metric's name and ragas class, every field of the sample). Only
finite scores are stored: a NaN (a sample ragas failed on) is computed again next time. An entry
that is not a finite number on the way back is moved to the ``rejected`` table with a warning
and scored afresh; a damaged file is moved aside and rebuilt (``rag_lab.caching.sqlite_cache``). The
LLM-judged metrics are not kept here (their judge's replies are, in ``judge.sqlite``). Turned off,
like every reused result, with ``RAG_LAB_REUSE=0``.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import time
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version

from .sqlite_cache import KeyedCache

FILENAME = "answer_scores.sqlite"


@lru_cache(maxsize=1)
def ragas_version() -> str:
    """Installed ragas' version (read once: the metadata lookup parses a file, ~1.4 ms a call)."""
    try:
        return version("ragas")
    except PackageNotFoundError:  # pragma: no cover - ragas is a dependency
        return "unknown"


def score_key(metric: str, ragas_class: str, sample) -> str:
    """sha256 over a canonical JSON of (ragas version, metric, ragas class, the sample's fields)."""
    text = json.dumps({"ragas": ragas_version(), "metric": metric, "class": ragas_class,
                       "sample": dataclasses.asdict(sample)}, sort_keys=True, ensure_ascii=False,
                      separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ScoreCache(KeyedCache):
    """SQLite store of answer scores by key; safe to share between threads and processes."""

    SCHEMA = ("CREATE TABLE IF NOT EXISTS scores (key TEXT PRIMARY KEY, metric TEXT, value REAL, created REAL)",)
    FILENAME, TABLE, WHAT, AGAIN = FILENAME, "scores", "answer score cache", "scoring it again"

    def get_many(self, keys: list[str]) -> dict[str, float]:
        """key -> score for the keys stored (a bad entry is moved aside and left out)."""
        found: dict[str, float] = {}
        for start in range(0, len(keys), 500):    # SQLite's limit on bound parameters
            part = keys[start:start + 500]
            marks = ",".join("?" * len(part))
            rows = self.store.run(lambda db: db.execute(
                f"SELECT key, value FROM scores WHERE key IN ({marks})", part).fetchall())
            for key, value in rows:
                if isinstance(value, (int, float)) and math.isfinite(value):
                    found[key] = float(value)
                else:
                    self.discard(key, f"not a finite score: {value!r}")
        return found

    def put_many(self, scores: dict[str, tuple[str, float]]) -> None:
        """Store key -> (metric, score); NaN and infinite scores are skipped, never stored."""
        rows = [(key, metric, float(value), time.time()) for key, (metric, value) in scores.items()
                if value is not None and math.isfinite(value)]
        if rows:
            self.store.write(lambda db: db.executemany("INSERT OR REPLACE INTO scores VALUES (?, ?, ?, ?)", rows))
