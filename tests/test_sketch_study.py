"""Notebook 01's sections as functions (sketch/study.py, the figures in sketch/plots.py), on the hand-made
graph of test_sketch and on hand-made tidy tables whose answers are worked out in the comments."""
from __future__ import annotations

from types import SimpleNamespace

import pandas as pd
import pytest

from rag_lab.core.types import Chunk, Dataset, Question
from rag_lab.evaluation import harness
from rag_lab.methods import get_retriever
from rag_lab.methods.sketch import study
from rag_lab.methods.sketch.graph_reading import graph_profile
from rag_lab.methods.sketch.method import CONFIRMED, VECTOR
from rag_lab.methods.sketch.paper import paper_table
from sketch_fakes import TableReasoner
from test_sketch import DOCS, QUERY, TRIPLES


class Answering(TableReasoner):
    """The table reasoner, answering with the first context it is handed (the facts block)."""

    def answer(self, question, contexts):
        return contexts[0].splitlines()[-1]


def built(name, embedder, **params):
    reasoner = Answering(TRIPLES, {QUERY: ["saffron"]})
    return harness.build(get_retriever(name, reasoner=reasoner, embedder=embedder, graph_store="networkx",
                                       **params), DOCS), reasoner


def tidy(scores: dict[str, dict[str, list[float]]]) -> pd.DataFrame:
    """metric@k -> method -> per-question scores, as evaluate's tidy rows."""
    rows = []
    for column, by_method in scores.items():
        metric, k = column.split("@")
        rows += [{"method": method, "question_id": f"q{i}", "metric": metric, "k": int(k), "value": v}
                 for method, values in by_method.items() for i, v in enumerate(values)]
    table = pd.DataFrame(rows)
    table.attrs["methods"] = {m: {"index_reasoner": "none"} for m in table["method"].unique()}   # as evaluate records
    return table


class Words:            # an encoder reading 6 word pieces (4 of text + 2 special), counting words
    max_tokens = 6

    def count_tokens(self, text):
        return len(text.split())


def made(*texts):
    return SimpleNamespace(chunks=[Chunk(str(i), "d", t, 0, len(t)) for i, t in enumerate(texts)], uses_vectors=True)


def test_built_by_and_the_graph_profile_of_the_hand_made_graph(embedder):
    kg, _ = built("kg", embedder)
    assert study.built_by(kg) == "index built by: table, answers by: none"
    profile, said = graph_profile(kg.graph.store, "table")
    # 3 relations (one per table triple) over 5 nodes: saffron, risotto alla milanese, milan, lombardy, abruzzo
    assert (profile["relations"], profile["nodes"]) == (3, 5)
    assert said.startswith("What the graph half is here (table extracted it): ") and "of its 3 relations" in said


def test_the_worked_question_through_sketch(embedder):
    sketch, reasoner = built("sketch", embedder)
    q = Question("q", QUERY, answer="Abruzzo", gold_doc_ids=["spices"])
    worked = study.worked_example(sketch, reasoner, q, 3, DOCS)
    # saffron matches its node exactly; on networkx no Cypher is sent; one hop reaches the risotto and Abruzzo
    assert worked["matches"].to_dict("records") == [{"entity": "saffron", "node": "saffron", "how": "exact",
                                                     "similarity": 1.0}]
    assert worked["statements"] == [study.NO_CYPHER]
    assert set(worked["neighbourhood"].distances) == {"saffron", "risotto alla milanese", "abruzzo"}
    # both graph chunks are confirmed (first), the places piece follows from the vector list
    assert worked["merged"]["rank"].tolist() == [1, 2, 3]
    assert worked["merged"]["source"].tolist() == [CONFIRMED, CONFIRMED, VECTOR]
    assert "CONTEXTS:\n[1] " in worked["prompt"]   # the answer job's prompt over the handed-over contexts
    # the answer is the facts block's last line: 1 of the 2 facts, all of the answer's characters
    assert worked["answer"] == "Saffron -[grows_in]-> Abruzzo"
    assert worked["answer_sentence"] == ("1 of the 2 graph facts handed over appear word for word in this answer "
                                         "(100% of its characters).")


def test_retrieval_report_of_two_built_approaches(embedder):
    sketch, _ = built("sketch", embedder)
    semantic = harness.build(get_retriever("semantic", embedder=embedder), DOCS)
    methods = {"semantic": semantic, "sketch": sketch}
    data = Dataset("toy", DOCS, [Question("q", QUERY, gold_doc_ids=["spices"])])
    results = harness.evaluate(methods, data, [3], progress=False)
    report = study.retrieval_report(results, methods, data, 3, embedder, "offline", None, "a note")
    # the document metrics at 3 (no gold passages here): one row each per method, n = the one question
    assert sorted(report["summary"]["metric"].unique()) == ["doc_mrr@3", "doc_recall@3"]
    assert (report["summary"]["n"] == 1).all() and sorted(report["summary"]["method"].unique()) == ["semantic", "sketch"]
    assert report["caption"].startswith("Retrieval on toy: mean [95% interval]") and report["caption"].endswith("; a note)")
    assert list(report["costs"].columns) == ["chunks", "build_seconds", "build_embedding_tokens", "build_llm_calls"]
    assert report["costs"].loc["sketch", "build_llm_calls"] == 3 and report["units"] == {"q": "spices"}
    assert report["unscored"] == "none"
    assert report["setting"][0].startswith("Not like-for-like with the paper") and "1 hop(s)" in report["setting"][1]
    assert report["setting"][2].startswith("Texts longer than the encoder reads")


def test_paper_column_metrics_with_and_without_a_judge():
    assert study.paper_column_metrics(False, 5) == {
        "answer_relevancy": "answer_relevancy@5", "faithfulness": "faithfulness@5",
        "context_precision": "nonllm_context_precision@5", "context_recall": "nonllm_context_recall@5"}
    assert study.paper_column_metrics(True, 3)["context_recall"] == "llm_context_recall@3"


HAND_SCORES = {   # three questions on three documents: each baseline's difference is 0.5, 0, -0.5 in turn
    "ctx_recall@5": {"naive": [0.0, 0.5, 1.0], "semantic": [0.5, 0.5, 0.5], "kg": [1.0, 1.0, 1.0],
                     "raptor": [0.0, 0.0, 0.0], "sketch": [0.5, 0.5, 0.5]},
    "nonllm_context_precision@5": {m: [0.2, 0.4, 0.6] for m in ("naive", "semantic", "kg", "raptor", "sketch")}}


def hand_decision() -> study.Decision:
    data = Dataset("hand", [], [Question(f"q{i}", f"question {i}", gold_doc_ids=[f"d{i}"]) for i in range(3)])
    methods = {"naive": made("a b c"), "semantic": made("a b c d e f g"), "kg": made("a"), "raptor": made("a b"),
               "sketch": made("a b c d")}
    return study.Decision(data, methods, tidy(HAND_SCORES))


def test_a_decision_on_three_questions_names_the_comparisons_it_cannot_decide():
    decision = hand_decision()
    assert decision.units == {"q0": "d0", "q1": "d1", "q2": "d2"}
    assert decision.span_columns(5) == {"ctx_recall@5": "ctx_recall@5"}          # the only span metric scored
    lead = decision.lead(5, 5, judged=False)
    pairs = lead["pairs"]
    # sketch minus each of the four baselines on the span metric, then on string-match precision (recall unscored)
    assert pairs["column"].tolist() == ["ctx_recall@5"] * 4 + ["string-match context precision"] * 4
    assert pairs["baseline"].tolist()[:4] == ["naive", "semantic", "kg", "raptor"]
    assert pairs["diff"].tolist()[:4] == pytest.approx([0.0, 0.0, -0.5, 0.5])
    assert pairs["family"].iloc[0] == "sketch minus each baseline on ctx_recall@5, nonllm_context_precision@5"
    assert lead["caption"].startswith("SKETCH minus each baseline on hand: span metrics at k = 5, then string-match")
    assert lead["caption"].endswith("(index built without a reasoner, answers by: none, judge: none)")
    assert any(s.startswith("8 comparisons cannot be decided") for s in lead["sentences"])   # 3 documents
    said = decision.findings({"ctx_recall@5": "ctx_recall@5"}, 5, "offline", None, Words(), 1)
    assert said[0] == ("Findings (3 questions; reasoner: offline; judge: none) on hand: sketch minus each baseline, "
                       "paired by question, span metrics first, each beside the order the paper reported for the pair:")
    # Table 1's leaders: KG and SKETCH tie on answer relevancy (0.94)
    assert said[-1].startswith("Highest per column, paper-reported Table 1: answer relevancy: kg = sketch (0.940);")
    assert "semantic: 1 of 1 chunks" in "\n".join(said)                 # 7 words, past the 4 the encoder reads
    assert decision.findings({"ctx_recall@5": "ctx_recall@5"}, 5, "offline", None, Words(), None)[-1] == (
        "The paper reports nothing for this dataset.")


def test_decided_on_the_teaching_run_or_on_other_data(monkeypatch):
    teaching = hand_decision()
    same = study.decided_on(None, "hand", teaching.data, teaching.methods, teaching.results, {})
    assert same.data is teaching.data and same.results is teaching.results
    assert study.decided_on("hand", "hand", teaching.data, teaching.methods, teaching.results, {}).data is teaching.data
    # other data: loaded with the limit, every approach fresh with its knobs, evaluated there
    import rag_lab.datasets
    import rag_lab.evaluation.harness
    loaded = []
    monkeypatch.setattr(rag_lab.datasets, "data_source", lambda name: SimpleNamespace(
        load=lambda limit=None: loaded.append((name, limit)) or teaching.data))
    monkeypatch.setattr(rag_lab.evaluation.harness, "evaluate", lambda methods, data, **kw: teaching.results.assign(
        seen=",".join(methods) + f";{kw['ks']}"))
    other = study.decided_on("other", "hand", None, {}, None, {"naive": {}, "bm25": {}}, 2, ks=[5])
    assert loaded == [("other", 2)] and list(other.methods) == ["naive", "bm25"]
    assert other.results["seen"].iloc[0] == "naive,bm25;[5]" and other.methods["naive"].chunks == []


def test_beside_paper_saves_table_one_and_the_four_transcribed_tables(tmp_path):
    ours = paper_table(1) - 0.1      # ours: the paper's numbers less 0.1, so every difference is -0.1
    results = tidy({"nonllm_context_precision@5": {m: [ours.loc[m, "context_precision"]] * 2 for m in ours.index}})
    columns = {"context_precision": "nonllm_context_precision@5"}
    said = study.beside_paper(ours, columns, results, "italian_cuisine", None, None, "a note", tmp_path)
    assert said["number"] == 1 and said["head"].startswith("Table 1 — Italian Cuisine: ours | paper-reported | difference\n(")
    side = pd.read_csv(tmp_path / "table1_ours_vs_paper.csv", index_col=0, header=[0, 1])
    assert side[("context_precision", "difference")].tolist() == pytest.approx([-0.1] * 5)
    assert all((tmp_path / f"paper_table{n}.csv").exists() for n in (1, 2, 3, 4))
    assert list(said["paper_tables"]) == [f"Table {n} — {d} (paper-reported)" for n, d in
                                          [(1, "Italian Cuisine"), (2, "QuALITY"), (3, "QASPER"), (4, "NarrativeQA")]]
    assert said["metric_note"].startswith("with no judge configured")
    elsewhere = study.beside_paper(ours, columns, results, "toy", None, None, "a note", tmp_path / "toy")
    assert elsewhere["number"] is None and elsewhere["head"].startswith("The paper reports no table for toy; ours (")
    assert not (tmp_path / "toy" / "tabletoy_ours_vs_paper.csv").exists() and elsewhere["left_out"] == ""


def test_heatmaps_save_one_figure_per_approach_and_explain_an_all_zero_column(monkeypatch, tmp_path):
    import rag_lab.core.figures
    from rag_lab.methods.sketch.plots import heatmaps

    saved = []
    monkeypatch.setattr(rag_lab.core.figures, "save_figure",
                        lambda fig, out, name, height: saved.append((name, height)))
    results = tidy({"ctx_recall@5": {"naive": [0.0, 0.0], "sketch": [1.0, 0.5]},
                    "token_f1@5": {"naive": [0.5, 0.5], "sketch": [0.5, 1.0]}})
    data = Dataset("toy", [], [Question("q0", "a", gold_contexts=["gold text"]), Question("q1", "b")])
    figures, notes = heatmaps(results, {"naive": made("x"), "sketch": made("y")}, data, 5, "offline", None, tmp_path)
    # two questions: the height is the floor, 400 > 28 * 2 + 200; only naive has a column at 0 throughout
    assert saved == [("heatmap_naive", 400), ("heatmap_sketch", 400)] and len(figures) == 2
    assert len(notes) == 1 and notes[0].startswith("naive: ") and "ctx_recall" in notes[0]


def test_the_bars_name_the_context_columns_as_string_matching_without_a_judge():
    from rag_lab.methods.sketch.plots import approaches_bars

    bars = pd.DataFrame({"ctx_recall@5": [0.5, 0.75], "context_precision": [0.3, 0.6], "f1": [0.4, 0.5],
                         "faithfulness": [float("nan")] * 2}, index=["naive", "sketch"])
    results = tidy({"ctx_recall@5": {"naive": [0.0, 1.0], "sketch": [0.5, 1.0]},
                    "nonllm_context_precision@5": {"naive": [0.3, 0.3], "sketch": [0.6, 0.6]}})
    columns = {"ctx_recall@5": "ctx_recall@5", "context_precision": "nonllm_context_precision@5",
               "faithfulness": "faithfulness@5"}
    fig = approaches_bars(bars, results, columns, "title", "offline", False, None)
    labels = {x for trace in fig.data for x in trace.x}
    # faithfulness is unscored (NaN for every approach): left out; F1 of the means keeps its column
    assert labels == {"ctx_recall@5", "string-match context_precision", "string-match f1"}
    judged = approaches_bars(bars, results, columns, "title", "offline", True, None)
    assert {x for trace in judged.data for x in trace.x} == {"ctx_recall@5", "context_precision", "f1"}
