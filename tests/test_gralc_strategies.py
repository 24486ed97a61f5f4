"""The six GraLC-RAG strategies behind the Retriever contract, on plain and sectioned Documents,
and ``python -m rag_lab eval`` with them on a generic-form folder."""
import json

import numpy as np
import pytest

from rag_lab.evaluation import harness
from rag_lab.cli import main
from rag_lab.methods import get_retriever
from rag_lab.methods.gralc.method import STRATEGIES, similarity_threshold_spans
from rag_lab.core.types import Document, Section

PLAIN = [
    Document("kidney", "Chronic kidney disease lowers eGFR slowly. Empagliflozin slowed the decline of eGFR.\n\n"
                       "Albuminuria fell with empagliflozin in adults with type 2 diabetes mellitus."),
    Document("heart", "Heart failure with preserved ejection fraction limits exercise capacity. "
                      "Exercise training improved peak oxygen uptake and quality of life."),
]
SMALL = {"min_tokens": 8, "max_tokens": 32}


def small_params(name):
    return {} if name in ("gralc-naive", "gralc-semantic") else dict(SMALL)


@pytest.mark.parametrize("name", list(STRATEGIES))
def test_every_strategy_builds_and_retrieves_on_plain_documents(name, embedder):
    r = harness.build(get_retriever(name, embedder=embedder, **small_params(name)), PLAIN)
    assert r.chunks
    for c in r.chunks:
        doc = next(d for d in PLAIN if d.id == c.doc_id)
        assert c.text == doc.text[c.start:c.end] and c.section_id is None
    res = harness.retrieve(r, "Did empagliflozin slow eGFR decline?", 3)
    assert 1 <= len(res.hits) <= 3 and res.hits[0].chunk.doc_id == "kidney"
    assert [h.score for h in res.hits] == sorted((h.score for h in res.hits), reverse=True)


def test_structure_aware_boundary_falls_on_a_section_start(embedder):
    first = " ".join(["Empagliflozin lowered albuminuria in chronic kidney disease."] * 5)
    second = " ".join(["Exercise training improved quality of life in heart failure."] * 5)
    text = f"Results\n\n{first}\n\nDiscussion\n\n{second}"
    s2 = text.index("Discussion")
    doc = Document("d", text, sections=[Section("d:s1", "Results", "section", 0, s2 - 2),
                                        Section("d:s2", "Discussion", "section", s2, len(text))])
    r = harness.build(get_retriever("gralc-structure", embedder=embedder, min_tokens=16, max_tokens=128), [doc])
    assert [c.start for c in r.chunks] == [0, s2]
    assert [c.section_id for c in r.chunks] == ["d:s1", "d:s2"]
    trace = r.boundary_trace(doc)
    assert trace.structural.max() == 1.0 and trace.score[trace.boundaries[0]] > 0.3
    late = harness.build(get_retriever("gralc-late", embedder=embedder, min_tokens=16, max_tokens=128), [doc])
    assert len(late.chunks) >= 2 and all(16 <= embedder.count_tokens(c.text) <= 128 for c in late.chunks)


def test_kg_infusion_changes_vectors_and_graph_reranks(embedder):
    structure = harness.build(get_retriever("gralc-structure", embedder=embedder, **SMALL), PLAIN)
    kg = harness.build(get_retriever("gralc-kg", embedder=embedder, lam=1.0, **SMALL), PLAIN)
    assert len(structure.chunks) == len(kg.chunks)
    cos = (structure.vectors * kg.vectors).sum(axis=1)
    assert (cos < 0.99999).any() and (cos > 0.5).all()     # infused, but still about the same text
    graph = harness.build(get_retriever("gralc-graph", embedder=embedder, beta=0.7, **SMALL), PLAIN)
    res = harness.retrieve(graph, "empagliflozin and eGFR", 2)
    assert res.trace["query_concepts"] and res.trace["kg_prox"][0] == pytest.approx(1.0)
    # score = 0.7·cos + 0.3·kg_prox for every hit
    for hit, cosine, prox in zip(res.hits, res.trace["cosine"], res.trace["kg_prox"]):
        assert hit.score == pytest.approx(0.7 * cosine + 0.3 * prox, abs=1e-3)


def test_semantic_threshold_merging_by_hand():
    sents = [(0, 5), (6, 10), (11, 20)]
    vecs = np.array([[1.0, 0.0], [0.8, 0.6], [0.0, 1.0]])
    # cos(s0, s1) = 0.8 >= 0.75 -> merge; cos(s1, s2) = 0.6 < 0.75 -> cut
    assert similarity_threshold_spans(sents, vecs, 0.75) == [(0, 10), (11, 20)]
    assert similarity_threshold_spans(sents, vecs, 0.5) == [(0, 20)]


def test_bad_parameters_are_refused():
    with pytest.raises(ValueError, match="beta"):
        get_retriever("gralc-graph", beta=1.5)
    with pytest.raises(ValueError, match="alphas"):
        get_retriever("gralc-structure", alphas=(0.5, 0.3))
    with pytest.raises(ValueError, match=r"max_tokens must be at least 2 \* min_tokens \(200\), got 150"):
        get_retriever("gralc-late", min_tokens=100, max_tokens=150)


def test_cli_eval_accepts_every_gralc_strategy(tmp_path, capsys):
    docs = [{"id": d.id, "title": d.id, "text": d.text} for d in PLAIN]
    (tmp_path / "documents.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    (tmp_path / "questions.jsonl").write_text(json.dumps(
        {"id": "q1", "question": "Did exercise training improve oxygen uptake?", "gold_doc_ids": ["heart"]}) + "\n")
    out = tmp_path / "rows.csv"
    code = main(["eval", "--data", str(tmp_path), "--methods", ",".join(STRATEGIES), "--k", "1,3",
                 "--out", str(out)])
    assert code == 0
    printed = capsys.readouterr().out
    for name in STRATEGIES:
        assert name in printed
    import pandas as pd
    rows = pd.read_csv(out)
    mrr = rows[(rows.metric == "doc_mrr") & (rows.k == 3)].set_index("method")["value"]
    assert set(mrr.index) == set(STRATEGIES) and (mrr > 0).all()
