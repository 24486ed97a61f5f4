"""Answer scores kept in SQLite (rag_lab.caching.metric_cache): a rerun replays them without ragas."""
import math

import pytest

from rag_lab.evaluation import answer_metrics
from rag_lab.evaluation.answer_metrics import AnswerSample, ragas_scores
from rag_lab.caching.metric_cache import ScoreCache, score_key

SAMPLES = [
    AnswerSample("Where is the basil from?", "Basil comes from Liguria.", ["Basil grows in Liguria."],
                 reference="Liguria.", reference_contexts=["Basil grows in Liguria."],
                 context_ids=["c1", "c2"], reference_context_ids=["c1"]),
    AnswerSample("What is risotto?", "A rice dish.", ["Risotto is rice cooked in broth."],
                 context_ids=["c3"], reference_context_ids=["c3"]),
]


@pytest.fixture
def reuse_on(tmp_path, monkeypatch):
    monkeypatch.setenv("RAG_LAB_REUSE", "1")
    monkeypatch.setenv("RAG_LAB_CACHE", str(tmp_path))
    return tmp_path


def test_second_scoring_replays_the_cache_without_ragas(reuse_on, monkeypatch):
    first = ragas_scores(SAMPLES)
    # by hand: 2 retrieved ids, 1 relevant -> ID precision 1/2 and recall 1/1; then 1 of 1 -> 1 and 1
    assert first["id_context_precision"] == [0.5, 1.0] and first["id_context_recall"] == [1.0, 1.0]
    assert first["rouge_l"][1] is None and 0 < first["rouge_l"][0] <= 1      # no reference answer: None
    assert len(ScoreCache(reuse_on)) == 3 * 1 + 2 * 1 + 2 * 2                # rouge/bleu/similarity, 2 context, 2 ID

    def no_ragas(*a, **k):
        raise AssertionError("ragas ran although every score was cached")
    monkeypatch.setattr(answer_metrics, "_run_ragas", no_ragas)
    assert ragas_scores(SAMPLES) == first


def test_a_new_sample_alone_is_scored(reuse_on, monkeypatch):
    ragas_scores(SAMPLES[:1])
    seen = []
    real = answer_metrics._run_ragas
    monkeypatch.setattr(answer_metrics, "_run_ragas", lambda s, *a, **k: seen.append(len(s)) or real(s, *a, **k))
    both = ragas_scores(SAMPLES)
    assert seen == [1]                 # the ID family, for the second sample only; the rest replayed
    assert both["id_context_precision"] == [0.5, 1.0]


def test_reuse_off_keeps_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("RAG_LAB_REUSE", "0")
    monkeypatch.setenv("RAG_LAB_CACHE", str(tmp_path))
    ragas_scores(SAMPLES)
    assert not (tmp_path / "answer_scores.sqlite").exists()


def test_nan_is_not_stored_and_a_bad_entry_is_moved_aside(tmp_path, caplog):
    cache = ScoreCache(tmp_path)
    cache.put_many({"k-nan": ("bleu", math.nan), "k-none": ("bleu", None), "k-ok": ("bleu", 0.25)})
    assert len(cache) == 1 and cache.get_many(["k-ok", "k-nan"]) == {"k-ok": 0.25}
    cache.store.write(lambda db: db.execute("INSERT INTO scores VALUES ('k-bad', 'bleu', 'oops', 0)"))
    assert cache.get_many(["k-bad"]) == {} and "moved to its 'rejected' table" in caplog.text
    assert len(cache) == 1


def test_key_covers_metric_and_every_sample_field():
    base = score_key("bleu", "BleuScore", SAMPLES[0])
    changed = AnswerSample(**{**SAMPLES[0].__dict__, "context_ids": ["c2", "c1"]})
    assert len({base, score_key("rouge_l", "BleuScore", SAMPLES[0]), score_key("bleu", "RougeScore", SAMPLES[0]),
                score_key("bleu", "BleuScore", changed)}) == 4
    assert score_key("bleu", "BleuScore", SAMPLES[0]) == base
