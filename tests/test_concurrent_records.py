"""Two `download` runs at once keep both runs' records: checksums.json and a pmc_oa manifest.json are merged
under a lock (rag_lab/caching/locked_json.py) instead of each run writing back its own copy."""
from __future__ import annotations

import json
import multiprocessing

from download_server import MirrorServer

from rag_lab.caching.locked_json import update
from rag_lab.datasets.cache import ChecksumStore


def _record_many(root: str, worker: int, n: int) -> None:
    store = ChecksumStore(root)
    for i in range(n):
        store.record(f"https://example.org/{worker}/{i}", f"{worker:02d}{i:062d}", i, f"f{i}")


def test_two_processes_recording_checksums_lose_nothing(tmp_path):
    ctx = multiprocessing.get_context("spawn")   # a fork copies locks other threads of this worker may hold
    workers = [ctx.Process(target=_record_many, args=(str(tmp_path), w, 40)) for w in range(3)]
    for p in workers:
        p.start()
    for p in workers:
        p.join(60)
        assert p.exitcode == 0
    entries = json.loads((tmp_path / "checksums.json").read_text())
    assert len(entries) == 3 * 40
    assert entries["https://example.org/2/39"]["sha256"] == f"02{39:062d}"


def _fetch(url: str, root: str, ids: list[str]) -> None:
    from rag_lab.datasets.download import download
    from rag_lab.datasets.transport import RateLimiter, Transport

    download("pmc_oa", dest=root, ids=ids, transport=Transport(url, retries=0, progress=False),
             limiter=RateLimiter(0), log=lambda *a: None)


def test_two_pmc_downloads_into_one_folder_keep_every_licence_record(tmp_path):
    server = MirrorServer()
    try:
        ctx = multiprocessing.get_context("spawn")   # a fork copies locks other threads of this worker may hold
        runs = [ctx.Process(target=_fetch, args=(server.url, str(tmp_path), ids))
                for ids in (["PMC9000001", "PMC9000003"], ["PMC9000002", "PMC9000004"])]
        for p in runs:
            p.start()
        for p in runs:
            p.join(60)
            assert p.exitcode == 0
    finally:
        server.stop()
    manifest = json.loads((tmp_path / "pmc_oa" / "manifest.json").read_text())
    assert sorted(manifest["articles"]) == ["PMC9000001", "PMC9000002", "PMC9000004"]
    assert list(manifest["skipped"]) == ["PMC9000003"]


def test_update_returns_what_was_written_and_names_a_broken_file(tmp_path):
    path = tmp_path / "r.json"
    written, result = update(path, lambda d: d.setdefault("a", 1), "delete it")
    assert written == {"a": 1} and result == 1 and json.loads(path.read_text()) == {"a": 1}
    path.write_text("[1, 2]")
    import pytest
    with pytest.raises(ValueError, match=r"r.json: expected a JSON object, got list; delete it"):
        update(path, lambda d: None, "delete it")
