"""What kind of number each metric is, declared once by its name: the kind, not the values that
happen to occur, chooses a mean's interval (``statistics.mean_ci``) and a difference's range.

- ``binary``: 0 or 1 per question (a hit or a miss): Wilson's interval.
- ``unit``: a fraction in [0, 1] (recall, MRR, precision, nDCG, a judge's score, a share): an
  interval that stays inside [0, 1]; differences of two stay inside [-1, 1].
- ``count``: a non-negative whole number (sections covered, SecCov@k): an interval that stays >= 0.
- ``unbounded``: anything else a table carries (latency, tokens, a judge's spread, a cosine that may
  be negative): the t interval.

The names are written in many modules (``metrics``, ``harness``, ``answer_metrics``, GraLC-RAG's and
SSG's own); this is the one table of their kinds, matched on the name without its ``@k``. A name it
does not know has no declared kind (``declared_kind`` returns None, ``metric_kind`` refuses it).
"""
from __future__ import annotations

import re
from typing import Literal

MetricKind = Literal["binary", "unit", "count", "unbounded"]
KINDS: tuple[MetricKind, ...] = ("binary", "unit", "count", "unbounded")

# (pattern on the bare name, kind); the first that matches decides
_DECLARED: tuple[tuple[str, MetricKind], ...] = (
    (r"cs_recall", "binary"),                                             # GraLC-RAG: >= 2 required sections hit
    (r".*_judge_sd", "unbounded"),                                        # a judge's spread
    (r"(section|subsection|paragraph)_coverage_(source|retrieved)_share", "unit"),
    (r"(section|subsection|paragraph)_coverage_(source|retrieved)", "count"),
    (r"seccov\[.*\]", "count"),                                           # SecCov readings (coverage_readings)
    (r"section_diversity", "count"),
    (r"(doc|ctx)_(mrr|recall|precision|ndcg)", "unit"),
    (r"gold_sentence_(precision|recall)", "unit"),                        # SSG
    (r"(nonllm|id|llm)_context_(precision|recall)", "unit"),              # ragas
    (r"faithfulness|factual_correctness|rouge_l|bleu|string_similarity", "unit"),
    (r"token_f1|answer_f1|proxy_f1|generation_proxy_f1", "unit"),
    (r"answer_relevancy", "unbounded"),                                   # a mean cosine: may fall below 0
    (r"latency_seconds|seconds_.*|build_.*|chunks|.*_tokens|context_budget|tokens_handed", "unbounded"),
)
_COMPILED = tuple((re.compile(pattern), kind) for pattern, kind in _DECLARED)


def bare_name(metric: str) -> str:
    """``ctx_recall@5`` -> ``ctx_recall``; a name without k unchanged."""
    return str(metric).split("@", 1)[0]


def declared_kind(metric: str) -> MetricKind | None:
    """The kind declared for ``metric`` (``name`` or ``name@k``), or None when it is not declared."""
    name = bare_name(metric)
    return next((kind for pattern, kind in _COMPILED if pattern.fullmatch(name)), None)


def metric_kind(metric: str) -> MetricKind:
    """The kind declared for ``metric``; a ValueError naming it when none is."""
    kind = declared_kind(metric)
    if kind is None:
        raise ValueError(f"metric {metric!r} has no declared kind; declare it in rag_lab/evaluation/metric_kinds.py "
                         f"as one of {', '.join(KINDS)}")
    return kind


def check_kind(kind: str) -> MetricKind:
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    return kind  # type: ignore[return-value]
