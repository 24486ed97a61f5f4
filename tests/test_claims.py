"""The papers' claims as verdicts on synthetic per-question scores: a case for each of supported,
contradicted, inconclusive, cannot be decided (and not tested), the non-inferiority margin
with its own p, Holm within each claim's family, clustering by document, the majority rule of the SSG
claim and its counting of twins once."""
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from rag_lab.evaluation.statistics import UNDECIDABLE
from rag_lab.compare.claims import CLAIMS, NON_INFERIORITY_MARGIN, claim_comparisons, claims_table, twins

N = 20
RNG = np.random.default_rng(0)


def tidy(scores: dict[str, dict[str, list[float]]], k: int = 5) -> pd.DataFrame:
    """method -> metric -> per-question values (question i is q{i}) as evaluate()'s tidy table; the SSG
    claim's gold-sentence metrics have no k (every sentence gathered)."""
    rows = [(m, f"q{i}", metric, np.nan if metric.startswith("gold_sentence") else k, v)
            for m, by_metric in scores.items() for metric, values in by_metric.items() for i, v in enumerate(values)]
    return pd.DataFrame(rows, columns=["method", "question_id", "metric", "k", "value"])


def hits(share: float) -> list[float]:
    """N per-question 0/1 scores, the first round(share * N) of them hits."""
    n = round(share * N)
    return [1.0] * n + [0.0] * (N - n)


def verdicts(results, k=5) -> dict[str, str]:
    return claims_table(results, k).set_index("paper")["this run"].to_dict()


def test_a_case_for_each_verdict():
    base = hits(0.3)
    results = {"d": tidy({
        # SKETCH finds gold on 18 of 20 where naive and KG find 6: every interval above 0 -> supported
        "sketch": {"ctx_precision": hits(0.9), "ctx_recall": hits(0.9)},
        "naive": {"ctx_precision": base, "ctx_recall": base, "doc_recall": hits(0.9)},
        "kg": {"ctx_precision": base, "ctx_recall": base},
        # UnWeaver finds none of the 6 naive finds (and 6 to 18 on doc recall): the interval lies below -margin
        "unweaver": {"ctx_recall": [0.0] * 12 + base[12:], "doc_recall": hits(0.3)},
        # one algorithm one question better than basic retrieval on recall: inconclusive
        "ssg-basic-retrieval": {"gold_sentence_precision": hits(0.5), "gold_sentence_recall": hits(0.5)},
        "ssg-query-traversal": {"gold_sentence_precision": hits(0.5), "gold_sentence_recall": hits(0.55)},
    })}
    assert verdicts(results) == {"SKETCH": "supported", "UnWeaver": "contradicted",
                                 "SSG traversal": "inconclusive", "GraLC-RAG": "not tested"}
    table = claims_table(results).set_index("paper")
    assert "d ctx_recall@5: sketch - naive = 0.600 [" in table.loc["SKETCH", "numbers"]
    assert "p Holm = " in table.loc["SKETCH", "numbers"] and "MDE " in table.loc["SKETCH", "numbers"]
    assert f"margin {NON_INFERIORITY_MARGIN:g}" in table.loc["UnWeaver", "numbers"]
    assert list(table.index) == [c.paper for c in CLAIMS]


def test_non_inferiority_is_tested_against_its_margin_with_its_own_p():
    # UnWeaver equal to naive on every one of 20 questions (no discordant pair). At delta = -0.05 the lower
    # mean is -U0 (the unseen question at -1, U0 ~ Beta(1, 20)): P(-U0 <= -0.05) = 0.95^20 = 0.358, p = 0.717;
    # Holm in the claim's family of two: 1 -> twenty ties cannot show "no worse than 0.05" (the old
    # interval [0, 0] called it supported). Nor could they with 80% power: the MDE against the margin is the
    # decision point of a constant c, c - (1 + c) q > -0.05 with q = 1 - 0.025^(1/20) = 0.1684: c > 0.142, 0.19
    # from the margin, above it -> cannot be decided (a t-based MDE of no spread was none: "inconclusive")
    same = hits(0.6)
    results = {"d": tidy({"naive": {"ctx_recall": same, "doc_recall": same},
                          "unweaver": {"ctx_recall": same, "doc_recall": same}})}
    rows = claim_comparisons(results)
    assert (rows["diff"] == 0).all() and (rows["threshold"] == -NON_INFERIORITY_MARGIN).all()
    assert rows["p"].tolist() == pytest.approx([2 * 0.95 ** 20] * 2, abs=0.01) and (rows["p_holm"] == 1.0).all()
    assert rows["mde"].tolist() == pytest.approx([0.192] * 2, abs=0.003)
    assert verdicts(results)["UnWeaver"] == "cannot be decided"
    # better on 6 questions, worse on none: p against the margin is far below 0.05 -> supported
    better = {"d": tidy({"naive": {"ctx_recall": same, "doc_recall": same},
                         "unweaver": {"ctx_recall": hits(0.9), "doc_recall": hits(0.9)}})}
    assert verdicts(better)["UnWeaver"] == "supported"


def test_one_contradicted_comparison_contradicts_an_all_claim():
    results = {"d": tidy({"sketch": {"ctx_precision": hits(0.9), "ctx_recall": hits(0.1)},
                          "naive": {"ctx_precision": hits(0.2), "ctx_recall": hits(0.9)}})}
    assert verdicts(results)["SKETCH"] == "contradicted"


def test_holm_is_applied_within_each_claims_family_only():
    scores = {"sketch": {"ctx_precision": hits(0.9), "ctx_recall": hits(0.9)},
              "naive": {"ctx_precision": hits(0.3), "ctx_recall": hits(0.3), "doc_recall": hits(0.3)},
              "raptor": {"ctx_precision": hits(0.3), "ctx_recall": hits(0.35)}}
    rows = claim_comparisons({"d": tidy(scores)})
    assert len(rows) == 4 and set(rows["family"]) == {"SKETCH"} and set(rows["family_size"]) == {4}
    assert (rows["p_holm"] >= rows["p"]).all() and (rows["p_holm"] <= 1).all()
    # another paper's comparisons join the table but not SKETCH's family: its Holm p does not move
    scores["unweaver"] = {"ctx_recall": hits(0.3), "doc_recall": hits(0.3)}
    more = claim_comparisons({"d": tidy(scores)})
    assert more[more["paper"] == "SKETCH"]["p_holm"].tolist() == rows["p_holm"].tolist()
    assert set(more.loc[more["paper"] == "UnWeaver", "family_size"]) == {2}
    decided = more["verdict"].isin(["supported", "contradicted"])
    assert (more.loc[decided, "p_holm"] < 0.05).all()


def test_three_questions_all_against_none_cannot_be_decided():
    # the case: [1, 1, 1] against [0, 0, 0], exact p = 2/8 = 0.25 at best -> the fourth state
    results = {"d": pd.DataFrame([(m, f"q{i}", metric, 5, v) for m, v in (("sketch", 1.0), ("naive", 0.0))
                                  for metric in ("ctx_precision", "ctx_recall") for i in range(3)],
                                 columns=["method", "question_id", "metric", "k", "value"])}
    rows = claim_comparisons(results)
    assert set(rows["verdict"]) == {"cannot be decided"} and (abs(rows["p"] - 0.25) < 0.01).all()
    assert set(rows["reason"]) == {"3 questions: no test at 0.05 is possible"}
    assert verdicts(results)["SKETCH"] == "cannot be decided"


def test_clustered_claims_say_documents_and_design_effect():
    # questions q0..q19 over two documents; sketch wins on every question of document A only
    scores = {"sketch": {"ctx_precision": hits(0.5), "ctx_recall": hits(0.5)},
              "naive": {"ctx_precision": [0.0] * N, "ctx_recall": [0.0] * N}}
    units = {"d": {f"q{i}": ("A" if i < 10 else "B") for i in range(N)}}
    rows = claim_comparisons({"d": tidy(scores)}, units=units)
    assert set(rows["units"]) == {2} and "clustered" in rows["interval"].iloc[0]
    # two documents: the exact sign-flip over 2^2 patterns can give p = 2/4 at best -> undecidable
    assert set(rows["verdict"]) == {"cannot be decided"}
    assert set(rows["reason"]) == {"2 documents: no test at 0.05 is possible"}
    assert ", 2 documents" in claims_table({"d": tidy(scores)}, units=units).set_index("paper").loc["SKETCH", "numbers"]
    flat = claim_comparisons({"d": tidy(scores)})
    assert set(flat["verdict"]) == {"supported"}          # independent questions: 10 wins of 20 decide it


def test_the_ssg_majority_counts_a_twin_once():
    # basic 0.5; query beats it clearly on recall; llm-guided is query's twin on every score; ssg-traversal
    # falls clearly short on both. Counted once: 1 of 2 beat it -> not a majority; the one that falls short
    # leaves the majority out of reach -> contradicted. Counting the twin would make it 2 of 3.
    query = {"gold_sentence_precision": hits(0.5), "gold_sentence_recall": hits(1.0)}
    scores = {"ssg-basic-retrieval": {"gold_sentence_precision": hits(0.5), "gold_sentence_recall": hits(0.5)},
              "ssg-query-traversal": query, "ssg-llm-guided-traversal": dict(query),
              "ssg-ssg-traversal": {"gold_sentence_precision": hits(0.0), "gold_sentence_recall": hits(0.0)}}
    results = {"d": tidy(scores)}
    assert twins(results["d"], list(scores)) == {"ssg-llm-guided-traversal": "ssg-query-traversal"}
    # as evaluate() writes them: each method's latency rows (no k) differ from run to run, twins or not
    latency = pd.DataFrame([(m, f"q{i}", "latency_seconds", np.nan, 0.01 * (j + 1) + 0.001 * i)
                            for j, m in enumerate(scores) for i in range(N)], columns=results["d"].columns)
    assert twins(pd.concat([results["d"], latency]), list(scores)) == {"ssg-llm-guided-traversal": "ssg-query-traversal"}
    row = claims_table(results).set_index("paper").loc["SSG traversal"]
    assert row["this run"] == "contradicted" and "1/2 algorithms beat basic_retrieval" in row["numbers"]
    # one question apart -> no longer a twin: 2 of 3 beat it -> supported
    scores["ssg-llm-guided-traversal"] = {"gold_sentence_precision": hits(0.5), "gold_sentence_recall": hits(0.95)}
    assert verdicts({"d": tidy(scores)})["SSG traversal"] == "supported"


def test_the_ssg_claim_is_checked_on_every_sentence_gathered_not_the_first_k():
    # ctx_recall@5 (the first five sentences) would have query-traversal clearly behind; the gold-sentence
    # recall of the whole traversal has it clearly ahead: the claim reads the latter only
    scores = {"ssg-basic-retrieval": {"ctx_recall": hits(0.9), "gold_sentence_recall": hits(0.3)},
              "ssg-query-traversal": {"ctx_recall": hits(0.1), "gold_sentence_recall": hits(1.0)}}
    rows = claim_comparisons({"d": tidy(scores)})
    assert list(rows["metric"]) == ["gold_sentence_recall"] and list(rows["verdict"]) == ["supported"]
    # without the gold-sentence rows (a plain evaluate() table) the claim is not tested, never read off ctx@k
    plain = {"d": tidy({m: {"ctx_recall": s["ctx_recall"]} for m, s in scores.items()})}
    assert verdicts(plain)["SSG traversal"] == "not tested"


def test_ssg_gathered_rows_are_notebook_03s_scores_with_the_papers_caps():
    # the hand-made graph of tests/ssg_handmade.py; the query sits at 0 degrees whatever its text
    from ssg_handmade import main_graph, unit

    from rag_lab.compare.claims import ssg_gathered_rows
    from rag_lab.core.types import Dataset, Question
    from rag_lab.methods.ssg import experiment
    from rag_lab.methods.ssg.method import SSGRetriever

    class AtZero:
        def encode_one(self, text):
            return unit(0.0)

        def count_tokens(self, text):
            return len(text.split())

    graph, docs = main_graph()
    gold = [s.text for s in graph.sentences if s.doc_id == "A"][:3]
    questions = [Question("q1", "first", gold_doc_ids=["A"], gold_contexts=gold, meta={"strategy": "intra_document"}),
                 Question("q2", "second", gold_doc_ids=["A"], gold_contexts=gold[:1],
                          meta={"strategy": "sequential_multi_hop"}),
                 Question("q3", "no gold", meta={"strategy": "intra_document"})]
    data = Dataset("hand", docs, questions)
    embedder, reasoner = AtZero(), SimpleNamespace(name="none")
    algos = ["basic_retrieval", "query_traversal"]
    retrievers = {f"ssg-{a.replace('_', '-')}": SSGRetriever.from_graph(graph, a, reasoner=reasoner, embedder=embedder,
                                                                       documents=docs) for a in algos}
    caps = {"sequential_multi_hop": 4, "default": 2}
    rows = ssg_gathered_rows({**retrievers, "naive": object()}, data, caps)
    ours = experiment.gathered_scores(experiment.run_algorithms(graph, data, algos, caps, reasoner, embedder), data)
    expected = ours.melt(id_vars=["method", "question_id"], value_vars=["gold_sentence_precision",
                                                                        "gold_sentence_recall"], var_name="metric")
    got = rows.set_index(["method", "question_id", "metric"])["value"]
    want = expected.set_index(["method", "question_id", "metric"])["value"]
    pd.testing.assert_series_equal(got.sort_index(), want.sort_index())
    assert rows["k"].isna().all() and set(rows["method"]) == set(retrievers)
    # each question's own cap: 2 sentences, 4 for the sequential question; no gold -> NaN, not a 0
    assert ours.set_index(["method", "question_id"])["sentences"].max() <= 4
    assert (ours[ours["question_id"] == "q1"]["sentences"] <= 2).all()
    assert got.loc[(slice(None), "q3", slice(None))].isna().all()


def test_the_definition_sentence_names_the_caps():
    from rag_lab.compare.descriptions import definition_sentence
    from rag_lab.methods.ssg.experiment import PAPER_MAX_SENTENCES

    text = definition_sentence(PAPER_MAX_SENTENCES)
    assert "(10 sentences; 15 for sequential_multi_hop questions)" in text and "never only its first k" in text
    assert "(7 sentences)" in definition_sentence(7)
