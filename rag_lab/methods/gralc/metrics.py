"""The GraLC-RAG paper's metrics beyond the shared ones, and its generation proxy.

Section coverage (SecCov@k): our reading is the core's (``rag_lab.evaluation.metrics.section_coverage``,
scored by ``evaluation.score_retrievals`` with the level as a parameter), the distinct sections *of
the question's source article* among the top k; the reading the paper's Table 5 fits is in
``seccov.py`` (``PAPER_READING``). Here:

- ``cross_section_recall``: 1 when the top k chunks cover at least two of the sections the
  question requires (all of them when it requires fewer), else 0; a chunk's section is the
  core's ``chunk_section`` at the same level. Sections are compared as (document, section id)
  pairs: QASPER, Wikipedia and generic-form ids ("s2") are not unique across documents, so a
  required id names that section of the question's source document(s) (``required_pairs``).
- ``generation_proxy_f1``: the paper's generation score, SQuAD-style token F1 (the shared
  ``rag_lab.evaluation.answer_metrics.token_f1``) between the generated answer and the *question*, since
  its template questions have no gold answers; against a reference answer (PubMedQA's long
  answer) the usual answer F1 is reported beside it.
- section diversity of an answer's contexts: distinct (article, section) pairs among them, from
  any article (the contexts are not tied to one source).
"""
from __future__ import annotations

import math
from typing import Mapping, Sequence

from ...evaluation.answer_metrics import token_f1
from ...evaluation.metrics import chunk_section, section_coverage
from ...core.types import Chunk, Dataset, Document, Question, Retrieval


def required_pairs(required_sections: Sequence[str], documents: Mapping[str, Document],
                   source_doc_ids: Sequence[str] | None = None) -> dict[str, set[tuple[str, str]]]:
    """Each required section id -> the (document, id) pairs it names: that section of the source
    documents that have it (none when they lack it, e.g. an article cut before its Results); with no
    source documents, of the one document that has it (an id several documents share is then
    ambiguous: an error naming them)."""
    out: dict[str, set[tuple[str, str]]] = {}
    for sid in dict.fromkeys(required_sections):
        holders = [d for d in (source_doc_ids or documents) if d in documents
                   and any(s.id == sid for s in documents[d].sections)]
        if not source_doc_ids and len(holders) > 1:
            raise ValueError(f"required section {sid!r} is a section of {len(holders)} documents "
                             f"({', '.join(holders[:5])}); give the question's gold_doc_ids to say which")
        out[sid] = {(d, sid) for d in holders}
    return out


def cross_section_recall(chunks: Sequence[Chunk], required_sections: Sequence[str], k: int,
                         documents: Mapping[str, Document], level: str = "section", need: int = 2,
                         source_doc_ids: Sequence[str] | None = None) -> float:
    """1.0 if the top k cover min(need, #required) of the required sections, else 0.0 (NaN if none
    required); a section is covered by a chunk of the document it belongs to (``required_pairs``)."""
    required = required_pairs(required_sections, documents, source_doc_ids)
    if not required:
        return math.nan
    top = {(c.doc_id, chunk_section(c, documents, level)) for c in chunks[:k]}
    covered = sum(1 for pairs in required.values() if pairs & top)
    return 1.0 if covered >= min(need, len(required)) else 0.0


def generation_proxy_f1(answer: str, question: str) -> float:
    """The paper's generation proxy: token F1 between the generated answer and the question."""
    return token_f1(answer, question)


def cross_section_rows(by_k: Mapping[int, Mapping[str, Mapping[str, Retrieval]]], dataset: Dataset,
                       level: str = "section") -> list[tuple]:
    """Tidy rows (method, question_id, "cs_recall", k, value) for questions that require two or
    more sections; ``by_k``: k -> method -> question id -> the method's retrieval for k."""
    docs = {d.id: d for d in dataset.documents}
    rows = []
    for k, results in sorted(by_k.items()):
        for method, by_q in results.items():
            for q in dataset.questions:
                if len(set(q.gold_section_ids)) >= 2:
                    chunks = [h.chunk for h in by_q[q.id].hits]
                    rows.append((method, q.id, "cs_recall", k,
                                 cross_section_recall(chunks, q.gold_section_ids, k, docs, level,
                                                      source_doc_ids=q.gold_doc_ids)))
    return rows


def answer_rows(method: str, question: Question, answer: str, chunks: Sequence[Chunk],
                documents: Mapping[str, Document], context_tokens: int, level: str = "section") -> list[tuple]:
    """Generation rows for one answer: proxy F1, F1 against the reference (when there is one),
    section diversity of the contexts and the context size in tokens."""
    rows = [(method, question.id, "proxy_f1", math.nan, generation_proxy_f1(answer, question.question)),
            (method, question.id, "section_diversity", math.nan,
             float(section_coverage(chunks, len(chunks), documents, level).count)),
            (method, question.id, "context_tokens", math.nan, float(context_tokens))]
    if question.answer:
        rows.append((method, question.id, "answer_f1", math.nan, token_f1(answer, question.answer)))
    return rows
