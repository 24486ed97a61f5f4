"""The sparse and hybrid baselines: BM25 scores on a hand-made corpus against hand-computed values, ties
ordered by chunk id, reciprocal rank fusion on a hand-made pair of rankings, bm25 on naive's windows,
and the hybrid equal to the fusion of bm25's and naive's own rankings with naive's costs."""
from __future__ import annotations

import math

import pytest

from rag_lab.evaluation import harness
from rag_lab.core.types import Document
from rag_lab.methods import get_retriever
from rag_lab.methods.baselines.config import BM25Config, HybridConfig
from rag_lab.methods.baselines.fusion import reciprocal_rank_fusion
from rag_lab.methods.baselines.lexical import BM25Index, tokens

# Three documents; Lucene's stop words ("the", "and") go, so their tokens are
#   d1: saffron colours risotto                          |d1| = 3
#   d2: risotto needs stock stock needs time             |d2| = 6
#   d3: pesto comes from genoa                           |d3| = 4      avg |d| = 13/3, N = 3
TEXTS = ["Saffron colours the risotto.", "Risotto needs stock, and stock needs time.", "Pesto comes from Genoa."]


def test_bm25_scores_match_the_hand_computed_lucene_formula():
    # idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5)):  risotto (df 2) ln(1 + 1.5/2.5) = ln 1.6;
    #                                                 stock (df 1)   ln(1 + 2.5/1.5) = ln(8/3)
    # norm(d) = k1 (1 - b + b |d| / avg) with k1 1.2, b 0.75:  d1 1.2 (0.25 + 0.75 * 9/13) = 12/13,
    #                                                          d2 1.2 (0.25 + 0.75 * 18/13) = 201/130
    # d1 = ln 1.6 * 1 / (1 + 12/13) = ln 1.6 * 13/25                                      = 0.2444019
    # d2 = ln 1.6 * 1 / (1 + 201/130) + ln(8/3) * 2 / (2 + 201/130)
    #    = ln 1.6 * 130/331 + ln(8/3) * 260/461                                          = 0.7377728
    # d3 holds neither word: no score, not returned
    assert tokens(TEXTS, "en") == [["saffron", "colours", "risotto"], ["risotto", "needs", "stock", "stock", "needs", "time"],
                                   ["pesto", "comes", "from", "genoa"]]
    index = BM25Index(TEXTS, ["d1", "d2", "d3"], BM25Config())
    rows, scores = index.ranking("Which risotto uses the stock?")   # "which", "uses": in no document
    d1 = math.log(1.6) * 13 / 25
    d2 = math.log(1.6) * 130 / 331 + math.log(8 / 3) * 260 / 461
    assert rows == [1, 0]
    assert scores[0] == pytest.approx(d1, rel=1e-12) and scores[1] == pytest.approx(d2, rel=1e-12) and scores[2] == 0
    assert d1 == pytest.approx(0.2444019, abs=1e-7) and d2 == pytest.approx(0.7377728, abs=1e-7)


def test_bm25_ties_fall_to_the_chunk_id_and_queries_without_words_match_nothing():
    index = BM25Index(["pesto from genoa", "ragu from bologna", "pesto from genoa"], ["z", "m", "a"], BM25Config())
    rows, scores = index.ranking("pesto")
    assert rows == [2, 0] and scores[2] == scores[0] > 0          # equal scores: "a" before "z"
    assert index.ranking("the and of")[0] == [] and index.ranking("quinoa")[0] == []
    with pytest.raises(ValueError, match="none of the 1 texts"):
        BM25Index(["the a of"], ["x"], BM25Config())


def test_reciprocal_rank_fusion_of_a_hand_made_pair():
    # k = 60:  x 1/61 + 1/63 = 0.0322665;  z 1/63 + 1/61 (the same sum);  w 1/62;  y 1/62
    # so x and z tie, and w and y tie: each pair in id order
    fused = reciprocal_rank_fusion([["x", "y", "z"], ["z", "w", "x"]], k=60)
    assert [item for item, _ in fused] == ["x", "z", "w", "y"]
    assert [s for _, s in fused] == pytest.approx([1 / 61 + 1 / 63, 1 / 61 + 1 / 63, 1 / 62, 1 / 62])
    # k = 0: 1/rank, so a first place in one list (1) beats second places in both (1/2 + 1/2 = 1, tie by id)
    assert reciprocal_rank_fusion([["a", "b"], ["c", "b"]], k=0) == [("a", 1.0), ("b", 1.0), ("c", 1.0)]
    with pytest.raises(ValueError, match="ranking 1 lists an item twice"):
        reciprocal_rank_fusion([["a"], ["b", "b"]])
    with pytest.raises(ValueError, match="k must be an integer >= 0"):
        reciprocal_rank_fusion([["a"]], k=-1)


def test_configs_state_the_variant_and_check_their_knobs():
    c = HybridConfig()
    assert (c.variant, c.k1, c.b, c.stopwords, c.rrf_k, c.depth) == ("lucene", 1.2, 0.75, "en", 60, 1000)
    assert (c.size, c.overlap) == (128, 16)                        # naive's windows
    for bad in ({"variant": "okapi"}, {"b": 1.5}, {"k1": -1.0}, {"stopwords": "fr"}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            BM25Config(**bad)
    with pytest.raises(ValueError, match="depth"):
        HybridConfig(depth=0)


DOCS = [Document("pasta", "Carbonara is made with guanciale, eggs and pecorino. Amatriciana adds tomato to guanciale. "
                          "Cacio e pepe needs only pecorino and black pepper."),
        Document("pesto", "Pesto alla genovese pounds basil, pine nuts and garlic in a mortar. It comes from Genoa in "
                          "Liguria, where basil grows by the sea."),
        Document("risotto", "Risotto alla milanese is coloured by saffron. The rice is toasted, then cooked slowly in "
                            "stock with butter and parmesan stirred in at the end.")]


def test_bm25_uses_naives_windows_and_costs_no_model_tokens(embedder):
    bm25 = harness.build(get_retriever("bm25", embedder=embedder, size=16, overlap=4), DOCS)
    naive = harness.build(get_retriever("naive", embedder=embedder, size=16, overlap=4), DOCS)
    assert [(c.id, c.start, c.end) for c in bm25.chunks] == [(c.id, c.start, c.end) for c in naive.chunks]
    r = harness.retrieve(bm25, "Which cheese goes into cacio e pepe?", 3)
    assert r.hits and r.hits[0].chunk.doc_id == "pasta" and {h.via for h in r.hits} == {"bm25"}
    assert bm25.build_cost.embedding_tokens == 0 and r.cost.embedding_tokens == 0
    assert r.trace["query_tokens"] == ["which", "cheese", "goes", "cacio", "pepe"]


def test_hybrid_is_the_fusion_of_bm25_and_naive(embedder):
    knobs = {"size": 16, "overlap": 4}
    hybrid = harness.build(get_retriever("hybrid", embedder=embedder, **knobs), DOCS)
    bm25 = harness.build(get_retriever("bm25", embedder=embedder, **knobs), DOCS)
    naive = harness.build(get_retriever("naive", embedder=embedder, **knobs), DOCS)
    n = len(naive.chunks)
    for query in ("Where does pesto come from?", "What colours risotto?", "guanciale"):
        dense = [h.chunk.id for h in harness.retrieve(naive, query, n).hits]
        sparse = [h.chunk.id for h in harness.retrieve(bm25, query, n).hits]
        expected = reciprocal_rank_fusion([dense, sparse], 60)
        got = harness.retrieve(hybrid, query, 4)
        assert [h.chunk.id for h in got.hits] == [i for i, _ in expected[:4]], query
        assert [h.score for h in got.hits] == pytest.approx([s for _, s in expected[:4]])
        assert got.hits == harness.retrieve(hybrid, query, 8).hits[:4]                 # nested
        assert got.cost.embedding_tokens == harness.retrieve(naive, query, 1).cost.embedding_tokens > 0
    assert hybrid.build_cost.embedding_tokens == naive.build_cost.embedding_tokens > 0
    # the fused order only looks at each ranking's first `depth` chunks
    shallow = harness.retrieve(harness.build(get_retriever("hybrid", embedder=embedder, depth=1, **knobs), DOCS), "guanciale", 5)
    assert len(shallow.hits) <= 2
