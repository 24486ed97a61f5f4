"""The calls notebook 03 makes, each doing a sequence its cells wrote out before, on hand-made inputs: the graph
built, saved and loaded back, the questions, the results with their sentences, the data the findings are decided
on, the findings, and the two faces of the paths figure."""
from __future__ import annotations

import pytest

from rag_lab.core.types import Dataset, Document, Question
from rag_lab.methods.ssg import experiment, ledgered, method, paper, plots, questions
from rag_lab.methods.ssg.config import SSGConfig
from ssg_handmade import A, B, WordEmbedder, main_graph, query_at, scores_frame
from test_ssg_budget_findings import AngleEmbedder


def test_load_spreads_the_limit_over_the_grouping_strategies():
    from rag_lab import load_dataset

    full = load_dataset("ml_encyclopedia")
    strategies = list(dict.fromkeys(q.meta["strategy"] for q in full.questions))
    data = experiment.load("ml_encyclopedia", len(strategies))
    # one question of every strategy, each the first of its strategy
    assert [q.meta["strategy"] for q in data.questions] == strategies
    assert [q.id for q in data.questions] == [next(q.id for q in full.questions if q.meta["strategy"] == s) for s in strategies]
    assert len(experiment.load("ml_encyclopedia").questions) == len(full.questions)


def test_saved_graph_keeps_the_knobs_given_and_loads_back_the_same_graph(tmp_path):
    from ssg_handmade import ThemeReasoner

    docs = [Document("x", "Alpha alpha beta here. Alpha is first. Beta is second. Gamma ends it."),
            Document("y", "Gamma gamma delta. Delta again here. Gamma closes."),
            Document("z", "Beta beta alpha now. Alpha beta more. Alpha again.")]
    embedder = WordEmbedder()
    reasoner = ThemeReasoner([["alpha", "beta"], ["gamma", "delta"], ["alpha beta", "beta"]])
    config, built, graph = method.saved_graph(docs, embedder, reasoner, tmp_path / "g",
                                              window=2, stride=None, top_k=1, top_x=1, top_t=None)
    # None keeps a default: only window, top_k and top_x differ from SSGConfig's
    assert config == SSGConfig(window=2, top_k=1, top_x=1)
    assert (tmp_path / "g").exists() and graph is not built
    assert sorted(graph.graph.edges(data=True)) == sorted(built.graph.edges(data=True))
    assert graph.doc_ids == ["x", "y", "z"]


def test_teaching_questions_keep_the_data_or_need_an_llm_to_write_fresh_ones():
    graph, docs = main_graph()
    data = Dataset("hand", docs, [Question("q1", "where?", meta={"strategy": "intra_document"}),
                                  Question("q2", "what?", meta={"strategy": "theme_based"})])
    kept, said = questions.teaching_questions(data, False, "offline", None, graph, 3)
    assert kept is data
    assert said == [paper.questions_sentence(data.questions, "hand", None)]
    assert said[0].startswith("Our questions differ from the paper's: 2 on hand, written by hand for grouping-strategy "
                              "sentence groups (1 intra_document, 1 theme_based)")
    # the offline reasoner cannot write questions: the writer is resolved and refused by name
    with pytest.raises(ValueError, match="question generation needs an LLM reasoner.*'offline'"):
        questions.teaching_questions(data, True, "offline", AngleEmbedder(), graph, 1)


def hand_run():
    graph, docs = main_graph()
    data = Dataset("hand", docs, [Question("q", "where?", gold_doc_ids=["B"], gold_contexts=["Document B states fact three."],
                                           meta={"strategy": "s"})])
    algorithms = ["basic_retrieval", "query_traversal", "triangulation_average"]
    return graph, data, algorithms, experiment.run(graph, data, algorithms, 10, None, AngleEmbedder())


def test_results_say_what_they_measure_and_what_was_not_computed():
    scores = scores_frame([("basic_retrieval", "a", 0.8, 0.4, 5), ("basic_retrieval", "b", 0.6, 0.6, 8),
                           ("query_traversal", "a", 0.5, 0.6, 9), ("query_traversal", "b", 0.4, 0.7, 7)])
    data = Dataset("hand", main_graph()[1], [Question("a", "?", gold_doc_ids=["A"]), Question("b", "?", gold_doc_ids=["B"])])
    res = paper.results(scores, None, 0.5, data, "the definition")
    assert res.table.equals(experiment.results_table(scores, None, 0.5))
    # basic's precision (.8 + .6) / 2 = .7; query's recall (.6 + .7) / 2 = .65
    assert res.table.loc["basic_retrieval", "gold_sentence_precision"] == pytest.approx(0.7)
    from rag_lab.evaluation.uncertainty import summary_with_ci
    rows = experiment.tidy(scores)      # every mean of the table with n and its interval, clustered by document
    assert res.summary.equals(summary_with_ci(rows, list(dict.fromkeys(rows["metric"])),
                                              units=experiment.units_of(scores)))
    from rag_lab.evaluation.uncertainty import formatted_summary
    assert res.shown_summary.equals(formatted_summary(res.summary))
    empty = [c for c in res.table.columns if res.table[c].isna().all()]
    assert empty and set(empty) <= set(experiment.JUDGED_COLUMNS) | {"passed", "total", "pass_rate"}
    from rag_lab.evaluation.decisions import estimand_of
    assert res.said == [estimand_of(data),
                        "Unlike the paper's tables (one grouping strategy each, DeepEval's LLM-judged metrics), this one pools 2 "
                        "questions of 1 strategies and measures context by gold-sentence precision/recall (no judge, so no "
                        "answer relevancy or faithfulness).",
                        "the definition",
                        "Not computed in this run (no judge): " + ", ".join(empty) + "."]


def test_decided_is_the_teaching_run_itself_or_a_run_on_the_data_named(monkeypatch):
    graph, data, algorithms, ran = hand_run()
    assert experiment.decided(None, "hand", data, ran, None, SSGConfig(), algorithms, 10, None, None) == (data, ran)
    assert experiment.decided("hand", "hand", data, ran, None, SSGConfig(), algorithms, 10, None, None) == (data, ran)
    # another name: loaded with the limit, its graph built with the same knobs, run without a judge
    other = Dataset("other", data.documents, data.questions)
    seen = {}
    monkeypatch.setattr(experiment, "load", lambda name, limit: seen.setdefault("load", (name, limit)) and other)
    monkeypatch.setattr(method, "stored_graph", lambda docs, emb, reasoner, config: seen.setdefault("config", config) and graph)
    decider, d_ran = experiment.decided("other", "hand", data, ran, 7, SSGConfig(top_k=2), algorithms, 10, None, AngleEmbedder())
    assert decider is other and seen == {"load": ("other", 7), "config": SSGConfig(top_k=2)}
    assert d_ran.judged is None and d_ran.scores["sentences"].tolist() == ran.scores["sentences"].tolist() == [7, 8, 8]


def test_findings_say_every_family_and_the_sentences_gathered():
    _, data, _, ran = hand_run()
    said = ledgered.findings(data, ran, 0.5, "x")
    from rag_lab.evaluation.decisions import estimand_of
    assert said[0] == estimand_of(data)
    # basic_retrieval gathers no gold sentence (test_ssg_budget_findings): its recall and precision are 0
    assert said[1].startswith("hand (1 questions, x), own stopping points, gold_sentence_recall minus basic_retrieval's "
                              "(0.00), paired by question:\n  ")
    assert said[2].startswith("hand (1 questions, x), own stopping points: highest mean gold_sentence_recall: ")
    assert said[3].startswith("hand, at the equal sentence budget, gold_sentence_recall minus basic_retrieval's (0.00)")
    beats = paper.reported_beats("recall")
    assert said[5:5 + len(beats)] == beats
    assert said[5 + len(beats)].startswith("hand (1 questions, x), own stopping points, gold_sentence_precision minus")
    # own stopping points: basic 7 sentences, query_traversal 8, triangulation_average 8
    assert said[-1] == ("Sentences gathered on average at the own stopping points on hand: basic_retrieval 7.0, "
                        "query_traversal 8.0, triangulation_average 8.0.")
    assert len(said) == 1 + 2 * (4 + len(beats)) + 1


def test_traversal_paths_gives_the_3d_figure_and_its_flat_panels_under_one_title():
    graph = main_graph()[0]
    q = query_at(graph, 0.0).coords3
    paths = {"query_traversal": [A(0), B(0), B(1), B(2)], "basic_retrieval": [A(0), A(1)]}
    fig, flat = plots.traversal_paths(graph, q, paths, "Paths", focus=True)
    assert fig.to_json() == plots.traversal_3d(graph, q, paths, "Paths", focus=True).to_json()
    assert flat.to_json() == plots.traversal_paths_2d(graph, q, paths, fig.layout.title.text, focus=True).to_json()
    assert [a.text for a in flat.layout.annotations] == list(paths)            # one panel each
