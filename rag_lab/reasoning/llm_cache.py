"""Persistent LLM response cache: a re-run makes no call and replays every reply exactly.

One SQLite file (default ``<rag_lab cache dir>/llm.sqlite``) keyed by the sha256 of the model
identity, the messages and the generation parameters. A row holds the reply text and the
token counts of the original call, so a replayed run reports the same token usage.
Only replies that passed the job's validation are stored (``LLMReasoner`` stores after
validating), so a replayed run never takes an invalid reply for a good one. The first reply stored
for a key stays (``put`` returns it), so threads, processes and Dask workers that asked the same
question at once all end up with one answer, and so does every rebuild. What is stored is
only what the key hashes and the reply: never a header, URL credential or API key (none of them
is part of the key's input either).
"""
from __future__ import annotations

import hashlib
import json
import logging
import time
from dataclasses import dataclass
from typing import Any, Sequence

from ..caching.sqlite_cache import KeyedCache

log = logging.getLogger(__name__)
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


class LLMCache(KeyedCache):
    """SQLite store of replies by key. ``directory`` defaults to rag_lab's cache folder
    (``RAG_LAB_CACHE`` or ``~/.cache/rag_lab``). Safe to share between threads and processes.

    A row that cannot be read back as a reply (text not a string, token counts not
    non-negative integers) is moved to the ``rejected`` table with a warning and reads as a
    miss; so is a reply the reasoner finds invalid (``discard``). A damaged file is moved aside
    and rebuilt (``rag_lab.caching.sqlite_cache``)."""

    SCHEMA = ("CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, model TEXT, reply TEXT, "
              "prompt_tokens INTEGER, completion_tokens INTEGER, created REAL)",)
    FILENAME, TABLE, WHAT, AGAIN = FILENAME, "replies", "LLM cache", "asking the model again"

    def get(self, key: str) -> CachedReply | None:
        row = self.store.run(lambda db: db.execute(
            "SELECT reply, prompt_tokens, completion_tokens FROM replies WHERE key=?", (key,)).fetchone())
        if row is None:
            return None
        text, prompt, completion = row
        if isinstance(text, str) and all(isinstance(n, int) and n >= 0 for n in (prompt, completion)):
            return CachedReply(text, prompt, completion)
        self.discard(key, f"unreadable entry (reply {type(text).__name__}, tokens {prompt!r}/{completion!r})")
        return None

    def put(self, key: str, model: str, reply: CachedReply) -> CachedReply:
        """Store ``reply`` unless a reply is stored for ``key`` already (another thread, process or Dask
        worker asked first); returns the stored one. First write wins, so everyone replays one reply."""
        def first_wins(db):
            db.execute("INSERT OR IGNORE INTO replies VALUES (?, ?, ?, ?, ?, ?)",
                       (key, model, reply.text, reply.prompt_tokens, reply.completion_tokens, time.time()))
            return db.execute("SELECT reply, prompt_tokens, completion_tokens FROM replies WHERE key=?",
                              (key,)).fetchone()
        row = self.store.write(first_wins)
        stored = CachedReply(*row) if row is not None else reply
        if not (isinstance(stored.text, str) and all(isinstance(n, int) and n >= 0
                                                     for n in (stored.prompt_tokens, stored.completion_tokens))):
            return reply       # an unreadable row: ``get`` moves it aside next time it is read
        return stored

