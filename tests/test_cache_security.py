"""Cached indexes are pickles, and unpickling runs code: rag_lab unpickles only what this user's rag_lab
wrote (rag_lab/caching/trust.py). A cache folder other users can write is refused with the fix; an entry
whose pickle was replaced (its checksum updated to match) is never unpickled and is rebuilt; the signing
key must be private; the in-process copies are bounded."""
from __future__ import annotations

import hashlib
import json
import os
import pickle
import stat

import pytest

from rag_lab.caching import trust
from rag_lab.cli import main
from rag_lab.evaluation import index_store

DOCS = [{"id": "genoa", "title": "Pesto", "text": "Pesto comes from Genoa. It is made with basil and pine nuts."},
        {"id": "naples", "title": "Pizza", "text": "Pizza is baked in Naples in a wood-fired oven."}]
QUESTIONS = [{"id": "q1", "question": "Where does pesto come from?", "gold_doc_ids": ["genoa"]}]


class RunsAShellCommand:
    """A pickle that runs a shell command when it is loaded (what an attacker would plant)."""

    def __init__(self, proof):
        self.proof = proof

    def __reduce__(self):
        return os.system, (f"touch {self.proof}",)


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    """RAG_LAB_CACHE in a fresh folder, reuse on, a small dataset folder, nothing in memory."""
    root = tmp_path / "cache"
    root.mkdir(mode=0o700)
    monkeypatch.setenv("RAG_LAB_CACHE", str(root))
    monkeypatch.setenv("RAG_LAB_REUSE", "1")
    monkeypatch.setattr(index_store, "default_root", lambda: root / "indexes")
    data = tmp_path / "data"
    data.mkdir()
    (data / "documents.jsonl").write_text("".join(json.dumps(d) + "\n" for d in DOCS), encoding="utf-8")
    (data / "questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS), encoding="utf-8")
    index_store.clear_memo()
    yield root, data
    index_store.clear_memo()


def eval_naive(data) -> int:
    return main(["eval", "--data", str(data), "--methods", "naive", "--k", "1"])


def test_a_planted_pickle_never_runs_and_the_entry_is_rebuilt(cache, tmp_path, capsys, caplog):
    root, data = cache
    assert eval_naive(data) == 0
    [entry] = [p for p in (root / "indexes" / "naive").iterdir() if not p.name.startswith(".")]
    marker = json.loads((entry / "COMPLETE").read_text())
    # the attacker replaces the state and rewrites its checksum the same way; the signature they cannot make
    proof = tmp_path / "the-planted-command-ran"
    evil = pickle.dumps(RunsAShellCommand(proof))
    (entry / "state.pkl").write_bytes(evil)
    marker["sha256"] = hashlib.sha256(evil).hexdigest()
    (entry / "COMPLETE").write_text(json.dumps(marker))
    index_store.clear_memo()
    with caplog.at_level("WARNING", logger="rag_lab.evaluation.index_store"):
        assert eval_naive(data) == 0
    assert not proof.exists(), "the planted pickle was loaded"
    warned = [r.getMessage() for r in caplog.records if "signature does not match" in r.getMessage()]
    assert warned and str(entry) in warned[0] and "building the index again" in warned[0]
    # rebuilt and signed again: the next run reuses it
    rebuilt = json.loads((entry / "COMPLETE").read_text())
    assert rebuilt["sha256"] == hashlib.sha256((entry / "state.pkl").read_bytes()).hexdigest() != marker["sha256"]
    assert trust.verify(rebuilt["hmac"], *index_store.IndexStore._signed("naive", entry.name, rebuilt["sha256"]))
    index_store.clear_memo()
    with caplog.at_level("INFO", logger="rag_lab.evaluation.index_store"):
        assert eval_naive(data) == 0
    assert f"naive: reused its index ({entry})" in caplog.text


def test_a_cache_folder_others_can_write_is_refused_with_the_fix(cache, tmp_path, capsys):
    root, data = cache
    assert eval_naive(data) == 0
    [entry] = [p for p in (root / "indexes" / "naive").iterdir() if not p.name.startswith(".")]
    proof = tmp_path / "the-planted-command-ran"
    (entry / "state.pkl").write_bytes(pickle.dumps(RunsAShellCommand(proof)))
    index_store.clear_memo()
    capsys.readouterr()
    os.chmod(root, 0o777)                     # a shared disk's folder, writable by everyone
    assert eval_naive(data) == 2
    err = capsys.readouterr().err
    assert f"cache folder {root} is writable by every user (mode 0777)" in err
    assert f"chmod go-w {root}" in err and "RAG_LAB_CACHE" in err and not proof.exists()
    os.chmod(root, 0o700)
    if os.geteuid() == 0:                     # group-writable, and the group is not the user's own
        (root / "indexes").chmod(0o770)
        os.chown(root / "indexes", -1, 65534)
        assert eval_naive(data) == 2
        assert f"cache folder {root / 'indexes'} is writable by the group" in capsys.readouterr().err


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a folder to another user needs root")
def test_a_cache_folder_owned_by_someone_else_is_refused(cache, capsys):
    root, data = cache
    os.chown(root, 65534, -1)
    assert eval_naive(data) == 2
    err = capsys.readouterr().err
    assert f"cache folder {root} is owned by" in err and "not by you" in err


def test_the_signing_key_is_made_private_and_refused_when_it_is_not(tmp_path, monkeypatch):
    monkeypatch.setenv("RAG_LAB_CONFIG", str(tmp_path / "config"))
    trust.forget_keys()
    try:
        first = trust.sign("a", "b")
        key_file = tmp_path / "config" / "cache.key"
        assert stat.S_IMODE(key_file.stat().st_mode) == 0o600 and len(bytes.fromhex(key_file.read_text())) == 32
        assert trust.verify(first, "a", "b") and not trust.verify(first, "a", "c") and not trust.verify(None, "a")
        trust.forget_keys()
        assert trust.sign("a", "b") == first                      # the same key read back
        key_file.chmod(0o644)
        trust.forget_keys()
        with pytest.raises(trust.UnsafeCacheError, match=r"cache\.key is readable or writable by other users .*"
                                                         r"chmod 600"):
            trust.sign("a", "b")
    finally:
        trust.forget_keys()


def test_the_in_process_copies_are_bounded(monkeypatch):
    monkeypatch.setenv(index_store.MEMO_ENV, str(2.5 / 1024))   # 2.5 kB
    index_store.clear_memo()
    try:
        for key in "abc":
            index_store._memo_put(key, key.encode() * 1024)       # 1 kB each: the oldest goes
        assert list(index_store._MEMO) == ["b", "c"]
        assert index_store._memo_get("b") == b"b" * 1024          # used: now the newest
        index_store._memo_put("d", b"d" * 1024)
        assert list(index_store._MEMO) == ["b", "d"]
        index_store._memo_put("huge", b"x" * 4096)                # over the whole budget: not kept
        assert "huge" not in index_store._MEMO
        monkeypatch.setenv(index_store.MEMO_ENV, "lots")
        with pytest.raises(ValueError, match="RAG_LAB_INDEX_MEMO_MB must be a number of megabytes"):
            index_store.memo_budget()
    finally:
        index_store.clear_memo()
