"""The context budget (tokens handed over at k) and the equal-budget comparison, on hand-worked inputs.

The document is ten words, each one cl100k_base token: "one two three four five six seven eight nine
ten" (checked below), so every count can be worked out by hand.
"""
import math
from types import SimpleNamespace

import pandas as pd
import pytest

from rag_lab.evaluation.statistics import UNDECIDABLE
from rag_lab.compare.budget import (HANDED, TOKENS, EqualBudget, block_tokens, budget_differences, budget_metric,
                                    context_token_rows, cut_to_budget, equal_budget_board, equal_budget_rows, mid_budget,
                                    pick_budget, with_tokens)
from rag_lab.compare.comparison import SMALLEST
from rag_lab.compare.descriptions import budget_sentence, semantic_truncation_sentence
from rag_lab.core.types import Chunk, Dataset, Document, Hit, Question, Retrieval
from rag_lab.reasoning.tokens import count_text_tokens, first_tokens

TEXT = "one two three four five six seven eight nine ten"
DOC = Document("d", TEXT)


def span(text: str, cid: str | None = None) -> Chunk:
    start = TEXT.index(text)
    return Chunk(cid or text, "d", text, start, start + len(text))


C1, C2, C3 = span("one two three"), span("four five six seven"), span("eight nine ten")


def retrieval(*chunks: Chunk) -> Retrieval:
    return Retrieval("q", [Hit(c, 1.0) for c in chunks])


def test_the_hand_counts_hold():
    assert [count_text_tokens(c.text) for c in (C1, C2, C3)] == [3, 4, 3]
    assert count_text_tokens(TEXT) == 10


def test_first_tokens_is_a_prefix_at_a_token_boundary():
    assert first_tokens(TEXT, 4) == "one two three four"
    assert first_tokens(TEXT, 0) == "" and first_tokens(TEXT, 99) == TEXT
    # a multi-byte character split by a token boundary is left out, never half-decoded
    text = "Ça va 日本語"
    assert all(text.startswith(first_tokens(text, n)) for n in range(12))
    with pytest.raises(ValueError):
        first_tokens(TEXT, -1)


def test_a_three_hit_ranking_cut_to_a_budget():
    # 3 + 4 + 3 tokens. Budget 5: the first hit whole, the second cut to its first 2 tokens, and the list ends.
    cut = cut_to_budget([C1, C2, C3], 5)
    assert [c.text for c in cut] == ["one two three", "four five"]
    assert TEXT[cut[1].start:cut[1].end] == "four five"          # the span moves with the text
    assert sum(count_text_tokens(c.text) for c in cut) == 5
    # budget 7: the first two fit exactly, nothing of the third; 20: all three (10 tokens), not padded
    assert [c.text for c in cut_to_budget([C1, C2, C3], 7)] == ["one two three", "four five six seven"]
    assert cut_to_budget([C1, C2, C3], 20) == [C1, C2, C3]
    # a summary with no span keeps start = end = -1
    summary = Chunk("s", "d", "five six seven eight", -1, -1)
    assert cut_to_budget([summary], 2)[0].text == "five six" and cut_to_budget([summary], 2)[0].end == -1
    with pytest.raises(ValueError):
        cut_to_budget([C1], 0)


def test_context_token_rows_count_the_hits_at_each_k():
    rows = context_token_rows({1: {"m": {"q1": retrieval(C1)}}, 2: {"m": {"q1": retrieval(C1, C2)}}})
    assert list(rows.columns) == ["method", "question_id", "metric", "k", "value"]
    assert rows.set_index("k")["value"].to_dict() == {1: 3.0, 2: 7.0}
    assert set(rows["metric"]) == {TOKENS}


def test_pick_budget_is_the_smallest_mean_at_k():
    rows = pd.DataFrame([("a", "q1", TOKENS, 5, 100.0), ("a", "q2", TOKENS, 5, 151.0),   # mean 125.5
                         ("b", "q1", TOKENS, 5, 400.0), ("b", "q2", TOKENS, 5, 600.0),   # mean 500
                         ("c", "q1", TOKENS, 5, 0.0), ("c", "q2", TOKENS, 5, 0.0),       # returns nothing: left out
                         ("a", "q1", TOKENS, 1, 10.0)],
                        columns=["method", "question_id", "metric", "k", "value"])
    assert pick_budget(rows, 5) == (125, "a")
    with pytest.raises(ValueError):
        pick_budget(rows, 3)


def dataset() -> Dataset:
    return Dataset("t", [DOC], [Question("q1", "which?", gold_doc_ids=["d"], gold_contexts=["eight nine ten"]),
                                Question("q2", "no gold?")])


def test_equal_budget_scores_what_fits_in_the_budget():
    whole = Chunk("whole", "d", TEXT, 0, len(TEXT))              # one long hit, the gold at its end
    deepest = {"long": {"q1": retrieval(whole), "q2": retrieval(whole)},
               "short": {"q1": retrieval(C3, C1), "q2": retrieval(C1)}}
    rows = equal_budget_rows(deepest, dataset(), 3)
    values = rows.set_index(["method", "question_id", "metric"])["value"]
    # at 3 tokens the long hit is cut to "one two three": the right document, not the gold words
    assert values[("long", "q1", budget_metric("ctx_recall", 3))] == 0.0
    assert values[("long", "q1", budget_metric("doc_recall", 3))] == 1.0
    assert values[("short", "q1", budget_metric("ctx_recall", 3))] == 1.0
    assert values[("long", "q1", HANDED)] == values[("short", "q1", HANDED)] == 3.0
    # q2 has no gold: its tokens are counted, it is not scored
    assert not rows[(rows["question_id"] == "q2") & (rows["metric"] != HANDED)].shape[0]
    assert rows["k"].isna().all()
    # at 10 tokens the long hit is whole and finds the gold; short hands over 6 (all it has)
    at10 = equal_budget_rows(deepest, dataset(), 10).set_index(["method", "question_id", "metric"])["value"]
    assert at10[("long", "q1", budget_metric("ctx_recall", 10))] == 1.0
    assert at10[("short", "q1", HANDED)] == 6.0

    board = equal_budget_board(rows, 3)
    assert list(board.columns) == ["rank", "method", "metric", "mean", "n", "ci_low", "ci_high", "n_dropped", "interval",
                                   "units", "design_effect"]
    assert board.drop_duplicates("method")["method"].tolist() == ["short", "long"]     # ranked by ctx_recall
    n = board.set_index(["method", "metric"])["n"]
    assert n[("short", HANDED)] == 2 and n[("short", budget_metric("ctx_recall", 3))] == 1


def test_budget_sentence_names_the_spread_the_budget_and_the_leaders():
    results = pd.DataFrame([("ssg", "q1", TOKENS, 5, 100.0), ("semantic", "q1", TOKENS, 5, 2000.0)],
                           columns=["method", "question_id", "metric", "k", "value"])
    board_k = pd.DataFrame([(1, "semantic", "ctx_recall@5", 0.9, 1, 0.8, 1.0), (2, "ssg", "ctx_recall@5", 0.3, 1, 0.2, 0.4)],
                           columns=["rank", "method", "metric", "mean", "n", "ci_low", "ci_high"])
    board_b = pd.DataFrame([(1, "ssg", "ctx_recall@100tok", 0.5, 1, 0.4, 0.6), (1, "ssg", HANDED, 100.0, 1, 100, 100),
                            (2, "semantic", "ctx_recall@100tok", 0.2, 1, 0.1, 0.3),
                            (2, "semantic", HANDED, 100.0, 1, 100, 100)], columns=board_k.columns)
    equal = EqualBudget(100, "ssg", 10, pd.DataFrame(), board_b, {})
    text = budget_sentence(results, 5, {SMALLEST: equal}, board_k)
    assert "from 100 tokens of retrieved text per question (ssg) to 2000 (semantic)" in text
    assert "20 times apart" in text and "cut to 100 tokens (the smallest method's mean budget at k=5, ssg's" in text
    assert "Highest ctx_recall@5: semantic 0.900 [0.800, 1.000]" in text
    assert "highest ctx_recall at 100 tokens: ssg 0.500 [0.400, 0.600] (semantic is 2 of 2 there)." in text
    assert "less than" not in text and "Not counted" not in text
    board_b.loc[board_b["method"] == "ssg", "mean"] = [0.5, 60.0]
    equal = EqualBudget(100, "ssg", 10, pd.DataFrame(), board_b, {"sketch": 42.4})
    text = budget_sentence(results, 5, {SMALLEST: equal}, board_k)
    assert "Handing over less than 100 tokens on average (their ranking at k=10 holds less): ssg (60)." in text
    assert text.endswith("mean tokens at k=5: sketch 42.")


def test_document_level_gold_only_ranks_by_document_recall_and_says_what_is_missing():
    """PubMedQA's questions carry gold documents, no gold passages: no ctx_* rows. The sentence and the
    boards rank by doc_recall (was an IndexError on the empty ctx_recall board), the missing metrics said once."""
    from rag_lab.compare.descriptions import questions_sentences
    from rag_lab.compare.intervals import leaderboard_ci, rank_metric
    from rag_lab.evaluation.decisions import estimand_of

    rows = [("ssg", "q1", TOKENS, 5, 100.0), ("semantic", "q1", TOKENS, 5, 2000.0)]
    rows += [(m, q, metric, 5, v) for m, q, metric, v in (
        ("ssg", "q1", "doc_recall", 1.0), ("ssg", "q2", "doc_recall", 1.0), ("ssg", "q1", "doc_mrr", 1.0),
        ("ssg", "q2", "doc_mrr", 0.5), ("semantic", "q1", "doc_recall", 0.0), ("semantic", "q2", "doc_recall", 1.0),
        ("semantic", "q1", "doc_mrr", 0.0), ("semantic", "q2", "doc_mrr", 1.0))]
    results = pd.DataFrame(rows, columns=["method", "question_id", "metric", "k", "value"])
    assert rank_metric(results["metric"]) == "doc_recall" and rank_metric(["ctx_recall@5", "doc_recall@5"]) == "ctx_recall"
    assert rank_metric(["doc_mrr@130tok"]) == "doc_mrr"
    board_k = leaderboard_ci(results, 5)
    assert board_k.drop_duplicates("method")["method"].tolist() == ["ssg", "semantic"]    # doc_recall 1.0 vs 0.5
    data = Dataset("pubmedqa", [Document("d1", "one"), Document("d2", "two")],
                   [Question("q1", "?", gold_doc_ids=["d1"]), Question("q2", "?", gold_doc_ids=["d2"])])
    said = questions_sentences({"pubmedqa": results}, {"pubmedqa": SimpleNamespace(dataset=data)}, 5)
    # by hand: both questions have a doc_recall row at 5; the estimand; the missing leaderboard metrics said once
    assert said == [
        "Questions scored at k=5: pubmedqa 2 of 2 (a question without gold is not scored).", estimand_of(data),
        "pubmedqa: no ctx_mrr@5, ctx_recall@5, ctx_precision@5, section_coverage_source@5 (not shown in its tables); "
        "its questions carry gold documents but no gold passages, so its tables are ranked by doc_recall@5, not "
        "ctx_recall@5."]
    assert estimand_of(data).startswith("pubmedqa: Every interval below")
    board_b = pd.DataFrame([(1, "semantic", "doc_recall@100tok", 0.5, 2, 0.4, 0.6), (1, "semantic", HANDED, 100.0, 2, 100, 100),
                            (2, "ssg", "doc_recall@100tok", 0.2, 2, 0.1, 0.3), (2, "ssg", HANDED, 100.0, 2, 100, 100)],
                           columns=["rank", "method", "metric", "mean", "n", "ci_low", "ci_high"])
    text = budget_sentence(results, 5, {SMALLEST: EqualBudget(100, "ssg", 10, pd.DataFrame(), board_b, {})}, board_k)
    assert "so doc_recall@5 sets lists 20 times apart" in text and "Highest doc_recall@5: ssg 1.000" in text
    assert "highest doc_recall at 100 tokens: semantic 0.500 [0.400, 0.600] (ssg is 2 of 2 there)." in text


def test_block_tokens_measure_what_is_handed_over_besides_the_hits():
    class Facts:
        def context_blocks(self, retrieval):
            return [("graph facts", "one two three")] if retrieval.query == "q" else []

    retrievals = {"sketch": {"q1": retrieval(C1), "q2": Retrieval("other", [])}, "naive": {"q1": retrieval(C1)}}
    plain = SimpleNamespace(context_blocks=lambda retrieval: [])
    assert block_tokens({"sketch": Facts(), "naive": plain}, retrievals) == {"sketch": 1.5}     # (3 + 0) / 2


def test_semantic_truncation_sentence_counts_chunks_past_the_limit():
    class Words:            # an encoder reading 6 word pieces (4 of text + 2 special), counting words
        max_tokens = 6
        model_id = "words"

        def count_tokens(self, text):
            return len(text.split())

    def made(texts, **kind):
        return SimpleNamespace(chunks=[Chunk(str(i), "d", t, 0, len(t)) for i, t in enumerate(texts)],
                               embedder=Words(), **kind)

    retrievers = {"naive": made(["a b c d e f"], chunker="fixed"),                 # not semantic: left out
                  "semantic": made(["a b c d e", "a", "a b c d e f g"], chunker="semantic"),
                  "gralc-semantic": made(["a b"], strategy="semantic")}
    text = semantic_truncation_sentence(retrievers)
    # limit 6 - 2 = 4 words: 5 and 7 words are past it; mean (5 + 1 + 7) / 3 = 4.33
    assert "reads at most 6 word pieces" in text
    assert "semantic: 2 of 3 chunks are longer (mean 4 word pieces, longest 7)" in text
    assert "gralc-semantic: 0 of 1 chunks are longer (mean 2 word pieces, longest 2)" in text
    assert "naive" not in text and "opening 4 word pieces" in text
    assert text.endswith("Read the rows of semantic with that in mind: they rank truncated vectors.")
    assert semantic_truncation_sentence({"gralc-semantic": retrievers["gralc-semantic"]}).endswith(
        "No semantic chunk is cut off here.")
    assert semantic_truncation_sentence({"naive": retrievers["naive"]}) == "No method with semantic chunks ran."


def test_mid_budget_is_the_baselines_median_at_k():
    rows = pd.DataFrame([("naive", "q1", TOKENS, 5, 100.0), ("naive", "q2", TOKENS, 5, 151.5),
                         ("naive", "q3", TOKENS, 5, 400.0), ("naive", "q1", TOKENS, 1, 9.0),
                         ("ssg", "q1", TOKENS, 5, 20.0)], columns=["method", "question_id", "metric", "k", "value"])
    # by hand: naive at k=5 hands over 100, 151.5, 400 -> median 151.5 -> 151 (k=1 and ssg left out)
    assert mid_budget(rows, 5, "naive") == 151
    with pytest.raises(ValueError, match="'bm25'"):
        mid_budget(rows, 5, "bm25")


def test_differences_at_a_budget_are_paired_and_show_each_sides_tokens():
    whole = Chunk("whole", "d", TEXT, 0, len(TEXT))
    deepest = {"long": {"q1": retrieval(whole), "q2": retrieval(whole)},
               "short": {"q1": retrieval(C3, C1), "q2": retrieval(C1)}}
    rows = equal_budget_rows(deepest, dataset(), 3)
    equal = EqualBudget(3, "short", 10, rows, equal_budget_board(rows, 3), {}, "the smallest method's budget")
    diff = budget_differences(equal, "long").set_index("metric")
    # by hand, q1 (q2 has no gold): at 3 tokens short hands over "eight nine ten" (the gold), long "one two
    # three" (the right document only): ctx_recall 1 - 0, doc_recall 1 - 1, one question
    assert diff.loc[budget_metric("ctx_recall", 3), "diff"] == 1.0
    assert diff.loc[budget_metric("doc_recall", 3), "diff"] == 0.0
    assert (diff["n"] == 1).all() and (diff["method"] == "short").all() and (diff["baseline"] == "long").all()
    assert (diff["verdict"] == UNDECIDABLE).all()
    # both sides hand over 3 tokens on each of q1 and q2
    assert (diff["method_tokens"] == 3.0).all() and (diff["baseline_tokens"] == 3.0).all()
    assert (diff["setting"] == "at 3 tokens (the smallest method's budget)").all()
    assert budget_differences(equal, "absent").empty


def test_with_tokens_puts_each_sides_budget_at_k_beside_a_difference():
    rows = pd.DataFrame([("a", "q1", TOKENS, 5, 10.0), ("a", "q2", TOKENS, 5, 30.0), ("b", "q1", TOKENS, 5, 300.0),
                         ("b", "q2", TOKENS, 5, 500.0), ("a", "q1", TOKENS, 10, 99.0)],
                        columns=["method", "question_id", "metric", "k", "value"])
    diff = pd.DataFrame({"method": ["a"], "baseline": ["b"], "metric": ["ctx_recall@5"], "diff": [-0.2]})
    shown = with_tokens(diff, rows, f"{TOKENS}@5", "at k=5, unequal budgets")
    # by hand: a hands over (10 + 30) / 2 = 20 tokens at k=5, b (300 + 500) / 2 = 400
    assert shown.iloc[0].to_dict() == {"setting": "at k=5, unequal budgets", "method": "a", "baseline": "b",
                                       "metric": "ctx_recall@5", "diff": -0.2, "method_tokens": 20.0,
                                       "baseline_tokens": 400.0}
    with pytest.raises(ValueError, match="tokens_handed"):
        with_tokens(diff, rows, HANDED, "x")
