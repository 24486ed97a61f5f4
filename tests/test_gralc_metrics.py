"""GraLC-RAG structural metrics on a hand-made ranking (section coverage: tests/test_metrics.py)."""
import math

import pytest

from rag_lab.methods.gralc.metrics import cross_section_recall, generation_proxy_f1
from rag_lab.core.types import Chunk, Document, Section


def docs():
    a = Document("A", "x" * 30, sections=[Section("A:s1", "Intro", "section", 0, 10),
                                          Section("A:s2", "Methods", "section", 10, 20),
                                          Section("A:s2-1", "Design", "subsection", 10, 15),
                                          Section("A:s3", "Results", "section", 20, 30)])
    b = Document("B", "y" * 20, sections=[Section("B:s1", "Intro", "section", 0, 10),
                                          Section("B:s2", "Methods", "section", 10, 20)])
    return {"A": a, "B": b}


def c(doc, s, e):
    return Chunk(f"{doc}{s}", doc, "", s, e)


RANKING = [c("A", 0, 5), c("A", 2, 8), c("B", 0, 10), c("A", 8, 16), c("A", 21, 29)]


def test_cross_section_recall():
    d = docs()
    required = ["A:s1", "A:s2"]
    assert cross_section_recall(RANKING, required, 3, d) == 0.0   # only A:s1 among the top 3
    assert cross_section_recall(RANKING, required, 4, d) == 1.0   # A(8,16) brings A:s2
    assert cross_section_recall(RANKING, ["A:s3"], 5, d) == 1.0    # one required section: one suffices
    assert math.isnan(cross_section_recall(RANKING, [], 5, d))


def test_generation_proxy_is_overlap_with_the_question():
    # answer tokens {metformin, slowed, decline}; question tokens {did, metformin, slow, decline}
    # common 2 -> precision 2/3, recall 2/4 -> F1 = 2*(2/3)(1/2)/(2/3+1/2) = 4/7
    assert generation_proxy_f1("Metformin slowed decline.", "Did metformin slow decline?") == pytest.approx(4 / 7)


def test_cross_section_recall_qualifies_bare_section_ids_by_document():
    # two QASPER-style papers whose sections are both called s1, s2 (ids not unique across documents)
    p1 = Document("P1", "x" * 20, sections=[Section("s1", "Intro", "section", 0, 10),
                                            Section("s2", "Results", "section", 10, 20)])
    p2 = Document("P2", "y" * 20, sections=[Section("s1", "Intro", "section", 0, 10),
                                            Section("s2", "Results", "section", 10, 20)])
    d = {"P1": p1, "P2": p2}
    ranking = [c("P1", 0, 5), c("P2", 12, 18)]      # P1's s1, then P2's s2
    # the question is on P1: another paper's s2 does not satisfy it (before: 1.0)
    assert cross_section_recall(ranking, ["s1", "s2"], 2, d, source_doc_ids=["P1"]) == 0.0
    assert cross_section_recall(ranking + [c("P1", 11, 19)], ["s1", "s2"], 3, d, source_doc_ids=["P1"]) == 1.0
    # a required section the (cut) source lacks stays required: s3 can never be covered
    assert cross_section_recall(ranking, ["s1", "s3"], 2, d, source_doc_ids=["P1"]) == 0.0
    # no source documents and an id two documents share: refused, naming both
    with pytest.raises(ValueError, match="P1, P2"):
        cross_section_recall(ranking, ["s1", "s2"], 2, d)
