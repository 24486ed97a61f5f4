"""Metrics that are 0 only because no answer model ran are found and named (hand-made tables); notebook 10
drops them with ``without_unscored`` (tests/test_notebook_10.py: the heatmap leaves exact_match out)."""
import pandas as pd
import pytest

from rag_lab.compare.unscored import unscored, unscored_sentence, without_unscored


def table(rows, reasoner="offline"):
    df = pd.DataFrame([(m, q, metric, 5.0, v, "none", reasoner) for m, q, metric, v in rows],
                      columns=["method", "question_id", "metric", "k", "value", "index_reasoner", "answer_reasoner"])
    df.attrs["dataset"] = "x"
    return df


def test_a_zero_answer_metric_without_an_answer_model_is_dropped_and_named():
    a = table([("naive", "q1", "exact_match", 0.0), ("naive", "q1", "token_f1", 0.4),
               ("naive", "q1", "answer_llm_tokens", 0.0), ("naive", "q1", "ctx_recall", 0.0)])
    b = table([("naive", "q2", "ctx_recall", 1.0)])          # no reference answers: no exact_match rows
    # by hand: exact_match and answer_llm_tokens are 0 everywhere, offline; ctx_recall 0 in a is not an
    # answer metric; token_f1 is not 0
    dead = unscored({"a": a, "b": b})
    assert dead == ["exact_match", "answer_llm_tokens"]
    text = unscored_sentence(dead)
    assert text.startswith("Not shown: exact_match and answer_llm_tokens, which are 0 for every method and question "
                           "because no answer model ran")


def test_zero_with_an_answer_model_or_a_single_hit_is_kept():
    llm = table([("naive", "q1", "exact_match", 0.0)], reasoner="openai:gpt-4o-mini")
    assert unscored({"a": llm}) == []                      # a model answered: a real 0, shown
    hit = table([("naive", "q1", "exact_match", 0.0), ("naive", "q2", "exact_match", 1.0)])
    assert unscored({"a": hit}) == []
    offline_zero = table([("naive", "q1", "exact_match", 0.0)])
    assert unscored({"a": offline_zero, "b": hit}) == []    # one table where it scores: kept everywhere
    assert unscored_sentence([]) == ""
    assert unscored_sentence(["exact_match"]).startswith("Not shown: exact_match, which is 0")


def test_rows_without_their_answer_reasoner_are_refused():
    bare = table([("naive", "q1", "exact_match", 0.0)]).drop(columns="answer_reasoner")
    with pytest.raises(ValueError, match="answer_reasoner"):
        unscored({"a": bare})


def test_without_unscored_drops_the_rows_and_says_why():
    a = table([("naive", "q1", "exact_match", 0.0), ("naive", "q1", "token_f1", 0.4)])
    b = table([("naive", "q2", "ctx_recall", 1.0)])
    # by hand: exact_match is 0 on its one row, answered offline: dropped from a; b has nothing to drop
    kept, said = without_unscored({"a": a, "b": b})
    assert kept["a"]["metric"].tolist() == ["token_f1"] and kept["b"]["metric"].tolist() == ["ctx_recall"]
    assert said.startswith("Not shown: exact_match, which is 0 for every method and question")
    assert without_unscored({"b": b})[1] == ""
