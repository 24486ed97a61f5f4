"""Answer metrics: SQuAD-style token F1 / exact match (own code: a few lines, no library keeps
the standard normalisation), ragas' non-LLM metrics always, and ragas' LLM-judged metrics when a
judge is configured. A sample a metric cannot score comes back as NaN, which we keep (and count)
instead of averaging it as zero. ID-based context precision/recall compare the retrieved chunk ids
with reference ids that ``evaluation.answer_rows`` derives per method (its chunks matching a gold
context); they run wherever a question has gold contexts.

The non-LLM metrics are ragas' (0.4.3) definitions, each one's class declared in ``metric_specs``,
computed by calling the scorers ragas itself calls (rouge_score, sacrebleu, rapidfuzz's Levenshtein) on
every sample in one loop: ragas adds only an event loop, callbacks and a thread per batch around them,
which cost a hundred times the scoring (issue 53). ``tests/test_answer_metrics.py`` holds them equal to ``ragas.evaluate``.
The LLM-judged metrics keep ragas (``_run_ragas``); their judge's replies are cached (``judge.sqlite``).

Which contexts each family scores: the reference-based ones (non-LLM and ID-based context
precision/recall) score the retrieved chunks (``scored_contexts``, ``context_ids``), so a block a
method adds before them (SKETCH's graph facts), which can never resemble a gold passage, does not
cost it rank-weighted precision; the LLM-judged ones see what the answering model was handed
(``contexts``), as the papers' judges did. An empty retrieval scores 0 on every context metric
(``EMPTY_IS_ZERO``), as the retrieval metrics score an empty ranking, never NaN. Every metric's
definition: docs/metrics.md.
"""
from __future__ import annotations

import logging
import math
import os
import re
import string
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable, Sequence

import numpy as np

from .metric_specs import named_by

os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
# our name -> the ragas class that scores it, as declared
NON_LLM_METRICS, ID_METRICS, LLM_METRICS = (named_by("ragas", group) for group in ("non-LLM", "ID", "judged"))
# context metrics and the field whose emptiness means "nothing was retrieved": scored 0, not NaN
EMPTY_IS_ZERO = {"nonllm_context_precision": "scored", "nonllm_context_recall": "scored",
                 "id_context_precision": "context_ids", "id_context_recall": "context_ids",
                 "llm_context_precision": "contexts", "llm_context_recall": "contexts"}
THRESHOLD = 0.5     # ragas' string similarity at which a retrieved context matches a gold one (both metrics)


@lru_cache(maxsize=1 << 16)
def normalize_answer(text: str) -> str:
    """Lower-case, drop punctuation and the articles a/an/the, collapse whitespace (SQuAD); once per text."""
    text = text.lower().translate(str.maketrans("", "", string.punctuation))
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
    """One answered question: what ragas needs to score it. ``contexts``: what the answering model
    was handed (the LLM-judged metrics see these); ``scored_contexts``: the retrieved chunks' texts
    the reference-based context metrics score (None: the same as ``contexts``)."""

    question: str
    response: str
    contexts: list[str]
    reference: str | None = None
    reference_contexts: list[str] = field(default_factory=list)
    context_ids: list[str] = field(default_factory=list)
    reference_context_ids: list[str] = field(default_factory=list)
    scored_contexts: list[str] | None = None

    @property
    def scored(self) -> list[str]:
        return self.contexts if self.scored_contexts is None else self.scored_contexts


def _ragas_metric(class_name: str, **kwargs):
    import ragas.metrics as rm

    return getattr(rm, class_name)(**kwargs)


# -- ragas' non-LLM metrics, computed as ragas computes them (module docstring) --------------------
@lru_cache(maxsize=1)
def _rouge_l_scorer():
    """rouge_score's ROUGE-L, tokenizer and Porter stemmer, each word stemmed once (stemming was 8 s of 11)."""
    from rouge_score import rouge_scorer, tokenizers

    words = tokenizers.DefaultTokenizer(use_stemmer=True)
    words._stemmer.stem = lru_cache(maxsize=1 << 16)(words._stemmer.stem)
    return rouge_scorer.RougeScorer(["rougeL"], tokenizer=words)


def similarity(reference: str, response: str) -> float:
    """ragas' ``NonLLMStringSimilarity``: 1 - the Levenshtein distance over the longer length."""
    from rapidfuzz.distance import Levenshtein

    return 1 - Levenshtein.normalized_distance(reference, response)


def rouge_l(s: "AnswerSample", contexts: list[str]) -> float:
    """ragas' ``RougeScore``: rouge_score's ROUGE-L F-measure with the Porter stemmer, reference first."""
    return _rouge_l_scorer().score(s.reference, s.response)["rougeL"].fmeasure


def bleu(s: "AnswerSample", contexts: list[str]) -> float:
    """ragas' ``BleuScore``: sacrebleu's corpus BLEU / 100 with the texts split at ". " as ragas splits them."""
    from sacrebleu import corpus_bleu

    return corpus_bleu(s.response.split(". "), [[r] for r in s.reference.split(". ")]).score / 100


def string_similarity(s: "AnswerSample", contexts: list[str]) -> float:
    return similarity(s.reference, s.response)


def nonllm_context_precision(s: "AnswerSample", contexts: list[str]) -> float:
    """ragas' ``NonLLMContextPrecisionWithReference``: a retrieved context is relevant when its best
    similarity to a gold context reaches ``THRESHOLD``; average precision of those verdicts (ragas' sums,
    in ragas' order, so the floats are its floats)."""
    verdicts = [1 if max(similarity(rc, ref) for ref in s.reference_contexts) >= THRESHOLD else 0 for rc in contexts]
    numerator = sum([(sum(verdicts[:i + 1]) / (i + 1)) * verdicts[i] for i in range(len(verdicts))])
    return numerator / (sum(verdicts) + 1e-10)


def nonllm_context_recall(s: "AnswerSample", contexts: list[str]) -> float:
    """ragas' ``NonLLMContextRecall``: the share of gold contexts whose best similarity to a retrieved one
    is above ``THRESHOLD``."""
    found = [1 if max(similarity(rc, ref) for rc in contexts) > THRESHOLD else 0 for ref in s.reference_contexts]
    return sum(found) / len(found) if found else np.nan


def id_context_precision(s: "AnswerSample", contexts: list[str]) -> float:
    """ragas' ``IDBasedContextPrecision``: distinct retrieved ids that are reference ids / distinct retrieved
    ids; NaN with none retrieved (ragas' value; ``EMPTY_IS_ZERO`` then scores it 0)."""
    retrieved, reference = {str(i) for i in s.context_ids}, {str(i) for i in s.reference_context_ids}
    return sum(1 for i in retrieved if i in reference) / len(retrieved) if retrieved else np.nan


def id_context_recall(s: "AnswerSample", contexts: list[str]) -> float:
    """ragas' ``IDBasedContextRecall``: distinct reference ids retrieved / distinct reference ids."""
    retrieved, reference = {str(i) for i in s.context_ids}, {str(i) for i in s.reference_context_ids}
    return sum(1 for i in reference if i in retrieved) / len(reference) if reference else np.nan


SCORERS = {"rouge_l": rouge_l, "bleu": bleu, "string_similarity": string_similarity,
           "nonllm_context_precision": nonllm_context_precision, "nonllm_context_recall": nonllm_context_recall,
           "id_context_precision": id_context_precision, "id_context_recall": id_context_recall}

Contexts = Callable[[AnswerSample], list[str]]


def _families(judge) -> list[tuple[dict[str, str], Callable[[AnswerSample], bool], Contexts]]:
    """Metric groups, the fields a sample needs for them (ragas refuses a batch with gaps) and the
    contexts ragas is given as retrieved (module docstring)."""
    has_ref = lambda s: bool(s.reference)  # noqa: E731
    handed, scored = (lambda s: s.contexts), (lambda s: s.scored)  # noqa: E731
    fams = [({n: c for n, c in NON_LLM_METRICS.items() if not n.startswith("nonllm_context")}, has_ref, handed),
            ({n: c for n, c in NON_LLM_METRICS.items() if n.startswith("nonllm_context")},
             lambda s: bool(s.reference_contexts), scored),
            (ID_METRICS, lambda s: bool(s.reference_context_ids), scored)]
    if judge is not None:
        fams.append(({n: LLM_METRICS[n] for n in ("faithfulness", "answer_relevancy")}, lambda s: True, handed))
        fams.append(({n: LLM_METRICS[n] for n in ("llm_context_precision", "llm_context_recall",
                                                   "factual_correctness")}, has_ref, handed))
    return fams


def _off_the_event_loop(fn: Callable, *args, **kwargs):
    """``fn(*args, **kwargs)`` in a worker thread. ragas computes on asyncio; inside a Jupyter kernel
    this thread already runs the kernel's loop, and ragas would patch that loop with nest_asyncio,
    which breaks ipykernel's queued requests (after "Run All Cells" the cells after this one never
    ran). A worker thread runs no loop, so ragas starts and ends its own there."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="ragas") as pool:
        return pool.submit(fn, *args, **kwargs).result()


class _NoRetrievedIds(logging.Filter):
    """ragas logs a warning for every sample whose retrieved list holds no chunk id (a method that returned
    nothing, or only a facts block): its ID-based precision is undefined, ragas gives NaN and our row is
    unscored (n_dropped counts it; docs/metrics.md). Said there once, not once per sample to a reader."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "No retrieved context IDs provided" not in record.getMessage()


_QUIET_IDS = _NoRetrievedIds()


def _run_ragas(samples: Sequence[AnswerSample], metrics: dict[str, object], judge, show_progress: bool,
               contexts: Contexts = lambda s: s.contexts):
    from ragas import EvaluationDataset, SingleTurnSample, evaluate

    ids_log = logging.getLogger("ragas.metrics._context_precision")
    if _QUIET_IDS not in ids_log.filters:
        ids_log.addFilter(_QUIET_IDS)

    data = EvaluationDataset(samples=[SingleTurnSample(
        user_input=s.question, response=s.response, retrieved_contexts=contexts(s) or [""],
        reference=s.reference, reference_contexts=s.reference_contexts or None,
        retrieved_context_ids=s.context_ids if s.reference_context_ids else None,
        reference_context_ids=s.reference_context_ids or None)
        for s in samples])
    kwargs = {"llm": judge.llm, "embeddings": judge.embeddings} if judge is not None else {}
    if judge is not None and hasattr(judge, "run_config"):
        kwargs["run_config"] = judge.run_config()   # the judge's concurrency and per-job timeout
    calls = getattr(judge, "calls", None)
    before = calls.snapshot() if calls is not None else None
    result = _off_the_event_loop(evaluate, data, metrics=list(metrics.values()), raise_exceptions=False,
                                 show_progress=show_progress, allow_nest_asyncio=False, **kwargs)
    frame = result.to_pandas()
    out = {}
    for ours, metric in metrics.items():
        # ragas names some columns after the metric's settings, e.g. "rouge_score(mode=fmeasure)"
        columns = [c for c in frame.columns if c == metric.name or c.startswith(f"{metric.name}(")]
        values = frame[columns[0]] if columns else [np.nan] * len(samples)
        out[ours] = [np.nan if v is None else float(v) for v in values]
    if before is not None and set(metrics) & set(LLM_METRICS):
        judge.check_answered(before, {m: out[m] for m in set(metrics) & set(LLM_METRICS)})   # all failed: raise
    return out


def ragas_scores(samples: Sequence[AnswerSample], judge=None, show_progress: bool = False) -> dict[str, list]:
    """metric name -> one value per sample: NaN where a metric failed to score it (e.g. a judge error),
    None where the sample lacks what the metric needs (no reference answer or gold contexts). The
    non-LLM metrics are scored here in one loop over all samples (``SCORERS``), the LLM-judged ones by
    one ``ragas.evaluate`` call per family.

    ``judge``: a ``Judge`` (LLM + embeddings for ragas) or None for the non-LLM metrics only.
    """
    out: dict[str, list] = {}
    for names, applies, contexts in _families(judge):
        idx = [i for i, s in enumerate(samples) if applies(s)]
        if not idx:
            continue
        if set(names) & set(LLM_METRICS):
            scored = _run_ragas([samples[i] for i in idx], {n: _ragas_metric(c) for n, c in names.items()},
                                judge, show_progress, contexts)
        else:       # ragas is handed [""] for an empty retrieval; so are these
            scored = {n: [SCORERS[n](samples[i], contexts(samples[i]) or [""]) for i in idx] for n in names}
        for name in names:
            column: list = [None] * len(samples)
            for i, v in zip(idx, scored[name]):
                column[i] = v
            if name in EMPTY_IS_ZERO:
                for i in idx:
                    if not getattr(samples[i], EMPTY_IS_ZERO[name]):
                        column[i] = 0.0
            out[name] = column
    return out


JUDGE_SD = "_judge_sd"   # suffix of a judged metric's per-sample spread over repeats


def judge_repeats(out: dict[str, list], samples: Sequence[AnswerSample], judge, repeats: int,
                  show_progress: bool = False) -> dict[str, list]:
    """``out`` (repeat 0's scores) with every LLM-judged metric asked ``repeats`` times in all: each
    sample's value becomes the mean over repeats and ``<metric>_judge_sd`` its standard deviation
    (the judge's own noise, beside the sampling interval over questions); a repeat that could not
    score a sample (NaN) is left out of both."""
    judged = [m for m in LLM_METRICS if m in out]
    runs = [out] + [ragas_scores(samples, judge.repeat(r), show_progress) for r in range(1, repeats)]
    for m in judged:
        means, sds = [], []
        for i in range(len(samples)):
            values = [run[m][i] for run in runs if run.get(m) and run[m][i] is not None]
            finite = [v for v in values if not np.isnan(v)]
            if not values:
                means.append(None)
                sds.append(None)
                continue
            means.append(float(np.mean(finite)) if finite else np.nan)
            sds.append(float(np.std(finite, ddof=1)) if len(finite) > 1 else np.nan)
        out[m], out[m + JUDGE_SD] = means, sds
    return out


def answer_scores(samples: Sequence[AnswerSample], judge=None, show_progress: bool = False,
                  repeats: int = 1) -> dict[str, list]:
    """Every answer metric per sample; None marks a sample the metric does not apply to. With a judge
    and ``repeats`` > 1 the judged metrics are asked that many times (``judge_repeats``)."""
    if repeats < 1:
        raise ValueError(f"judge repeats must be a positive integer, got {repeats}")
    out = ragas_scores(samples, judge, show_progress)
    if judge is not None and repeats > 1:
        out = judge_repeats(out, samples, judge, repeats, show_progress)
    if any(s.reference for s in samples):
        out["token_f1"] = [token_f1(s.response, s.reference) if s.reference else None for s in samples]
        out["exact_match"] = [exact_match(s.response, s.reference) if s.reference else None for s in samples]
    return out


def two_recalls_sentence(results, method: str, k: int, answer_k: int) -> str:
    """Why the retrieval table's context recall and the answer table's ID-based context recall differ for
    ``method``: both ask whether the gold passages were retrieved, but ``ctx_recall`` counts a passage found
    when some hit overlaps it (at k), and ragas' ``id_context_recall`` counts the method's own chunks that
    overlap a gold passage (the share of them retrieved at answer_k). Means from the run."""
    means = results[results["method"] == method].groupby(["metric", "k"])["value"].mean()
    ctx, ids = means.get(("ctx_recall", k)), means.get(("id_context_recall", answer_k))
    if ctx is None or ids is None or math.isnan(ctx) or math.isnan(ids):
        return ""
    return (f"Two context recalls for {method}: ctx_recall@{k} = {ctx:.3f} counts a gold passage found when a retrieved "
            f"chunk overlaps at least half of it (or of the chunk); id_context_recall@{answer_k} = {ids:.3f} (ragas' "
            f"ID-based recall) is the share of the {method} chunks overlapping a gold passage that were retrieved, so a "
            "passage spread over two chunks counts half when only one of them is (docs/metrics.md).")
