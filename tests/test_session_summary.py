"""The session summary's count of index builds (tests/conftest.py): entries kept in a store that no test
process logged building were built by a notebook kernel or a subprocess, and count as builds too."""
from __future__ import annotations

import tempfile
from pathlib import Path

from conftest import kept_elsewhere


def _entry(store: Path, method: str, key: str) -> None:
    folder = store / "indexes" / method / key
    folder.mkdir(parents=True)
    (folder / "COMPLETE").write_text("sha256 signature")


def test_entries_no_test_process_logged_are_the_kernels_builds():
    # a folder outside the session's base temp, which the summary scans: these made-up entries are no build
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        a, b = root / "session-cache", root / "notebook-runs" / "01" / "cache"
        _entry(a, "naive", "k1")          # built in a test process (logged below)
        _entry(a, "sketch", "k2")         # built by a kernel in the session store
        _entry(b, "naive", "k1")          # the same index again, by a kernel in a run's own cache
        (a / "indexes" / "naive" / ".k3.tmp").mkdir()                    # a half-written entry: no marker, no build
        logged = [{"method": "naive", "key": "k1", "store": str(a / "indexes"), "worker": "gw0"},
                  {"method": "bm25", "key": None, "store": None, "worker": "gw1"}]  # reuse off: no entry
        found = kept_elsewhere([root, a], logged)          # roots that overlap: each entry once
        assert sorted((d["key"], d["method"], d["store"]) for d in found) == [
            ("k1", "naive", str((b / "indexes").resolve())), ("k2", "sketch", str((a / "indexes").resolve()))]
