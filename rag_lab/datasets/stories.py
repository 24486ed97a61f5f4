"""NarrativeQA's full stories, fetched from the URLs its ``documents.csv`` lists.

Why: the questions and summaries are files of the NarrativeQA repository, but the stories are not:
the repository's ``download_stories.sh`` fetches each story from its own ``story_url`` (Project
Gutenberg for the books, script sites for the films) into ``tmp/<document_id>.content``. Without
them the SKETCH preset's Table 4 (full stories) could not run. This does the same job in Python, for
the splits asked: each story is saved as ``tmp/<document_id>.content`` (a gzip-compressed answer,
which some Gutenberg files are, is unpacked, as the script does), with a pause before each request
(two seconds for Project Gutenberg, as the script waits; one elsewhere). Many of those sites are
old and some stories are gone: a story that cannot be fetched is recorded as failed and the rest go
on. ``tmp/stories.json`` records each story's URL, size and SHA-256 (or its error); the loader
leaves a story recorded as failed out, with its questions, instead of stopping.
"""
from __future__ import annotations

import csv
import gzip
import os
import urllib.parse
from datetime import datetime, timezone
from pathlib import Path
from typing import Sequence

from ..caching.atomic import sha256_file, write_bytes
from ..caching.locked_json import read_object, update
from ..core.redact import redact_text
from .transport import DownloadError, OfflineError, RateLimiter, Transport, discard_part

STORIES_DIR, MANIFEST = "tmp", "stories.json"
SPLITS = ("train", "valid", "test")
PAUSE = {"gutenberg.org": 2.0}          # seconds before each request to that host; others: DEFAULT_PAUSE
DEFAULT_PAUSE = 1.0
SAVE_EVERY = 25                         # manifest entries written together (and at the end, also on errors)
FIX = "delete it (the stories stay) and run again: it is rebuilt for the stories on disk"


def story_path(root: Path, document_id: str) -> Path:
    return root / STORIES_DIR / f"{document_id}.content"


def failed_stories(root: Path) -> dict[str, str]:
    """document_id -> why its story could not be fetched, as the last download recorded it."""
    manifest = read_object(root / STORIES_DIR / MANIFEST, FIX)
    return {k: v.get("error", "") for k, v in manifest.items() if isinstance(v, dict) and "error" in v}


def _rows(root: Path, splits: Sequence[str]) -> list[dict]:
    documents = root / "documents.csv"
    with documents.open(encoding="utf-8-sig", newline="") as f:
        rows = list(csv.DictReader(f))
    missing = {"document_id", "set", "kind", "story_url"} - set(rows[0] if rows else {})
    if missing:
        raise ValueError(f"{documents}: missing column(s) {sorted(missing)}; expected the NarrativeQA CSV header")
    return [r for r in rows if r["set"] in splits]


class _Pacer:
    """One rate limiter per host, so a slow host's pause does not slow the others."""

    def __init__(self, pauses: dict[str, float] | None):
        self.pauses = PAUSE if pauses is None else pauses
        self.limiters: dict[str, RateLimiter] = {}

    def wait(self, url: str) -> None:
        host = urllib.parse.urlsplit(url).hostname or ""
        pause = next((p for h, p in self.pauses.items() if host == h or host.endswith("." + h)),
                     self.pauses.get("*", DEFAULT_PAUSE))
        self.limiters.setdefault(host, RateLimiter(pause)).wait()


def fetch_stories(root: Path, splits: Sequence[str], transport: Transport, force: bool = False, log=print,
                  pauses: dict[str, float] | None = None) -> dict:
    """Fetch the stories of ``splits`` into ``root/tmp``; returns the updated ``tmp/stories.json``."""
    unknown = [s for s in splits if s not in SPLITS]
    if unknown or not splits:
        raise ValueError(f"narrativeqa: --stories takes splits from {', '.join(SPLITS)} or 'all', got {list(splits)}")
    rows = _rows(root, splits)
    manifest_path = root / STORIES_DIR / MANIFEST
    known = read_object(manifest_path, FIX)
    pending: dict[str, dict] = {}
    pacer = _Pacer(pauses)
    counts = {"saved": 0, "already present": 0, "failed": 0}

    def flush() -> None:
        if pending:
            update(manifest_path, lambda m: m.update(pending), FIX)
            pending.clear()

    try:
        for row in rows:
            doc_id, url = row["document_id"], row["story_url"]
            target = story_path(root, doc_id)
            if target.exists() and target.stat().st_size and not force:
                counts["already present"] += 1
                if "sha256" not in known.get(doc_id, {}):           # on disk without a record: add it
                    pending[doc_id] = _entry(url, target)
            else:
                pacer.wait(url)
                pending[doc_id] = _fetch_one(transport, url, target, doc_id, log)
                counts["failed" if "error" in pending[doc_id] else "saved"] += 1
            if len(pending) >= SAVE_EVERY:
                flush()
    finally:
        flush()
    log(f"narrativeqa stories ({', '.join(splits)}): " + ", ".join(f"{n} {k}" for k, n in counts.items())
        + (f"; failures are listed in {manifest_path} (run again to retry; the loader leaves those stories out)"
           if counts["failed"] else ""))
    return read_object(manifest_path, FIX)


def _entry(url: str, target: Path) -> dict:
    return {"url": url, "size": target.stat().st_size, "sha256": sha256_file(target),
            "fetched": datetime.now(timezone.utc).isoformat(timespec="seconds")}


def _fetch_one(transport: Transport, url: str, target: Path, doc_id: str, log) -> dict:
    try:
        part = transport.fetch(url, target, f"Offline, save the story from {url} by hand as {target}.")
    except OfflineError:
        raise
    except DownloadError as e:
        message = redact_text(str(e))
        log(f"  {doc_id}: failed, {message}")
        return {"url": url, "error": message, "when": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    data = part.read_bytes()
    if data[:2] == b"\x1f\x8b":          # gzip-compressed text, as some Gutenberg files come
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError):
            pass                          # not really gzip: keep the bytes as they came
        write_bytes(target, data)
        discard_part(part)
    else:
        os.replace(part, target)
        discard_part(part)
    log(f"  {doc_id}: {len(data):,} bytes")
    return _entry(url, target)
