"""HTTP for the downloader: resumable file transfers, polite API calls, and an offline message
that says what to fetch and where to put it.

Own code on the standard library (``urllib``): the project pins no HTTP client, and what is
needed is small — a ``Range`` request to resume a ``.part`` file (guarded by ``If-Range``, so a file
upstream has since replaced is fetched whole instead of spliced), retries with back-off on 5xx/429
(honouring ``Retry-After``) and dropped connections, a minimum interval between API calls, and one
switch (``base_url`` or ``$RAG_LAB_DOWNLOAD_BASE_URL``) that sends every request to another host
with the same path, which is how the tests point the downloader at a server on 127.0.0.1.

Every URL that reaches an error message is redacted first (``rag_lab.core.redact``: API keys,
e-mail addresses, tokens, user-info). A local disk error while writing (full disk, no permission)
is not a network fault: it stops at once, naming the file.
"""
from __future__ import annotations

import contextlib
import errno
import http.client
import json
import logging
import os
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Callable

from tqdm import tqdm

from ..caching.atomic import write_text
from ..core.progress import bars_shown
from ..core.redact import redact_url
from ..reasoning.backends import retry_after_seconds   # the one reading of Retry-After (seconds or HTTP date)

log = logging.getLogger(__name__)
BASE_URL_ENV = "RAG_LAB_DOWNLOAD_BASE_URL"
CONTACT_ENV = "RAG_LAB_CONTACT"
RETRY_STATUS = {429, 500, 502, 503, 504}
MAX_RETRY_AFTER = 120.0          # seconds: a longer Retry-After is capped (the retry count still bounds it)
CHUNK = 1 << 16


def contact() -> str:
    """How to reach the person running the downloads (``$RAG_LAB_CONTACT``: an e-mail address or a URL)."""
    return os.environ.get(CONTACT_ENV, "").strip()


def user_agent() -> str:
    """What every request says it is: the tool and, when ``$RAG_LAB_CONTACT`` is set, how to reach its
    user, as Wikimedia's user-agent policy asks of every client."""
    return f"rag_lab/0.1 (research data downloader{'; ' + contact() if contact() else ''}) python-urllib"


class DownloadError(RuntimeError):
    """A download failed for a reason the message explains."""


class ChecksumError(DownloadError):
    """The bytes received are not the bytes expected; nothing was kept."""


class OfflineError(DownloadError):
    """No connection to the host could be made (offline, DNS, refused)."""


class LocalWriteError(OSError):
    """Writing the received bytes to the local disk failed (full disk, no permission): not retried."""


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


def _text(error: BaseException | str) -> str:
    """What went wrong, in words: a URLError's reason (``ConnectionRefusedError: ...``), else the error."""
    reason = error if isinstance(error, str) else getattr(error, "reason", None) or error
    return reason if isinstance(reason, str) else f"{type(reason).__name__}: {reason}"


def part_record(part: Path) -> Path:
    """The JSON beside a ``.part`` file: the URL, validators (ETag, Last-Modified) and full length of
    the transfer that wrote it, so a resume can be checked against the file upstream."""
    return part.with_name(part.name + ".json")


def discard_part(part: Path) -> None:
    """Remove a ``.part`` file and its record."""
    for p in (part, part_record(part)):
        p.unlink(missing_ok=True)


def _read_record(part: Path) -> dict:
    try:
        record = json.loads(part_record(part).read_text(encoding="utf-8"))
        return record if isinstance(record, dict) else {}
    except (OSError, ValueError):
        return {}


def _validator(record: dict) -> str | None:
    """What ``If-Range`` may carry: a strong ETag, else the Last-Modified date (weak ETags may not)."""
    etag = record.get("etag")
    if isinstance(etag, str) and etag and not etag.startswith("W/"):
        return etag
    modified = record.get("last_modified")
    return modified if isinstance(modified, str) and modified else None


class Transport:
    """Fetches files and API responses; every URL passes through ``rebase`` first."""

    def __init__(self, base_url: str | None = None, retries: int = 3, backoff: float = 1.0, timeout: float = 60.0,
                 progress: bool = True):
        self.base_url = base_url if base_url is not None else (os.environ.get(BASE_URL_ENV) or None)
        self.base_from = ("--base-url" if base_url is not None else f"${BASE_URL_ENV}") if self.base_url else None
        if retries < 0:
            raise ValueError(f"retries must be >= 0, got {retries}")
        self.retries, self.backoff, self.timeout = retries, backoff, timeout
        self.progress = progress

    @property
    def override(self) -> bool:
        """True when requests go to ``base_url`` instead of the official hosts."""
        return bool(self.base_url)

    def override_warning(self) -> str:
        """The sentence said whenever an override is in force (empty without one)."""
        if not self.override:
            return ""
        plain = " over plain http (not encrypted, not authenticated)" if self.base_url.startswith("http:") else ""
        return (f"every download goes to {redact_url(self.base_url)} instead of the official hosts{plain}, because "
                f"{self.base_from} is set; files without a published checksum are checked against checksums "
                "already recorded but no new checksum is recorded from it")

    def url(self, url: str) -> str:
        return rebase(url, self.base_url)

    def _pause(self, attempt: int, retry_after: float | None = None) -> None:
        delay = self.backoff * 2 ** attempt if self.backoff > 0 else 0.0
        if retry_after is not None:
            delay = max(delay, min(retry_after, MAX_RETRY_AFTER))
        if delay > 0:
            time.sleep(delay)

    def _open(self, url: str, headers: dict[str, str]):
        request = urllib.request.Request(url, headers={"User-Agent": user_agent(), **headers})
        return urllib.request.urlopen(request, timeout=self.timeout)

    @staticmethod
    def _http_error(url: str, error: urllib.error.HTTPError, hint: str) -> DownloadError:
        if error.code == 404:
            return DownloadError(f"{redact_url(url)}: not found (HTTP 404). The file may have moved upstream. {hint}")
        return DownloadError(f"{redact_url(url)}: HTTP {error.code} {error.reason}. {hint}")

    def _offline(self, url: str, error: BaseException | str, hint: str) -> OfflineError:
        return OfflineError(f"could not reach {redact_url(url)} ({_text(error)}). This machine may be offline. {hint}")

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
            retry_after = None
            try:
                with self._open(full, {}) as resp:
                    return resp.read()
            except urllib.error.HTTPError as e:
                reached = True
                if e.code not in RETRY_STATUS or attempt == self.retries:
                    raise self._http_error(full, e, hint) from None
                last, retry_after = f"HTTP {e.code}", retry_after_seconds(e)
            except (urllib.error.URLError, http.client.HTTPException, OSError) as e:
                last = e
            if attempt < self.retries:
                self._pause(attempt, retry_after)
        if reached:
            raise DownloadError(f"{redact_url(full)}: gave up after {self.retries + 1} attempts ({_text(last)}). "
                                f"{hint}")
        raise self._offline(full, last, hint)

    # -- files -----------------------------------------------------------------------------------
    def fetch(self, url: str, dest: str | os.PathLike, hint: str = "") -> Path:
        """Download ``url`` into ``dest.part``, resuming what an earlier attempt left there.

        Returns the complete ``.part`` file; the caller checks its checksum, renames it and removes
        its record (``discard_part`` when refused). A transfer that stops early is resumed with an
        HTTP ``Range`` request carrying ``If-Range`` (the ETag or Last-Modified the first answer gave),
        so a server holding a newer file answers with all of it; a ``.part`` without that record
        is started afresh. A ``.part`` already complete is returned without fetching it again. When
        every retry fails, the ``.part`` stays so the next run continues from where this one stopped."""
        dest = Path(dest)
        part = dest.with_name(dest.name + ".part")
        dest.parent.mkdir(parents=True, exist_ok=True)
        full = self.url(url)
        last: BaseException | str = "no attempt"
        reached = False
        for attempt in range(self.retries + 1):
            have = part.stat().st_size if part.exists() else 0
            record = _read_record(part) if have else {}
            validator = _validator(record) if record.get("url") == full else None
            if have and validator is None:
                discard_part(part)               # unknown origin: it could belong to another version
                have = 0
            if have and record.get("length") == have:
                return part                      # complete already: the caller verifies it
            headers = {"Range": f"bytes={have}-", "If-Range": validator} if have else {}
            retry_after = None
            try:
                resp = self._open(full, headers)
            except urllib.error.HTTPError as e:
                reached = True
                if e.code == 416 and have:
                    if _complete_size(e) == have:
                        return part              # the server says the file has exactly these many bytes
                    discard_part(part)           # the part file is not a prefix of this file: start again
                    last = "HTTP 416 on resume"
                    continue
                if e.code not in RETRY_STATUS:
                    raise self._http_error(full, e, hint) from None
                last, retry_after = f"HTTP {e.code}", retry_after_seconds(e)
                self._pause(attempt, retry_after)
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
                if not resumed:
                    write_text(part_record(part), json.dumps({"url": full, "etag": resp.headers.get("ETag"),
                                                              "last_modified": resp.headers.get("Last-Modified"),
                                                              "length": total}))
                try:
                    self._copy(resp, part, "ab" if resumed else "wb", have, total, dest.name)
                except LocalWriteError as e:
                    raise _disk_error(part, e) from None
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
        raise DownloadError(f"{redact_url(full)}: gave up after {self.retries + 1} attempts ({_text(last)}).{kept} "
                            f"{hint}")

    def _copy(self, resp, part: Path, mode: str, have: int, total: int | None, label: str) -> None:
        """Append the response to ``part``. Reading errors are the network's (retried by the caller);
        writing errors are the local disk's (``LocalWriteError``, not retried)."""
        try:
            fh = open(part, mode)
        except OSError as e:
            raise LocalWriteError(e.errno, e.strerror, str(part)) from None
        try:
            with tqdm(total=total, initial=have, unit="B", unit_scale=True, unit_divisor=1024, desc=label,
                      disable=None if self.progress and bars_shown() else True, leave=False) as bar:
                while block := resp.read(CHUNK):
                    try:
                        fh.write(block)
                    except OSError as e:
                        raise LocalWriteError(e.errno, e.strerror, str(part)) from None
                    bar.update(len(block))
                try:
                    fh.flush()
                except OSError as e:
                    raise LocalWriteError(e.errno, e.strerror, str(part)) from None
        finally:
            with contextlib.suppress(OSError):       # a failed flush was reported above
                fh.close()


def _disk_error(part: Path, error: OSError) -> OSError:
    """The local error as the user must see it: the file, what went wrong, what to do."""
    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        fix = "free space on that disk, or download to a larger one (--dest or $RAG_LAB_DATA)"
    elif error.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        fix = "make the folder writable by you, or download elsewhere (--dest or $RAG_LAB_DATA)"
    else:
        fix = "check the disk, or download elsewhere (--dest or $RAG_LAB_DATA)"
    size = part.stat().st_size if part.exists() else 0
    kept = f" The {size} bytes received so far stay in {part}: run again to resume." if size else ""
    out = OSError(error.errno, f"{error.strerror} while writing the download; {fix}.{kept}", str(part))
    out.explained = True              # the message already says what to do (rag_lab.cli.errors)
    return out


def _range_start(resp) -> int | None:
    """The first byte of a ``Content-Range: bytes START-END/TOTAL`` answer."""
    value = resp.headers.get("Content-Range", "")
    try:
        return int(value.split()[1].split("-")[0])
    except (IndexError, ValueError):
        return None


def _complete_size(error: urllib.error.HTTPError) -> int | None:
    """The total of a 416 answer's ``Content-Range: bytes */TOTAL``."""
    value = (error.headers.get("Content-Range", "") if error.headers is not None else "") or ""
    try:
        return int(value.split("/")[1])
    except (IndexError, ValueError):
        return None
