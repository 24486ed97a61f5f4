"""Retrieval metrics at document level and at context level, per question (docs/metrics.md defines each).

Both levels use one rule: hit ``i`` is *relevant* if it matches some gold item, and *new* if it matches a
gold item no earlier hit matched; over the top k, ``mrr`` (1 / rank of the first relevant hit),
``recall`` (gold items matched / gold items), ``precision`` (relevant hits / k: a short ranking is not
padded in our favour) and ``ndcg`` (gain: new gold items / log2(rank+1), over the best top k the
method's own chunks allow, ``ideal_dcg``). An empty ranking scores 0 on all four, never NaN; a gold
context listed twice is one gold item.

Document level: a hit matches the gold document it comes from. Context level: a hit matches a gold
context when their spans in one document overlap by at least ``min_overlap`` of the shorter (so a
sentence inside a gold paragraph counts, and so does a chunk holding the whole context); a hit with no
span (a summary) matches a context its text contains.

Section coverage (GraLC-RAG's SecCov@k): a chunk belongs to the section holding most of its characters
at a ``level``, whatever label its chunker gave it, so every method is measured the same way; our
default reading counts the sections of the question's source documents among the top k (other readings:
``coverage_readings``). ``reference_chunk_ids``: a method's chunks matching a gold context by the
context rule, the reference ids of ragas' ID-based context metrics.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

from ..core.gold import offsets_of, place, search_order
from ..core.types import Chunk, Dataset, Document, Question

Matcher = Callable[[Chunk], set[int]]


def _ranked_metrics(matches: Sequence[set[int]], n_gold: int, k: int, ideal: float | None = None
                    ) -> dict[str, float]:
    """MRR, recall, precision and nDCG of the top ``k``; ``ideal``: the ideal DCG at k (default: one
    gold item per hit, ``ideal_dcg([], n_gold, k)``)."""
    top = matches[:k]
    seen: set[int] = set()
    first, dcg = 0.0, 0.0
    relevant = 0
    for rank, m in enumerate(top, 1):
        if m:
            relevant += 1
            if not first:
                first = 1.0 / rank
            dcg += len(m - seen) / math.log2(rank + 1)
            seen |= m
    if ideal is None:
        ideal = ideal_dcg([], n_gold, k)
    ideal = max(ideal, dcg)      # a greedy ideal (many gold items) may fall short of the ranking itself
    return {"mrr": first, "recall": len(seen) / n_gold, "precision": relevant / k,
            "ndcg": dcg / ideal if ideal else 0.0}


EXACT_IDEAL_SETS = 6   # overlapping coverage sets up to this many are ordered exactly, more greedily


def ideal_dcg(coverage: Sequence[set[int]], n_gold: int, k: int) -> float:
    """The best DCG@k (gain = newly matched gold items / log2(rank+1)) of a ranking drawn from chunks
    whose gold matches are ``coverage``; gold items (0..n_gold-1) no set holds each need a chunk of
    their own. Sets inside another are dropped (never better). Disjoint sets are best largest first
    (exact); overlapping ones are searched exactly up to ``EXACT_IDEAL_SETS``, greedily beyond."""
    sets = {frozenset(c) for c in coverage if c}
    covered = set().union(*sets)
    sets |= {frozenset([j]) for j in range(n_gold) if j not in covered}
    maximal = sorted((s for s in sets if not any(s < t for t in sets)), key=lambda s: (-len(s), sorted(s)))
    depth = min(k, len(maximal))
    if sum(map(len, maximal)) == len(set().union(*maximal)):     # disjoint: largest first is best
        return sum(len(s) / math.log2(rank + 1) for rank, s in enumerate(maximal[:depth], 1))

    def best(remaining: tuple[frozenset, ...], seen: frozenset, rank: int) -> float:
        if rank > depth or not remaining:
            return 0.0
        return max(len(s - seen) / math.log2(rank + 1) + best(remaining[:i] + remaining[i + 1:], seen | s, rank + 1)
                   for i, s in enumerate(remaining))

    if len(maximal) <= EXACT_IDEAL_SETS:
        return best(tuple(maximal), frozenset(), 1)
    total, seen, remaining = 0.0, frozenset(), list(maximal)
    for rank in range(1, depth + 1):
        s = max(remaining, key=lambda t: len(t - seen))
        total += len(s - seen) / math.log2(rank + 1)
        seen |= s
        remaining.remove(s)
    return total


def doc_id_matches(doc_ids: Sequence[str], gold_doc_ids: Sequence[str]) -> list[set[int]]:
    """Per ranked hit (named by its document id), the gold document it is (as an index into the gold list)."""
    index = {d: i for i, d in enumerate(dict.fromkeys(gold_doc_ids))}
    return [{index[d]} if d in index else set() for d in doc_ids]


def document_metrics(doc_ids: Sequence[str], gold_doc_ids: Sequence[str], ks: Sequence[int]
                     ) -> list[tuple[str, int, float]]:
    """(``doc_<metric>``, k, value) rows of a ranking named by document ids: one per retrieved chunk
    (what ``retrieval_metrics`` scores) or one per document (an outside TREC run, ``trec.py``)."""
    m = doc_id_matches(doc_ids, gold_doc_ids)
    n = len(set(gold_doc_ids))
    return [(f"doc_{name}", k, v) for k in ks for name, v in _ranked_metrics(m, n, k).items()]


@dataclass(frozen=True)
class GoldSpan:
    doc_id: str | None
    start: int
    end: int
    text: str


def locate_contexts(question: Question, documents: dict[str, Document]) -> list[GoldSpan]:
    """Place each distinct gold context in the question's gold documents (or, failing that, any document):
    at its given offset (``gold_context_offsets``), else at its first occurrence (``core.gold``)."""
    out = []
    order = search_order(question, documents)
    # a context listed twice is one gold item (twice at two given offsets: two)
    for ctx, offset in dict.fromkeys(zip(question.gold_contexts, offsets_of(question))):
        doc_id, start = place(ctx, offset, order)
        out.append(GoldSpan(doc_id, start, start + len(ctx) if doc_id is not None else -1, ctx))
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
                      ks: Sequence[int], min_overlap: float = 0.5, pool: "Sequence[Chunk] | ChunkPool | None" = None
                      ) -> list[tuple[str, int, float]]:
    """(metric, k, value) rows for one ranked list; levels without gold are skipped. ``pool``: the
    method's chunks, for the ideal of context-level nDCG (default: only the ranked list's own)."""
    rows = []
    if question.gold_doc_ids:
        rows += document_metrics([c.doc_id for c in chunks], question.gold_doc_ids, ks)
    if question.gold_contexts:
        golds = locate_contexts(question, documents)
        m = context_matches(chunks, golds, min_overlap)
        coverage = list(m)
        if pool is not None:
            pool = pool if isinstance(pool, ChunkPool) else ChunkPool(pool)
            coverage += context_matches(pool.candidates(golds), golds, min_overlap)
        for k in ks:
            ideal = ideal_dcg(coverage, len(golds), k)
            rows += [(f"ctx_{name}", k, v) for name, v in _ranked_metrics(m, len(golds), k, ideal).items()]
    return rows


class ChunkPool:
    """A method's chunks grouped by document, so the chunks that can match a question's gold contexts
    are found without scanning the whole index (a span matches only in its own document)."""

    def __init__(self, chunks: Sequence[Chunk]):
        self.by_doc: dict[str, list[Chunk]] = {}
        self.derived: list[Chunk] = []          # no span (summaries): they match by text, any document
        self.all = list(chunks)
        for c in self.all:
            (self.by_doc.setdefault(c.doc_id, []) if c.is_span else self.derived).append(c)

    def candidates(self, golds: Sequence[GoldSpan]) -> list[Chunk]:
        """Chunks that may match one of ``golds``: spans of the documents they were found in, chunks
        with no span, and every chunk when a context is found in no document (it matches by text)."""
        if any(g.doc_id is None for g in golds):
            return self.all
        docs = dict.fromkeys(g.doc_id for g in golds)
        return [c for d in docs for c in self.by_doc.get(d, [])] + self.derived


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

    @property
    def value(self) -> float:
        """The count, or NaN when the documents it is counted against have no section at the level
        (nothing to cover: not a zero), as ``share`` is."""
        return float(self.count) if self.total else math.nan


def section_coverage(chunks: Sequence[Chunk], k: int, documents: Mapping[str, Document], level: str = "section",
                     source_doc_ids: Sequence[str] | None = None) -> Coverage:
    """Section coverage of the top ``k`` (module docstring). ``source_doc_ids``: the question's source
    documents (our default reading); None counts sections of any retrieved document."""
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


def reference_chunk_ids(chunks: Sequence[Chunk] | ChunkPool, question: Question, documents: Mapping[str, Document],
                        min_overlap: float = 0.5) -> list[str]:
    """Ids of the chunks (of one method's index) that match a gold context of ``question`` by the
    context-level rule: the reference ids of ragas' ID-based context precision and recall."""
    if not question.gold_contexts:
        return []
    golds = locate_contexts(question, dict(documents))
    pool = chunks if isinstance(chunks, ChunkPool) else ChunkPool(chunks)
    keep = {c.id for c in pool.candidates(golds) if any(span_overlap_match(c, g, min_overlap) for g in golds)}
    return [c.id for c in pool.all if c.id in keep]


def has_gold(question: Question) -> bool:
    return bool(question.gold_doc_ids or question.gold_contexts)


def questions_with_gold(dataset: Dataset) -> tuple[list[Question], list[str]]:
    """Questions that can be scored, and the ids of those skipped because they carry no gold."""
    kept = [q for q in dataset.questions if has_gold(q)]
    return kept, [q.id for q in dataset.questions if not has_gold(q)]
