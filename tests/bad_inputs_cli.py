"""Rows of the bad-input table about the machine rather than the data: caches other users can write, a planted
pickle, folders you cannot write, full disks, secrets in failing requests, a download host override. Each row
runs the real entry point (the command line where a user would meet it) and returns what a user sees; the
table (docs/bad_inputs.md) is rendered from these observations by tests/bad_inputs.py.

Rows that need a folder the process cannot write run the command in a child process without the power to
ignore file permissions: as root through `setpriv` (capabilities dropped), otherwise as the user it is."""
from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

from rag_lab.core.environment import environment

ROOT = Path(__file__).resolve().parents[1]
DOCS = [{"id": "genoa", "title": "Pesto", "text": "Pesto comes from Genoa."},
        {"id": "naples", "title": "Pizza", "text": "Pizza is baked in Naples."}]


def _env(**values):
    """The variables set (as text) inside the block, restored after it."""
    return environment({k: str(v) for k, v in values.items()})


def _main(argv, printed: io.StringIO | None = None) -> tuple[int, str]:
    """Run the command line in this process: (exit code, its stderr lines that start with 'error:'); all it
    printed goes to ``printed`` (progress lines are not part of the row)."""
    from rag_lab.cli import main

    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        code = main(argv)
    if printed is not None:
        printed.write(out.getvalue() + err.getvalue())
    return code, "\n".join(line for line in err.getvalue().splitlines() if line.startswith("error:"))


def _child(argv, env) -> tuple[int, str]:
    """Run the command line in a child process that file permissions bind (see the module docstring)."""
    drop = ["setpriv", "--inh-caps=-all", "--bounding-set=-all"] if os.geteuid() == 0 else []
    if drop and shutil.which("setpriv") is None:
        raise RuntimeError("running as root without setpriv: cannot make a folder unwritable for the row")
    done = subprocess.run([*drop, sys.executable, "-m", "rag_lab", *argv], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **env}, timeout=120)
    return done.returncode, "\n".join(line for line in done.stderr.splitlines() if line.startswith("error:"))


def _dataset(folder: Path) -> Path:
    data = folder / "data"
    data.mkdir()
    (data / "documents.jsonl").write_text("".join(json.dumps(d) + "\n" for d in DOCS), encoding="utf-8")
    (data / "questions.jsonl").write_text(json.dumps({"id": "q1", "question": "Where is pesto from?",
                                                      "gold_doc_ids": ["genoa"]}) + "\n", encoding="utf-8")
    return data


def _mirror():
    sys.path.insert(0, str(ROOT / "tests"))
    from download_server import MirrorServer
    return MirrorServer()


def unsafe_cache_folder(folder):
    cache = folder / "cache"
    cache.mkdir()
    os.chmod(cache, 0o777)
    # in a fresh process: which cache meets the folder first must not depend on what this process opened before
    code, err = _child(["eval", "--data", str(_dataset(folder)), "--methods", "naive", "--k", "1"],
                       {"RAG_LAB_CACHE": str(cache), "RAG_LAB_REUSE": "1"})
    return f"exit {code}, {err}"


def unknown_notebook_parameter(folder):
    code, err = _main(["run", "01_sketch", "-p", "limt", "5", "--runs-dir", str(folder / "runs")])
    return f"exit {code}, {err}; run folder made: {(folder / 'runs').exists()}"


def unknown_family_column(folder):
    with _env(RAG_LAB_CACHE=folder / "cache"):
        code, err = _main(["eval", "--data", str(_dataset(folder)), "--methods", "naive,semantic", "--baseline", "naive",
                           "--family", "doc_mrrr@5,doc_mrr@7"])
    return f"exit {code}, {err}; index built: {(folder / 'cache' / 'indexes').exists()}"


class _Planted:
    def __init__(self, proof):
        self.proof = proof

    def __reduce__(self):
        return os.system, (f"touch {self.proof}",)


def planted_pickle(folder):
    from rag_lab.caching.trust import forget_keys
    from rag_lab.evaluation.index_store import IndexStore

    with _env(RAG_LAB_CONFIG=folder / "config"):
        forget_keys()
        store, key = IndexStore(folder / "cache" / "indexes"), "0123456789abcdef01234567"
        entry = store.save("naive", key, pickle.dumps({"state": {}}), {})
        evil = pickle.dumps(_Planted(folder / "the-command-ran"))
        (entry / "state.pkl").write_bytes(evil)                 # and its checksum rewritten to match
        marker = json.loads((entry / "COMPLETE").read_text())
        (entry / "COMPLETE").write_text(json.dumps({**marker, "sha256": hashlib.sha256(evil).hexdigest()}))
        loaded = store.load("naive", key)
        forget_keys()
    return (f"not unpickled (the store returned {loaded!r}, so the index is built again); the planted command ran: "
            f"{(folder / 'the-command-ran').exists()}")


def unwritable_download_folder(folder):
    target = folder / "readonly"
    target.mkdir()
    os.chmod(target, 0o555)
    try:
        code, err = _child(["download", "pubmedqa", "--dest", str(target), "--no-progress"], {})
    finally:
        os.chmod(target, 0o700)
    return f"exit {code}, {err}"


def unwritable_cache_file(folder):
    import time

    from rag_lab.reasoning.llm_cache import CachedReply, LLMCache

    cache = folder / "cache"
    llm = LLMCache(cache)
    llm.put("k", "m", CachedReply("an old reply", 1, 1))
    llm.store.write(lambda db: db.execute("UPDATE replies SET created=?", (time.time() - 90 * 86400,)))
    llm.close()
    os.chmod(cache / "llm.sqlite", 0o444)
    os.chmod(cache, 0o555)
    try:
        code, err = _child(["cache", "prune", "--older-than", "30"], {"RAG_LAB_CACHE": str(cache)})
    finally:
        os.chmod(cache, 0o700)
        os.chmod(cache / "llm.sqlite", 0o644)
    return f"exit {code}, {err}"


def cache_cannot_grow(folder):
    from rag_lab.reasoning.llm_cache import CachedReply, LLMCache

    llm = LLMCache(folder)
    pages = llm.store.run(lambda db: db.execute("PRAGMA page_count").fetchone()[0])
    llm.store.run(lambda db: db.execute(f"PRAGMA max_page_count = {pages + 2}"))   # room for a few rows only
    stored, error = 0, None
    try:
        for i in range(100):
            llm.put(f"k{i}", "m", CachedReply("r" * 1500, 1, 1))
            stored += 1
    except RuntimeError as e:
        error = f"{type(e).__name__}: {e}"
    readable = sum(llm.get(f"k{i}") is not None for i in range(stored + 1))
    llm.close()
    return f"rows written before it was full, all still readable: {readable} of {stored}\n{error}"


def download_disk_full(folder):
    server = _mirror()
    try:
        (folder / "data" / "pubmedqa").mkdir(parents=True)
        (folder / "data" / "pubmedqa" / "ori_pqal.json.part").symlink_to("/dev/full")   # writes fail: ENOSPC
        code, err = _main(["download", "pubmedqa", "--dest", str(folder / "data"), "--base-url", server.url,
                           "--retries", "3", "--no-progress"])
        sent = len(server.requests)
    finally:
        server.stop()
    return f"requests sent: {sent} (a full disk is not retried as a network fault)\nexit {code}, {err}"


def ncbi_key_in_failing_request(folder):
    server = _mirror()
    server.faults["/entrez/eutils/efetch.fcgi"] = ["500"] * 2
    key, email = "ncbi-secret-key-0123", "someone@example.org"
    out = io.StringIO()
    try:
        with _env(NCBI_API_KEY=key, NCBI_EMAIL=email):
            code, err = _main(["download", "pmc_oa", "--ids", "PMC9000001", "--dest", str(folder / "data"),
                               "--base-url", server.url, "--retries", "1", "--no-progress"], printed=out)
    finally:
        server.stop()
    manifest = (folder / "data" / "pmc_oa" / "manifest.json").read_text()
    error = json.loads(manifest)["failed"]["PMC9000001"]["error"].split(" Offline,")[0]
    leaked = any(s in manifest + out.getvalue() + err for s in (key, email))
    return (f"exit {code}; manifest.json 'failed': {error}\n"
            f"the key or the e-mail address printed or stored anywhere: {leaked}")


def base_url_override(folder):
    server = _mirror()
    try:
        with _env(RAG_LAB_DOWNLOAD_BASE_URL=server.url):
            code, _ = _main(["download", "pubmedqa", "--dest", str(folder / "data"), "--no-progress"])
    finally:
        server.stop()
    return f"exit {code}; checksums.json written: {(folder / 'data' / 'checksums.json').exists()}"


# (id, input, handling, run, what the observed output must contain)
CLI_CASES = [
    ("cache-others-can-write", "`RAG_LAB_CACHE` a folder every user can write (`rag_lab eval`)", "error",
     unsafe_cache_folder, ["exit 2", "cache folder <folder>/cache is writable by every user", "chmod go-w"]),
    ("planted-pickle", "an index entry whose pickle was replaced and its checksum rewritten to match", "handled",
     planted_pickle, ["signature does not match your cache key", "not unpickled", "command ran: False"]),
    ("unwritable-download-folder", "`download --dest` a folder you cannot write", "error",
     unwritable_download_folder, ["exit 2", "permission denied: <folder>/readonly/pubmedqa"]),
    ("unwritable-cache-file", "a cache file and folder you cannot write (`rag_lab cache prune --older-than 30`)",
     "error", unwritable_cache_file, ["exit 2", "<folder>/cache/llm.sqlite", "RAG_LAB_CACHE"]),
    ("cache-disk-full", "a cache file that cannot grow: SQLite reports the disk full (made with `PRAGMA "
                        "max_page_count`)", "error", cache_cannot_grow,
     ["CacheFileError", "<folder>/llm.sqlite", "disk is full", "free space"]),
    ("download-disk-full", "the disk fills up during a download (the `.part` file is `/dev/full`)", "error",
     download_disk_full, ["exit 2", "No space left on device while writing the download", "requests sent: 1 "]),
    ("ncbi-key-in-error", "`NCBI_API_KEY` and `NCBI_EMAIL` set, and efetch answers HTTP 500", "handled",
     ncbi_key_in_failing_request, ["api_key=REDACTED", "email=REDACTED", "printed or stored anywhere: False"]),
    ("unknown-notebook-parameter", "a misspelled notebook parameter (`rag_lab run 01_sketch -p limt 5`)", "error",
     unknown_notebook_parameter, ["exit 2", "unknown parameter 'limt'", "did you mean 'limit'", "run folder made: False"]),
    ("unknown-family-column", "`eval --family` naming columns the run does not produce (`doc_mrrr@5`, `doc_mrr@7`)",
     "error", unknown_family_column, ["exit 2", "'doc_mrrr@5' (did you mean 'doc_mrr@5'", "'doc_mrr@7'",
                                      "index built: False"]),
    ("base-url-override", "`RAG_LAB_DOWNLOAD_BASE_URL` set (a plain-http mirror)", "handled", base_url_override,
     ["instead of the official hosts over plain http", "checksums.json written: False"]),
]
