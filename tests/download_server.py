"""A local stand-in for the download hosts: serves tests/fixtures/download at the upstream URL paths
on 127.0.0.1, so the downloader runs unchanged with ``base_url`` pointing here.

Static files come from ``mirror/`` (a folder ``NAME.tgz.d`` / ``NAME.zip.d`` is served as the archive
``NAME.tgz`` / ``NAME.zip`` of its contents; ``NAME.parquet.jsonl`` as the parquet file ``NAME.parquet``; ``NAME.gzipped`` as ``NAME``,
gzip-compressed, the way some Gutenberg stories come). API answers come from ``api/``: the PMC OA service (``oa/<PMCID>.xml``),
E-utilities efetch (``efetch/<digits>.xml``) and esearch (``esearch/<slug of the term>.txt``: the matching
ids, one a line, answered a page at a time by ``retstart``/``retmax``), and the MediaWiki API
(``wiki/search-<topic>.json``, ``wiki/extract-<title>.json``). Files carry an ``ETag`` (from their bytes)
and a ``Last-Modified``; byte ranges are honoured (``Range: bytes=N-``, unless an ``If-Range`` names
another version: then the whole file comes back, as HTTP says), every request is recorded, and
``faults[path]`` queues misbehaviour for the next requests of a path: ``"500"``, ``"503"``, ``"429"``
(with ``Retry-After: 1``), ``"truncate"`` (promise the whole file, send half, hang up)."""
from __future__ import annotations

import gzip
import hashlib
import io
import re
import tarfile
import threading
import urllib.parse
import zipfile
from functools import lru_cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures" / "download"
LAST_MODIFIED = "Mon, 02 Nov 2026 08:00:00 GMT"


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.casefold()).strip("-")


def _tgz(folder: Path) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        for f in sorted(p for p in folder.rglob("*") if p.is_file()):
            data = f.read_bytes()
            info = tarfile.TarInfo(f.relative_to(folder).as_posix())
            info.size, info.mtime = len(data), 0
            tar.addfile(info, io.BytesIO(data))
    return gzip.compress(raw.getvalue(), mtime=0)


def _zip(folder: Path) -> bytes:
    raw = io.BytesIO()
    with zipfile.ZipFile(raw, "w", zipfile.ZIP_DEFLATED) as z:
        for f in sorted(p for p in folder.rglob("*") if p.is_file()):
            z.writestr(zipfile.ZipInfo(f.relative_to(folder).as_posix(), (1980, 1, 1, 0, 0, 0)), f.read_bytes())
    return raw.getvalue()


def _parquet(jsonl: Path) -> bytes:
    import pandas as pd

    raw = io.BytesIO()
    pd.read_json(jsonl, lines=True, dtype=False).to_parquet(raw, index=False)
    return raw.getvalue()


@lru_cache(maxsize=1)
def mirror_files() -> dict[str, bytes]:
    """URL path -> bytes, built once per test session (archives are byte-for-byte reproducible)."""
    root, out = FIXTURES / "mirror", {}
    for p in sorted(root.rglob("*")):
        rel = "/" + p.relative_to(root).as_posix()
        if any(part.endswith(".d") for part in p.relative_to(root).parts[:-1]):
            continue                                            # inside an archive folder
        if p.is_dir() and p.name.endswith((".tgz.d", ".zip.d")):
            out[rel[:-2]] = _tgz(p) if p.name.endswith(".tgz.d") else _zip(p)
        elif p.is_file() and p.name.endswith(".parquet.jsonl"):
            out[rel[:-len(".jsonl")]] = _parquet(p)
        elif p.is_file() and p.name.endswith(".gzipped"):
            out[rel[:-len(".gzipped")]] = gzip.compress(p.read_bytes(), mtime=0)
        elif p.is_file():
            out[rel] = p.read_bytes()
    return out


class MirrorServer:
    def __init__(self):
        self.files = dict(mirror_files())
        self.faults: dict[str, list[str]] = {}
        self.requests: list[dict] = []
        self.honour_ranges = True
        self.validators = True          # send ETag and Last-Modified
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                parts = urllib.parse.urlsplit(self.path)
                query = dict(urllib.parse.parse_qsl(parts.query))
                server.requests.append({"path": parts.path, "query": query, "range": self.headers.get("Range"),
                                        "if_range": self.headers.get("If-Range"),
                                        "agent": self.headers.get("User-Agent")})
                queue = server.faults.get(parts.path) or []
                fault = queue.pop(0) if queue else None
                if fault in ("500", "503"):
                    self.send_error(int(fault))
                    return
                if fault == "429":
                    self.send_response(429)
                    self.send_header("Retry-After", "1")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                body = server.answer(parts.path, query)
                if body is None:
                    self.send_error(404)
                    return
                self.send_body(body, fault == "truncate")

            def send_body(self, body: bytes, truncate: bool):
                start = 0
                wanted = self.headers.get("Range")
                etag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
                same = self.headers.get("If-Range") in (None, etag, LAST_MODIFIED)
                if wanted and server.honour_ranges and same:
                    start = int(wanted.split("=")[1].split("-")[0])
                    if start >= len(body):
                        self.send_response(416)
                        self.send_header("Content-Range", f"bytes */{len(body)}")
                        self.send_header("Content-Length", "0")
                        self.end_headers()
                        return
                    self.send_response(206)
                    self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
                else:
                    self.send_response(200)
                if server.validators:
                    self.send_header("ETag", etag)
                    self.send_header("Last-Modified", LAST_MODIFIED)
                self.send_header("Content-Length", str(len(body) - start))
                self.end_headers()
                payload = body[start:]
                self.wfile.write(payload[:len(payload) // 2] if truncate else payload)
                self.close_connection = True

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def answer(self, path: str, query: dict) -> bytes | None:
        api = FIXTURES / "api"
        if path == "/pmc/utils/oa/oa.fcgi":
            f = api / "oa" / f"{query.get('id', '')}.xml"
            return f.read_bytes() if f.exists() else (
                f'<OA><error code="idDoesNotExist">invalid article id {query.get("id")!r}</error></OA>'.encode())
        if path == "/entrez/eutils/esearch.fcgi":
            f = api / "esearch" / f"{_slug(query.get('term', ''))}.txt"
            ids = f.read_text().split() if f.exists() else []
            start, size = int(query.get("retstart", 0)), int(query.get("retmax", 20))
            page = "".join(f"<Id>{i}</Id>" for i in ids[start:start + size])
            return (f"<eSearchResult><Count>{len(ids)}</Count><RetMax>{len(ids[start:start + size])}</RetMax>"
                    f"<RetStart>{start}</RetStart><IdList>{page}</IdList></eSearchResult>").encode()
        if path == "/entrez/eutils/efetch.fcgi":
            f = api / "efetch" / f"{query.get('id', '')}.xml"
            return f.read_bytes() if f.exists() else b"<pmc-articleset><error>id not found</error></pmc-articleset>"
        if path == "/w/api.php":
            key = f"search-{_slug(query['srsearch'])}" if query.get("list") == "search" \
                else f"extract-{_slug(query.get('titles', ''))}"
            f = api / "wiki" / f"{key}.json"
            return f.read_bytes() if f.exists() else None
        return self.files.get(path)

    def count(self, path: str) -> int:
        return sum(1 for r in self.requests if r["path"] == path)

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def served_here(monkeypatch, server: MirrorServer, *names: str) -> None:
    """Point the named sources' official URLs at ``server`` itself, so a download with no base-URL override
    treats it as the upstream host (a first-use checksum is recorded only from an official host)."""
    from dataclasses import replace

    from rag_lab.datasets import sources as src

    for name in names:
        s = src.SOURCES[name]
        files = tuple(replace(f, url=server.url + urllib.parse.urlsplit(f.url).path) for f in s.files)
        monkeypatch.setitem(src.SOURCES, name, replace(s, files=files))


@pytest.fixture
def mirror():
    server = MirrorServer()
    yield server
    server.stop()


@pytest.fixture
def data_cache(tmp_path, monkeypatch):
    """An empty data cache for this test; no per-data-set override or base URL from the environment."""
    import os

    for var in [v for v in os.environ if v.startswith("RAG_LAB_DATA") or v in ("RAG_LAB_DOWNLOAD_BASE_URL",
                                                                                "RAG_LAB_CONTACT",
                                                                                "NCBI_API_KEY", "NCBI_EMAIL")]:
        monkeypatch.delenv(var)
    root = tmp_path / "data"
    monkeypatch.setenv("RAG_LAB_DATA", str(root))
    return root
