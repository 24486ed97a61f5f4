"""Notebook 03's equal-sentence-budget view and its "highest mean" sentence, on inputs worked out by hand."""
from __future__ import annotations

import pytest

from rag_lab.core.types import Dataset, Question
from rag_lab.methods.ssg import experiment, ledgered, paper
from ssg_handmade import main_graph, scores_frame, unit


def test_equal_budgets_are_the_fewest_sentences_per_question():
    own = scores_frame([("basic_retrieval", "a", 0.8, 0.4, 5), ("basic_retrieval", "b", 0.6, 0.6, 8),
                         ("query_traversal", "a", 0.5, 0.6, 9), ("query_traversal", "b", 0.4, 0.7, 7)])
    # the fewest sentences on each question: a 5 (basic), b 7 (query)
    assert experiment.equal_budgets(own).to_dict() == {"a": 5, "b": 7}
    # the table and the sentence notebook 03 shapes from these rows are checked there (tests/test_notebook_03.py)


class AngleEmbedder:
    """Every query at 0 degrees (the hand-made graph's vectors are 2-D)."""

    model_id = "angle"

    def encode_one(self, text):
        return unit(0)

    def count_tokens(self, texts):
        return 1


def test_equal_budget_scores_rerun_every_algorithm_at_the_fewest_sentences():
    # query at 0: basic_retrieval gathers 7 (A0, B0, A1), query_traversal 8, triangulation_average 8
    # (test_ssg_algorithms.py), so the budget is 7; at cap 7 query_traversal keeps A0, B0 and from B1
    # its new sentence B s3: 7 sentences, and so does triangulation_average (A0, A1, B0)
    graph, docs = main_graph()
    data = Dataset("hand", docs, [Question("q", "where?", gold_doc_ids=["B"], gold_contexts=["Document B states fact three."])])
    algorithms = ["basic_retrieval", "query_traversal", "triangulation_average"]
    own = experiment.gathered_scores(experiment.run_algorithms(graph, data, algorithms, 10, None, AngleEmbedder()), data)
    assert own.set_index("algorithm")["sentences"].to_dict() == {"basic_retrieval": 7, "query_traversal": 8,
                                                                 "triangulation_average": 8}
    equal = experiment.equal_budget_scores(graph, data, algorithms, own, None, AngleEmbedder()).set_index("algorithm")
    assert (equal["sentences"] == 7).all()
    # query_traversal at 7 still has B s3 (gold): 1 of 7; basic has no gold sentence
    assert equal.loc["query_traversal", "gold_sentence_precision"] == pytest.approx(1 / 7)
    assert equal.loc["basic_retrieval", "gold_sentence_recall"] == 0.0
    # experiment.run is the same sequence in one call: its own-stop scores, its equal-budget scores, no judge
    ran = experiment.run(graph, data, algorithms, 10, None, AngleEmbedder())
    assert ran.scores.drop(columns="seconds").equals(own.drop(columns="seconds")) and ran.judged is None
    assert ran.equal.drop(columns="seconds").equals(equal.reset_index()[ran.equal.columns].drop(columns="seconds"))
    assert list(ran.results) == algorithms and len(ran.results["query_traversal"]["q"].hits) == 8


def test_results_give_every_mean_its_interval_clustered_by_document():
    # two questions of one document: one unit, so n = 2 questions but no interval can be drawn from one unit;
    # the means are the hand means: basic precision (.8 + .6) / 2 = .7, query recall (.6 + .7) / 2 = .65
    own = scores_frame([("basic_retrieval", "a", 0.8, 0.4, 5), ("basic_retrieval", "b", 0.6, 0.6, 8),
                         ("query_traversal", "a", 0.5, 0.6, 9), ("query_traversal", "b", 0.4, 0.7, 7)]).assign(unit="doc")
    data = Dataset("hand", main_graph()[1], [Question("a", "?", gold_doc_ids=["A"]), Question("b", "?", gold_doc_ids=["A"])])
    found = paper.results(own, None, 0.5, data, "the definition").summary
    summary = found.set_index(["method", "metric"])
    assert summary.loc[("basic_retrieval", "gold_sentence_precision"), "mean"] == pytest.approx(0.7)
    assert summary.loc[("query_traversal", "gold_sentence_recall"), "mean"] == pytest.approx(0.65)
    assert (summary["n"] == 2).all() and len(summary) == 4
    from rag_lab.evaluation.uncertainty import summary_with_ci
    rows = experiment.tidy(own)
    assert found.equals(summary_with_ci(rows, ["gold_sentence_precision", "gold_sentence_recall"],
                                        units={"a": "doc", "b": "doc"}))


def test_the_leader_is_said_against_every_other_algorithm_as_the_paired_test_decides():
    # recall: query .75 on every question; triangulation 1.0, .5, .5, .5 (mean .625); basic .5. query leads
    # on the mean; its rows are exactly the pairs the Holm-corrected test decided, each said by its verdict
    from rag_lab.evaluation.findings import finding_sentences
    from rag_lab.evaluation.uncertainty import pairwise_differences

    rows = [("basic_retrieval", q, 0.5, 0.5, 5) for q in "abcd"]
    rows += [("query_traversal", q, 0.5, 0.75, 9) for q in "abcd"]
    rows += [("triangulation_average", q, 0.5, r, 6) for q, r in zip("abcd", (1.0, 0.5, 0.5, 0.5))]
    scores = scores_frame(rows)
    leads = ledgered.leader_pairs(scores, "gold_sentence_recall")
    pairs = pairwise_differences(experiment.tidy(scores, None), "gold_sentence_recall")
    assert set(leads["method"]) == {"query_traversal"} and len(pairs) == 3          # the family: every pair
    assert leads[["below", "verdict"]].values.tolist() == pairs[pairs["method"] == "query_traversal"][["below", "verdict"]].values.tolist()
    # n = 4 cannot decide (floor 2/2^4): both said once, with the reason, no interval
    assert finding_sentences(leads, family=False) == [
        "2 comparisons cannot be decided (4 questions: no test at 0.05 is possible): query_traversal - basic_retrieval, "
        "query_traversal - triangulation_average; gold_sentence_recall; no interval, MDE or verdict is shown for them."]


def test_the_leader_decided_ahead_of_every_other_algorithm_says_so_with_its_numbers():
    from rag_lab.evaluation.findings import finding_sentences
    from rag_lab.evaluation.statistics import SUPPORTED

    # 30 questions: query .9 +- .05 against basic .5 +- .05 on each; the paired differences are far from 0
    rows = [("basic_retrieval", f"q{i}", 0.5, 0.5 + 0.05 * (-1) ** i, 5) for i in range(30)]
    rows += [("query_traversal", f"q{i}", 0.5, 0.9 + 0.05 * (-1) ** (i // 2), 9) for i in range(30)]
    leads = ledgered.leader_pairs(scores_frame(rows), "gold_sentence_recall", label="Run: ")
    assert leads["verdict"].tolist() == [SUPPORTED] and set(leads["family"]) == {"every pair on gold_sentence_recall"}
    said = finding_sentences(leads)
    # basic's mean is 0.5 (15 up, 15 down); query's 0.9 + 0.05 (16 - 14) / 30 = 0.9033 (i // 2 = 0..14, 8 of them even):
    # the difference 0.403; a family of one, so its Holm p is its p and is said once
    assert said[0].startswith("query_traversal - basic_retrieval on gold_sentence_recall: 0.403 [")
    assert "(n = 30, p = " in said[0] and "p Holm" not in said[0] and said[0].endswith(f"): {SUPPORTED}")
    assert said[1].startswith('p Holm-adjusted within the declared family "every pair on gold_sentence_recall" (1 comparison);')


def test_the_leader_and_the_versus_basic_test_say_the_same_of_basic_retrieval():
    from rag_lab.evaluation.statistics import INCONCLUSIVE, UNDECIDABLE

    # fulldim leads on the mean (.6 vs .5) but is below basic on one question of three: the versus-basic
    # test does not decide, and the leader's row against basic_retrieval must say the same
    rows = [("basic_retrieval", q, 0.5, 0.5, 5) for q in "abc"]
    rows += [("triangulation_fulldim", q, 0.5, r, 9) for q, r in zip("abc", (0.9, 0.6, 0.3))]
    scores = scores_frame(rows)
    vs = ledgered.versus_basic(scores, "gold_sentence_recall").set_index("method")
    assert vs.loc["triangulation_fulldim", "side"] in (INCONCLUSIVE, UNDECIDABLE)
    leads = ledgered.leader_pairs(scores, "gold_sentence_recall").set_index("below")
    assert leads.loc["basic_retrieval", "verdict"] == vs.loc["triangulation_fulldim", "verdict"]
    assert ledgered.leader_pairs(scores[scores["algorithm"] == "basic_retrieval"], "gold_sentence_recall").empty


def test_reported_beats_reads_the_paper_tables():
    lines = paper.reported_beats("recall")
    # 20q theme_based: basic 0.74; every other algorithm but ssg_traversal (0.72) is above it
    assert lines[0] == ("  paper, 20q theme_based (paper-reported), DeepEval contextual recall: query_traversal, "
                        "triangulation_average, triangulation_geometric_3d, triangulation_fulldim, llm_guided_traversal "
                        "(basic_retrieval 0.74).")
    assert len(lines) == len(paper.PAPER_TABLES)


def test_shown_comparison_narrows_the_paper_table():
    from rag_lab.evaluation.uncertainty import interval_frames
    from rag_lab.methods.ssg.paper import compare_with_paper, shown_comparison

    # two algorithms, no judge: precision/recall ours, the judged columns empty
    scores = scores_frame([("basic_retrieval", "a", 0.8, 0.4, 5), ("basic_retrieval", "b", 0.6, 0.6, 8),
                            ("query_traversal", "a", 0.5, 0.6, 9), ("query_traversal", "b", 0.4, 0.7, 7)])
    ours = experiment.results_table(scores)
    rows = experiment.tidy(scores)
    intervals = interval_frames(rows, {c: c for c in dict.fromkeys(rows["metric"])}, units=experiment.units_of(scores))
    wide = compare_with_paper(ours, "20q theme_based (paper-reported)", False, {}, intervals)
    shown, note = shown_comparison(wide)
    assert list(shown.columns) == ["n", "precision: ours [95% interval]", "precision: paper", "precision: difference",
                                   "recall: ours [95% interval]", "recall: paper", "recall: difference",
                                   "test cases (ours)", "test cases (paper)"]
    # basic precision .7 (paper .87: difference -.17), recall .5 (paper .74); 2 questions
    assert shown.loc["basic_retrieval", "precision: ours [95% interval]"].startswith("0.70 [")
    assert shown.loc["basic_retrieval", "precision: difference"] == pytest.approx(-0.17)
    assert shown.loc["query_traversal", "test cases (paper)"] == "16/20" and shown["n"].dropna().tolist() == [2, 2]
    assert note.endswith("not computed in this run: answer_relevancy, faithfulness.")
    assert len(shown.columns) < len(wide.columns) <= 40
