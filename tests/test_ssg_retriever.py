"""The ssg-* retrievers (registration, span hits, one query embedding), the report helpers
(precision/recall of gathered sentences, the table, the paper's numbers) and the shipped
question set of ml_encyclopedia."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rag_lab.evaluation import harness
from rag_lab import get_retriever, load_dataset
from rag_lab.evaluation.metrics import retrieval_metrics
from rag_lab.evaluation.statistics import INCONCLUSIVE, UNDECIDABLE
from rag_lab.methods.ssg import experiment, ledgered, paper
from rag_lab.methods.ssg.algorithms import ALGORITHMS
from rag_lab.methods.ssg.config import SSGConfig
from rag_lab.methods.ssg.method import SSGRetriever, method_name
from rag_lab.evaluation.retrievers import REGISTRY
from rag_lab.core.types import Chunk, Hit, Question, Retrieval
from ssg_handmade import main_graph, sa, sb, scores_frame, unit


def test_seven_retrievers_are_registered_with_hyphenated_names():
    names = {method_name(a): a for a in ALGORITHMS}
    assert set(names) == {"ssg-basic-retrieval", "ssg-query-traversal", "ssg-ssg-traversal",
                          "ssg-triangulation-average", "ssg-triangulation-geometric-3d",
                          "ssg-triangulation-fulldim", "ssg-llm-guided-traversal"}
    for name, algorithm in names.items():
        assert name in REGISTRY
        r = get_retriever(name, top_k=3)
        assert r.algorithm == algorithm and r.name == name and r.config.top_k == 3


class CountingEmbedder:
    """Maps the query text to a fixed angle and counts encode calls."""

    def __init__(self):
        self.calls = 0

    def encode_one(self, text):
        self.calls += 1
        return unit(0)

    def count_tokens(self, texts):
        return len(texts.split())


def test_hits_are_gathered_sentences_as_exact_spans_and_the_query_is_embedded_once():
    graph, docs = main_graph()
    emb = CountingEmbedder()
    r = SSGRetriever.from_graph(graph, "query_traversal", 10, embedder=emb, documents=docs)
    ret = harness.retrieve(r, "the query", k=20)
    assert emb.calls == 1
    # the hand-worked query_traversal path (test_ssg_algorithms): A0, B0, B1, B2 -> A s0-s2, B s0-s4
    assert [h.chunk.id for h in ret.hits] == sa(0, 1, 2) + sb(0, 1, 2, 3, 4)
    texts = {d.id: d.text for d in docs}
    assert all(h.chunk.text == texts[h.chunk.doc_id][h.chunk.start:h.chunk.end] for h in ret.hits)
    assert ret.trace["path"] == ["A#w0", "B#w0", "B#w1", "B#w2"] and ret.trace["stop_reason"] == "sentence_beats_candidates"
    assert ret.hits[0].score == pytest.approx(np.cos(np.deg2rad(30)), abs=1e-5)   # A s0 at 30 degrees
    assert ret.cost.embedding_tokens == 2
    # k cuts the gathered list; the shared metrics score the spans
    assert len(harness.retrieve(r, "the query", k=2).hits) == 2
    q = Question("q", "the query", gold_doc_ids=["B"], gold_contexts=[docs[1].text.split(". ")[0] + "."])
    rows = {(m, k): v for m, k, v in retrieval_metrics([h.chunk for h in ret.hits], q, {d.id: d for d in docs}, [8])}
    assert rows[("ctx_recall", 8)] == 1.0 and rows[("doc_precision", 8)] == 5 / 8


def test_llm_guided_retrieval_reports_fallbacks_in_its_cost():
    from rag_lab.reasoning import Choice, Usage
    from rag_lab.core.types import Cost

    class OneInvalidThenStop:
        name = "scripted"

        def __init__(self):
            self.usage, self.replies = Usage(), [Choice("next", 99), Choice("stop")]

        def choose_next(self, *args, **kwargs):
            return self.replies.pop(0)

        def usage_since(self, before):
            return Cost(llm_calls=2)

    graph, docs = main_graph()
    r = SSGRetriever.from_graph(graph, "llm_guided_traversal", 10, OneInvalidThenStop(), CountingEmbedder(), docs)
    ret = harness.retrieve(r, "the query", 20)
    # index 99 is invalid -> the most query-similar candidate of A0 (B0); then the reasoner stops
    assert ret.trace["path"] == ["A#w0", "B#w0"] and ret.trace["llm_choices"] == 2
    assert ret.trace["llm_fallbacks"] == ret.cost.llm_fallbacks == 1 and ret.cost.llm_calls == 2


def test_retrieve_before_build_is_an_error():
    with pytest.raises(RuntimeError, match="call build"):
        harness.retrieve(SSGRetriever(algorithm="basic_retrieval"), "q", 3)
    with pytest.raises(ValueError, match="SSGConfig.algorithm must be one of 'basic_retrieval'.*got 'nope'"):
        SSGRetriever(algorithm="nope")


# -- report helpers --------------------------------------------------------------------------
def _ret(doc_text_spans, trace=None):
    hits = [Hit(Chunk(f"{d}#{s}", d, "", s, e), 1.0) for d, s, e in doc_text_spans]
    return Retrieval("q", hits, trace or {"algorithm": "x", "path": ["w"]})


def test_gathered_precision_and_recall_by_hand():
    from rag_lab.core.types import Dataset, Document

    doc = Document("d", "One two. Three four. Five six. Seven eight.")
    # gold: "Three four." (9-20) and "Five six." (21-30)
    q = Question("q1", "?", gold_doc_ids=["d"], gold_contexts=["Three four.", "Five six."], meta={"strategy": "theme_based"})
    data = Dataset("t", [doc], [q])
    # hits: "One two." (0-8, not gold), "Three four." (gold), "Seven eight." (31-43, not gold)
    results = {"ssg-x": {"q1": _ret([("d", 0, 8), ("d", 9, 20), ("d", 31, 43)], {"algorithm": "query_traversal"})}}
    s = experiment.gathered_scores(results, data)
    # precision 1 gold hit / 3 hits; recall 1 of 2 gold sentences
    assert s.loc[0, "gold_sentence_precision"] == pytest.approx(1 / 3) and s.loc[0, "gold_sentence_recall"] == 0.5
    assert s.loc[0, "strategy"] == "theme_based" and s.loc[0, "sentences"] == 3


def test_results_table_pass_counts_and_beats_basic():
    scores = scores_frame([("basic_retrieval", "a", 0.9, 0.4, 5), ("basic_retrieval", "b", 0.7, 0.6, 7),
                            ("query_traversal", "a", 0.6, 0.8, 9), ("query_traversal", "b", 0.5, 0.5, 9)])
    t = experiment.results_table(scores, threshold=0.5)
    # basic: a fails (recall .4), b passes; query: both reach .5 on both metrics
    assert list(t.index) == ["basic_retrieval", "query_traversal"]
    assert t.loc["basic_retrieval", "test_cases"] == "1/2" and t.loc["query_traversal", "test_cases"] == "2/2"
    assert t.loc["basic_retrieval", "gold_sentence_precision"] == pytest.approx(0.8)
    assert np.isnan(t.loc["basic_retrieval", "faithfulness"]) and np.isnan(t.loc["basic_retrieval", "llm_context_recall"])
    assert paper.beats_basic(t, "gold_sentence_recall") == ["query_traversal"]
    assert paper.beats_basic(t, "gold_sentence_precision") == []
    # equal up to floating-point noise is not a win
    noisy = t.assign(gold_sentence_recall=[1.0, 1.0 + 1e-12])
    assert paper.beats_basic(noisy, "gold_sentence_recall") == []
    # with a judge the case is decided on the four judged columns: query b has faithfulness .2 -> fails,
    # query a passes although nothing about gold sentences is asked; basic has no judged rows -> 0/2
    judged = pd.DataFrame({"method": ["ssg-query-traversal"] * 2, "question_id": ["a", "b"],
                           "llm_context_precision": [0.6, 0.9], "llm_context_recall": [0.7, 0.9],
                           "answer_relevancy": [0.9, 0.9], "faithfulness": [0.9, 0.2]})
    t = experiment.results_table(scores, judged)
    assert t.loc["query_traversal", "test_cases"] == "1/2" and t.loc["basic_retrieval", "test_cases"] == "0/2"
    assert t.loc["query_traversal", "llm_context_precision"] == pytest.approx(0.75)


def test_versus_basic_pairs_each_algorithm_with_basic_retrieval():
    # eight questions: query finds all the gold basic misses (d = +1, the bound, on every question): the
    # bounded-mean test's p is its floor, 2 P(w_unseen >= 1/2) = 2 (1/2)^8 = 0.0078 (Dirichlet(1, ..., 1) on
    # 9 units), Holm over two algorithms 0.016 < 0.05: above 0. Triangulation is 0.5 ahead on one question
    # and level on seven: not told apart
    qs = "abcdefgh"
    rows = [("basic_retrieval", q, 0.5, 0.0, 5) for q in qs]
    rows += [("query_traversal", q, 0.5, 1.0, 9) for q in qs]
    rows += [("triangulation_average", q, 0.5, 0.5 if q == "a" else 0.0, 6) for q in qs]
    scores = scores_frame(rows)
    vs = ledgered.versus_basic(scores, "gold_sentence_recall").set_index("method")
    assert vs.loc["query_traversal", "diff"] == 1.0
    assert vs.loc["query_traversal", "p"] == pytest.approx(2 / 256, abs=1e-3)     # within the draws' precision
    assert vs.loc["query_traversal", "side"] == "above" and vs.loc["triangulation_average", "side"] == INCONCLUSIVE
    assert set(vs["family"]) == {"every algorithm minus basic_retrieval on gold_sentence_recall (own stopping point)"}
    from rag_lab.evaluation.findings import finding_sentences
    said = finding_sentences(ledgered.versus_basic(scores, "gold_sentence_recall", label="run"))
    assert said[0].startswith("query_traversal - basic_retrieval on gold_sentence_recall: 1.000 [") and said[0].endswith(
        ": supported")
    assert said[1].startswith("triangulation_average - basic_retrieval on gold_sentence_recall: 0.062 [") and \
        said[1].endswith(f": {INCONCLUSIVE}")
    assert said[2].startswith('p Holm-adjusted within the declared family "every algorithm minus basic_retrieval on '
                              'gold_sentence_recall (own stopping point)" (2 comparisons)')
    # four questions: no p below 2/2^4 = 0.125 is possible, and the sentence says so
    few = ledgered.versus_basic(scores_frame([r for r in rows if r[1] in "abcd"]), "gold_sentence_recall")
    assert set(few["side"]) == {UNDECIDABLE}
    # clustered by document: questions a-d on one document, e-h on another -> 2 units, nothing decidable
    two = scores.assign(unit=scores["question_id"].map(lambda q: "d1" if q in "abcd" else "d2"))
    clustered = ledgered.versus_basic(two, "gold_sentence_recall").set_index("method")
    assert set(clustered["units"]) == {2} and set(clustered["side"]) == {UNDECIDABLE}


def test_paper_tables_as_typed_from_the_paper():
    t20 = paper.paper_table("20q theme_based (paper-reported)")
    t50 = paper.paper_table("50q sequential_multi_hop (paper-reported)")
    assert list(t20.index) == list(ALGORITHMS) == list(t50.index)
    assert t20.loc["triangulation_fulldim", "precision"] == 0.90 and t20.loc["llm_guided_traversal", "test_cases"] == "17/20"
    assert t50.loc["query_traversal", "test_cases"] == "50/50" and t50.loc["llm_guided_traversal", "recall"] == 0.94
    # the paper's claims: on the 50-question set only query_traversal and llm_guided beat basic on recall
    assert paper.beats_basic(t50, "recall") == ["query_traversal", "llm_guided_traversal"]
    assert paper.beats_basic(t50, "precision") == []


def test_cap_for_strategy():
    q = Question("q", "?", meta={"strategy": "sequential_multi_hop"})
    assert experiment.cap_for(q, 10) == 10
    assert experiment.cap_for(q, {"default": 10, "sequential_multi_hop": 15}) == 15
    # no entry and no default: SSGConfig's max_sentences
    assert experiment.cap_for(q, {"theme_based": 12}) == SSGConfig().max_sentences
    assert experiment.cap_for(q, None) == SSGConfig().max_sentences      # None: SSGConfig's for every question


# -- the shipped question set -------------------------------------------------------------------
def test_ml_encyclopedia_questions_are_built_from_grouping_strategies():
    from rag_lab.core.chunking import sentence_spans

    data = load_dataset("ml_encyclopedia")
    docs = {d.id: d for d in data.documents}
    assert len(data.documents) >= 10 and len(data.questions) >= 16
    strategies = {q.meta["strategy"] for q in data.questions}
    assert strategies == {"intra_document", "theme_based", "sequential_multi_hop", "random"}
    for q in data.questions:
        assert q.answer and len(q.answer.split()) >= 20
        group = q.meta["group"]
        assert group["strategy"] == q.meta["strategy"] and group["path"]
        # each gold context is the exact sentence the group names (document id, sentence index)
        texts = []
        for sid in group["sentence_ids"]:
            doc_id, index = sid.rsplit("#s", 1)
            s, e = sentence_spans(docs[doc_id].text)[int(index)]
            texts.append(docs[doc_id].text[s:e])
        assert texts == q.gold_contexts
        assert q.gold_doc_ids == list(dict.fromkeys(sid.rsplit("#s", 1)[0] for sid in group["sentence_ids"]))
        assert len(q.gold_contexts) <= (15 if q.meta["strategy"] == "sequential_multi_hop" else 10)


def test_spread_limit_takes_questions_round_robin_over_strategies():
    data = load_dataset("ml_encyclopedia")
    small = experiment.spread_limit(data, 5)
    # shipped order: 5 intra_document, 6 theme_based, 4 sequential_multi_hop, 3 random -> the first of
    # each strategy, then the second intra_document
    assert [q.id for q in small.questions] == ["ssg-q01", "ssg-q02", "ssg-q06", "ssg-q12", "ssg-q16"]
    assert experiment.spread_limit(data, None) is data and len(small.documents) == len(data.documents)


def test_compare_with_paper_labels_the_paper_columns():
    ours = paper.paper_table("20q theme_based (paper-reported)").assign(gold_sentence_recall=0.5,
                                                                        llm_context_recall=0.7)
    t = paper.compare_with_paper(ours, "20q theme_based (paper-reported)")
    # without a judge our recall column is the gold-sentence one, and the column says so
    assert t.loc["query_traversal", "recall (ours: gold_sentence_recall)"] == 0.5
    assert t.loc["query_traversal", "recall (paper-reported)"] == 0.83
    assert t.loc["query_traversal", "recall (difference)"] == pytest.approx(0.5 - 0.83)
    assert t.loc["ssg_traversal", "test_cases (paper-reported)"] == "15/20"
    judged = paper.compare_with_paper(ours, "20q theme_based (paper-reported)", judged=True)
    assert judged.loc["query_traversal", "recall (ours: llm_context_recall)"] == 0.7
    # whose choices llm_guided_traversal made is said on its row, beside the paper's LLM numbers
    offline = paper.compare_with_paper(ours, "20q theme_based (paper-reported)", choosers={"llm_guided_traversal": "offline"})
    row = "llm_guided_traversal (ours: offline rule, no LLM)"
    assert list(offline.index) == list(t.index[:-1]) + [row] and offline.loc[row, "recall (paper-reported)"] == 0.82
    llm = paper.compare_with_paper(ours, "20q theme_based (paper-reported)", choosers={"llm_guided_traversal": "openai:x"})
    assert "llm_guided_traversal (ours: choices by openai:x)" in llm.index


def test_like_for_like_marks_each_paper_column():
    name = "50q sequential_multi_hop (paper-reported)"
    plain = paper.like_for_like(name, paper.RunSetting("ml_encyclopedia", 4, "all-MiniLM-L6-v2", "offline", None))
    assert list(plain.index) == ["precision", "recall", "answer_relevancy", "faithfulness", "pass_rate"]
    assert plain.loc["precision", "ours"] == "gold_sentence_precision"
    assert plain.loc["precision", "metric"].startswith("differs: gold-sentence precision")
    assert plain.loc["faithfulness", "metric"] == "not computed (no judge)"
    assert plain.loc["recall", "data"].startswith("differs: 4 sequential_multi_hop questions on ml_encyclopedia (paper: 50")
    assert "all-MiniLM-L6-v2 (paper: mixedbread-ai/mxbai-embed-large-v1)" in plain.loc["recall", "model"]
    assert "answers by offline (paper: gpt-5-nano)" in plain.loc["faithfulness", "model"]
    assert "answers" not in plain.loc["pass_rate", "model"]       # without a judge no answer is scored
    assert (plain["like-for-like"] == "no").all()
    judged = paper.like_for_like(name, paper.RunSetting("ml_encyclopedia", 4, "all-MiniLM-L6-v2", "offline", "j"))
    assert judged.loc["recall", "ours"] == "llm_context_recall"
    assert judged.loc["recall", "metric"] == "analogue: ragas LLM context recall (DeepEval is not installed)"
    assert "judge: j" in judged.loc["precision", "model"] and "answers by offline" in judged.loc["pass_rate", "model"]
    sentence = paper.setting_sentence(name, paper.RunSetting("ml_encyclopedia", 4, "all-MiniLM-L6-v2", "offline", None))
    assert sentence.startswith(f"Beside {name}: 4 sequential_multi_hop questions on ml_encyclopedia (paper: 50)")
    assert sentence.endswith("0 of 5 columns like-for-like.")


def test_build_through_the_registry_plans_and_counts_the_theme_calls():
    from ssg_handmade import ThemeReasoner, WordEmbedder
    from rag_lab.core.types import Document

    docs = [Document("x", "Alpha beta here. Alpha again now. Beta closes it."),
            Document("y", "Gamma delta here. Delta again now. Gamma closes it.")]
    r = get_retriever("ssg-ssg-traversal", reasoner=ThemeReasoner([["alpha"], ["gamma"]]), embedder=WordEmbedder(),
                      top_k=1, top_x=1, top_t=1)
    assert r.planned_llm_calls(docs) == [("themes", docs[0].text), ("themes", docs[1].text)]
    harness.build(r, docs)
    assert [c.id for c in r.chunks] == ["x#s0", "x#s1", "x#s2", "y#s0", "y#s1", "y#s2"]
    # words per document: one window of all 3 sentences (9) + the 3 sentences (9) + the theme text (1)
    assert r.build_cost.embedding_tokens == 2 * (9 + 9 + 1)
    ret = harness.retrieve(r, "alpha beta", 5)
    assert ret.hits and all(h.chunk.text == docs[0 if h.chunk.doc_id == "x" else 1].text[h.chunk.start:h.chunk.end]
                            for h in ret.hits)


def test_setting_sentences_come_from_the_run():
    assert paper.graph_sentence(SSGConfig(top_k=4, top_x=6), "m", "offline") == (
        "Our graph differs from the paper's in: m embeddings (paper: mixedbread-ai/mxbai-embed-large-v1); themes by "
        "the offline reasoner (paper: llama3.1:8b); top_k=4 + top_x=6 edges per window (paper: about ten comparisons "
        "kept, split not stated); top_t=3 theme bridges (paper: no value given).")
    qs = [Question(str(i), "?", meta={"strategy": s}) for i, s in enumerate(["theme_based", "random", "theme_based"])]
    assert paper.questions_sentence(qs, "d") == (
        "Our questions differ from the paper's: 3 on d, written by hand for grouping-strategy sentence groups "
        "(2 theme_based, 1 random); the paper's were generated and evolved by DeepEval (20 theme_based, "
        "50 sequential_multi_hop).")
    assert "written by openai:x for" in paper.questions_sentence(qs, "d", "openai:x")
    assert paper.strategies_sentence(["random", "theme_based", "random"]).endswith(
        "of our 2 strategies, without a paper counterpart: random.")


def test_judged_scores_from_answer_rows():
    rows = pd.DataFrame([("ssg-x", "a", "faithfulness", 10, 0.8), ("ssg-x", "a", "answer_relevancy", 10, 0.6),
                         ("ssg-x", "a", "llm_context_recall", 10, 0.5), ("ssg-x", "a", "token_f1", 10, 0.1),
                         ("ssg-x", "b", "faithfulness", 10, float("nan"))],
                        columns=["method", "question_id", "metric", "k", "value"])
    j = experiment.judged_scores(rows).set_index("question_id")
    assert j.loc["a", "faithfulness"] == 0.8 and j.loc["a", "answer_relevancy"] == 0.6
    assert j.loc["a", "llm_context_recall"] == 0.5 and np.isnan(j.loc["a", "llm_context_precision"])
    assert list(experiment.judged_scores(None).columns) == ["method", "question_id", "llm_context_precision",
                                                            "llm_context_recall", "answer_relevancy", "faithfulness"]


def test_a_case_the_judge_could_not_score_does_not_pass():
    scores = pd.DataFrame([{"method": "m", "algorithm": "basic_retrieval", "question_id": "a", "strategy": "s",
                            "gold_sentence_precision": 1.0, "gold_sentence_recall": 1.0, "sentences": 3}])
    assert experiment.results_table(scores).loc["basic_retrieval", "test_cases"] == "1/1"
    judged = experiment.judged_scores(pd.DataFrame(columns=["method", "question_id", "metric", "k", "value"]))
    assert experiment.results_table(scores, judged).loc["basic_retrieval", "test_cases"] == "0/1"
