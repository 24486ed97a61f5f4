"""Every metric the package reports, declared once, as ir_measures declares a measure: name, kind, cut-off,
what counts as a match, source. The interval choice (``uncertainty``), the ragas classes and ir_measures names
the metrics are scored and checked with, the leaderboards, and the columns a run will produce (known before
anything is built, so ``eval --family`` naming a column the run cannot have is refused at once) read it;
docs/metrics.md says each definition in words. The kind, not the values that occur, picks a mean's interval:
``binary`` (0 or 1: Wilson's), ``unit`` (in [0, 1]: an interval inside it; a difference inside [-1, 1]),
``count`` (whole numbers >= 0: an interval >= 0), ``unbounded`` (seconds, tokens, a judge's spread, a cosine
that may be negative: t). A name is looked up without ``@k``; a ``<part>`` in a declared name is any text.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Literal, Sequence

import numpy as np
import pandas as pd

from ..core.types import SECTION_KINDS, Cost, Dataset
from .metrics import coverage_metric

MetricKind = Literal["binary", "unit", "count", "unbounded"]
KINDS: tuple[MetricKind, ...] = ("binary", "unit", "count", "unbounded")


@dataclass(frozen=True)
class Metric:
    """``cutoff``: what its ``@k`` is ("k": the top k hits; "answer_k": the hits the answer was given; "": no
    k). ``group``: what writes it (``evaluate``: doc, ctx, coverage, squad, non-LLM, ID, judged). ``source``:
    its definition; "ragas <Class>" / "ir_measures <Measure>": the library's metric it equals. ``leaderboard``:
    a column of notebook 10's leaderboards; ``ranks`` 1, 2, ...: the order in which one is ranked by it."""

    name: str
    kind: MetricKind
    cutoff: str
    group: str
    match: str
    source: str
    leaderboard: bool = False
    ranks: int = 0


DOC, CTX = "a hit from a gold document", "a hit's span overlapping a gold context by min_overlap of the shorter"
METRICS: tuple[Metric, ...] = (
    Metric("doc_mrr", "unit", "k", "doc", DOC, "ir_measures RR", True, 3),
    Metric("doc_recall", "unit", "k", "doc", DOC, "ir_measures R", True, 2),
    Metric("doc_precision", "unit", "k", "doc", DOC, "ir_measures P"),
    Metric("doc_ndcg", "unit", "k", "doc", DOC, "ir_measures nDCG"),
    Metric("ctx_mrr", "unit", "k", "ctx", CTX, "ir_measures RR", True),
    Metric("ctx_recall", "unit", "k", "ctx", CTX, "recall over distinct gold contexts", True, 1),
    Metric("ctx_precision", "unit", "k", "ctx", CTX, "ir_measures P", True),
    Metric("ctx_ndcg", "unit", "k", "ctx", CTX, "nDCG, the ideal from the method's own chunks (metrics.ideal_dcg)"),
    *(Metric(f"{level}_coverage_{scope}{share}", "unit" if share else "count", "k", "coverage",
             f"distinct {level}s among the top k, of the {scope} documents", "GraLC-RAG's SecCov@k, our reading"
             + (" / the sections they have" if share else ""),
             (level, scope, share) == ("section", "source", ""))
      for level in SECTION_KINDS for scope in ("source", "retrieved") for share in ("", "_share")),
    Metric("seccov[<reading>]", "count", "k", "gralc", "the reading's units", "GraLC-RAG's SecCov@k, a reading"),
    Metric("cs_recall", "binary", "k", "gralc", "required sections of the source with a top-k chunk", "CS Recall@k"),
    Metric("proxy_f1", "unit", "", "gralc", "answer tokens in the question", "GraLC-RAG's F1 (SQuAD token F1)"),
    Metric("answer_f1", "unit", "", "gralc", "answer tokens in the reference", "SQuAD token F1"),
    Metric("section_diversity", "count", "", "gralc", "(article, section) pairs in the contexts", "GraLC-RAG Sec Div"),
    Metric("context_tokens", "unbounded", "", "gralc", "the answer's contexts + question", "o200k_base tokens"),
    Metric("seconds_<step>", "unbounded", "", "build cost", "one GraLC-RAG build step", "seconds"),
    *(Metric(f"gold_sentence_{m}", "unit", "", "ssg", CTX, f"SSG's {m}, gathered") for m in ("precision", "recall")),
    Metric("context_budget", "unbounded", "k", "budget", "the hits' texts", "cl100k_base tokens", True),
    Metric("tokens_handed", "unbounded", "", "budget", "the list cut to a budget", "cl100k_base tokens"),
    *(Metric(name, "unbounded", "", "query cost", "the query at the deepest k", "counted")
      for name in ("latency_seconds", "query_embedding_tokens", "query_llm_tokens")),
    Metric("answer_llm_tokens", "unbounded", "", "query cost", "the answer call", "counted"),
    *(Metric(f"build_{field}", "unbounded", "", "build cost", "one build", "counted") for field in Cost().as_dict()),
    Metric("chunks", "unbounded", "", "build cost", "one build", "chunks in the index"),
    Metric("token_f1", "unit", "answer_k", "squad", "normalised tokens shared with the reference", "SQuAD F1"),
    Metric("exact_match", "binary", "answer_k", "squad", "normalised answer equal to the reference", "SQuAD EM"),
    Metric("rouge_l", "unit", "answer_k", "non-LLM", "LCS of answer and reference", "ragas RougeScore"),
    Metric("bleu", "unit", "answer_k", "non-LLM", "n-grams of answer and reference", "ragas BleuScore"),
    Metric("string_similarity", "unit", "answer_k", "non-LLM", "characters", "ragas NonLLMStringSimilarity"),
    Metric("nonllm_context_precision", "unit", "answer_k", "non-LLM", "similarity >= 0.5",
           "ragas NonLLMContextPrecisionWithReference"),
    Metric("nonllm_context_recall", "unit", "answer_k", "non-LLM", "similarity > 0.5", "ragas NonLLMContextRecall"),
    Metric("id_context_precision", "unit", "answer_k", "ID", "chunks matching gold", "ragas IDBasedContextPrecision"),
    Metric("id_context_recall", "unit", "answer_k", "ID", "the same ids", "ragas IDBasedContextRecall"),
    Metric("faithfulness", "unit", "answer_k", "judged", "statements the contexts support", "ragas Faithfulness"),
    Metric("answer_relevancy", "unbounded", "answer_k", "judged", "a cosine", "ragas ResponseRelevancy"),
    Metric("llm_context_precision", "unit", "answer_k", "judged", "useful", "ragas LLMContextPrecisionWithReference"),
    Metric("llm_context_recall", "unit", "answer_k", "judged", "sentences attributed", "ragas LLMContextRecall"),
    Metric("factual_correctness", "unit", "answer_k", "judged", "claims checked both ways", "ragas FactualCorrectness"),
)
METRICS += tuple(Metric(f"{m.name}_judge_sd", "unbounded", "answer_k", "judge sd", m.match, "sd over repeats")
                 for m in METRICS if m.group == "judged")           # answer_metrics.judge_repeats
_BY_NAME = {m.name: m for m in METRICS}
_FAMILIES = {(m.name.split("<")[0], m.name.split(">")[-1]): m for m in METRICS if "<" in m.name}
LEADERBOARD = tuple(m.name for m in METRICS if m.leaderboard)
LEADERBOARD_SCORES = tuple(n for n in LEADERBOARD if _BY_NAME[n].group != "budget")     # the budget left out
RANKED_BY = tuple(m.name for m in sorted((m for m in METRICS if m.ranks), key=lambda m: m.ranks))


def declared(metric: str) -> Metric | None:
    """The declaration of ``metric`` (``name``, ``name@k``), or None when it has none."""
    name = str(metric).split("@", 1)[0]
    return _BY_NAME.get(name) or next((m for (before, after), m in _FAMILIES.items() if len(name) > len(before + after)
                                       and name.startswith(before) and name.endswith(after)), None)


def declared_kind(metric: str) -> MetricKind | None:
    return spec.kind if (spec := declared(metric)) else None


def check_kind(kind: str) -> MetricKind:
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    return kind  # type: ignore[return-value]


def named_by(library: str, group: str) -> dict[str, str]:
    """Our name -> ``library``'s name of the same metric (its ``source``), over the metrics of ``group``."""
    return {m.name: m.source.split()[1] for m in METRICS if m.group == group and m.source.split()[0] == library}


def produced_columns(dataset: Dataset, ks: Sequence[int], section_level: str = "section", reasoner: bool = False,
                     judge: bool = False, answer_k: int = 5) -> list[str]:
    """Every metric@k column ``evaluate`` gives on ``dataset``: doc_ metrics with gold documents, ctx_ ones with
    gold contexts, coverage with sections, at every k; with a reasoner the answer metrics at ``answer_k``."""
    coverage = coverage_metric(section_level, source=True)
    made = {"doc": any(q.gold_doc_ids for q in dataset.questions), "squad": reasoner, "non-LLM": reasoner,
            "ctx": any(q.gold_contexts for q in dataset.questions), "ID": reasoner, "judged": reasoner and judge,
            "coverage": any(d.sections for d in dataset.documents)}
    names = [m for m in METRICS if made.get(m.group)
             and (m.group != "coverage" or m.name in (coverage, f"{coverage}_share"))]
    columns = [f"{m.name}@{k}" for k in ks for m in names if m.cutoff == "k"]
    return list(dict.fromkeys(columns + [f"{m.name}@{answer_k}" for m in names if m.cutoff == "answer_k"]))


def check_family(family: Sequence[str], produced: Sequence[str]) -> None:
    """A ValueError naming each column of ``family`` not in ``produced``, with the closest ones."""
    near = {c: difflib.get_close_matches(c, list(produced), n=3, cutoff=0.6) for c in family if c not in produced}
    if not near:
        return
    hints = [f"{c!r}" + (f" (did you mean {' or '.join(map(repr, n))}?)" if n else "") for c, n in near.items()]
    ks = sorted({c.split("@", 1)[1] for c in produced}, key=int)
    raise ValueError(f"--family {', '.join(hints)}: not a column this run produces; it scores "
                     f"{', '.join(sorted({c.split('@')[0] for c in produced}))} at k {', '.join(ks)} (--k, and "
                     "--answer-k for answer metrics)")


def rank_metric(metrics) -> str:
    """The first of ``RANKED_BY`` among ``metrics`` (names with or without ``@k``/``@Ntok``): the metric a
    data set's leaderboards, rank tables and sentences are ranked by (``ctx_recall`` when the default)."""
    if isinstance(metrics, (pd.Series, pd.Index, np.ndarray)):
        metrics = pd.unique(np.asarray(metrics, dtype=object))     # a long table's column: its names, not its rows
    have = {str(m).split("@")[0] for m in metrics}
    return next((m for m in RANKED_BY if m in have), RANKED_BY[0])
