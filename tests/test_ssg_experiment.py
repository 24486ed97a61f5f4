"""The SSG experiment end to end with the real MiniLM embedder: the offline llm_guided_traversal is
an algorithm of its own on the shipped questions, and a judge (the fake OpenAI-compatible server)
fills the LLM-judged columns that stand in for the paper's DeepEval ones."""
from __future__ import annotations

import numpy as np
import pytest

from fake_openai_server import FakeOpenAIServer
from rag_lab import load_dataset
from rag_lab.methods.ssg import experiment, paper
from rag_lab.methods.ssg.config import SSGConfig
from rag_lab.methods.ssg.graph import build_graph
from rag_lab.reasoning import resolve_reasoner
from rag_lab.core.types import Dataset, Document, Question
from test_answer_metrics import agreeable_judge


def test_offline_llm_guided_is_not_query_traversal_on_the_shipped_questions(embedder):
    data = load_dataset("ml_encyclopedia")
    reasoner = resolve_reasoner("offline", embedder)
    graph = build_graph(data.documents, embedder, reasoner, SSGConfig())
    results = experiment.run_algorithms(graph, data, ["query_traversal", "llm_guided_traversal"],
                                        {"sequential_multi_hop": 15}, reasoner, embedder)
    guided, query = results["ssg-llm-guided-traversal"], results["ssg-query-traversal"]
    same, total = sum(guided[q].trace["path"] == query[q].trace["path"] for q in guided), len(guided)
    assert total == len(data.questions) == 18
    assert same <= total // 2, f"the offline llm_guided path equals query_traversal's on {same} of {total} questions"
    table = experiment.results_table(experiment.gathered_scores(results, data))
    columns = ["gold_sentence_precision", "gold_sentence_recall", "sentences"]
    rows = table.loc[["query_traversal", "llm_guided_traversal"], columns].to_numpy()
    assert not np.allclose(rows[0], rows[1]), "the two rows of the results table are the same"
    # the offline reasoner stops by its own rule on some questions (query_traversal never does)
    stops = {r.trace["stop_reason"] for r in results["ssg-llm-guided-traversal"].values()}
    assert "reasoner_stop" in stops


PESTO = "Pesto comes from Genoa. It is made with basil and pine nuts. Cooks pound it in a mortar."
PIZZA = "Pizza comes from Naples. It is baked in a wood oven. The dough rises for a day."


def test_a_judge_fills_the_llm_judged_columns(embedder):
    docs = [Document("p", PESTO, "Pesto"), Document("z", PIZZA, "Pizza")]
    questions = [Question("q1", "Where does pesto come from and what is in it?", "Genoa; basil and pine nuts.", ["p"],
                          ["Pesto comes from Genoa.", "It is made with basil and pine nuts."],
                          meta={"strategy": "theme_based"})]
    data = Dataset("tiny", docs, questions)
    reasoner = resolve_reasoner("offline", embedder)
    graph = build_graph(docs, embedder, reasoner, SSGConfig(top_k=1, top_x=1, top_t=1))
    with FakeOpenAIServer() as server:
        server.responder = agreeable_judge
        ran = experiment.run(graph, data, ["basic_retrieval", "query_traversal"], 4, reasoner, embedder,
                             f"openai-compatible:judge-model@{server.base_url}")
        assert server.requests, "the judge was never called"
    judged, scores = ran.judged, ran.scores
    # the agreeable judge finds every context useful and every reference claim attributed
    assert judged["llm_context_precision"].to_numpy() == pytest.approx([1.0, 1.0], abs=1e-6)
    assert judged["llm_context_recall"].to_list() == [1.0, 1.0] and judged["faithfulness"].to_list() == [1.0, 1.0]
    # the run is keyed by algorithm; its scores name the registry's methods; the equal budget is the fewest gathered
    assert list(ran.results) == ["basic_retrieval", "query_traversal"] and set(ran.results["basic_retrieval"]) == {"q1"}
    assert list(scores["method"]) == ["ssg-basic-retrieval", "ssg-query-traversal"]
    assert (ran.equal["sentences"] == scores["sentences"].min()).all() and len(ran.equal) == 2
    table = experiment.results_table(scores, judged, threshold=0.5)
    assert table.loc["query_traversal", "llm_context_recall"] == 1.0
    # the pass rule reads the judged columns: answer relevancy (a cosine) decides here
    relevancy = judged.set_index("method").loc["ssg-query-traversal", "answer_relevancy"]
    assert table.loc["query_traversal", "test_cases"] == ("1/1" if relevancy >= 0.5 else "0/1")
    # one theme_based question: only the theme_based paper table has ours beside it, with its parts
    (comparison,) = paper.paper_comparisons(scores, judged, 0.5, data, embedder.model_id, "offline", "judge-model")
    assert comparison.name == "20q theme_based (paper-reported)"
    assert comparison.table.loc["query_traversal", "recall (ours: llm_context_recall)"] == 1.0
    assert comparison.table.loc["query_traversal", "precision (paper-reported)"] == 0.83
    shown, note = paper.shown_comparison(comparison.table)
    assert comparison.shown.equals(shown) and comparison.note == note
    setting = paper.RunSetting("tiny", 1, embedder.model_id, "offline", "judge-model")
    assert comparison.like_for_like.equals(paper.like_for_like(comparison.name, setting))
    assert comparison.setting == paper.setting_sentence(comparison.name, setting)
    assert comparison.setting.startswith("Beside 20q theme_based (paper-reported): 1 theme_based questions on tiny")
