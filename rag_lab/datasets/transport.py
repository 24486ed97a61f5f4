"""HTTP for the downloader: resumable file transfers with checksums, polite API calls, and an
offline message that says what to fetch and where to put it.

Own code on the standard library (``urllib``): the project pins no HTTP client, and what is
needed is small — a ``Range`` request to resume a ``.part`` file, retries with back-off on
5xx/429 and dropped connections, a minimum interval between API calls, and one switch
(``base_url`` or ``$RAG_LAB_DOWNLOAD_BASE_URL``) that sends every request to another host with
the same path, which is how the tests point the downloader at a server on 127.0.0.1.
"""
from __future__ import annotations

import http.client
import os
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Callable

from tqdm import tqdm

BASE_URL_ENV = "RAG_LAB_DOWNLOAD_BASE_URL"
USER_AGENT = "rag_lab/0.1 (research data downloader; python-urllib)"
RETRY_STATUS = {429, 500, 502, 503, 504}
CHUNK = 1 << 16


class DownloadError(RuntimeError):
    """A download failed for a reason the message explains."""


class ChecksumError(DownloadError):
    """The bytes received are not the bytes expected; nothing was kept."""


class OfflineError(DownloadError):
    """No connection to the host could be made (offline, DNS, refused)."""


def rebase(url: str, base_url: str | None) -> str:
    """``url`` with its scheme and host replaced by ``base_url`` (path and query kept)."""
    if not base_url:
        return url
    parts = urllib.parse.urlsplit(url)
    base = base_url.rstrip("/")
    return f"{base}{parts.path}" + (f"?{parts.query}" if parts.query else "")


class RateLimiter:
    """At most one call per ``interval`` seconds (NCBI allows 3 requests/s without a key)."""

    def __init__(self, interval: float, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep):
        if interval < 0:
            raise ValueError(f"interval must be >= 0 seconds, got {interval}")
        self.interval, self.clock, self.sleep = interval, clock, sleep
        self._next = None
        self._lock = threading.Lock()

    def wait(self) -> None:
        with self._lock:
            now = self.clock()
            if self._next is not None and now < self._next:
                self.sleep(self._next - now)
                now = self._next
            self._next = now + self.interval


def _reason(error: BaseException) -> str:
    reason = getattr(error, "reason", None) or error
    return f"{type(reason).__name__}: {reason}" if not isinstance(reason, str) else reason


class Transport:
    """Fetches files and API responses; every URL passes through ``rebase`` first."""

    def __init__(self, base_url: str | None = None, retries: int = 3, backoff: float = 1.0, timeout: float = 60.0,
                 progress: bool = True, user_agent: str = USER_AGENT):
        self.base_url = base_url if base_url is not None else (os.environ.get(BASE_URL_ENV) or None)
        if retries < 0:
            raise ValueError(f"retries must be >= 0, got {retries}")
        self.retries, self.backoff, self.timeout = retries, backoff, timeout
        self.progress, self.user_agent = progress, user_agent

    def url(self, url: str) -> str:
        return rebase(url, self.base_url)

    def _pause(self, attempt: int) -> None:
        if self.backoff > 0:
            time.sleep(self.backoff * 2 ** attempt)

    def _open(self, url: str, headers: dict[str, str]):
        request = urllib.request.Request(url, headers={"User-Agent": self.user_agent, **headers})
        return urllib.request.urlopen(request, timeout=self.timeout)

    @staticmethod
    def _http_error(url: str, error: urllib.error.HTTPError, hint: str) -> DownloadError:
        if error.code == 404:
            return DownloadError(f"{url}: not found (HTTP 404). The file may have moved upstream. {hint}")
        return DownloadError(f"{url}: HTTP {error.code} {error.reason}. {hint}")

    def _offline(self, url: str, error: BaseException | str, hint: str) -> OfflineError:
        return OfflineError(f"could not reach {url} ({error if isinstance(error, str) else _reason(error)}). "
                            f"This machine may be offline. {hint}")

    # -- API calls -----------------------------------------------------------------------------
    def get(self, url: str, params: dict[str, str] | None = None, limiter: RateLimiter | None = None,
            hint: str = "") -> bytes:
        """The body of one GET request (query from ``params``), retried on 5xx/429 and dropped connections."""
        full = self.url(url) + (("&" if "?" in url else "?") + urllib.parse.urlencode(params) if params else "")
        last: BaseException | str = "no attempt"
        reached = False
        for attempt in range(self.retries + 1):
            if limiter is not None:
                limiter.wait()
            try:
                with self._open(full, {}) as resp:
                    return resp.read()
            except urllib.error.HTTPError as e:
                reached = True
                if e.code not in RETRY_STATUS or attempt == self.retries:
                    raise self._http_error(full, e, hint) from None
                last = f"HTTP {e.code}"
            except (urllib.error.URLError, http.client.HTTPException, OSError) as e:
                last = e
            self._pause(attempt)
        if reached:
            raise DownloadError(f"{full}: gave up after {self.retries + 1} attempts ({last}). {hint}")
        raise self._offline(full, last, hint)

    # -- files -----------------------------------------------------------------------------------
    def fetch(self, url: str, dest: str | os.PathLike, hint: str = "") -> Path:
        """Download ``url`` into ``dest.part``, resuming what an earlier attempt left there.

        Returns the complete ``.part`` file; the caller checks its checksum and renames it.
        A transfer that stops early is resumed with an HTTP ``Range`` request; when every retry
        fails, the ``.part`` file stays so the next run continues from where this one stopped."""
        dest = Path(dest)
        part = dest.with_name(dest.name + ".part")
        dest.parent.mkdir(parents=True, exist_ok=True)
        full = self.url(url)
        last: BaseException | str = "no attempt"
        reached = False
        for attempt in range(self.retries + 1):
            have = part.stat().st_size if part.exists() else 0
            try:
                resp = self._open(full, {"Range": f"bytes={have}-"} if have else {})
            except urllib.error.HTTPError as e:
                reached = True
                if e.code == 416 and have:          # the part file is not a prefix of this file: start again
                    part.unlink()
                    last = "HTTP 416 on resume"
                    continue
                if e.code not in RETRY_STATUS:
                    raise self._http_error(full, e, hint) from None
                last = f"HTTP {e.code}"
                self._pause(attempt)
                continue
            except (urllib.error.URLError, http.client.HTTPException, OSError) as e:
                last = e
                self._pause(attempt)
                continue
            reached = True
            with resp:
                resumed = have > 0 and resp.status == 206 and _range_start(resp) == have
                if not resumed:
                    have = 0
                length = resp.headers.get("Content-Length")
                total = have + int(length) if length and length.isdigit() else None
                try:
                    self._copy(resp, part, "ab" if resumed else "wb", have, total, dest.name)
                except (http.client.HTTPException, OSError) as e:
                    last = e
                    self._pause(attempt)
                    continue
            size = part.stat().st_size
            if total is not None and size < total:
                last = f"the transfer stopped after {size} of {total} bytes"
                self._pause(attempt)
                continue
            return part
        if not reached:
            raise self._offline(full, last, hint)
        kept = f" The partial file {part} ({part.stat().st_size} bytes) was kept: run again to resume." \
            if part.exists() and part.stat().st_size else ""
        raise DownloadError(f"{full}: gave up after {self.retries + 1} attempts ({_text(last)}).{kept} {hint}")

    def _copy(self, resp, part: Path, mode: str, have: int, total: int | None, label: str) -> None:
        with open(part, mode) as f, tqdm(total=total, initial=have, unit="B", unit_scale=True, unit_divisor=1024,
                                         desc=label, disable=None if self.progress else True,
                                         leave=False) as bar:
            while True:
                block = resp.read(CHUNK)
                if not block:
                    break
                f.write(block)
                bar.update(len(block))


def _range_start(resp) -> int | None:
    """The first byte of a ``Content-Range: bytes START-END/TOTAL`` answer."""
    value = resp.headers.get("Content-Range", "")
    try:
        return int(value.split()[1].split("-")[0])
    except (IndexError, ValueError):
        return None


def _text(error: BaseException | str) -> str:
    return error if isinstance(error, str) else _reason(error)
