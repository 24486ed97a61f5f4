"""Answer metrics: SQuAD-style token F1 / exact match (own code: a few lines, no library keeps
the standard normalisation), and ragas metrics — the non-LLM ones always, the LLM-judged ones
when a judge is configured. ragas scores a whole batch in one ``ragas.evaluate`` call; a sample
it cannot score comes back as NaN, which we keep (and count) instead of averaging it as zero.
"""
from __future__ import annotations

import os
import re
import string
from collections import Counter
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")

NON_LLM_METRICS = {  # our name -> ragas class name
    "rouge_l": "RougeScore",
    "bleu": "BleuScore",
    "string_similarity": "NonLLMStringSimilarity",
    "nonllm_context_precision": "NonLLMContextPrecisionWithReference",
    "nonllm_context_recall": "NonLLMContextRecall",
}
ID_METRICS = {"id_context_precision": "IDBasedContextPrecision", "id_context_recall": "IDBasedContextRecall"}
LLM_METRICS = {
    "faithfulness": "Faithfulness",
    "answer_relevancy": "ResponseRelevancy",
    "llm_context_precision": "LLMContextPrecisionWithReference",
    "llm_context_recall": "LLMContextRecall",
    "factual_correctness": "FactualCorrectness",
}


def normalize_answer(text: str) -> str:
    """Lower-case, drop punctuation and the articles a/an/the, collapse whitespace (SQuAD)."""
    text = "".join(ch for ch in text.lower() if ch not in set(string.punctuation))
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def token_f1(prediction: str, reference: str) -> float:
    pred, ref = normalize_answer(prediction).split(), normalize_answer(reference).split()
    if not pred or not ref:
        return float(pred == ref)
    common = sum((Counter(pred) & Counter(ref)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(pred), common / len(ref)
    return 2 * precision * recall / (precision + recall)


def exact_match(prediction: str, reference: str) -> float:
    return float(normalize_answer(prediction) == normalize_answer(reference))


@dataclass
class AnswerSample:
    """One answered question: what ragas needs to score it."""

    question: str
    response: str
    contexts: list[str]
    reference: str | None = None
    reference_contexts: list[str] = field(default_factory=list)
    context_ids: list[str] = field(default_factory=list)
    reference_context_ids: list[str] = field(default_factory=list)


def _ragas_metric(class_name: str, **kwargs):
    import ragas.metrics as rm

    return getattr(rm, class_name)(**kwargs)


def _metrics_for(samples: Sequence[AnswerSample], judge) -> dict[str, object]:
    has_ref = all(s.reference for s in samples)
    has_ref_ctx = all(s.reference_contexts for s in samples)
    has_ids = all(s.reference_context_ids for s in samples)
    chosen = {}
    if has_ref:
        chosen.update({n: _ragas_metric(c) for n, c in NON_LLM_METRICS.items()
                       if n not in ("nonllm_context_precision", "nonllm_context_recall")})
    if has_ref_ctx:
        chosen["nonllm_context_precision"] = _ragas_metric(NON_LLM_METRICS["nonllm_context_precision"])
        chosen["nonllm_context_recall"] = _ragas_metric(NON_LLM_METRICS["nonllm_context_recall"])
    if has_ids:
        chosen.update({n: _ragas_metric(c) for n, c in ID_METRICS.items()})
    if judge is not None:
        chosen["faithfulness"] = _ragas_metric("Faithfulness")
        chosen["answer_relevancy"] = _ragas_metric("ResponseRelevancy")
        if has_ref:
            chosen["llm_context_precision"] = _ragas_metric("LLMContextPrecisionWithReference")
            chosen["llm_context_recall"] = _ragas_metric("LLMContextRecall")
            chosen["factual_correctness"] = _ragas_metric("FactualCorrectness")
    return chosen


def ragas_scores(samples: Sequence[AnswerSample], judge=None, show_progress: bool = False) -> dict[str, list[float]]:
    """metric name -> one value per sample (NaN where ragas could not score it).

    ``judge``: a ``Judge`` (LLM + embeddings for ragas) or None for the non-LLM metrics only.
    """
    from ragas import EvaluationDataset, SingleTurnSample, evaluate

    if not samples:
        return {}
    metrics = _metrics_for(samples, judge)
    if not metrics:
        return {}
    data = EvaluationDataset(samples=[SingleTurnSample(
        user_input=s.question, response=s.response, retrieved_contexts=s.contexts or [""],
        reference=s.reference, reference_contexts=s.reference_contexts or None,
        retrieved_context_ids=s.context_ids or None, reference_context_ids=s.reference_context_ids or None)
        for s in samples])
    kwargs = {"llm": judge.llm, "embeddings": judge.embeddings} if judge is not None else {}
    result = evaluate(data, metrics=list(metrics.values()), raise_exceptions=False, show_progress=show_progress,
                      **kwargs)
    frame = result.to_pandas()
    out = {}
    for ours, metric in metrics.items():
        # ragas names some columns after the metric's settings, e.g. "rouge_score(mode=fmeasure)"
        columns = [c for c in frame.columns if c == metric.name or c.startswith(f"{metric.name}(")]
        values = frame[columns[0]] if columns else [np.nan] * len(samples)
        out[ours] = [np.nan if v is None else float(v) for v in values]
    return out


def answer_scores(samples: Sequence[AnswerSample], judge=None, show_progress: bool = False) -> dict[str, list[float]]:
    """Every answer metric we can compute for these samples (token F1 / EM need references)."""
    out = ragas_scores(samples, judge, show_progress)
    if all(s.reference for s in samples):
        out["token_f1"] = [token_f1(s.response, s.reference) for s in samples]
        out["exact_match"] = [exact_match(s.response, s.reference) for s in samples]
    return out
