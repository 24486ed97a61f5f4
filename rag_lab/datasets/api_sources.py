"""Sources fetched through web APIs, one small response at a time and politely rate-limited.

- PMC Open Access articles by PMCID: the PMC OA web service (``oa.fcgi?id=PMC…``) says whether
  the article is in the Open Access subset and under which licence; E-utilities ``efetch``
  (``db=pmc``) returns its JATS XML (a ``<pmc-articleset>`` around the ``<article>``), saved
  as ``PMC….xml``, which the ``pmc_oa`` loader reads. NCBI asks for at most 3 requests per
  second without an API key and 10 with one (``$NCBI_API_KEY``); ``tool`` and, when
  ``$NCBI_EMAIL`` is set, ``email`` identify the caller as NCBI requests.
- Wikipedia pages of the SSG corpus: the ``wikipedia`` loader's ``WikiEngine`` does the search
  and extract calls and saves every response; here it only gets a rate limiter in front.

Each run writes ``manifest.json`` beside the files: what was fetched, when, under which
licence, and the SHA-256 of each saved article.
"""
from __future__ import annotations

import json
import os
import re
import xml.etree.ElementTree as ET
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable, Sequence

from ..caching.atomic import write_bytes, write_text
from .loaders.wikipedia import DEFAULT_TOPICS, WikiEngine
from .sources import EFETCH, MEDIAWIKI_API, PMC_OA_SERVICE
from ..caching.atomic import sha256_file
from .transport import DownloadError, RateLimiter, Transport

NCBI_KEY_ENV, NCBI_EMAIL_ENV = "NCBI_API_KEY", "NCBI_EMAIL"
TOOL = "rag_lab"
SSG_TOPICS, SSG_ARTICLES_PER_TOPIC = DEFAULT_TOPICS, 5     # the SSG paper's corpus: two topics, 5 articles each
_PMCID = re.compile(r"^(?:PMC)?(\d+)$", re.IGNORECASE)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _local(tag) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


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
    error = next((el for el in root.iter() if _local(el.tag) == "error"), None)
    if error is not None:
        raise ValueError(f"{pmcid}: {error.get('code', 'error')}: {' '.join((error.text or '').split())}")
    record = next((el for el in root.iter() if _local(el.tag) == "record"), None)
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
    article = root if _local(root.tag) == "article" else next(
        (el for el in root.iter() if _local(el.tag) == "article"), None)
    if article is None:
        text = " ".join("".join(root.itertext()).split())[:200]
        raise DownloadError(f"efetch answer for {pmcid} holds no <article> ({text or 'empty'})")
    return any(_local(el.tag) == "body" for el in article.iter())


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

    def jats(self, pmcid: str, hint: str) -> bytes:
        params = self._params(db="pmc", id=pmcid[3:], retmode="xml")
        if self.api_key:
            params["api_key"] = self.api_key
        return self.transport.get(EFETCH, params, self.limiter, hint)


def fetch_pmc_articles(pmcids: Sequence[str], folder: Path, ncbi: NCBI, force: bool = False,
                       log=print) -> dict:
    """Save each Open Access article as ``folder/PMC….xml``; returns the updated manifest."""
    if not pmcids:
        raise ValueError("pmc_oa: give the articles to fetch with --ids PMC1,PMC2 or --ids-file FILE "
                         "(one PMCID per line)")
    manifest_path = folder / "manifest.json"
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8")) if manifest_path.exists() else {}
    except json.JSONDecodeError as e:
        raise ValueError(f"{manifest_path}: not valid JSON ({e.msg}); delete it (the articles stay) and run again, "
                         "it is rebuilt for the articles fetched from then on") from None
    articles, skipped = manifest.setdefault("articles", {}), manifest.setdefault("skipped", {})
    for pmcid in pmcids:
        target = folder / f"{pmcid}.xml"
        hint = (f"Offline, save the article's JATS XML by hand as {target} (from {EFETCH}?db=pmc&id={pmcid[3:]} "
                f"or the PMC OA bulk packages, https://ftp.ncbi.nlm.nih.gov/pub/pmc/oa_bulk/).")
        if target.exists() and not force:
            log(f"  {pmcid}: already present ({target.name})")
            continue
        try:
            record = ncbi.oa_record(pmcid, hint)
        except ValueError as e:          # not in the Open Access subset, or unknown id
            skipped[pmcid] = str(e)
            log(f"  {pmcid}: skipped, {e}")
            continue
        body = ncbi.jats(pmcid, hint)
        has_body = check_jats(body, pmcid)
        write_bytes(target, body)
        articles[pmcid] = {**record, "file": target.name, "sha256": sha256_file(target), "size": len(body),
                           "full_text": has_body, "fetched": _now(), "source": f"{EFETCH}?db=pmc&id={pmcid[3:]}"}
        skipped.pop(pmcid, None)
        log(f"  {pmcid}: {record['licence'] or 'licence not stated'}, {len(body):,} bytes"
            + ("" if has_body else " (no <body>: front matter only)"))
    write_text(manifest_path, json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return manifest


class _PoliteWikiEngine(WikiEngine):
    """The loader's engine, waiting for the rate limiter before each response it has not saved yet."""

    def __init__(self, folder: Path, api_url: str, limiter: RateLimiter, timeout: float):
        super().__init__(folder, api_url, online=True, timeout=timeout)
        self.limiter = limiter

    def _get(self, params, saved, what):
        if not saved.exists():
            self.limiter.wait()
        return super()._get(params, saved, what)


def fetch_wikipedia(topics: Sequence[str], articles_per_topic: int, folder: Path, transport: Transport,
                    limiter: RateLimiter | None = None, log=print) -> dict:
    """Fetch (or reuse) the search and extract responses of the SSG corpus into ``folder``."""
    engine = _PoliteWikiEngine(folder, transport.url(MEDIAWIKI_API), limiter or RateLimiter(1.0),
                               transport.timeout)
    docs = engine.documents(list(topics), articles_per_topic)
    manifest = {"topics": list(topics), "articles_per_topic": articles_per_topic, "fetched": _now(),
                "source": MEDIAWIKI_API, "licence": "CC BY-SA 4.0",
                "documents": [{"id": d.id, "title": d.title, "pageid": d.meta.get("pageid"), "url": d.meta.get("url"),
                               "topic": d.meta.get("topic")} for d in docs]}
    write_text(folder / "manifest.json", json.dumps(manifest, indent=1) + "\n")
    for d in docs:
        log(f"  {d.meta.get('topic')}: {d.title} ({len(d.text):,} characters)")
    return manifest
