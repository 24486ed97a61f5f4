"""The offline reasoner's persistent result cache (rag_lab/reasoning/offline_cache.py): a second
reasoner replays every job without computing it, with the same result and usage; the key changes
with the reasoner's knobs; a damaged row is rejected with a warning and computed again."""
from __future__ import annotations

import logging
import sqlite3

import pytest

from rag_lab.reasoning import offline as offline_module
from rag_lab.reasoning.offline import OfflineReasoner
from rag_lab.reasoning.offline_cache import FILENAME, OfflineResultCache

TEXT = ("Parmigiano Reggiano is a hard cheese from northern Italy. Dairies in Parma make the cheese from raw milk. "
        "The consortium protects the name and sells the wheels worldwide.")
QUESTION = "Where is Parmigiano Reggiano made?"
JOBS = [("entities", (TEXT,)), ("triples", (TEXT,)), ("query_entities", (QUESTION,)), ("themes", (TEXT, 3)),
        ("answer", (QUESTION, [TEXT])), ("summarize", ([TEXT], 20))]


@pytest.fixture()
def reuse_on(monkeypatch):
    monkeypatch.setenv("RAG_LAB_REUSE", "1")


def no_work(monkeypatch):
    """Make every computing path fail: a replayed job must not reach spaCy or the encoder."""
    def boom(*a, **k):
        raise AssertionError("computed instead of replayed")
    monkeypatch.setattr(offline_module, "parse", boom)
    monkeypatch.setattr(OfflineReasoner, "_embed", boom)
    monkeypatch.setattr(OfflineReasoner, "_sentences", boom)


def test_every_job_replays_with_its_usage(reuse_on, tmp_path, embedder, monkeypatch):
    first = OfflineReasoner(embedder=embedder, cache=tmp_path)
    results = {job: getattr(first, job)(*args) for job, args in JOBS}
    assert len(OfflineResultCache(tmp_path)) == len(JOBS)
    no_work(monkeypatch)
    second = OfflineReasoner(embedder=embedder, cache=tmp_path)
    assert {job: getattr(second, job)(*args) for job, args in JOBS} == results
    for job, _ in JOBS:   # embedding tokens as the original call counted them (themes, answer, summarize > 0)
        assert second.usage.per_job[job].embedding_tokens == first.usage.per_job[job].embedding_tokens
    assert first.usage.per_job["themes"].embedding_tokens > 0


def test_knobs_and_switch_change_what_is_replayed(reuse_on, tmp_path, embedder, monkeypatch):
    OfflineReasoner(embedder=embedder, cache=tmp_path).answer(QUESTION, [TEXT])
    other = OfflineReasoner(embedder=embedder, cache=tmp_path, answer_words=5)
    assert other.fingerprint() != OfflineReasoner(embedder=embedder).fingerprint()
    other.answer(QUESTION, [TEXT])                  # another fingerprint: computed and stored beside
    assert len(OfflineResultCache(tmp_path)) == 2
    monkeypatch.setenv("RAG_LAB_REUSE", "0")
    assert OfflineReasoner(embedder=embedder, cache=tmp_path).result_cache is None
    assert OfflineReasoner(embedder=embedder, cache=False).result_cache is None


def test_damaged_row_is_rejected_and_recomputed(reuse_on, tmp_path, embedder, monkeypatch, caplog):
    expected = OfflineReasoner(embedder=embedder, cache=tmp_path).entities(TEXT)
    with sqlite3.connect(tmp_path / FILENAME) as db:
        db.execute("UPDATE results SET value = '[[\"only a name\"]]'")   # an entity row missing two fields
    with caplog.at_level(logging.WARNING, logger="rag_lab.reasoning.offline_cache"):
        again = OfflineReasoner(embedder=embedder, cache=tmp_path).entities(TEXT)
    assert again == expected
    assert any("moved to its 'rejected' table" in r.getMessage() for r in caplog.records)
    with sqlite3.connect(tmp_path / FILENAME) as db:
        assert db.execute("SELECT COUNT(*) FROM rejected").fetchone()[0] == 1
        assert db.execute("SELECT COUNT(*) FROM results").fetchone()[0] == 1   # the recomputed result


def test_malformed_result_is_never_stored(tmp_path):
    with pytest.raises(ValueError, match="malformed"):
        OfflineResultCache(tmp_path).put("k", "themes", ["ok", 3], 0)
