"""A local stand-in for the download hosts: serves tests/fixtures/download at the upstream URL paths
on 127.0.0.1, so the downloader runs unchanged with ``base_url`` pointing here.

Static files come from ``mirror/`` (a folder ``NAME.tgz.d`` / ``NAME.zip.d`` is served as the archive
``NAME.tgz`` / ``NAME.zip`` of its contents; ``NAME.parquet.jsonl`` as the parquet file ``NAME.parquet``).
API answers come from ``api/``: the PMC OA service (``oa/<PMCID>.xml``), E-utilities efetch
(``efetch/<digits>.xml``) and the MediaWiki API (``wiki/search-<topic>.json``,
``wiki/extract-<title>.json``). Byte ranges are honoured (``Range: bytes=N-``), every request is
recorded, and ``faults[path]`` queues misbehaviour for the next requests of a path: ``"500"``,
``"503"``, ``"truncate"`` (promise the whole file, send half, hang up)."""
from __future__ import annotations

import gzip
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
        elif p.is_file():
            out[rel] = p.read_bytes()
    return out


class MirrorServer:
    def __init__(self):
        self.files = dict(mirror_files())
        self.faults: dict[str, list[str]] = {}
        self.requests: list[dict] = []
        self.honour_ranges = True
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                parts = urllib.parse.urlsplit(self.path)
                query = dict(urllib.parse.parse_qsl(parts.query))
                server.requests.append({"path": parts.path, "query": query, "range": self.headers.get("Range"),
                                        "agent": self.headers.get("User-Agent")})
                queue = server.faults.get(parts.path) or []
                fault = queue.pop(0) if queue else None
                if fault in ("500", "503"):
                    self.send_error(int(fault))
                    return
                body = server.answer(parts.path, query)
                if body is None:
                    self.send_error(404)
                    return
                self.send_body(body, fault == "truncate")

            def send_body(self, body: bytes, truncate: bool):
                start = 0
                wanted = self.headers.get("Range")
                if wanted and server.honour_ranges:
                    start = int(wanted.split("=")[1].split("-")[0])
                    if start >= len(body):
                        self.send_error(416)
                        return
                    self.send_response(206)
                    self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
                else:
                    self.send_response(200)
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
                                                                                "NCBI_API_KEY", "NCBI_EMAIL")]:
        monkeypatch.delenv(var)
    root = tmp_path / "data"
    monkeypatch.setenv("RAG_LAB_DATA", str(root))
    return root
