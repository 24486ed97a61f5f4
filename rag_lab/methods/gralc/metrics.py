"""The structural metrics of the GraLC-RAG paper and its generation proxy.

- ``section_coverage``: SecCov@k as the paper's tables report it — the number of distinct
  (document, section) pairs among the top k chunks, from any document — and as its text
  defines it, normalised: the share of the source document's sections covered by the top k
  (source = the question's gold documents; the retrieved documents when it names none).
- ``cross_section_recall``: 1 when the top k chunks cover at least two of the sections the
  question requires (all of them when it requires fewer), else 0.
- ``generation_proxy_f1``: the paper's generation score, SQuAD-style token F1 (the shared
  ``rag_lab.answer_metrics.token_f1``) between the generated answer and the *question*, since
  its template questions have no gold answers; against a reference answer (PubMedQA's long
  answer) the usual answer F1 is reported beside it.

A chunk belongs to the section that holds most of its characters, at a granularity
(``section``: top-level IMRaD sections; ``subsection``; ``paragraph``), so every strategy is
measured the same way whatever labels its chunks carry.
"""
from __future__ import annotations

import math
from typing import Mapping, Sequence

from ...answer_metrics import token_f1
from ...types import Chunk, Dataset, Document, Question, Retrieval
from ...datasets.structure import section_for_span


def chunk_section(chunk: Chunk, documents: Mapping[str, Document], level: str = "section") -> str | None:
    doc = documents.get(chunk.doc_id)
    if doc is None or not chunk.is_span:
        return chunk.section_id
    return section_for_span(doc, chunk.start, chunk.end, level)


def _count_sections(doc: Document, level: str) -> int:
    kinds = {"section": {"section"}, "subsection": {"section", "subsection"},
             "paragraph": {"section", "subsection", "paragraph"}}[level]
    return sum(1 for s in doc.sections if s.kind in kinds)


def section_coverage(chunks: Sequence[Chunk], k: int, documents: Mapping[str, Document], level: str = "section",
                     source_doc_ids: Sequence[str] = ()) -> tuple[int, float]:
    """(distinct sections in the top k, that count / sections of the source documents)."""
    top = chunks[:k]
    covered = {(c.doc_id, s) for c in top if (s := chunk_section(c, documents, level)) is not None}
    sources = [d for d in (source_doc_ids or dict.fromkeys(c.doc_id for c in top)) if d in documents]
    total = sum(_count_sections(documents[d], level) for d in sources)
    in_sources = sum(1 for d, _ in covered if d in sources)
    return len(covered), (in_sources / total if total else math.nan)


def cross_section_recall(chunks: Sequence[Chunk], required_sections: Sequence[str], k: int,
                         documents: Mapping[str, Document], level: str = "section", need: int = 2) -> float:
    """1.0 if the top k cover min(need, #required) of the required sections, else 0.0 (NaN if none required)."""
    required = set(required_sections)
    if not required:
        return math.nan
    hit = {chunk_section(c, documents, level) for c in chunks[:k]} & required
    return 1.0 if len(hit) >= min(need, len(required)) else 0.0


def generation_proxy_f1(answer: str, question: str) -> float:
    """The paper's generation proxy: token F1 between the generated answer and the question."""
    return token_f1(answer, question)


def structural_rows(results: Mapping[str, Mapping[str, Retrieval]], dataset: Dataset, ks: Sequence[int],
                    level: str = "section") -> list[tuple]:
    """Tidy rows (method, question_id, metric, k, value) for seccov, seccov_norm and cs_recall."""
    docs = {d.id: d for d in dataset.documents}
    rows = []
    for method, by_q in results.items():
        for q in dataset.questions:
            chunks = [h.chunk for h in by_q[q.id].hits]
            for k in ks:
                count, share = section_coverage(chunks, k, docs, level, q.gold_doc_ids)
                rows += [(method, q.id, "seccov", k, float(count)), (method, q.id, "seccov_norm", k, share)]
                if len(set(q.gold_section_ids)) >= 2:
                    rows.append((method, q.id, "cs_recall", k, cross_section_recall(
                        chunks, q.gold_section_ids, k, docs, level)))
    return rows


def answer_rows(method: str, question: Question, answer: str, chunks: Sequence[Chunk],
                documents: Mapping[str, Document], context_tokens: int, level: str = "section") -> list[tuple]:
    """Generation rows for one answer: proxy F1, F1 against the reference (when there is one),
    section diversity of the contexts and the context size in tokens."""
    rows = [(method, question.id, "proxy_f1", math.nan, generation_proxy_f1(answer, question.question)),
            (method, question.id, "section_diversity", math.nan,
             float(section_coverage(chunks, len(chunks), documents, level)[0])),
            (method, question.id, "context_tokens", math.nan, float(context_tokens))]
    if question.answer:
        rows.append((method, question.id, "answer_f1", math.nan, token_f1(answer, question.answer)))
    return rows
