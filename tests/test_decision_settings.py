"""Notebook 10's decisions at two equal budgets with k beside them (compare/comparison.py), on a hand-worked
corpus: the ten-word document of test_context_budget, each word one cl100k_base token."""
from types import SimpleNamespace

import pandas as pd

from rag_lab.compare.budget import TOKENS
from rag_lab.compare.comparison import (MID, SMALLEST, as_k, decision_budgets, decision_claims, decision_differences,
                                        decision_flips, unequal)
from rag_lab.core.types import Chunk, Dataset, Question
from test_context_budget import C1, C3, DOC, TEXT, retrieval

WHOLE = Chunk("whole", "d", TEXT, 0, len(TEXT))
DATA = Dataset("t", [DOC], [Question("q1", "which?", gold_doc_ids=["d"], gold_contexts=["eight nine ten"]),
                            Question("q2", "first?", gold_doc_ids=["d"], gold_contexts=["one two three"])])


def results_at_5() -> pd.DataFrame:
    """The run at k=5, by hand: naive hands over the whole text (10 tokens) and finds both golds; sketch
    hands over two 3-token sentences and, at k=5, misses q1's gold."""
    rows = []
    for method, tokens, found in (("naive", 10.0, {"q1": 1.0, "q2": 1.0}), ("sketch", 6.0, {"q1": 0.0, "q2": 1.0})):
        for q in ("q1", "q2"):
            rows += [(method, q, TOKENS, 5.0, tokens)]
            rows += [(method, q, m, 5.0, found[q]) for m in ("ctx_recall", "ctx_precision", "doc_recall", "ctx_mrr")]
            rows += [(method, q, "doc_mrr", 5.0, 1.0)]
    return pd.DataFrame(rows, columns=["method", "question_id", "metric", "k", "value"])


def run():
    deepest = {"naive": {"q1": retrieval(WHOLE), "q2": retrieval(WHOLE)},
               "sketch": {"q1": retrieval(C3, C1), "q2": retrieval(C1, C3)}}
    retrievers = {"naive": SimpleNamespace(chunks=[WHOLE]), "sketch": SimpleNamespace(chunks=[C1, C3])}
    return SimpleNamespace(retrievals={10: deepest}, dataset=DATA, retrievers=retrievers)


def test_decisions_are_made_at_both_budgets_with_k_beside():
    results = results_at_5()
    budgets = decision_budgets(results, run(), 5, "naive")
    # by hand: the smallest mean budget at k=5 is sketch's 6 tokens; naive's median at k=5 is 10
    assert (budgets[SMALLEST].budget, budgets[MID].budget) == (6, 10)
    assert budgets[MID].label == "naive's median budget at k=5"

    diff = decision_differences(results, budgets, "naive", 5).set_index(["setting", "metric"])
    small = f"{SMALLEST}: 6 tokens (the smallest method's mean budget at k=5, sketch's)"
    mid = f"{MID}: 10 tokens (naive's median budget at k=5)"
    # at 6 tokens naive hands over "one ... six": q2's gold only; sketch both -> (1 + 0) / 2 = +0.5
    assert diff.loc[(small, "ctx_recall@6tok"), "diff"] == 0.5
    # at 10 tokens both find both golds: 0; at k=5 (unequal: 6 against 10 tokens) sketch misses q1: -0.5
    assert diff.loc[(mid, "ctx_recall@10tok"), "diff"] == 0.0
    assert diff.loc[(unequal(5), "ctx_recall@5"), "diff"] == -0.5
    tokens = diff[["method_tokens", "baseline_tokens"]]
    assert tokens.loc[(small, "ctx_recall@6tok")].tolist() == [6.0, 6.0]
    assert tokens.loc[(mid, "ctx_recall@10tok")].tolist() == [6.0, 10.0]      # sketch's ranking holds 6
    assert tokens.loc[(unequal(5), "ctx_recall@5")].tolist() == [6.0, 10.0]
    # one family per setting (three metrics each), verdicts from the statistics layer: two questions decide nothing
    assert diff.groupby("setting")["family_size"].first().tolist() == [3, 3, 3]
    assert set(diff["verdict"]) == {"cannot be decided"}

    by = {"t": budgets}
    counts, questions = decision_flips({"t": results}, by, 5, {"t": run()})
    flips = counts.set_index("setting")
    # the first gold within the cut: at 6 tokens sketch wins q1, ties q2; at k=5 it loses q1
    assert flips.loc[SMALLEST, ["cut", "wins", "losses", "ties", "n"]].tolist() == ["6 tokens", 1, 0, 1, 2]
    assert flips.loc[MID, ["cut", "wins", "losses", "ties"]].tolist() == ["10 tokens", 0, 0, 2]
    assert flips.loc[unequal(5), ["cut", "wins", "losses", "ties"]].tolist() == ["k=5", 0, 1, 1]
    # the same flips question by question: q1 is sketch's at 6 tokens, naive's at k=5; nothing flips at 10 tokens
    flipped = questions["t"][["setting", "method", "baseline", "question_id", "winner"]].values.tolist()
    assert flipped == [[SMALLEST, "sketch", "naive", "q1", "sketch"], [unequal(5), "sketch", "naive", "q1", "naive"]]

    comparisons, claims = decision_claims({"t": results}, by, 5)
    recall = comparisons[comparisons["metric"].str.startswith("ctx_recall")].set_index("setting")
    assert recall["metric"].to_dict() == {SMALLEST: "ctx_recall@6tok", MID: "ctx_recall@10tok", unequal(5): "ctx_recall@5"}
    assert recall["diff"].to_dict() == {SMALLEST: 0.5, MID: 0.0, unequal(5): -0.5}
    # the claims table: the equal budgets first, k last (notebook 10 sets them side by side in that order)
    assert list(dict.fromkeys(claims["setting"])) == [SMALLEST, MID, unequal(5)]
    verdicts = claims.set_index(["paper", "setting"])["this run"]
    assert [verdicts[("SKETCH", s)] for s in (SMALLEST, MID, unequal(5))] == ["cannot be decided"] * 3
    assert verdicts[("UnWeaver", SMALLEST)] == "not tested"
    # hits that fit, by hand: sketch hands 6 tokens at k=5 (1.2 a hit), naive 10 (2 a hit); at 6 tokens
    # naive fits 3.0 hits and sketch 5.0; at k, k each
    fits = claims.set_index(["paper", "setting"])["hits that fit"]
    assert fits[("SKETCH", SMALLEST)] == "at least 3 each (fewest: t: naive 3.0)"
    assert fits[("SKETCH", unequal(5))] == "5 each (k=5)"


def test_section_coverage_is_not_decided_where_a_method_fits_fewer_than_three_chunks():
    from rag_lab.compare.budget import hits_that_fit
    from rag_lab.compare.comparison import claim_fits, fewer_hits_sentence

    rows = []
    for method, tokens in (("gralc-structure", 1280.0), ("gralc-naive", 250.0)):   # 256 and 50 tokens a chunk at k=5
        for q in ("q1", "q2", "q3"):
            rows += [(method, q, TOKENS, 5.0, tokens), (method, q, "section_coverage_source", 5.0, 2.0)]
    results = pd.DataFrame(rows, columns=["method", "question_id", "metric", "k", "value"])
    assert hits_that_fit(results, 5, 512, ["gralc-structure", "gralc-naive"]) == {"gralc-structure": 2.0,
                                                                                   "gralc-naive": 10.24}
    budgets = {"b": {SMALLEST: SimpleNamespace(budget=512), MID: SimpleNamespace(budget=1024)}}
    fits = claim_fits({"b": results}, budgets, SMALLEST, 5)
    assert fits["GraLC-RAG"] == {"b": ("gralc-structure", 2.0)}
    assert claim_fits({"b": results}, budgets, MID, 5)["GraLC-RAG"] == {"b": ("gralc-structure", 4.0)}
    assert fewer_hits_sentence(fits["GraLC-RAG"], 3, 5) == (
        "not decided at this budget: gralc-structure fits 2.0 of its chunks on b, fewer than 3, so no section "
        "coverage can be compared; decided at equal chunk count (k=5)")


def test_as_k_reads_budget_rows_as_rows_at_k():
    rows = pd.DataFrame([("a", "q1", "ctx_mrr@6tok", float("nan"), 0.5), ("a", "q1", "tokens_handed", float("nan"), 6.0)],
                        columns=["method", "question_id", "metric", "k", "value"])
    assert as_k(rows, 6)[["metric", "k", "value"]].values.tolist() == [["ctx_mrr", 6.0, 0.5]]
