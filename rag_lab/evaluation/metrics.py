"""Retrieval metrics at document level and at context level, per question.

Both levels use one rule: hit ``i`` is *relevant* if it matches some gold item, and
*new* if it matches a gold item no earlier hit matched. Then, over the top k hits:

- ``mrr``       1 / rank of the first relevant hit (0 if none in the top k)
- ``recall``    gold items matched by some top-k hit / number of gold items
- ``precision`` relevant hits / k (a short ranking is not padded in our favour)
- ``ndcg``      sum of 1/log2(rank+1) over *new* hits, divided by the same sum for the
                ideal ranking (the first min(k, #gold) ranks all new)

Document level: a hit matches the gold document it comes from. Context level: a hit
matches a gold context when their char spans in the same document overlap by at least
``min_overlap`` of the shorter of the two (so a sentence inside a gold paragraph counts,
and so does a chunk that contains the whole context). Hits with no span (summaries) match
a context when the context's text appears inside them.

Section coverage (GraLC-RAG's SecCov@k), one definition with the granularity as a parameter:
a chunk belongs to the section that holds most of its characters at a ``level`` (``section``:
top-level sections; ``subsection``; ``paragraph``), whatever label its chunker gave it, so every
method is measured the same way. The paper's reading is the default: the number of distinct
sections *of the question's source document(s)* (its gold documents) among the top k, and that
number over the sections those documents have at the level. Given no source documents it counts
the distinct (document, section) pairs of any document among the top k, over the sections of
the documents retrieved. The metric name carries the level and the reading
(``coverage_metric``: ``section_coverage_source``, ``subsection_coverage_retrieved`` ...).

Reference chunks (for ragas' ID-based context precision/recall): a method's chunks that match a
gold context by the context-level rule above (``reference_chunk_ids``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

from ..core.types import Chunk, Dataset, Document, Question

Matcher = Callable[[Chunk], set[int]]


def _ranked_metrics(matches: Sequence[set[int]], n_gold: int, k: int) -> dict[str, float]:
    top = matches[:k]
    seen: set[int] = set()
    first, dcg = 0.0, 0.0
    relevant = 0
    for rank, m in enumerate(top, 1):
        if m:
            relevant += 1
            if not first:
                first = 1.0 / rank
            if m - seen:
                dcg += 1.0 / math.log2(rank + 1)
            seen |= m
    ideal = sum(1.0 / math.log2(r + 1) for r in range(1, min(k, n_gold) + 1))
    return {"mrr": first, "recall": len(seen) / n_gold, "precision": relevant / k,
            "ndcg": dcg / ideal if ideal else 0.0}


def doc_matches(chunks: Sequence[Chunk], gold_doc_ids: Sequence[str]) -> list[set[int]]:
    index = {d: i for i, d in enumerate(dict.fromkeys(gold_doc_ids))}
    return [{index[c.doc_id]} if c.doc_id in index else set() for c in chunks]


@dataclass(frozen=True)
class GoldSpan:
    doc_id: str | None
    start: int
    end: int
    text: str


def locate_contexts(question: Question, documents: dict[str, Document]) -> list[GoldSpan]:
    """Find each gold context in the question's gold documents (or, failing that, any document)."""
    out = []
    search_order = [documents[d] for d in question.gold_doc_ids if d in documents]
    search_order += [d for d in documents.values() if d.id not in question.gold_doc_ids]
    for ctx in question.gold_contexts:
        for doc in search_order:
            i = doc.text.find(ctx)
            if i >= 0:
                out.append(GoldSpan(doc.id, i, i + len(ctx), ctx))
                break
        else:
            out.append(GoldSpan(None, -1, -1, ctx))
    return out


def span_overlap_match(chunk: Chunk, gold: GoldSpan, min_overlap: float) -> bool:
    if chunk.is_span and gold.doc_id is not None:
        if chunk.doc_id != gold.doc_id:
            return False
        overlap = min(chunk.end, gold.end) - max(chunk.start, gold.start)
        shorter = min(chunk.end - chunk.start, gold.end - gold.start)
        return overlap > 0 and overlap >= min_overlap * shorter
    return gold.text.strip() in chunk.text


def context_matches(chunks: Sequence[Chunk], golds: Sequence[GoldSpan], min_overlap: float = 0.5) -> list[set[int]]:
    return [{j for j, g in enumerate(golds) if span_overlap_match(c, g, min_overlap)} for c in chunks]


def retrieval_metrics(chunks: Sequence[Chunk], question: Question, documents: dict[str, Document],
                      ks: Sequence[int], min_overlap: float = 0.5) -> list[tuple[str, int, float]]:
    """(metric, k, value) rows for one ranked list; levels without gold are skipped."""
    rows = []
    if question.gold_doc_ids:
        m = doc_matches(chunks, question.gold_doc_ids)
        n = len(set(question.gold_doc_ids))
        for k in ks:
            rows += [(f"doc_{name}", k, v) for name, v in _ranked_metrics(m, n, k).items()]
    if question.gold_contexts:
        golds = locate_contexts(question, documents)
        m = context_matches(chunks, golds, min_overlap)
        for k in ks:
            rows += [(f"ctx_{name}", k, v) for name, v in _ranked_metrics(m, len(golds), k).items()]
    return rows


LEVELS = ("section", "subsection", "paragraph")
LEVEL_KINDS = {"section": ("section",), "subsection": ("section", "subsection"),
               "paragraph": ("section", "subsection", "paragraph")}


def _check_level(level: str) -> tuple[str, ...]:
    if level not in LEVEL_KINDS:
        raise ValueError(f"level must be one of {LEVELS}, got {level!r}")
    return LEVEL_KINDS[level]


def section_for_span(doc: Document, start: int, end: int, level: str = "subsection") -> str | None:
    """The section that holds most of ``[start, end)`` at a granularity:

    - ``section``: top-level sections (kind "section"; the outermost wins a tie)
    - ``subsection``: the innermost section or subsection
    - ``paragraph``: the innermost unit of any kind
    """
    kinds = _check_level(level)
    best, best_key = None, None
    for s in doc.sections:
        if s.kind not in kinds:
            continue
        overlap = min(end, s.end) - max(start, s.start)
        if overlap <= 0 and not (start == end and s.start <= start < s.end):
            continue
        size = s.end - s.start
        key = (overlap, size if level == "section" else -size)
        if best_key is None or key > best_key:
            best, best_key = s.id, key
    return best


def chunk_section(chunk: Chunk, documents: Mapping[str, Document], level: str = "section") -> str | None:
    """The section of ``chunk`` at ``level``; None for a chunk with no span in a known document (a summary)."""
    doc = documents.get(chunk.doc_id)
    if doc is None or not chunk.is_span:
        return None
    return section_for_span(doc, chunk.start, chunk.end, level)


def count_sections(doc: Document, level: str = "section") -> int:
    """How many sections ``doc`` has at ``level`` (the units ``chunk_section`` can return)."""
    kinds = _check_level(level)
    return sum(1 for s in doc.sections if s.kind in kinds)


@dataclass(frozen=True)
class Coverage:
    """Distinct sections covered by the top k, and the number of sections they are counted against."""

    count: int
    total: int

    @property
    def share(self) -> float:
        return self.count / self.total if self.total else math.nan


def section_coverage(chunks: Sequence[Chunk], k: int, documents: Mapping[str, Document], level: str = "section",
                     source_doc_ids: Sequence[str] | None = None) -> Coverage:
    """Section coverage of the top ``k`` (module docstring). ``source_doc_ids``: the question's source
    documents (the paper's reading); None counts sections of any retrieved document."""
    _check_level(level)
    top = chunks[:k]
    if source_doc_ids is None:
        docs = [d for d in dict.fromkeys(c.doc_id for c in top) if d in documents]
    else:
        docs = [d for d in dict.fromkeys(source_doc_ids) if d in documents]
    wanted = set(docs)
    covered = {(c.doc_id, s) for c in top if c.doc_id in wanted and (s := chunk_section(c, documents, level))}
    return Coverage(len(covered), sum(count_sections(documents[d], level) for d in docs))


def coverage_metric(level: str = "section", source: bool = True) -> str:
    """The metric name of a coverage count: level and reading, e.g. ``section_coverage_source``
    (``+ "_share"`` for the normalised value)."""
    _check_level(level)
    return f"{level}_coverage_{'source' if source else 'retrieved'}"


def reference_chunk_ids(chunks: Sequence[Chunk], question: Question, documents: Mapping[str, Document],
                        min_overlap: float = 0.5) -> list[str]:
    """Ids of the chunks (of one method's index) that match a gold context of ``question`` by the
    context-level rule: the reference ids of ragas' ID-based context precision and recall."""
    if not question.gold_contexts:
        return []
    golds = locate_contexts(question, dict(documents))
    located = {g.doc_id for g in golds if g.doc_id is not None}
    by_text = len(located) < len(golds)          # a context found in no document matches by text only
    return [c.id for c in chunks
            if (not c.is_span or by_text or c.doc_id in located)   # cheap skip: a span matches only in its doc
            and any(span_overlap_match(c, g, min_overlap) for g in golds)]


def has_gold(question: Question) -> bool:
    return bool(question.gold_doc_ids or question.gold_contexts)


def questions_with_gold(dataset: Dataset) -> tuple[list[Question], list[str]]:
    """Questions that can be scored, and the ids of those skipped because they carry no gold."""
    kept = [q for q in dataset.questions if has_gold(q)]
    return kept, [q.id for q in dataset.questions if not has_gold(q)]
