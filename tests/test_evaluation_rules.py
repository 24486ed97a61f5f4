"""evaluate()'s rules that keep methods comparable, each on a hand-made corpus whose right answer is
worked out in the comments: what the reference-based context metrics score (retrieved chunks, not
a facts block), empty retrievals, variants of one method, which query latency comes from, and the
ID-based metrics without retrievers."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from rag_lab.evaluation import harness
from rag_lab.core.types import Chunk, Cost, Dataset, Document, Hit, Question, Retrieval
from rag_lab.evaluation.harness import answer_rows, as_retrievers, evaluate, run_queries
from rag_lab.evaluation.retrievers import Method, get_retriever
from rag_lab.methods.sketch.method import SketchRetriever
from test_evaluation import Recorder

GOLD = ["Saffron gives risotto alla milanese its golden colour.", "Pesto alla genovese comes from Liguria."]


def corpus() -> Dataset:
    docs = [Document("rice", f"{GOLD[0]} It is stirred slowly."), Document("herbs", f"{GOLD[1]} Basil grows there."),
            Document("other", "Pizza is baked in a wood-fired oven.")]
    q = Question("q1", "Where do saffron risotto and pesto come from?", answer="Milan and Liguria",
                 gold_doc_ids=["rice", "herbs"], gold_contexts=list(GOLD))
    return Dataset("tiny", docs, [q])


class Fixed(Method):
    """One chunk per gold sentence (exact spans) plus the other document; returns ``order`` cut at k.
    Its cost's embedding tokens are the k it was asked for, so a row shows which query it came from."""

    def __init__(self, order: list[str], nested: bool = False, facts: list[str] | None = None):
        super().__init__()
        self.order, self.nested_ranking, self.facts = order, nested, facts or []

    def build(self, documents):
        self.chunks = [Chunk(d.id, d.id, d.text.split(" It ")[0].split(" Basil")[0], 0,
                             len(d.text.split(" It ")[0].split(" Basil")[0])) for d in documents]
        return self

    def retrieve(self, query, k):
        by_id = {c.id: c for c in self.chunks}
        hits = [Hit(by_id[i], 1.0) for i in self.order[:k]]
        return Retrieval(query, hits, {"facts": self.facts}, Cost(embedding_tokens=k))


class WithFacts(Fixed):
    context_blocks = SketchRetriever.context_blocks     # SKETCH's: a facts block before the chunks


def value(df, method, metric):
    return df[(df.method == method) & (df.metric == metric)]["value"].item()


def test_a_sketch_retrieval_of_gold_chunks_scores_one_despite_its_facts_block():
    data = corpus()
    facts = ["risotto alla milanese -[uses]-> saffron", "pesto -[comes from]-> liguria"]
    sketch, plain = WithFacts(["rice", "herbs"], facts=facts), Fixed(["rice", "herbs"])
    sketch.name, plain.name = "sketch", "plain"
    recorder = Recorder()
    df = evaluate([sketch], data, (2,), reasoner=recorder, answer_k=2, progress=False)
    # the answering model was handed the facts block first ...
    assert recorder.seen[data.questions[0].question][0].startswith("Facts:\n")
    df = pd.concat([df, evaluate([plain], data, (2,), reasoner=Recorder(), answer_k=2, progress=False)])
    # ... but the reference-based context metrics score the two retrieved chunks, both gold:
    # precision@1 = precision@2 = 1 -> average precision 1 (with the facts block at rank 1 it was
    # (0 + 1/2 + 2/3) / 2 = 0.583); recall 1; the same as the method without facts
    for method in ("sketch", "plain"):
        assert value(df, method, "nonllm_context_precision") == pytest.approx(1.0)
        assert value(df, method, "nonllm_context_recall") == pytest.approx(1.0)
        assert value(df, method, "id_context_precision") == pytest.approx(1.0)


def test_an_empty_retrieval_scores_zero_on_every_context_metric():
    data = corpus()
    empty = Fixed([])
    empty.name = "empty"
    df = evaluate([empty], data, (2,), reasoner=Recorder(), answer_k=2, progress=False)
    context = df[df.metric.str.contains("ctx|context")]
    # retrieval (ctx_/doc_ precision, recall, mrr, ndcg) and ragas' context metrics alike: 0, never NaN
    assert {"ctx_precision", "id_context_precision", "id_context_recall", "nonllm_context_precision",
            "nonllm_context_recall"} <= set(context.metric)
    assert context["value"].notna().all() and (context["value"] == 0).all()


def test_variants_of_one_method_keep_both_rows():
    a, b = get_retriever("naive", size=64), get_retriever("naive", size=128)
    named = as_retrievers([a, b])
    assert len(named) == 2 and all(n.startswith("naive@") for n in named)
    assert {r.config.size for r in named.values()} == {64, 128}
    assert [r.name for r in named.values()] == list(named)        # the retrievers carry their row names
    with pytest.raises(ValueError, match="given twice with the same knobs"):
        as_retrievers(["naive", "naive"])
    assert list(as_retrievers(["naive", "semantic"])) == ["naive", "semantic"]   # no collision: names kept


def test_latency_and_query_tokens_come_from_the_deepest_query_for_every_method():
    data = corpus()
    nested, own = Fixed(["other", "rice", "herbs"], nested=True), Fixed(["other", "rice", "herbs"])
    nested.name, own.name = "nested", "own"
    # ks up to 2, answers at 3: the deepest query is k = 3 for both (nested: its one query;
    # not nested: its own answer_k query), so query_embedding_tokens = 3 for both
    df = evaluate([nested, own], data, (1, 2), reasoner=Recorder(), answer_k=3, progress=False)
    assert value(df, "nested", "query_embedding_tokens") == 3 == value(df, "own", "query_embedding_tokens")
    # retrieval only: the deepest k is 2 for both
    df = evaluate([nested, own], data, (1, 2), progress=False)
    assert value(df, "nested", "query_embedding_tokens") == 2 == value(df, "own", "query_embedding_tokens")


def test_id_metrics_need_the_methods_chunks(caplog):
    data = corpus()
    data.questions[0].meta["gold_chunk_ids"] = ["rice", "herbs"]     # ids of no method: never used
    r = Fixed(["rice", "herbs"])
    r.name = "r"
    harness.build(r, data.documents)
    df = answer_rows(run_queries({"r": r}, data, 2, progress=False), data, Recorder(), answer_k=2, progress=False)
    assert not df.metric.str.startswith("id_context").any()
    assert "ID-based context metrics are left out" in caplog.text
    df = answer_rows(run_queries({"r": r}, data, 2, progress=False), data, Recorder(), answer_k=2, progress=False,
                     retrievers={"r": r})
    assert value(df, "r", "id_context_recall") == 1.0
