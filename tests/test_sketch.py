"""SKETCH: the two-stage 100/16 split, the hybrid merge order, and the sketch/kg retrievers end to
end with a table reasoner (expected values worked out by hand in the comments)."""
from __future__ import annotations

import pytest

from rag_lab.evaluation import harness
from rag_lab.methods import get_retriever
from rag_lab.methods.sketch.config import SketchConfig
from rag_lab.methods.sketch.method import CONFIRMED, GRAPH, VECTOR, merge_hybrid, pieces_of
from rag_lab.reasoning import Triple
from rag_lab.core.types import Document
from sketch_fakes import TableReasoner

WORDS = ["apple", "river", "house", "green", "stone", "music", "light", "table", "water", "paper"]


def test_recursive_100_16_inside_semantic_chunks(embedder):
    # Segment A: 120 words, each one MiniLM token and 5 letters, so word i starts at char 6i.
    # The splitter fills a piece up to 100 tokens (words 0-99, chars 0-599), then keeps the last
    # 16 words as overlap: the second piece is words 84-119 (chars 504-719, 36 tokens).
    # Segment B (4 tokens) is its own piece: no piece crosses a semantic boundary.
    assert all(embedder.count_tokens(w) == 1 for w in WORDS)
    a = " ".join(WORDS[i % 10] for i in range(120))
    b = "Short closing sentence."
    text = a + "\n\n" + b
    pieces = pieces_of(Document("d", text), [(0, len(a)), (len(a) + 2, len(text))], embedder, 100, 16)
    assert [(p.start, p.end) for p in pieces] == [(0, 599), (504, 719), (721, 744)]
    assert [embedder.count_tokens(p.text) for p in pieces] == [100, 36, 4]
    assert [p.meta["semantic_chunk"] for p in pieces] == [0, 0, 1]
    assert [p.id for p in pieces] == ["d#sketch-0", "d#sketch-1", "d#sketch-2"]
    assert all(p.text == text[p.start:p.end] for p in pieces)


def test_sketch_chunks_split_each_semantic_span(embedder, monkeypatch):
    # sketch_chunks = SemanticChunker spans (threshold passed through), then pieces_of on them
    import rag_lab.core.chunking as chunking
    from rag_lab.methods.sketch.method import sketch_chunks

    text = "First topic sentence. Another one.\n\nSecond topic here."
    seen = []

    def fake_semantic(t, emb, threshold_type="percentile", threshold=95.0, buffer_size=1):
        seen.append(threshold)
        return [(0, 34), (36, len(t))]

    monkeypatch.setattr(chunking, "semantic_spans", fake_semantic)
    docs = [Document("d", text), Document("blank", "  ")]
    chunks = sketch_chunks(docs, embedder, SketchConfig(semantic_threshold=80.0))
    assert seen == [80.0]                                            # the blank document is skipped
    assert [c.text for c in chunks] == ["First topic sentence. Another one.", "Second topic here."]
    assert [c.meta["semantic_chunk"] for c in chunks] == [0, 1]


def test_merge_order_by_hand():
    # unstructured (cosine order) a b c d; structured (graph order) c e a f
    # confirmed = in both, in cosine order: a, c; then alternate the rest, vector first: b, e, d, f
    merged = merge_hybrid(["a", "b", "c", "d"], ["c", "e", "a", "f"], k=6)
    assert merged == [("a", CONFIRMED), ("c", CONFIRMED), ("b", VECTOR), ("e", GRAPH), ("d", VECTOR), ("f", GRAPH)]
    assert [c for c, _ in merge_hybrid(["a", "b", "c", "d"], ["c", "e", "a", "f"], k=4)] == ["a", "c", "b", "e"]
    # no entity matched: the unstructured ranking unchanged
    assert merge_hybrid(["a", "b"], [], k=2) == [("a", VECTOR), ("b", VECTOR)]
    # one list runs out: the other fills the remaining slots
    assert merge_hybrid(["x"], ["y", "z"], k=3) == [("x", VECTOR), ("y", GRAPH), ("z", GRAPH)]
    with pytest.raises(ValueError, match="k must be positive"):
        merge_hybrid(["a"], ["b"], 0)


DOCS = [Document("dishes", "Saffron colours risotto alla milanese. Cooks in Milan stir it slowly."),
        Document("places", "Milan is the capital of Lombardy. The city has many old trattorias."),
        Document("spices", "Saffron grows in Abruzzo on the Navelli plateau. Harvest happens in autumn.")]
TRIPLES = {"Saffron colours": [Triple("Saffron", "colours", "risotto alla milanese")],
           "capital of Lombardy": [Triple("Milan", "capital_of", "Lombardy")],
           "grows in Abruzzo": [Triple("Saffron", "grows_in", "Abruzzo")]}
QUERY = "Where does saffron grow?"


def _built(name, embedder, **params):
    reasoner = TableReasoner(TRIPLES, {QUERY: ["saffron"], "What about pizza?": ["pizza"]})
    return harness.build(get_retriever(name, reasoner=reasoner, embedder=embedder, **params), DOCS), reasoner


def test_kg_retriever_by_hand(embedder):
    kg, reasoner = _built("kg", embedder)
    # each short document is one semantic chunk and one piece; 3 triples calls at build
    assert [c.id for c in kg.chunks] == ["dishes#sketch-0", "places#sketch-0", "spices#sketch-0"]
    assert reasoner.usage.per_job["triples"].llm_calls == 3 and kg.build_cost.llm_calls == 3
    ret = harness.retrieve(kg, QUERY, 5)
    # "saffron" matches node saffron exactly; one hop reaches the risotto and Abruzzo.
    # saffron is in dishes and spices (+1 each), the risotto in dishes (+1/2), Abruzzo in spices (+1/2):
    # dishes = spices = 1.5, dishes first in the corpus; places is not reached
    assert [(h.chunk.doc_id, h.score, h.via) for h in ret.hits] == [("dishes", 1.5, GRAPH), ("spices", 1.5, GRAPH)]
    assert ret.trace["matches"] == [{"entity": "saffron", "node": "saffron", "how": "exact", "similarity": 1.0}]
    assert ret.trace["facts"] == ["Saffron -[colours]-> risotto alla milanese", "Saffron -[grows_in]-> Abruzzo"]
    assert ret.cost.llm_calls == 1                                     # the query_entities call
    assert harness.retrieve(kg, "What about pizza?", 5).hits == []               # no node named pizza
    assert kg.planned_llm_calls(DOCS) == [("triples", d.text) for d in DOCS]
    stats = kg.index_stats()
    # 3 documents = 3 semantic chunks = 3 pieces; nodes saffron, risotto alla milanese, milan,
    # lombardy, abruzzo; one relation per table triple
    assert (stats["semantic chunks"], stats["pieces"], stats["graph nodes"], stats["graph relations"]) == (3, 3, 5, 3)


def test_sketch_merges_vector_and_graph_hits(embedder):
    sketch, _ = _built("sketch", embedder)
    ret = harness.retrieve(sketch, QUERY, 3)
    vector_ids, graph_ids = ret.trace["vector_chunk_ids"], ret.trace["graph_chunk_ids"]
    assert graph_ids == ["dishes#sketch-0", "spices#sketch-0"]
    assert len(vector_ids) == 3                                        # all three pieces, by cosine
    # every piece is in the vector list, so both graph chunks are confirmed and come first in
    # cosine order; the remaining vector piece (places) follows
    expected = [c for c in vector_ids if c in graph_ids] + [c for c in vector_ids if c not in graph_ids]
    assert [h.chunk.id for h in ret.hits] == expected
    assert [h.via for h in ret.hits] == [CONFIRMED, CONFIRMED, VECTOR]
    assert ret.trace["confirmed"] == expected[:2]
    assert ret.hits[0].score == pytest.approx(float(sketch.vectors[sketch._row[expected[0]]] @
                                                    embedder.encode_one(QUERY)), abs=1e-6)
    assert "Facts:\nSaffron -[colours]-> risotto alla milanese" in sketch.merged_context(ret)
    only_vector = harness.retrieve(sketch, "What about pizza?", 2)
    assert [h.via for h in only_vector.hits] == [VECTOR, VECTOR]


def test_sketch_kuzu_store_gives_the_same_retrievals(embedder, tmp_path):
    on_nx, _ = _built("sketch", embedder, graph_store="networkx")
    on_kuzu, _ = _built("sketch", embedder, graph_store="kuzu", graph_path=str(tmp_path / "kg"))
    for q in (QUERY, "What about pizza?"):
        a, b = harness.retrieve(on_nx, q, 3), harness.retrieve(on_kuzu, q, 3)
        assert [(h.chunk.id, h.via) for h in a.hits] == [(h.chunk.id, h.via) for h in b.hits]
        store_specific = {"graph_store", "graph_queries"}            # which store, and Kùzu's Cypher
        assert {k: v for k, v in a.trace.items() if k not in store_specific} == \
               {k: v for k, v in b.trace.items() if k not in store_specific}
        assert a.trace["graph_queries"] == [] and (b.trace["graph_queries"] or not b.trace["matches"])
    assert harness.retrieve(on_kuzu, QUERY, 3).trace["graph_store"] == "kuzu"
    assert (tmp_path / "kg" / "graph.kuzu").exists()


def test_errors_name_the_problem(embedder):
    with pytest.raises(RuntimeError, match="before retrieve"):
        harness.retrieve(get_retriever("sketch", embedder=embedder, reasoner=TableReasoner()), "q", 3)
    with pytest.raises(ValueError, match="graph_store must be one of 'networkx', 'kuzu', got 'neo4j'"):
        harness.build(get_retriever("kg", embedder=embedder, reasoner=TableReasoner(), graph_store="neo4j"), DOCS)
