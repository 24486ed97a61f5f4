"""The metric@k columns an evaluation will produce, known before anything is built, so a tested family
(``eval --baseline --family``) naming a column the run cannot have is refused at once with the nearest
real names, instead of building every index and reporting "(0 tests)".

The columns follow from the data and the options alone (``harness.evaluate``): document-level metrics
when a question names gold documents, context-level ones when one has gold contexts, section coverage
when documents have sections, each at every ``--k``; with a reasoner, the answer metrics at ``answer_k``
(the judged ones only with a judge).
"""
from __future__ import annotations

import difflib
from typing import Sequence

from ..core.types import Dataset
from .answer_metrics import ID_METRICS, LLM_METRICS, NON_LLM_METRICS
from .metrics import coverage_metric

RANKED = ("mrr", "recall", "precision", "ndcg")          # metrics._ranked_metrics, per level
STRING_MATCH = ("token_f1", "exact_match")               # answer_metrics.answer_scores, with a reference answer


def produced_columns(dataset: Dataset, ks: Sequence[int], section_level: str = "section", reasoner: bool = False,
                     judge: bool = False, answer_k: int = 5) -> list[str]:
    """Every metric@k column ``evaluate`` can give on ``dataset`` with these options."""
    names = []
    if any(q.gold_doc_ids for q in dataset.questions):
        names += [f"doc_{m}" for m in RANKED]
    if any(q.gold_contexts for q in dataset.questions):
        names += [f"ctx_{m}" for m in RANKED]
    if any(d.sections for d in dataset.documents):
        coverage = coverage_metric(section_level, source=True)
        names += [coverage, f"{coverage}_share"]
    columns = [f"{m}@{k}" for k in ks for m in names]
    if reasoner:
        answers = [*STRING_MATCH, *NON_LLM_METRICS, *ID_METRICS, *(LLM_METRICS if judge else ())]
        columns += [f"{m}@{answer_k}" for m in answers]
    return list(dict.fromkeys(columns))


def check_family(family: Sequence[str], produced: Sequence[str]) -> None:
    """A ValueError naming each column of ``family`` not in ``produced``, with the closest ones."""
    missing = [c for c in family if c not in produced]
    if not missing:
        return
    hints = []
    for column in missing:
        near = difflib.get_close_matches(column, list(produced), n=3, cutoff=0.6)
        hints.append(f"{column!r}" + (f" (did you mean {' or '.join(repr(n) for n in near)}?)" if near else ""))
    ks = sorted({c.split("@", 1)[1] for c in produced}, key=int)
    raise ValueError(f"--family {', '.join(hints)}: not a column this run produces; it scores "
                     f"{', '.join(sorted({c.split('@')[0] for c in produced}))} at k {', '.join(ks)} (--k, and "
                     "--answer-k for answer metrics)")
