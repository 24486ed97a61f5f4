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

Section coverage (GraLC-RAG): distinct sections among the top k hits; normalised by the
number of sections of the documents retrieved.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

from .types import Chunk, Dataset, Document, Question

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


def section_coverage(chunks: Sequence[Chunk], k: int, documents: dict[str, Document] | None = None) -> tuple[int, float]:
    """Distinct (doc, section) pairs among the top k, and that count over the sections those docs have."""
    top = chunks[:k]
    covered = {(c.doc_id, c.section_id) for c in top if c.section_id is not None}
    if not documents:
        return len(covered), float("nan")
    total = sum(len(documents[d].sections) for d in {c.doc_id for c in top} if d in documents)
    return len(covered), (len(covered) / total if total else float("nan"))


def has_gold(question: Question) -> bool:
    return bool(question.gold_doc_ids or question.gold_contexts)


def questions_with_gold(dataset: Dataset) -> tuple[list[Question], list[str]]:
    """Questions that can be scored, and the ids of those skipped because they carry no gold."""
    kept = [q for q in dataset.questions if has_gold(q)]
    return kept, [q.id for q in dataset.questions if not has_gold(q)]
