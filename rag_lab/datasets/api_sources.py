"""Sources fetched through web APIs, one small response at a time and politely rate-limited.

- PMC Open Access articles by PMCID: the PMC OA web service (``oa.fcgi?id=PMC…``) says whether
  the article is in the Open Access subset and under which licence; E-utilities ``efetch``
  (``db=pmc``) returns its JATS XML (a ``<pmc-articleset>`` around the ``<article>``), saved
  as ``PMC….xml``, which the ``pmc_oa`` loader reads. NCBI asks for at most 3 requests per
  second without an API key and 10 with one (``$NCBI_API_KEY``); ``tool`` and, when
  ``$NCBI_EMAIL`` is set, ``email`` identify the caller as NCBI requests.
- Wikipedia pages of the SSG corpus: the ``wikipedia`` loader's ``WikiEngine`` does the search
  and extract calls through the transport (retries, back-off on 429 honouring ``Retry-After``, a
  user agent with ``$RAG_LAB_CONTACT``) and saves every response; here it gets one request a second.

Each article's record (licence, when, SHA-256; or why it was skipped or failed) is written with it
to ``records/PMC….json``, and ``manifest.json`` is rebuilt from the records under a lock at the end of
every run (also an interrupted one, and with several runs at once): an interruption loses no
licence record, one failing article is recorded and the others go on, and a re-run completes the
records of articles already on disk. Errors are stored redacted (no API key or e-mail address).
"""
from __future__ import annotations

import json
import os
import re
import xml.etree.ElementTree as ET
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable, Sequence

from ..caching.atomic import sha256_file, write_bytes, write_text
from ..caching.locked_json import read_object, update
from ..core.redact import redact_text
from .jats_inline import tag
from .loaders.wikipedia import DEFAULT_TOPICS, WikiEngine
from .pmc_selection import ESEARCH
from .sources import EFETCH, MEDIAWIKI_API, PMC_OA_SERVICE
from .transport import DownloadError, OfflineError, RateLimiter, Transport

NCBI_KEY_ENV, NCBI_EMAIL_ENV = "NCBI_API_KEY", "NCBI_EMAIL"
TOOL = "rag_lab"
SSG_TOPICS, SSG_ARTICLES_PER_TOPIC = DEFAULT_TOPICS, 5     # the SSG paper's corpus: two topics, 5 articles each
WIKIPEDIA_INTERVAL = 1.0                                    # seconds between MediaWiki API requests
_PMCID = re.compile(r"^(?:PMC)?(\d+)$", re.IGNORECASE)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def normalise_pmcids(ids: Iterable[str]) -> list[str]:
    """``PMC123``, ``pmc123`` or ``123`` -> ``PMC123``; duplicates dropped, order kept."""
    out = []
    for raw in ids:
        raw = raw.strip()
        if not raw or raw.startswith("#"):
            continue
        m = _PMCID.match(raw)
        if not m:
            raise ValueError(f"{raw!r} is not a PMCID (expected PMC followed by digits, e.g. PMC1234567)")
        pmcid = f"PMC{m.group(1)}"
        if pmcid not in out:
            out.append(pmcid)
    return out


def parse_oa_record(body: bytes, pmcid: str) -> dict:
    """``{"licence", "citation", "retracted"}`` from an OA service answer; ValueError when not Open Access."""
    try:
        root = ET.fromstring(body)
    except ET.ParseError as e:
        raise DownloadError(f"PMC OA service answer for {pmcid} is not XML ({e})") from None
    error = next((el for el in root.iter() if tag(el) == "error"), None)
    if error is not None:
        raise ValueError(f"{pmcid}: {error.get('code', 'error')}: {' '.join((error.text or '').split())}")
    record = next((el for el in root.iter() if tag(el) == "record"), None)
    if record is None:
        raise DownloadError(f"PMC OA service answer for {pmcid} has neither <record> nor <error>")
    return {"licence": record.get("license", ""), "citation": record.get("citation", ""),
            "retracted": record.get("retracted", "no")}


def check_jats(body: bytes, pmcid: str) -> bool:
    """Raise unless ``body`` holds a JATS ``<article>``; True when it has a ``<body>`` (full text)."""
    try:
        root = ET.fromstring(body)
    except ET.ParseError as e:
        raise DownloadError(f"efetch answer for {pmcid} is not XML ({e})") from None
    article = root if tag(root) == "article" else next(
        (el for el in root.iter() if tag(el) == "article"), None)
    if article is None:
        text = " ".join("".join(root.itertext()).split())[:200]
        raise DownloadError(f"efetch answer for {pmcid} holds no <article> ({text or 'empty'})")
    return any(tag(el) == "body" for el in article.iter())


class NCBI:
    """The two PMC calls, sharing one rate limiter and NCBI's identification parameters."""

    def __init__(self, transport: Transport, api_key: str | None = None, email: str | None = None,
                 limiter: RateLimiter | None = None):
        self.transport = transport
        self.api_key = api_key if api_key is not None else os.environ.get(NCBI_KEY_ENV) or None
        self.email = email if email is not None else os.environ.get(NCBI_EMAIL_ENV) or None
        # NCBI's documented ceilings are 3 requests/s without a key and 10 with one; stay just under them
        self.limiter = limiter or RateLimiter(0.11 if self.api_key else 0.34)

    def _params(self, **params: str) -> dict[str, str]:
        params["tool"] = TOOL
        if self.email:
            params["email"] = self.email
        return params

    def oa_record(self, pmcid: str, hint: str) -> dict:
        body = self.transport.get(PMC_OA_SERVICE, self._params(id=pmcid), self.limiter, hint)
        return parse_oa_record(body, pmcid)

    def _keyed(self, **params: str) -> dict[str, str]:
        params = self._params(**params)
        if self.api_key:
            params["api_key"] = self.api_key
        return params

    def jats(self, pmcid: str, hint: str) -> bytes:
        return self.transport.get(EFETCH, self._keyed(db="pmc", id=pmcid[3:], retmode="xml"), self.limiter, hint)

    def esearch(self, term: str, mindate: str, maxdate: str, start: int, size: int, hint: str = "") -> bytes:
        """One page of PMC ids matching ``term`` published between the dates."""
        return self.transport.get(ESEARCH, self._keyed(db="pmc", term=term, datetype="pdat", mindate=mindate,
                                                       maxdate=maxdate, retstart=str(start), retmax=str(size)),
                                  self.limiter, hint)


RECORDS = "records"                # one small JSON per article, written with it
MANIFEST_FIX = "delete it (the articles stay) and run again: it is rebuilt from the per-article records"


def _record(folder: Path, pmcid: str, record: dict) -> None:
    write_text(folder / RECORDS / f"{pmcid}.json", json.dumps(record, sort_keys=True) + "\n")


def _read_records(folder: Path) -> dict[str, dict]:
    out = {}
    for path in sorted((folder / RECORDS).glob("PMC*.json")):
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue                   # unreadable: the article is looked at again next run
        if isinstance(record, dict) and record.get("status") in ("saved", "skipped", "failed"):
            out[path.stem] = record
    return out


def merge_manifest(folder: Path, selection: dict | None = None) -> dict:
    """Rebuild ``manifest.json`` from the per-article records (under its lock, so concurrent runs merge);
    entries of earlier manifests without a record are kept, a selection replaces the one stored."""
    records = _read_records(folder)

    def change(manifest: dict) -> None:
        articles, skipped, failed = (manifest.setdefault(k, {}) for k in ("articles", "skipped", "failed"))
        for pmcid, record in records.items():
            for table in (articles, skipped, failed):
                table.pop(pmcid, None)
            status = record["status"]
            entry = {k: v for k, v in record.items() if k != "status"}
            if status == "saved":
                articles[pmcid] = entry
            elif status == "skipped":
                skipped[pmcid] = entry.get("reason", "")
            else:
                failed[pmcid] = entry
        if selection is not None:
            manifest["selection"] = selection

    manifest, _ = update(folder / "manifest.json", change, MANIFEST_FIX)
    return manifest


def fetch_pmc_articles(pmcids: Sequence[str], folder: Path, ncbi: NCBI, force: bool = False, log=print,
                       selection: dict | None = None) -> dict:
    """Save each Open Access article as ``folder/PMC….xml`` with its record (licence, checksum) in
    ``folder/records/PMC….json`` beside it; one article that fails is recorded and the rest go on; a
    file already present without a record gets one (its licence asked of the OA service). Returns the
    manifest rebuilt from all records; a summary is logged."""
    if not pmcids:
        raise ValueError("pmc_oa: say which articles: --count N [--seed S] draws N Open Access articles from an "
                         "E-utilities search (the list is written to manifest.json), or give --ids PMC1,PMC2, "
                         "--ids-file FILE or --ids-from manifest.json")
    read_object(folder / "manifest.json", MANIFEST_FIX)           # a broken manifest is named before any work
    if selection is not None:
        merge_manifest(folder, selection)
    records = _read_records(folder)
    done = Counter()
    try:
        for pmcid in pmcids:
            done[_fetch_one(pmcid, folder, ncbi, force, records.get(pmcid), log)] += 1
    finally:
        manifest = merge_manifest(folder)
        log(f"pmc_oa: {len(pmcids)} articles asked: " + ", ".join(f"{n} {what}" for what, n in done.items())
            + (f"; {len(manifest['failed'])} failed (listed in {folder / 'manifest.json'} under 'failed'; run "
               "again to retry them)" if manifest.get("failed") else ""))
    return manifest


def _fetch_one(pmcid: str, folder: Path, ncbi: NCBI, force: bool, record: dict | None, log) -> str:
    """Fetch (or complete the record of) one article; returns what happened, for the summary."""
    target = folder / f"{pmcid}.xml"
    hint = (f"Offline, save the article's JATS XML by hand as {target} (from {EFETCH}?db=pmc&id={pmcid[3:]} "
            f"or the PMC OA bulk packages, https://ftp.ncbi.nlm.nih.gov/pub/pmc/oa_bulk/).")
    present = target.exists() and not force
    if present and record and record.get("status") == "saved":
        return "already present"
    try:
        oa = ncbi.oa_record(pmcid, hint)
    except ValueError as e:          # not in the Open Access subset, or unknown id
        _record(folder, pmcid, {"status": "skipped", "reason": str(e)})
        log(f"  {pmcid}: skipped, {e}")
        return "skipped (not Open Access)"
    except OfflineError:
        raise
    except DownloadError as e:
        return _failed(folder, pmcid, e, log)
    try:
        body = target.read_bytes() if present else ncbi.jats(pmcid, hint)
        full = check_jats(body, pmcid)
    except OfflineError:
        raise
    except DownloadError as e:
        return _failed(folder, pmcid, e, log)
    if not present:
        write_bytes(target, body)
    _record(folder, pmcid, {**oa, "status": "saved", "file": target.name, "sha256": sha256_file(target),
                            "size": len(body), "full_text": full, "fetched": _now(),
                            "source": f"{EFETCH}?db=pmc&id={pmcid[3:]}"})
    log(f"  {pmcid}: {oa['licence'] or 'licence not stated'}, {len(body):,} bytes"
        + ("" if full else " (no <body>: front matter only)") + (" (already present; record added)" if present else ""))
    return "completed (record added)" if present else "saved"


def _failed(folder: Path, pmcid: str, error: Exception, log) -> str:
    message = redact_text(str(error))
    _record(folder, pmcid, {"status": "failed", "error": message, "when": _now()})
    log(f"  {pmcid}: failed, {message}")
    return "failed"


def fetch_wikipedia(topics: Sequence[str], articles_per_topic: int, folder: Path, transport: Transport,
                    limiter: RateLimiter | None = None, log=print) -> dict:
    """Fetch (or reuse) the search and extract responses of the SSG corpus into ``folder``."""
    engine = WikiEngine(folder, MEDIAWIKI_API, online=True, transport=transport,
                        limiter=limiter or RateLimiter(WIKIPEDIA_INTERVAL))
    docs = engine.documents(list(topics), articles_per_topic)
    manifest = {"topics": list(topics), "articles_per_topic": articles_per_topic, "fetched": _now(),
                "source": MEDIAWIKI_API, "licence": "CC BY-SA 4.0",
                "documents": [{"id": d.id, "title": d.title, "pageid": d.meta.get("pageid"), "url": d.meta.get("url"),
                               "topic": d.meta.get("topic")} for d in docs]}
    write_text(folder / "manifest.json", json.dumps(manifest, indent=1) + "\n")
    for d in docs:
        log(f"  {d.meta.get('topic')}: {d.title} ({len(d.text):,} characters)")
    return manifest
