"""Which reading of SecCov@k reproduces GraLC-RAG's Table 5 (``evaluation.coverage_readings``)?

The paper's pattern: content-only strategies (Naive, Semantic, Late Chunking) at exactly 1.00 for
every condition and depth; structure-aware ones (Structure-Aware, GraLC-RAG (KG), (+Graph)) growing
with document length and depth, ~2.3 -> 4.5 at k = 5 and ~4 -> 15.6 at k = 20 from introduction to
full text. ``reading_means`` scores every reading on built runs (one per length condition, as
``experiment.length_gradient`` makes them); ``pattern_fit`` sets each reading beside the paper's
numbers. ``PAPER_READING`` is the one that fits (docs/metrics.md gives the measurements), and the
notebook's Table 5 compares the paper's columns with it only.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ...evaluation.coverage_readings import READINGS, Reading, coverage_count
from ...evaluation.metrics import count_sections
from . import paper
from .paper import CONTENT_ONLY, STRUCTURE_AWARE

CONDITIONS = ("introduction", "partial", "full")
# what docs/metrics.md found to reproduce the paper's pattern (the measurements are there)
PAPER_READING = Reading("paragraph", "bare", "unlabelled")
PAPER_READING_WORDS = ("section labels at any level (paragraphs too) of every retrieved article, not qualified "
                       "by article; content-only chunks unlabelled")
PAPER_SECCOV = f"seccov[{PAPER_READING.name}]"      # its metric name in the tidy rows


def reading_rows(results: Mapping[int, Mapping[str, Mapping]], dataset, reading: Reading,
                 metric: str | None = None) -> list[tuple]:
    """Tidy rows (method, question_id, metric, k, count) of one reading for k -> method -> question
    id -> Retrieval; questions with gold documents only; content-only strategies are unlabelled."""
    docs = {d.id: d for d in dataset.documents}
    any_units = any(count_sections(d, reading.level) for d in docs.values())
    metric = metric or f"seccov[{reading.name}]"
    rows = []
    for k, by_method in sorted(results.items()):
        for method, by_q in by_method.items():
            for q in dataset.questions:
                if q.gold_doc_ids and q.id in by_q:
                    chunks = [h.chunk for h in by_q[q.id].hits]
                    rows.append((method, q.id, metric, k, coverage_count(
                        chunks, k, docs, reading, q.gold_doc_ids, method not in CONTENT_ONLY, any_units)))
    return rows


def reading_means(runs: Mapping[str, object], ks: Sequence[int] = (5, 20),
                  readings: Sequence[Reading] = tuple(READINGS)) -> pd.DataFrame:
    """Rows: reading names; columns (strategy label, k, condition): mean count over questions."""
    out = {}
    for reading in readings:
        values = {}
        for cond in [c for c in CONDITIONS if c in runs]:
            run = runs[cond]
            rows = reading_rows({k: run.results[k] for k in ks}, run.dataset, reading)
            frame = pd.DataFrame(rows, columns=["method", "question_id", "metric", "k", "value"])
            for (method, k), v in frame.groupby(["method", "k"])["value"].mean().items():
                values[(paper.label(method), int(k), cond)] = v
        out[reading.name] = values
    table = pd.DataFrame(out).T
    table.columns = pd.MultiIndex.from_tuples(table.columns, names=["strategy", "k", "condition"])
    return table.sort_index(axis=1)


def paper_cells() -> pd.Series:
    """The paper's SecCov@5 and @20 per (strategy label, k, condition)."""
    t5 = paper.reported(5)
    return pd.Series({(s, k, c): t5.loc[s, f"{paper.seccov_label(k)} {c}"]
                      for s in t5.index for k in (5, 20) for c in CONDITIONS})


def pattern_fit(means: pd.DataFrame) -> pd.DataFrame:
    """Per reading: the content-only strategies' largest distance from 1.00; whether every
    structure-aware strategy grows from introduction to full text and from k = 5 to 20; the mean
    absolute difference from the paper's cells; ordered best first (content flat, then growth, then
    the difference)."""
    cells = paper_cells()
    content = [paper.label(m) for m in CONTENT_ONLY]
    structure = [paper.label(m) for m in STRUCTURE_AWARE]
    rows = {}
    for name, row in means.iterrows():
        common = [c for c in cells.index if c in row.index and not pd.isna(row[c])]
        flat = [abs(row[c] - 1.0) for c in common if c[0] in content]
        grows = all(_grows(row, s) for s in structure if (s, 5, "full") in row.index)
        rows[name] = {"content-only max |x - 1|": max(flat) if flat else np.nan,
                      "structure-aware grows with length and k": grows,
                      "mean |ours - paper|": float(np.mean([abs(row[c] - cells[c]) for c in common])) if common else np.nan}
    fit = pd.DataFrame(rows).T
    return fit.sort_values(["content-only max |x - 1|", "structure-aware grows with length and k", "mean |ours - paper|"],
                           ascending=[True, False, True])


def _grows(row: pd.Series, strategy: str) -> bool:
    conds = [c for c in CONDITIONS if (strategy, 5, c) in row.index]
    by_len = all(row[(strategy, k, a)] <= row[(strategy, k, b)] for k in (5, 20) for a, b in zip(conds, conds[1:]))
    by_k = all(row[(strategy, 5, c)] <= row[(strategy, 20, c)] for c in conds)
    return by_len and by_k
