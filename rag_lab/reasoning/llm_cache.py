"""Persistent LLM response cache: a re-run makes no call and replays every reply exactly.

One SQLite file (default ``<rag_lab cache dir>/llm.sqlite``) keyed by the sha256 of the model
identity, the messages and the generation parameters. A row holds the reply text and the
token counts of the original call, so a replayed run reports the same token usage.
What is stored is only what the key hashes and the reply: never a header, URL credential or
API key (none of them is part of the key's input either).
"""
from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

FILENAME = "llm.sqlite"


@dataclass(frozen=True)
class CachedReply:
    text: str
    prompt_tokens: int
    completion_tokens: int


def cache_key(model: str, messages: Sequence[dict], params: dict[str, Any]) -> str:
    """sha256 over a canonical JSON of (model, messages, parameters)."""
    payload = json.dumps({"model": model, "messages": list(messages), "params": params},
                         sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class LLMCache:
    """SQLite store of replies by key. ``directory`` defaults to rag_lab's cache folder
    (``RAG_LAB_CACHE`` or ``~/.cache/rag_lab``). Safe to share between threads and processes."""

    def __init__(self, directory: str | Path | None = None):
        if directory is None:
            from ..embedding import default_cache_dir
            directory = default_cache_dir()
        directory = Path(directory)
        if directory.exists() and not directory.is_dir():
            raise ValueError(f"LLM cache: {directory} exists and is not a folder; expected a folder for {FILENAME}")
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / FILENAME
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, timeout=60, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, model TEXT, reply TEXT, "
                         "prompt_tokens INTEGER, completion_tokens INTEGER, created REAL)")

    def __repr__(self) -> str:
        return f"LLMCache({str(self.path)!r})"

    def get(self, key: str) -> CachedReply | None:
        with self._lock:
            row = self._db.execute("SELECT reply, prompt_tokens, completion_tokens FROM replies WHERE key=?",
                                   (key,)).fetchone()
        return CachedReply(*row) if row else None

    def put(self, key: str, model: str, reply: CachedReply) -> None:
        with self._lock, self._db:
            self._db.execute("INSERT OR REPLACE INTO replies VALUES (?, ?, ?, ?, ?, ?)",
                             (key, model, reply.text, reply.prompt_tokens, reply.completion_tokens, time.time()))

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM replies").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._db.close()
