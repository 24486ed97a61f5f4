"""Run retrievers over a dataset's questions and score them into one tidy table.

One row per (method, question, metric, k): ``method, question_id, metric, k, value``.
Costs and latency are rows too (``k`` empty), so one table feeds every figure.
"""
from __future__ import annotations

import logging
import math
from typing import Mapping, Sequence

import pandas as pd
from tqdm import tqdm

from .metrics import locate_contexts, questions_with_gold, retrieval_metrics, section_coverage
from .retrievers import Retriever, get_retriever
from .types import Dataset, Retrieval

log = logging.getLogger(__name__)
COLUMNS = ["method", "question_id", "metric", "k", "value"]


def as_retrievers(methods: Sequence[str | Retriever] | Mapping[str, Retriever]) -> dict[str, Retriever]:
    if isinstance(methods, Mapping):
        return dict(methods)
    out = {}
    for m in methods:
        r = get_retriever(m) if isinstance(m, str) else m
        out[r.name] = r
    return out


def build_all(retrievers: Mapping[str, Retriever], dataset: Dataset) -> None:
    """Build every retriever not built yet (a built one has chunks)."""
    for name, r in retrievers.items():
        if not r.chunks:
            log.info("building %s over %d documents", name, len(dataset.documents))
            r.build(dataset.documents)


def run_queries(retrievers: Mapping[str, Retriever], dataset: Dataset, k: int,
                progress: bool = True) -> dict[str, dict[str, Retrieval]]:
    """method -> question id -> Retrieval of the top ``k``."""
    out: dict[str, dict[str, Retrieval]] = {}
    total = len(retrievers) * len(dataset.questions)
    with tqdm(total=total, desc="retrieving", disable=not progress or total < 20) as bar:
        for name, r in retrievers.items():
            out[name] = {}
            for q in dataset.questions:
                out[name][q.id] = r.retrieve(q.question, k)
                bar.update()
            _log_short_index(name, r, k, len(dataset.questions))
    return out


def _log_short_index(name: str, retriever: Retriever, k: int, n_queries: int) -> None:
    """k above the number of chunks is legal (the ranking is just shorter); say so once, with the count."""
    if 0 < len(retriever.chunks) < k:
        log.warning("%s: %d of %d queries asked for k=%d but it holds %d chunks, so its rankings are shorter; "
                    "metrics at k > %d count the empty ranks as misses", name, n_queries, n_queries, k,
                    len(retriever.chunks), len(retriever.chunks))


def score_retrievals(results: Mapping[str, Mapping[str, Retrieval]], dataset: Dataset, ks: Sequence[int],
                     min_overlap: float = 0.5) -> pd.DataFrame:
    """Retrieval metrics, section coverage (when documents have sections) and per-query cost."""
    docs = {d.id: d for d in dataset.documents}
    has_sections = any(d.sections for d in dataset.documents)
    scored, skipped = questions_with_gold(dataset)
    scored_ids = {q.id for q in scored}
    if skipped:
        log.warning("skipping %d question(s) with no gold_doc_ids or gold_contexts for retrieval metrics: %s",
                    len(skipped), ", ".join(skipped[:10]))
    nowhere = [f"{q.id}[{j}]" for q in scored for j, g in enumerate(locate_contexts(q, docs)) if g.doc_id is None]
    if nowhere:
        log.warning("%d gold context(s) are found in no document, so no hit can match them and they count as "
                    "missed: %s", len(nowhere), ", ".join(nowhere[:10]))
    rows = []
    for method, by_q in results.items():
        for q in dataset.questions:
            ret = by_q[q.id]
            chunks = [h.chunk for h in ret.hits]
            if q.id in scored_ids:
                rows += [(method, q.id, m, k, v) for m, k, v in retrieval_metrics(chunks, q, docs, ks, min_overlap)]
            if has_sections:
                for k in ks:
                    count, share = section_coverage(chunks, k, docs)
                    rows += [(method, q.id, "section_coverage", k, float(count)),
                             (method, q.id, "section_coverage_norm", k, share)]
            c = ret.cost
            rows += [(method, q.id, "latency_seconds", math.nan, c.seconds),
                     (method, q.id, "query_embedding_tokens", math.nan, float(c.embedding_tokens)),
                     (method, q.id, "query_llm_tokens", math.nan, float(c.llm_prompt_tokens + c.llm_completion_tokens))]
    return pd.DataFrame(rows, columns=COLUMNS)


def build_costs(retrievers: Mapping[str, Retriever]) -> pd.DataFrame:
    """One row per method and cost field of its build (index time, tokens, chunk count)."""
    rows = []
    for name, r in retrievers.items():
        for field, value in r.build_cost.as_dict().items():
            rows.append({"method": name, "metric": f"build_{field}", "value": float(value)})
        rows.append({"method": name, "metric": "chunks", "value": float(len(r.chunks))})
    return pd.DataFrame(rows)


def evaluate_retrieval(methods, dataset: Dataset, ks: Sequence[int] = (1, 3, 5, 10), min_overlap: float = 0.5,
                       progress: bool = True) -> pd.DataFrame:
    """Build (if needed), query and score; tidy rows for every method and question."""
    if not dataset.questions:
        raise ValueError(f"dataset {dataset.name!r} has no questions to evaluate")
    ks = sorted({int(k) for k in ks})
    if not ks or ks[0] <= 0:
        raise ValueError(f"k values must be positive integers, got {ks}")
    retrievers = as_retrievers(methods)
    build_all(retrievers, dataset)
    results = run_queries(retrievers, dataset, max(ks), progress)
    return score_retrievals(results, dataset, ks, min_overlap)


def answer_rows(results: Mapping[str, Mapping[str, Retrieval]], dataset: Dataset, reasoner, judge=None,
                answer_k: int = 5, progress: bool = True) -> pd.DataFrame:
    """Answer every question from each method's top ``answer_k`` contexts and score the answers.

    Rows carry ``k = answer_k``; the reasoner's answer-generation cost per question is a row too.
    """
    from .answer_metrics import AnswerSample, answer_scores

    rows = []
    for method, by_q in results.items():
        samples, ids = [], []
        for q in tqdm(dataset.questions, desc=f"answering ({method})", disable=not progress or len(dataset.questions) < 20):
            ret = by_q[q.id]
            contexts = [h.chunk.text for h in ret.hits[:answer_k]]
            before = reasoner.usage.copy()
            response = reasoner.answer(q.question, contexts)
            cost = reasoner.usage_since(before)
            rows.append((method, q.id, "answer_llm_tokens", math.nan,
                         float(cost.llm_prompt_tokens + cost.llm_completion_tokens)))
            samples.append(AnswerSample(q.question, response, contexts, q.answer, list(q.gold_contexts),
                                        [h.chunk.id for h in ret.hits[:answer_k]],
                                        list(q.meta.get("gold_chunk_ids", []))))
            ids.append(q.id)
        for metric, values in answer_scores(samples, judge, show_progress=False).items():
            rows += [(method, qid, metric, answer_k, v) for qid, v in zip(ids, values) if v is not None]
    return pd.DataFrame(rows, columns=COLUMNS)


def evaluate(methods, dataset: Dataset, ks: Sequence[int] = (1, 3, 5, 10), reasoner=None, judge=None,
             answer_k: int = 5, min_overlap: float = 0.5, progress: bool = True) -> pd.DataFrame:
    """Retrieval metrics, and — with a reasoner — answers scored by ragas (LLM-judged metrics with a judge).

    ``reasoner``/``judge``: objects or spec strings (``"offline"``, ``"openai:gpt-4o-mini"`` …).
    The result's ``attrs`` say which reasoner and judge produced it; NaN values (a question the
    judge could not score) are kept as rows so they can be counted (see ``nan_counts``).
    """
    from .reasoning.judge import get_judge
    from .reasoning import get_reasoner

    if not dataset.questions:
        raise ValueError(f"dataset {dataset.name!r} has no questions to evaluate")
    ks = sorted({int(k) for k in ks})
    if not ks or ks[0] <= 0 or answer_k <= 0:
        raise ValueError(f"k values and answer_k must be positive integers, got ks={ks}, answer_k={answer_k}")
    retrievers = as_retrievers(methods)
    build_all(retrievers, dataset)
    results = run_queries(retrievers, dataset, max(max(ks), answer_k), progress)
    frames = [score_retrievals(results, dataset, ks, min_overlap)]
    if isinstance(reasoner, str):
        reasoner = get_reasoner(reasoner)
    if isinstance(judge, str):
        judge = get_judge(judge)
    if reasoner is not None:
        frames.append(answer_rows(results, dataset, reasoner, judge, answer_k, progress))
    df = pd.concat(frames, ignore_index=True)
    df.attrs.update({"reasoner": reasoner.name if reasoner is not None else "none",
                     "judge": judge.name if judge is not None else "none", "dataset": dataset.name})
    return df


def nan_counts(df: pd.DataFrame) -> pd.DataFrame:
    """How many values per method and metric are NaN (e.g. judge failures), never hidden in a mean."""
    d = df.assign(nan=df["value"].isna())
    table = d.groupby(["method", "metric"])["nan"].sum().unstack(fill_value=0)
    return table.loc[:, table.sum() > 0]


def summarize(df: pd.DataFrame) -> pd.DataFrame:
    """Mean over questions: rows = method, columns = metric@k (NaN values are left out of means)."""
    d = df.copy()
    d["column"] = [m if pd.isna(k) else f"{m}@{int(k)}" for m, k in zip(d["metric"], d["k"])]
    table = d.pivot_table(index="method", columns="column", values="value", aggfunc="mean", sort=False)
    return table.reindex(columns=list(dict.fromkeys(d["column"])))
