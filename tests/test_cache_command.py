"""`python -m rag_lab cache`: info (entries and size of each kind), prune (index entries the current code cannot
look up, leftovers of killed saves, damaged files moved aside; --older-than: unused entries too; --dry-run
lists), clear --kind. Run on a cache made the way a run makes it (rag_lab eval with reuse on)."""
from __future__ import annotations

import json
import os
import shutil
import sqlite3
import time

import pytest

from rag_lab.cli import main
from rag_lab.evaluation import index_store
from rag_lab.reasoning.llm_cache import CachedReply, LLMCache

DOCS = [{"id": "genoa", "title": "Pesto", "text": "Pesto comes from Genoa. It is made with basil and pine nuts."},
        {"id": "naples", "title": "Pizza", "text": "Pizza is baked in Naples in a wood-fired oven."}]


@pytest.fixture()
def used_cache(tmp_path, monkeypatch):
    """A cache folder after one `rag_lab eval` with reuse on, plus what time and killed runs leave behind."""
    root = tmp_path / "cache"
    root.mkdir(mode=0o700)
    monkeypatch.setenv("RAG_LAB_CACHE", str(root))
    monkeypatch.setenv("RAG_LAB_REUSE", "1")
    monkeypatch.delenv("RAG_LAB_DATA", raising=False)
    monkeypatch.setattr(index_store, "default_root", lambda: root / "indexes")
    data = tmp_path / "data"
    data.mkdir()
    (data / "documents.jsonl").write_text("".join(json.dumps(d) + "\n" for d in DOCS), encoding="utf-8")
    (data / "questions.jsonl").write_text(json.dumps({"id": "q1", "question": "Where does pesto come from?",
                                                      "gold_doc_ids": ["genoa"]}) + "\n", encoding="utf-8")
    index_store.clear_memo()
    assert main(["eval", "--data", str(data), "--methods", "naive", "--k", "1"]) == 0
    [current] = [p for p in (root / "indexes" / "naive").iterdir() if p.is_dir()]   # not the build lock file
    stale = current.with_name("0" * 24)                     # what an older version of the code built
    shutil.copytree(current, stale)
    meta = json.loads((stale / "meta.json").read_text())
    (stale / "meta.json").write_text(json.dumps({**meta, "code": "0" * 16}))
    killed = root / "indexes" / "naive" / f".tmp-{'1' * 24}-999999999-abcdef12"    # no such process
    killed.mkdir()
    (killed / "state.pkl").write_bytes(b"x" * 1000)
    half = root / "token_embeddings" / ".abc.x1y2z3.tmp.npz"
    half.parent.mkdir()
    half.write_bytes(b"y" * 500)
    os.utime(half, (time.time() - 7200, time.time() - 7200))   # two hours old: its writer is gone
    moved = root / "embeddings.sqlite.corrupt-20260101-000000-1"
    moved.write_bytes(b"z" * 300)
    llm = LLMCache(root)
    llm.put("old", "m", CachedReply("a reply from long ago", 1, 1))
    llm.put("new", "m", CachedReply("a reply from today", 1, 1))
    llm.store.write(lambda db: db.execute("UPDATE replies SET created=? WHERE key='old'", (time.time() - 40 * 86400,)))
    llm.close()
    index_store.clear_memo()
    yield root, data, {"current": current, "stale": stale, "killed": killed, "half": half, "moved": moved}
    index_store.clear_memo()


def test_info_lists_each_kind_and_what_prune_would_free(used_cache, capsys):
    root, _, _ = used_cache
    assert main(["cache", "info"]) == 0
    out = capsys.readouterr().out
    rows = {line.split()[0]: line.split()[1] for line in out.splitlines()[2:] if line and not line.startswith("`")}
    assert rows["indexes"] == "2" and rows["llm"] == "2"
    assert f"rag_lab cache: {root}" in out and "built indexes" in out
    assert "`python -m rag_lab cache prune` would remove 4 item(s)" in out


def test_prune_dry_run_lists_and_removes_nothing_then_prune_removes(used_cache, capsys, caplog):
    root, data, paths = used_cache
    assert main(["cache", "prune", "--dry-run"]) == 0
    out = capsys.readouterr().out
    for name in ("stale", "killed", "half", "moved"):
        assert str(paths[name]) in out and paths[name].exists()
    assert str(paths["current"]) not in out and "4 item(s)" in out and "nothing removed (--dry-run)" in out
    assert "built by other code or package versions" in out and "killed" in out
    assert main(["cache", "prune"]) == 0
    assert "removed 4 item(s)" in capsys.readouterr().out
    assert not any(paths[n].exists() for n in ("stale", "killed", "half", "moved")) and paths["current"].exists()
    with caplog.at_level("INFO", logger="rag_lab.evaluation.index_store"):   # the kept entry is still reused
        assert main(["eval", "--data", str(data), "--methods", "naive", "--k", "1"]) == 0
    assert f"naive: reused its index ({paths['current']})" in caplog.text
    assert main(["cache", "prune", "--dry-run"]) == 0 and "0 item(s)" in capsys.readouterr().out


def test_prune_older_than_removes_unused_entries_and_old_rows(used_cache, capsys):
    root, _, paths = used_cache
    old = time.time() - 60 * 86400
    os.utime(paths["current"] / "COMPLETE", (old, old))       # last used two months ago
    assert main(["cache", "prune", "--older-than", "30", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert f"{paths['current']}" in out and "not used for 60 days" in out
    assert "1 of 2 entries written more than 30 days ago" in out
    assert main(["cache", "prune", "--older-than", "30"]) == 0
    rows = sqlite3.connect(root / "llm.sqlite").execute("SELECT key FROM replies").fetchall()
    assert rows == [("new",)] and not paths["current"].exists()
    assert main(["cache", "prune", "--older-than", "-1"]) == 2


def test_clear_a_kind(used_cache, capsys):
    root, _, paths = used_cache
    assert main(["cache", "clear", "--kind", "llm", "--kind", "indexes"]) == 0
    assert not (root / "llm.sqlite").exists() and not (root / "indexes").exists()
    assert paths["moved"].exists() and paths["half"].exists()          # other kinds untouched
    assert main(["cache", "clear", "--kind", "everything"]) == 2
    assert "unknown cache kind 'everything'; kinds: embeddings, llm" in capsys.readouterr().err
