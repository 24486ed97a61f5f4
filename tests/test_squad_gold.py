"""SQuAD-form loaders (COVID-QA): gold contexts are the sentences around the answer spans, placed by offset,
with duplicate, misplaced and not-found spans counted and said; so context recall is not document recall."""
import logging
from pathlib import Path

from rag_lab.core.types import Chunk
from rag_lab.datasets import load_dataset
from rag_lab.evaluation.metrics import retrieval_metrics

FIX = Path(__file__).parent / "fixtures" / "covidqa"


def test_gold_is_the_sentence_around_each_answer_span(caplog):
    with caplog.at_level(logging.WARNING):
        data = load_dataset("covidqa", path=FIX)
    article = data.documents[0]
    q = {q.id: q for q in data.questions}
    assert q["201"].gold_contexts == ["Patients in the invented wards were isolated for 14 days after a positive swab."]
    assert article.text[78:78 + len(q["201"].gold_contexts[0])] == q["201"].gold_contexts[0]
    assert q["201"].gold_context_offsets == [78] and q["201"].gold_doc_ids == ["9001"]
    assert q["202"].gold_contexts == ["The made-up assay detected viral RNA within 35 minutes."]       # the repeat: once
    # 203's answer_start is 5 off: relocated to "masks", the only occurrence; 204's text is not in its article
    assert q["203"].gold_contexts == ["Staff wore masks throughout the season, and no ward closed."]
    assert q["204"].gold_contexts == [] and q["204"].gold_doc_ids == ["9001"]
    assert data.meta["answer_spans"] == {"placed": 3, "relocated": 1, "not_found": 1, "duplicates": 1}
    assert data.meta["misplaced_spans"] == 2
    assert "3 at their answer_start, 1 misplaced and relocated" in caplog.text and "1 not found" in caplog.text
    assert all(len(c) < len(article.text) for x in data.questions for c in x.gold_contexts)


def test_context_recall_differs_from_document_recall():
    data = load_dataset("covidqa", path=FIX)
    docs = {d.id: d for d in data.documents}
    q = next(x for x in data.questions if x.id == "201")
    text = docs["9001"].text
    first = text.index("Invented")            # the article's first sentence: right paper, not the answer
    hit = Chunk("c0", "9001", text[first:first + 70], first, first + 70)
    rows = {(m, k): v for m, k, v in retrieval_metrics([hit], q, docs, [1])}
    assert rows[("doc_recall", 1)] == 1.0 and rows[("ctx_recall", 1)] == 0.0
    start = q.gold_context_offsets[0]
    answer = Chunk("c1", "9001", text[start - 10:start + 60], start - 10, start + 60)
    assert {(m, k): v for m, k, v in retrieval_metrics([answer], q, docs, [1])}[("ctx_recall", 1)] == 1.0
