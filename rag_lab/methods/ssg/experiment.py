"""Running the SSG algorithms over a question set and scoring what they gather.

Gold-sentence precision and recall compare the gathered sentences with the question's gold
sentences (span overlap, the rule of ``rag_lab.evaluation.metrics``, no LLM): precision = gathered sentences
that are gold / gathered sentences, recall = gold sentences gathered / gold sentences. They are
not the paper's precision and recall, which are DeepEval's LLM-judged contextual precision and
recall; with a judge configured, ragas' LLM context precision and recall (the closest installed
analogue; DeepEval is not installed), answer relevancy and faithfulness are computed too.
A test case passes when every metric it is judged on reaches the threshold: the four judged
metrics with a judge (the paper's four columns), gold-sentence precision and recall without one
(the paper does not state its threshold; 0.5 is DeepEval's default). ``run`` is notebook 03's whole run
(own stop, judge, equal budget). The paper's own tables and the side-by-side view are in ``paper.py``; the
comparisons decided on these scores in ``ledgered.py``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ...evaluation.harness import answer_rows, retrieve
from ...evaluation.metrics import context_matches, locate_contexts
from ...evaluation.uncertainty import Units, question_units
from ...core import ties
from ...reasoning.judge import get_judge
from ...core.types import Dataset, Question, Retrieval
from .algorithms import ALGORITHMS
from .config import SSGConfig
from .graph import SimilarityGraph
from .method import SSGRetriever, method_name

DEFAULT_THRESHOLD = 0.5
# the paper's max_sentences per grouping strategy: 15 for its sequential_multi_hop questions (3 hops x 5
# sentences), 10 for the others (SSGConfig.max_sentences); notebook 03's default and notebook 10's claim check
PAPER_MAX_SENTENCES = {"sequential_multi_hop": 15}

GOLD_COLUMNS = ["gold_sentence_precision", "gold_sentence_recall"]
# ragas' names (answer_metrics.LLM_METRICS): the analogues of the paper's four DeepEval columns
JUDGED_COLUMNS = ["llm_context_precision", "llm_context_recall", "answer_relevancy", "faithfulness"]
TABLE_COLUMNS = [*GOLD_COLUMNS, *JUDGED_COLUMNS]


def cap_for(question: Question, max_sentences: int | Mapping[str, int] | None) -> int:
    """The sentence budget for a question: one number, or one per grouping strategy (fallback: the
    ``default`` key, else ``SSGConfig``'s ``max_sentences``, as for None)."""
    if max_sentences is None or isinstance(max_sentences, int):
        return SSGConfig().max_sentences if max_sentences is None else max_sentences
    strategy = question.meta.get("strategy", "default")
    if strategy in max_sentences:
        return int(max_sentences[strategy])
    return int(max_sentences.get("default", SSGConfig().max_sentences))


def run_algorithms(graph: SimilarityGraph, dataset: Dataset, algorithms: Sequence[str],
                   max_sentences: int | Mapping[str, int] | None = None, reasoner=None, embedder=None
                   ) -> dict[str, dict[str, Retrieval]]:
    """method name (``ssg-…``) -> question id -> Retrieval of every gathered sentence.
    ``max_sentences``: see ``cap_for``; None is ``SSGConfig``'s default for every question."""
    return run_at_budgets(graph, dataset, algorithms, {q.id: cap_for(q, max_sentences) for q in dataset.questions},
                          reasoner, embedder)


@dataclass
class SSGRun:
    """The algorithms run on a question set: ``results`` (algorithm -> question id -> Retrieval) at their own
    stopping points, their ``scores`` (``gathered_scores``), the ``judged`` columns with a judge (else None) and
    the scores at the ``equal`` sentence budget (``equal_budget_scores``)."""

    results: dict[str, dict[str, Retrieval]]
    scores: pd.DataFrame
    judged: pd.DataFrame | None
    equal: pd.DataFrame


def run(graph: SimilarityGraph, dataset: Dataset, algorithms: Sequence[str],
        max_sentences: int | Mapping[str, int] | None = None, reasoner=None, embedder=None,
        judge: str | None = None) -> SSGRun:
    """Every algorithm on every question up to its own stop (``run_algorithms``), scored; with a ``judge`` spec
    (``reasoning.judge.get_judge``), ``reasoner``'s answers from what each gathered judged (``judged_scores``);
    then every algorithm again at each question's equal budget."""
    named = run_algorithms(graph, dataset, algorithms, max_sentences, reasoner, embedder)
    scores = gathered_scores(named, dataset)
    judged = None
    if judge:
        judged = judged_scores(answer_rows(named, dataset, reasoner, get_judge(judge, embedder),
                                           answer_k=max(cap_for(q, max_sentences) for q in dataset.questions)))
    return SSGRun({a: named[method_name(a)] for a in algorithms}, scores, judged,
                  equal_budget_scores(graph, dataset, algorithms, scores, reasoner, embedder))


def run_at_budgets(graph: SimilarityGraph, dataset: Dataset, algorithms: Sequence[str], caps: Mapping[str, int],
                   reasoner=None, embedder=None) -> dict[str, dict[str, Retrieval]]:
    """As ``run_algorithms``, with the sentence cap given per question id (``caps``)."""
    missing = [q.id for q in dataset.questions if q.id not in caps]
    if missing:
        raise ValueError(f"no sentence budget for questions {missing}")
    unknown = [a for a in algorithms if a not in ALGORITHMS]
    if unknown:
        raise ValueError(f"unknown SSG algorithms {unknown}; expected some of {', '.join(ALGORITHMS)}")
    retrievers = {(a, c): SSGRetriever.from_graph(graph, a, c, reasoner, embedder, dataset.documents)
                  for a in algorithms for c in sorted(set(caps.values()))}   # one per (algorithm, budget), one graph
    return {method_name(a): {q.id: _labelled_retrieval(retrievers[(a, caps[q.id])], q, caps[q.id], dataset.name)
                             for q in dataset.questions}
            for a in algorithms}


def _labelled_retrieval(retriever, q, k: int, dataset: str) -> Retrieval:
    """One retrieval, its near-ties labelled with the data set and question they reach (core/ties.py)."""
    with ties.deciding(dataset=dataset, question=q.id):
        return retrieve(retriever, q.question, k)


def gathered_scores(results: Mapping[str, Mapping[str, Retrieval]], dataset: Dataset,
                    min_overlap: float = 0.5) -> pd.DataFrame:
    """One row per (algorithm, question): gold-sentence precision and recall of the gathered sentences
    (said in words by ``compare.descriptions.definition_sentence``; NaN for a question with no gold sentence), what the traversal did, and the
    data set and the question's unit (``uncertainty.question_units``: its document), so every test on
    these rows is clustered by document and recorded under its data set."""
    docs = {d.id: d for d in dataset.documents}
    units = question_units(dataset)
    rows = []
    for method, by_q in results.items():
        for q in dataset.questions:
            ret = by_q[q.id]
            golds = locate_contexts(q, docs)
            matches = context_matches([h.chunk for h in ret.hits], golds, min_overlap)
            found = set().union(*matches) if matches else set()
            rows.append({
                "method": method, "algorithm": ret.trace.get("algorithm", method), "question_id": q.id,
                "strategy": q.meta.get("strategy", ""), "dataset": dataset.name, "unit": units[q.id],
                "gold_sentence_precision": (sum(1 for m in matches if m) / len(matches) if matches else 0.0)
                if golds else np.nan,
                "gold_sentence_recall": len(found) / len(golds) if golds else np.nan,
                "sentences": len(ret.hits), "hops": max(len(ret.trace.get("path", [])) - 1, 0),
                "stop_reason": ret.trace.get("stop_reason", ""), "llm_fallbacks": ret.trace.get("llm_fallbacks", 0),
                "chooser": ret.trace.get("chooser") or "",
                "seconds": ret.cost.seconds})
    return pd.DataFrame(rows)


def equal_budgets(scores: pd.DataFrame) -> pd.Series:
    """question id -> the fewest sentences any algorithm gathered on it: the equal budget. Every algorithm
    gathered at least that many, so each, run again with this cap, gathers exactly that many (its walk
    is the same up to the cap; of the last window's new sentences it keeps the most query-similar)."""
    if scores.empty:
        raise ValueError("equal_budgets: no scores")
    return scores.groupby("question_id", sort=False)["sentences"].min().astype(int)


def equal_budget_scores(graph: SimilarityGraph, dataset: Dataset, algorithms: Sequence[str], scores: pd.DataFrame,
                        reasoner=None, embedder=None) -> pd.DataFrame:
    """``gathered_scores`` of every algorithm run again with each question's equal budget (``equal_budgets``):
    precision and recall at the same number of sentences. Raises if some algorithm then gathers another
    number (the comparison would not be at equal budget)."""
    budgets = equal_budgets(scores)
    budgets = budgets[budgets > 0]
    kept = Dataset(dataset.name, dataset.documents, [q for q in dataset.questions if q.id in budgets.index],
                   dict(dataset.meta))
    equal = gathered_scores(run_at_budgets(graph, kept, algorithms, budgets.to_dict(), reasoner, embedder), kept)
    off = equal[equal["sentences"] != equal["question_id"].map(budgets)]
    if len(off):
        raise RuntimeError(f"not at equal budget: {off[['algorithm', 'question_id', 'sentences']].to_dict('records')}")
    return equal


def judged_scores(answer_df: pd.DataFrame | None) -> pd.DataFrame:
    """(method, question_id) -> the judged columns (``JUDGED_COLUMNS``) from ``evaluation.answer_rows`` output."""
    cols = JUDGED_COLUMNS
    if answer_df is None or answer_df.empty:
        return pd.DataFrame(columns=["method", "question_id", *cols])
    d = answer_df[answer_df["metric"].isin(cols)]
    wide = d.pivot_table(index=["method", "question_id"], columns="metric", values="value", aggfunc="mean")
    return wide.reindex(columns=cols).reset_index()


def results_table(scores: pd.DataFrame, judged: pd.DataFrame | None = None,
                  threshold: float = DEFAULT_THRESHOLD, strategy: str | None = None) -> pd.DataFrame:
    """The paper's table for our run: the mean of every ``TABLE_COLUMNS`` metric, sentences, tests passed.

    Rows are algorithms (in the paper's order). Without a judge the judged columns stay NaN and a
    case passes on gold-sentence precision and recall; with one, on the four judged columns, and a
    case the judge could not score (NaN) does not pass."""
    d = scores if strategy is None else scores[scores["strategy"] == strategy]
    if d.empty:
        raise ValueError(f"no scored questions{' for strategy ' + repr(strategy) if strategy else ''}")
    required = GOLD_COLUMNS
    if judged is not None:
        d = d.merge(judged, on=["method", "question_id"], how="left")
        required = JUDGED_COLUMNS
    for c in TABLE_COLUMNS:
        if c not in d:
            d = d.assign(**{c: np.nan})
    d = d.assign(passed=(d[required].fillna(-np.inf) >= threshold).all(axis=1))
    table = d.groupby("algorithm", sort=False).agg(
        **{c: (c, "mean") for c in TABLE_COLUMNS}, passed=("passed", "sum"), total=("passed", "size"),
        sentences=("sentences", "mean"))
    table["pass_rate"] = table["passed"] / table["total"]
    table["test_cases"] = [f"{int(p)}/{int(n)}" for p, n in zip(table["passed"], table["total"])]
    order = [a for a in ALGORITHMS if a in table.index]
    return table.drop(columns=["passed", "total"]).loc[order]


def tidy(scores: pd.DataFrame, judged: pd.DataFrame | None = None, strategy: str | None = None) -> pd.DataFrame:
    """The per-question scores as ``evaluate``'s tidy rows (method = the algorithm, no k), for the
    intervals and paired comparisons of ``evaluation.uncertainty``."""
    d = scores if strategy is None else scores[scores["strategy"] == strategy]
    if judged is not None:
        d = d.merge(judged, on=["method", "question_id"], how="left")
    cols = [c for c in TABLE_COLUMNS if c in d]
    long = d.melt(id_vars=["algorithm", "question_id"], value_vars=cols, var_name="metric", value_name="value")
    return long.rename(columns={"algorithm": "method"}).assign(k=np.nan)[["method", "question_id", "metric", "k", "value"]]


def units_of(scores: pd.DataFrame) -> Units | None:
    """question id -> its unit (its document), from ``gathered_scores``' ``unit`` column (None without one)."""
    if "unit" not in scores.columns:
        return None
    return dict(zip(scores["question_id"].astype(str), scores["unit"].astype(str)))


def spread_limit(dataset: Dataset, n: int | None) -> Dataset:
    """At most ``n`` questions taken round-robin over the grouping strategies (all when ``n`` is None),
    so a small run still has questions of every strategy."""
    if n is None or n >= len(dataset.questions):
        return dataset
    if n <= 0:
        raise ValueError(f"limit must be positive or None, got {n}")
    by_strategy: dict[str, list[Question]] = {}
    for q in dataset.questions:
        by_strategy.setdefault(q.meta.get("strategy", ""), []).append(q)
    picked: list[Question] = []
    while len(picked) < n:
        for qs in by_strategy.values():
            if qs and len(picked) < n:
                picked.append(qs.pop(0))
    keep = {q.id for q in picked}
    return Dataset(dataset.name, dataset.documents, [q for q in dataset.questions if q.id in keep], dict(dataset.meta))


def load(name: str, limit: int | None = None) -> Dataset:
    """The data set ``name`` (a shipped name or a folder, ``datasets.data_source``) with at most ``limit`` questions
    spread over the grouping strategies (``spread_limit``)."""
    from ...datasets import data_source

    return spread_limit(data_source(name).load(), limit)


def decided(decide_on: str | None, dataset: str, data: Dataset, ran: SSGRun, limit: int | None, config: SSGConfig,
            algorithms: Sequence[str], max_sentences, reasoner, embedder) -> tuple[Dataset, SSGRun]:
    """The data the findings are decided on and its run: ``data`` and ``ran`` themselves when ``decide_on`` is None
    or ``dataset``, else ``decide_on`` loaded (``load``) and run with the same graph knobs and algorithms (its graph
    from the index store when built before; no judge: a judge scores the teaching set only)."""
    from .method import stored_graph

    if decide_on in (None, dataset):
        return data, ran
    decider = load(decide_on, limit)
    graph = stored_graph(decider.documents, embedder, reasoner, config)
    return decider, run(graph, decider, algorithms, max_sentences, reasoner, embedder)
