import math

import pytest

from rag_lab.metrics import retrieval_metrics, section_coverage
from rag_lab.types import Chunk, Document, Question, Section


def chunk(doc, start=-1, end=-1, text="", section=None):
    return Chunk(id=f"{doc}:{start}", doc_id=doc, text=text, start=start, end=end, section_id=section)


def as_dict(rows):
    return {(m, k): v for m, k, v in rows}


def test_document_level_metrics_by_hand():
    # gold docs {A, B}; ranked hits come from docs C, A, A, B.
    q = Question("q", "?", gold_doc_ids=["A", "B"])
    hits = [chunk("C"), chunk("A"), chunk("A"), chunk("B")]
    m = as_dict(retrieval_metrics(hits, q, {}, ks=[3, 4]))
    # k=3: first relevant at rank 2 -> MRR 1/2; only A found -> recall 1/2; 2 of 3 hits relevant.
    assert m[("doc_mrr", 3)] == 0.5
    assert m[("doc_recall", 3)] == 0.5
    assert m[("doc_precision", 3)] == pytest.approx(2 / 3)
    # nDCG@3: only rank 2 brings a new gold doc: 1/log2(3); ideal (2 gold) = 1 + 1/log2(3).
    assert m[("doc_ndcg", 3)] == pytest.approx((1 / math.log2(3)) / (1 + 1 / math.log2(3)))
    # k=4: B appears at rank 4 -> recall 1, precision 3/4, DCG adds 1/log2(5).
    assert m[("doc_recall", 4)] == 1.0
    assert m[("doc_precision", 4)] == 0.75
    assert m[("doc_ndcg", 4)] == pytest.approx((1 / math.log2(3) + 1 / math.log2(5)) / (1 + 1 / math.log2(3)))


def test_context_level_overlap_rule_by_hand():
    text = "Alpha one. Beta two is here. Gamma three follows. Delta four ends."
    doc = Document("d", text)
    beta = "Beta two is here."          # chars 11..28
    delta = "Delta four ends."          # chars 50..66
    q = Question("q", "?", gold_contexts=[beta, delta])
    b0 = text.index(beta)
    hits = [
        chunk("d", 0, 10, text[0:10]),            # "Alpha one." no overlap
        chunk("d", b0 + 5, b0 + 9, text[b0 + 5:b0 + 9]),  # "two " inside beta: overlap 4 of shorter 4 -> match
        chunk("d", b0 - 5, b0 + 3, text[b0 - 5:b0 + 3]),  # 3 chars of beta, shorter is 8 -> 3/8 < 0.5 -> no
        chunk("other", 0, 5, "x"),                # other document
        chunk("d", text.index(delta), len(text), delta),  # exactly delta
    ]
    m = as_dict(retrieval_metrics(hits, q, {"d": doc}, ks=[2, 5]))
    assert m[("ctx_mrr", 2)] == 0.5 and m[("ctx_recall", 2)] == 0.5 and m[("ctx_precision", 2)] == 0.5
    assert m[("ctx_recall", 5)] == 1.0 and m[("ctx_precision", 5)] == pytest.approx(2 / 5)
    ideal = 1 + 1 / math.log2(3)
    assert m[("ctx_ndcg", 5)] == pytest.approx((1 / math.log2(3) + 1 / math.log2(6)) / ideal)


def test_summary_hits_match_contexts_by_text():
    q = Question("q", "?", gold_contexts=["saffron gives colour"])
    summary = Chunk("s", "", "In short, saffron gives colour to risotto.", -1, -1)
    m = as_dict(retrieval_metrics([summary], q, {"d": Document("d", "x saffron gives colour y")}, ks=[1]))
    assert m[("ctx_recall", 1)] == 1.0


def test_question_without_gold_gives_no_rows():
    assert retrieval_metrics([chunk("A")], Question("q", "?"), {}, ks=[1]) == []


def test_section_coverage_counts_distinct_sections():
    doc = Document("d", "x" * 30, sections=[Section("s1", "", "section", 0, 10), Section("s2", "", "section", 10, 20),
                                             Section("s3", "", "section", 20, 30)])
    hits = [chunk("d", 0, 5, section="s1"), chunk("d", 5, 9, section="s1"), chunk("d", 12, 15, section="s2")]
    assert section_coverage(hits, 2, {"d": doc}) == (1, pytest.approx(1 / 3))
    assert section_coverage(hits, 3, {"d": doc}) == (2, pytest.approx(2 / 3))
