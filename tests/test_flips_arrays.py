"""The flips read on arrays (evaluation/flips.found_within): one pass over the long table, every
pair of methods compared on its arrays, with the answers worked by hand."""
import numpy as np
import pandas as pd
import pytest

from rag_lab.compare.intervals import flip_summary, flipped_questions
from rag_lab.core.types import Dataset, Document, Question
from rag_lab.evaluation.flips import found_flip_counts, found_flips, found_within, without_attrs
from rag_lab.evaluation.flips import flip_counts, flips   # the one-pair calls

NAN = float("nan")


def tidy(rows):
    return pd.DataFrame(rows, columns=["method", "question_id", "metric", "k", "value"])


# A's rows list q2 before q1; q3's ctx_mrr is NaN for A (not scored), so its doc_mrr decides; q4 has doc gold
# only; rows at k=10 and other metrics must be ignored. B has no q2.
TABLE = tidy([("A", "q2", "ctx_mrr", 5, 0.5), ("A", "q1", "ctx_mrr", 5, 0.0), ("A", "q3", "ctx_mrr", 5, NAN),
              ("A", "q1", "ctx_recall", 5, 1.0), ("A", "q1", "ctx_mrr", 10, 1.0),
              ("A", "q3", "doc_mrr", 5, 1.0), ("A", "q1", "doc_mrr", 5, 1.0), ("A", "q4", "doc_mrr", 5, 0.0),
              ("B", "q1", "ctx_mrr", 5, 1.0), ("B", "q3", "ctx_mrr", 5, 0.0), ("B", "q4", "doc_mrr", 5, 0.0)])


def test_found_within_reads_the_first_metric_then_the_fallback_in_table_order():
    found = found_within(TABLE, 5)
    ids, hit = found.of("A")
    # ctx_mrr rows first (q2 found, q1 not; q3 NaN is unscored), then doc_mrr for the rest (q3 found, q4 not);
    # q1's doc_mrr of 1 is not read: its ctx_mrr of 0 came first
    assert ids.tolist() == ["q2", "q1", "q3", "q4"] and hit.tolist() == [True, False, True, False]
    assert found.of("B")[0].tolist() == ["q1", "q3", "q4"] and found.of("B")[1].tolist() == [True, False, False]
    assert found.of("C")[0].tolist() == []          # a method without rows has no questions


def test_flips_and_counts_on_the_questions_both_scored():
    # both scored q1, q3, q4 (in A's order): q1 A no / B yes (a loss), q3 A yes / B no (a win), q4 neither (a tie)
    assert flip_counts(TABLE, "A", "B", 5) == {"wins": 1, "losses": 1, "ties": 1, "n": 3}
    assert flip_counts(TABLE, "B", "A", 5) == {"wins": 1, "losses": 1, "ties": 1, "n": 3}
    data = Dataset("d", [Document("x", "text")], [Question(f"q{i}", f"question {i}") for i in range(1, 5)])
    f = flips(TABLE, "A", "B", 5, data)
    assert f.to_dict("records") == [{"question_id": "q1", "question": "question 1", "winner": "B"},
                                    {"question_id": "q3", "question": "question 3", "winner": "A"}]
    # read once, reused for every pair: the same answers
    found = found_within(TABLE, 5)
    assert found_flip_counts(found, "A", "B") == flip_counts(TABLE, "A", "B", 5)
    assert found_flips(found, "A", "B").equals(flips(TABLE, "A", "B", 5))
    assert found_flip_counts(found, "A", "C") == {"wins": 0, "losses": 0, "ties": 0, "n": 0}
    assert list(found_flips(found, "A", "C").columns) == ["question_id", "question", "winner"]


def test_a_question_twice_in_one_metric_is_refused_only_for_its_method():
    dup = pd.concat([TABLE, tidy([("B", "q4", "doc_mrr", 5, 1.0)])], ignore_index=True)
    with pytest.raises(ValueError, match="B: several doc_mrr@5 rows for one question"):
        flip_counts(dup, "A", "B", 5)
    found = found_within(dup, 5)
    assert found.of("A")[0].tolist() == ["q2", "q1", "q3", "q4"]     # A is still read
    # a NaN row beside a scored one is no second score
    assert flip_counts(pd.concat([TABLE, tidy([("B", "q1", "ctx_mrr", 5, NAN)])]), "A", "B", 5)["n"] == 3


def test_summary_and_flipped_questions_pair_each_paper_method_with_its_baseline():
    rows = [(m, q, "ctx_mrr", 5, v) for m, scores in (("naive", (1.0, 0.0, 0.0)), ("sketch", (0.5, 1.0, 0.0)),
                                                      ("raptor", (0.0, 0.0, 0.2)))
            for q, v in zip(("q1", "q2", "q3"), scores)]
    t = tidy(rows)
    t.attrs = {"methods": {"naive": {"config": list(range(5))}}}        # the provenance is not needed here
    # sketch vs naive: q2 a win, q1/q3 ties; raptor vs naive: q1 a loss, q3 a win, q2 a tie
    s = flip_summary({"d": t}, 5)
    assert s[["method", "baseline", "wins", "losses", "ties", "n"]].values.tolist() == [
        ["sketch", "naive", 1, 0, 2, 3], ["raptor", "naive", 1, 1, 1, 3]]
    data = Dataset("d", [Document("x", "text")], [Question(f"q{i}", f"question {i}") for i in range(1, 4)])
    f = flipped_questions(t, data, 5)
    assert f[["method", "question_id", "winner"]].values.tolist() == [
        ["sketch", "q2", "sketch"], ["raptor", "q1", "naive"], ["raptor", "q3", "raptor"]]


def test_without_attrs_keeps_the_columns_and_drops_the_provenance():
    t = TABLE.copy()
    t.attrs = {"methods": {"A": {"x": 1}}}
    bare = without_attrs(t)
    assert bare.attrs == {} and t.attrs == {"methods": {"A": {"x": 1}}}
    pd.testing.assert_frame_equal(bare, TABLE)
    assert np.shares_memory(bare["value"].to_numpy(), t["value"].to_numpy())   # no copy of the long table


def test_rows_of_keeps_every_row_a_column_can_be_read_from():
    from rag_lab.compare.intervals import rows_of
    from rag_lab.evaluation.uncertainty import per_question

    t = tidy([("A", "q1", "ctx_recall", 5, 1.0), ("A", "q1", "ctx_recall", 10, 0.5), ("A", "q1", "doc_recall", 5, 1.0),
              ("A", "q1", "ctx_recall@136tok", NAN, 0.25), ("B", "q1", "ctx_recall", 5, 0.0),
              ("B", "q2", "ctx_recall", 5, 1.0)])
    # ctx_recall@5 is read from the ctx_recall rows (any k: the label decides later), never doc_recall's
    assert rows_of(t, ["ctx_recall@5"])["metric"].tolist() == ["ctx_recall", "ctx_recall", "ctx_recall", "ctx_recall"]
    # a budget column is a metric without k: its own rows (and the bare name's, read and dropped by the label)
    assert "ctx_recall@136tok" in set(rows_of(t, ["ctx_recall@136tok"])["metric"])
    for column in ("ctx_recall@5", "ctx_recall@10", "ctx_recall@136tok"):
        pd.testing.assert_frame_equal(per_question(rows_of(t, [column]), column), per_question(t, column))
    # by hand: ctx_recall@5 is A q1 1.0, B q1 0.0, B q2 1.0 (A has no q2)
    table = per_question(rows_of(t, ["ctx_recall@5"]), "ctx_recall@5")
    assert table.loc["q1"].tolist() == [1.0, 0.0] and np.isnan(table.loc["q2", "A"])


def test_tokens_per_hit_read_once_gives_each_pairs_hits_that_fit():
    from rag_lab.compare.budget import TOKENS, fits_of, hits_that_fit, tokens_per_hit

    t = tidy([("A", "q1", TOKENS, 5, 10.0), ("A", "q2", TOKENS, 5, 20.0), ("B", "q1", TOKENS, 5, 5.0),
              ("B", "q2", TOKENS, 5, 5.0), ("A", "q1", TOKENS, 10, 99.0), ("C", "q1", TOKENS, 5, 0.0)])
    # by hand: A hands (10 + 20) / 2 = 15 tokens at k=5, 3 a hit; B 5 tokens, 1 a hit; C nothing
    per_hit = tokens_per_hit(t, 5)
    assert per_hit.to_dict() == {"A": 3.0, "B": 1.0, "C": 0.0}
    # 12 tokens hold 4 of A's hits and 12 of B's; C (no tokens) fits no number; in the run's order
    assert list(fits_of(per_hit, 12, ["B", "A", "C"]).items()) == [("A", 4.0), ("B", 12.0)]
    assert hits_that_fit(t, 5, 12, ["B"]) == {"B": 12.0}
