"""Measurements a run took, kept for a later run of the same code on the same machine (notebook 11's
tables, notebook 04's Table 3).

Why: those tables time cold builds by design, so a warm ``make reproduce`` (every index and vector
already cached) would otherwise time them all again, minutes on two cores, to show what the cold run
showed. A measurement is reused only where taking it again would repeat its conditions: the
same code and shipped data (``code_fingerprint``), the same package versions and Python, the same
parameters and documents and the same machine (host name, processor, cores). Never silently: ``Measured.label``
says when and on which machine the values were measured and whether this run reused them, and the
notebook prints it and puts it in every caption. ``RAG_LAB_REUSE=0``, or ``reuse=False`` (notebook 11's
``timings = "measure"``), always measures again and replaces the kept values.

Kept in ``<cache>/timings/<key>.bin``: a JSON header line (what, when, where, and an HMAC over the header
and the payload's sha256 with the user's cache key, ``caching.trust``), then the pickled values. The
header is checked before anything is unpickled; an entry that fails the check is measured again (with
a warning), and the new one replaces it, written whole or not at all (``caching.atomic``).
"""
from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import json
import logging
import os
import pickle
import platform
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

from ..caching import trust
from ..caching.atomic import write_bytes
from ..caching.code_version import code_fingerprint
from ..caching.sqlite_cache import default_cache_dir, reuse_enabled

log = logging.getLogger(__name__)
FOLDER = "timings"
FORMAT = 1


def processor() -> str:
    """The processor's model name (``/proc/cpuinfo``), else what ``platform`` says."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine() -> dict[str, Any]:
    """What identifies the machine a timing was taken on."""
    return {"host": platform.node(), "processor": processor(), "cores": os.cpu_count(), "system": platform.system()}


def machine_label(where: dict[str, Any]) -> str:
    return f"{where['host']} ({where['processor']}, {where['cores']} cores)"


@dataclasses.dataclass
class Measured:
    """``value`` as measured at ``when`` (UTC) on ``where`` (``machine()``); ``reused``: by an earlier run."""
    value: Any
    when: str
    where: dict
    reused: bool

    def label(self) -> str:
        """When and where the numbers were measured, and whether this run reused them."""
        if self.reused:
            return (f"timings measured {self.when} on {machine_label(self.where)} by an earlier run of the same code "
                    f"with the same parameters, reused here (timings=\"measure\" or RAG_LAB_REUSE=0 times again)")
        return f"timings measured {self.when} on {machine_label(self.where)} by this run"


CHOICES = ("reuse", "measure")


def reuse_choice(timings: str) -> bool:
    """Notebook 11's ``timings`` parameter: ``"reuse"`` -> True, ``"measure"`` -> False."""
    if timings not in CHOICES:
        raise ValueError(f"timings must be one of {CHOICES} (reuse a kept measurement of this code and machine, or "
                         f"measure again), got {timings!r}")
    return timings == "reuse"


def entry_key(what: str, parameters: dict[str, Any], documents: Sequence | None = None) -> str:
    """sha256 (24 hex digits) over what is measured, its parameters, the documents measured on (their
    fingerprint: a downloaded data set changes under the same name), the code, packages, Python and machine."""
    from ..evaluation.index_store import dataset_fingerprint
    from ..evaluation.provenance import package_versions

    parts = {"format": FORMAT, "what": what, "parameters": parameters, "code": code_fingerprint(),
             "documents": None if documents is None else dataset_fingerprint(documents),
             "packages": package_versions(), "python": "%d.%d.%d" % sys.version_info[:3], "machine": machine()}
    text = json.dumps(parts, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


def _signed(key: str, header: dict, payload: bytes) -> tuple[str, ...]:
    """What the signature covers: the entry's key, its header (but the signature) and the payload's sha256."""
    fields = json.dumps({k: v for k, v in header.items() if k != "signature"}, sort_keys=True)
    return "timings", key, fields, hashlib.sha256(payload).hexdigest()


def _read(path: Path, key: str) -> Measured | None:
    """The kept entry, or None when there is none or it fails the signature check (logged)."""
    if not path.exists():
        return None
    trust.check_private([path], "the timing store")
    head, _, payload = path.read_bytes().partition(b"\n")
    try:
        header = json.loads(head)
        trusted = isinstance(header, dict) and trust.verify(header.get("signature"), *_signed(key, header, payload))
    except ValueError:
        trusted = False
    if not trusted:
        log.warning("%s: the kept timings were not written by your rag_lab (signature check failed); measuring again",
                    path)
        return None
    return Measured(pickle.loads(payload), header["when"], header["where"], reused=True)


def measured_or_reused(what: str, parameters: dict[str, Any], measure: Callable[[], Any], reuse: bool = True,
                       cache_dir: str | os.PathLike | None = None, documents: Sequence | None = None) -> Measured:
    """``measure()``'s value, or the value an earlier run kept for the same ``what``, ``parameters``,
    ``documents``, code and machine (module docstring). ``reuse=False`` or ``RAG_LAB_REUSE=0``: always
    measured, and kept."""
    if not isinstance(what, str) or not what:
        raise ValueError(f"measured_or_reused: expected a non-empty name of what is measured, got {what!r}")
    folder = trust.private_folder(Path(cache_dir or default_cache_dir()) / FOLDER, "the timing store")
    key = entry_key(what, parameters, documents)
    path = folder / f"{key}.bin"
    if reuse and reuse_enabled():
        kept = _read(path, key)
        if kept is not None:
            return kept
    value = measure()
    payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    header = {"what": what, "when": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "where": machine()}
    header["signature"] = trust.sign(*_signed(key, header, payload))
    write_bytes(path, json.dumps(header, sort_keys=True).encode("utf-8") + b"\n" + payload)
    return Measured(value, header["when"], header["where"], reused=False)
