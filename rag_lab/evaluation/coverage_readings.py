"""Readings of section coverage (SecCov@k): the candidates for what GraLC-RAG's Table 5 counted.

The paper defines SecCov@k as the distinct sections among the top k normalised by the source
document's section count, yet prints unnormalised values up to 15.57, and 1.00 for content-only
methods at every depth and length. A reading is three choices:

- ``level``: which units count — ``section`` (top-level), ``subsection`` (sections and
  subsections, innermost), ``paragraph`` (any unit, innermost): ``metrics.section_for_span``.
- ``scope``: ``source`` — sections of the question's source article(s) only, as (document,
  section) pairs (``metrics.section_coverage``, our default); ``retrieved`` — (document, section)
  pairs of every retrieved article; ``bare`` — section labels of every retrieved article *not*
  qualified by their document (the local id, e.g. ``s2-1`` of ``rl-bm-01:s2-1``), so the same
  label in two articles counts once.
- ``label``: how a chunk gets its unit — ``majority`` (the unit holding most of its characters,
  ours), ``every`` (each unit it overlaps: a chunk spanning two sections counts both), or
  ``unlabelled`` (as ``majority`` for the structure-aware strategies, while content-only chunks
  carry no section label at all and all count as one "unlabelled" unit).

``coverage_count`` scores one ranked list under one reading; ``READINGS`` lists every combination
and ``reading_name`` names one. Which reading reproduces the paper's pattern is measured in
``rag_lab/methods/gralc/seccov.py`` and written up in docs/metrics.md.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Mapping, Sequence

from ..core.types import Chunk, Document
from .metrics import LEVEL_KINDS, _check_level, count_sections, section_for_span

SCOPES = ("source", "retrieved", "bare")
LABELS = ("majority", "every", "unlabelled")
UNLABELLED = "(no section label)"


@dataclass(frozen=True)
class Reading:
    level: str = "section"
    scope: str = "source"
    label: str = "majority"

    def __post_init__(self):
        _check_level(self.level)
        if self.scope not in SCOPES:
            raise ValueError(f"scope must be one of {SCOPES}, got {self.scope!r}")
        if self.label not in LABELS:
            raise ValueError(f"label must be one of {LABELS}, got {self.label!r}")

    @property
    def name(self) -> str:
        return f"{self.level}/{self.scope}/{self.label}"


READINGS = [Reading(lv, sc, lb) for lv, sc, lb in itertools.product(LEVEL_KINDS, SCOPES, LABELS)]


def chunk_units(chunk: Chunk, doc: Document, level: str, label: str) -> list[str]:
    """The section ids a chunk counts for: the majority unit, or every unit its span overlaps (the
    span cut at each section boundary, each piece labelled by the majority rule)."""
    if label != "every":
        unit = section_for_span(doc, chunk.start, chunk.end, level)
        return [unit] if unit else []
    kinds = LEVEL_KINDS[level]
    cuts = sorted({chunk.start, chunk.end} | {b for s in doc.sections if s.kind in kinds
                                               for b in (s.start, s.end) if chunk.start < b < chunk.end})
    units = (section_for_span(doc, a, b, level) for a, b in zip(cuts, cuts[1:]))
    return list(dict.fromkeys(u for u in units if u))


def bare(section_id: str) -> str:
    """A section id without its document prefix (``rl-bm-01:s2-1`` -> ``s2-1``; ``s2`` stays)."""
    return section_id.split(":", 1)[1] if ":" in section_id else section_id


def coverage_count(chunks: Sequence[Chunk], k: int, documents: Mapping[str, Document], reading: Reading,
                   source_doc_ids: Sequence[str] = (), labelled: bool = True,
                   any_units: bool | None = None) -> float:
    """Distinct units among the top ``k`` under ``reading``. ``labelled``: False for a content-only
    strategy, whose chunks carry no section label under the ``unlabelled`` rule. Chunks with no span
    (summaries) or of unknown documents count nothing. NaN when there is nothing to cover: the source
    documents (``source`` scope) or all the documents (other scopes) have no unit at the level
    (``any_units``: that answer for all the documents, computed once by a caller scoring many lists)."""
    sources = set(source_doc_ids)
    if reading.scope == "source":
        any_units = any(count_sections(documents[d], reading.level) for d in sources if d in documents)
    elif any_units is None:
        any_units = any(count_sections(d, reading.level) for d in documents.values())
    if not any_units:
        return math.nan
    units: set = set()
    for c in chunks[:k]:
        doc = documents.get(c.doc_id)
        if doc is None or not c.is_span or (reading.scope == "source" and c.doc_id not in sources):
            continue
        if reading.label == "unlabelled" and not labelled:
            found = [UNLABELLED]
        else:
            found = chunk_units(c, doc, reading.level, reading.label)
        for u in found:
            units.add(bare(u) if reading.scope == "bare" else (c.doc_id, u))
    return float(len(units))
