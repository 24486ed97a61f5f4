"""Run retrievers over a dataset's questions and score them into one tidy table.

One row per (method, question, metric, k): ``method, question_id, metric, k, value``.
Costs and latency are rows too (``k`` empty), so one table feeds every figure; ``evaluate``
adds which reasoner built each method's index and which one answered (``index_reasoner``,
``answer_reasoner``) and records the rest of its provenance in ``df.attrs`` (``provenance.py``).

A metric at k is always the metric of the list the method returns for k: every k is a query
of its own (``retrieve(q, k)``), except for a method that declares ``nested_ranking`` (its top k
is the prefix of its top K, proven by a test), which is queried once at the deepest k.
Answers come from ``retrieve(q, answer_k)`` and the method's ``answer_contexts``. Latency and
query tokens are those of one query per question for every method, nested or not: the query at
the deepest k the run made (the largest of ks and, with answers, answer_k).
"""
from __future__ import annotations

import logging
import math
import time
from typing import Mapping, Sequence

import pandas as pd

from .metrics import (ChunkPool, coverage_metric, locate_contexts, questions_with_gold, reference_chunk_ids,
                      retrieval_metrics, section_coverage)
from .provenance import index_reasoner_name, method_record, reasoner_name
from .index_reuse import build_or_reuse
from .retrievers import BatchedQueries, Retriever, answer_contexts, check_contract, get_retriever, nested
from .trec import write_from_environment
from ..core.progress import progress_bar
from ..core.types import Dataset, Retrieval
from ..core import ties

log = logging.getLogger(__name__)
COLUMNS = ["method", "question_id", "metric", "k", "value"]
Results = Mapping[str, Mapping[str, Retrieval]]    # method -> question id -> Retrieval at one k


def as_retrievers(methods: Sequence[str | Retriever] | Mapping[str, Retriever]) -> dict[str, Retriever]:
    """Name -> retriever. A list may hold two variants of one method (same name, other knobs): each is
    then named ``<name>@<config id>`` (and ``retriever.name`` set to it), so neither result is lost; the
    same method given twice with the same knobs is an error."""
    if isinstance(methods, Mapping):
        return dict(methods)
    given = [get_retriever(m) if isinstance(m, str) else m for m in methods]
    names = [r.name for r in given]
    out: dict[str, Retriever] = {}
    for r in given:
        name = r.name
        if names.count(name) > 1:
            config = getattr(r, "config", None)
            if config is None:
                raise ValueError(f"method {name!r} is given {names.count(name)} times and has no config to tell the "
                                 "copies apart; pass a dict {name: retriever} with distinct names")
            name = f"{name}@{config.config_id[:8]}"
            if name in out:
                raise ValueError(f"method {r.name!r} is given twice with the same knobs ({config.to_json()}); "
                                 "give it once, or pass a dict {name: retriever} with distinct names")
            r.name = name
        out[name] = r
    return out


def build(retriever: Retriever, documents, reuse: bool | None = None) -> Retriever:
    """``retriever.build(documents)`` as the lab runs it, returning the retriever: the same index built before is
    reused (``index_reuse.py``; ``reuse`` None follows ``RAG_LAB_REUSE``, False always builds, as timings need),
    the build timed into ``build_cost`` (a reused index keeps its build's) and its near-ties noted (core/ties.py)."""
    check_contract(retriever)
    if not documents:
        raise ValueError(f"{retriever.name}: cannot build an index over no documents")
    # a build's scope: no question (core/ties.py): which ones its decisions reach is not traced, so they excuse none
    with ties.deciding(method=retriever.name, step="build", **{ties.BUILD_SCOPE: ""}):
        if build_or_reuse(retriever, list(documents), reuse):
            ties.replay(getattr(retriever, "build_near_ties", []))   # a reused index names its build's near-ties
    retriever.build_near_ties_dataset = ties.current_labels().get("dataset")
    return retriever


def retrieve(retriever: Retriever, query: str, k: int = 5) -> Retrieval:
    """``retriever.retrieve(query, k)`` as the harness runs it: the query checked, its near-ties labelled with
    the method and noted only where the top k is decided, its seconds timed into the result's cost."""
    if not isinstance(query, str) or not query.strip():
        raise ValueError(f"{retriever.name}: the query must be a non-empty string, got {query!r}")
    if k <= 0:
        raise ValueError(f"{retriever.name}: k must be positive, got {k}")
    t0 = time.perf_counter()
    with ties.deciding(method=retriever.name), ties.reading(k):
        result = retriever.retrieve(query, k)
    result.cost.seconds = time.perf_counter() - t0
    return result


def build_all(retrievers: Mapping[str, Retriever], dataset: Dataset) -> None:
    """Build every retriever not built yet (a built one has chunks); ``build`` says which is building
    (``core.progress.building``), once. One built before (outside the harness, which knows no data set) has its
    build's near-ties noted again under the data set, unless already noted under it."""
    with ties.deciding(dataset=dataset.name):
        for r in retrievers.values():
            check_contract(r)
            if not getattr(r, "chunks", None):
                build(r, dataset.documents)
            elif getattr(r, "build_near_ties_dataset", None) != dataset.name:
                ties.replay(getattr(r, "build_near_ties", []))
                r.build_near_ties_dataset = dataset.name


def check_ks(ks: Sequence[int], what: str = "k values") -> list[int]:
    out = sorted({int(k) for k in ks})
    if not out or out[0] <= 0:
        raise ValueError(f"{what} must be positive integers, got {list(ks)}")
    return out


def prefix(retrieval: Retrieval, k: int) -> Retrieval:
    """The top ``k`` of a retrieval (same trace and cost): a nested method's answer for k."""
    if len(retrieval.hits) <= k:
        return retrieval
    return Retrieval(retrieval.query, retrieval.hits[:k], retrieval.trace, retrieval.cost)


def run_queries_at(retrievers: Mapping[str, Retriever], dataset: Dataset, ks: Sequence[int],
                   progress: bool = True) -> dict[int, dict[str, dict[str, Retrieval]]]:
    """k -> method -> question id -> the method's own retrieval for k (module docstring)."""
    ks = check_ks(ks)
    out: dict[int, dict[str, dict[str, Retrieval]]] = {k: {} for k in ks}
    total = len(retrievers) * len(dataset.questions)
    with progress_bar(total, "retrieving", unit="query", enabled=False if not progress or total < 20 else None) as bar:
        for name, r in retrievers.items():
            for k in ks:
                out[k][name] = {}
            if isinstance(r, BatchedQueries):
                r.prepare_queries([q.question for q in dataset.questions])
            for q in dataset.questions:
                with ties.deciding(dataset=dataset.name, question=q.id):
                    _retrieve_at(r, q, ks, name, out)
                bar.advance()
            _log_short_index(name, r, ks[-1], len(dataset.questions))
    return out


def _retrieve_at(r: Retriever, q, ks: Sequence[int], name: str, out: dict) -> None:
    """One question's retrievals at every k into ``out`` (one deep retrieval when rankings nest)."""
    if nested(r):
        deepest = retrieve(r, q.question, ks[-1])
        for k in ks:
            out[k][name][q.id] = prefix(deepest, k)
    else:
        for k in ks:
            out[k][name][q.id] = retrieve(r, q.question, k)


def _log_short_index(name: str, retriever: Retriever, k: int, n_queries: int) -> None:
    """k above the number of chunks is legal (the ranking is just shorter); say so once, with the count."""
    if 0 < len(getattr(retriever, "chunks", ())) < k:
        log.warning("%s: %d of %d queries asked for k=%d but it holds %d chunks, so its rankings are shorter; "
                    "metrics at k > %d count the empty ranks as misses", name, n_queries, n_queries, k,
                    len(retriever.chunks), len(retriever.chunks))


def run_queries(retrievers: Mapping[str, Retriever], dataset: Dataset, k: int,
                progress: bool = True) -> dict[str, dict[str, Retrieval]]:
    """method -> question id -> Retrieval of the top ``k``."""
    return run_queries_at(retrievers, dataset, [k], progress)[k]


def score_retrievals(by_k: Mapping[int, Results], dataset: Dataset, min_overlap: float = 0.5,
                     section_level: str = "section", pools: Mapping[str, Sequence] | None = None,
                     costs: Results | None = None) -> pd.DataFrame:
    """Retrieval metrics at every k of ``by_k`` (k -> method -> question id -> Retrieval, as
    ``run_queries_at`` returns), section coverage (when documents have sections; the question's
    gold documents are its source) and per-query cost. ``pools``: method -> its chunks, the ideal of
    context-level nDCG (default: each ranked list's own). ``costs``: the retrievals whose cost is
    reported, the query at the deepest k the run made (default: the deepest k of ``by_k``)."""
    if not by_k or not all(isinstance(k, int) and k > 0 for k in by_k):
        raise ValueError("score_retrievals needs {k: {method: {question id: Retrieval}}} with positive int k; "
                         f"got keys {list(by_k)[:5]} (use run_queries_at)")
    ks = sorted(by_k)
    docs = {d.id: d for d in dataset.documents}
    has_sections = any(d.sections for d in dataset.documents)
    coverage = coverage_metric(section_level, source=True)
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
    costs = costs if costs is not None else by_k[ks[-1]]
    for method in by_k[ks[0]]:
        pool = ChunkPool(pools[method]) if pools is not None and method in pools else None
        for q in dataset.questions:
            for k in ks:
                chunks = [h.chunk for h in by_k[k][method][q.id].hits]
                if q.id in scored_ids:
                    rows += [(method, q.id, m, kk, v)
                             for m, kk, v in retrieval_metrics(chunks, q, docs, [k], min_overlap, pool)]
                if has_sections and q.gold_doc_ids:
                    cov = section_coverage(chunks, k, docs, section_level, q.gold_doc_ids)
                    rows += [(method, q.id, coverage, k, cov.value),
                             (method, q.id, f"{coverage}_share", k, cov.share)]
            c = costs[method][q.id].cost
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
        rows.append({"method": name, "metric": "chunks", "value": float(len(getattr(r, "chunks", ())))})
    return pd.DataFrame(rows)


def _answer(reasoner, q, contexts, dataset: str, method: str):
    """The reasoner's answer, its near-ties (offline sentence choices) labelled with the row they reach."""
    with ties.deciding(dataset=dataset, method=method, question=q.id):
        return reasoner.answer(q.question, contexts)


def answer_rows(results: Results, dataset: Dataset, reasoner, judge=None, answer_k: int = 5, progress: bool = True,
                retrievers: Mapping[str, Retriever] | None = None, min_overlap: float = 0.5,
                judge_repeats: int = 1) -> pd.DataFrame:
    """Answer every question from each method's retrieval at ``answer_k`` and score the answers.

    ``results`` must hold each method's own retrieval for ``answer_k`` (``run_queries(..., answer_k)``):
    a longer one is refused, since its first ``answer_k`` hits need not be what the method returns
    for ``answer_k``. The model (and the LLM judge) get each method's ``answer_contexts``; the
    reference-based context metrics score its retrieved chunks (``answer_metrics``). The ID-based
    ragas metrics need ``retrievers``: their reference ids are the method's chunks that match a
    gold context (``metrics.reference_chunk_ids``); without them they are not computed, since no
    chunk ids but the method's own can be compared with its hits. Rows carry ``k = answer_k``; the
    reasoner's cost per question is a row too. ``judge_repeats`` > 1: each judged metric is the mean of
    that many judge calls, and ``<metric>_judge_sd`` rows hold the judge's spread
    (``answer_metrics.judge_repeats``).
    """
    from ..reasoning.batch import run_batch
    from .answer_metrics import AnswerSample, answer_scores

    docs = {d.id: d for d in dataset.documents}
    if retrievers is None and any(q.gold_contexts for q in dataset.questions):
        log.warning("answer_rows without retrievers: the ID-based context metrics are left out (their reference "
                    "ids are a method's own chunks matching a gold context; pass retrievers= to compute them)")
    retrievers = retrievers or {}
    rows = []
    for method, by_q in results.items():
        r = retrievers.get(method)
        pool = ChunkPool(r.chunks) if getattr(r, "chunks", None) is not None else None
        samples, ids = [], []
        contexts_of = {}
        for q in dataset.questions:
            ret = by_q[q.id]
            if len(ret.hits) > answer_k:
                raise ValueError(f"{method}: the retrieval for {q.id} has {len(ret.hits)} hits, more than "
                                 f"answer_k={answer_k}; answer from the method's own retrieval at answer_k")
            contexts_of[q.id] = answer_contexts(r, ret)   # no retriever: the hits' texts
        answered = run_batch(lambda q: _answer(reasoner, q, contexts_of[q.id], dataset.name, method), dataset.questions,
                             f"answering ({method})", reasoner=reasoner, with_costs=True,
                             progress=None if progress and len(dataset.questions) >= 20 else False)
        for q, (response, cost) in zip(dataset.questions, answered):
            ret, contexts = by_q[q.id], contexts_of[q.id]
            retrieved = [h.chunk.text for h in ret.hits]
            rows.append((method, q.id, "answer_llm_tokens", math.nan,
                         float(cost.llm_prompt_tokens + cost.llm_completion_tokens)))
            reference_ids = reference_chunk_ids(pool, q, docs, min_overlap) if pool is not None else []
            samples.append(AnswerSample(q.question, response, contexts, q.answer, list(dict.fromkeys(q.gold_contexts)),
                                        [h.chunk.id for h in ret.hits], reference_ids, scored_contexts=retrieved))
            ids.append(q.id)
        for metric, values in answer_scores(samples, judge, show_progress=False, repeats=judge_repeats).items():
            rows += [(method, qid, metric, answer_k, v) for qid, v in zip(ids, values) if v is not None]
    return pd.DataFrame(rows, columns=COLUMNS)


def evaluate(methods, dataset: Dataset, ks: Sequence[int] = (1, 3, 5, 10), reasoner=None, judge=None,
             answer_k: int = 5, min_overlap: float = 0.5, progress: bool = True,
             section_level: str = "section", judge_repeats: int = 1, keep: dict | None = None) -> pd.DataFrame:
    """Retrieval metrics, and — with a reasoner — answers scored by ragas (LLM-judged metrics with a judge).

    ``reasoner``/``judge``: objects or spec strings (``"offline"``, ``"openai:gpt-4o-mini"`` …).
    Every row names the reasoner that built its method's index and the one that answered; ``attrs``
    hold the dataset, ks, answer_k, judge and each method's class, parameters and reasoners
    (``provenance.provenance`` turns them into the sidecar JSON). NaN values (a question the judge
    could not score) are kept as rows so they can be counted (see ``nan_counts``). ``judge_repeats``:
    ask the judge that many times per sample (its spread is reported beside the sampling interval).
    ``keep``: a dict that receives the built retrievers (``"retrievers"``) and every retrieval made
    (``"retrievals"``: k -> method -> question id -> Retrieval), for tables beyond the scores.
    """
    from ..reasoning import get_reasoner
    from ..reasoning.judge import get_judge

    if not dataset.questions:
        raise ValueError(f"dataset {dataset.name!r} has no questions to evaluate")
    ks = check_ks(ks)
    if answer_k <= 0:
        raise ValueError(f"answer_k must be a positive integer, got {answer_k}")
    if judge_repeats < 1:
        raise ValueError(f"judge_repeats must be a positive integer, got {judge_repeats}")
    coverage_metric(section_level)                     # an unknown level fails before any work
    retrievers = as_retrievers(methods)
    build_all(retrievers, dataset)
    if isinstance(reasoner, str):
        reasoner = get_reasoner(reasoner)
    if isinstance(judge, str):
        judge = get_judge(judge)
    queried = run_queries_at(retrievers, dataset, ks + ([answer_k] if reasoner is not None else []), progress)
    if keep is not None:
        keep.update(retrievers=retrievers, retrievals=queried)
    write_from_environment(dataset, retrievers, queried[ks[-1]], min_overlap)   # a `rag_lab run` keeps its rankings
    pools = {n: r.chunks for n, r in retrievers.items() if hasattr(r, "chunks")}
    frames = [score_retrievals({k: queried[k] for k in ks}, dataset, min_overlap, section_level, pools,
                               costs=queried[max(queried)])]
    if reasoner is not None:
        frames.append(answer_rows(queried[answer_k], dataset, reasoner, judge, answer_k, progress, retrievers,
                                  min_overlap, judge_repeats))
    df = pd.concat(frames, ignore_index=True)
    answered_by = reasoner_name(reasoner)
    df["index_reasoner"] = df["method"].map({n: index_reasoner_name(r) for n, r in retrievers.items()})
    df["answer_reasoner"] = answered_by
    df.attrs.update({"dataset": dataset.name, "documents": len(dataset.documents), "questions": len(dataset.questions),
                     "reasoner": answered_by, "judge": judge.name if judge is not None else "none",
                     "judge_settings": judge.settings() if hasattr(judge, "settings") else None,
                     "judge_repeats": judge_repeats if judge is not None else None,
                     "ks": ks, "answer_k": answer_k if reasoner is not None else None, "min_overlap": min_overlap,
                     "section_level": section_level,
                     "methods": {n: method_record(r, answered_by) for n, r in retrievers.items()}})
    return df


def evaluate_retrieval(methods, dataset: Dataset, ks: Sequence[int] = (1, 3, 5, 10), min_overlap: float = 0.5,
                       progress: bool = True, section_level: str = "section") -> pd.DataFrame:
    """``evaluate`` without answers: build (if needed), query at every k and score."""
    return evaluate(methods, dataset, ks, min_overlap=min_overlap, progress=progress, section_level=section_level)


def combine(frames: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """Results of several ``evaluate`` calls on one dataset as one table, their methods' provenance merged."""
    if not frames:
        raise ValueError("combine needs at least one result table")
    df = pd.concat(frames, ignore_index=True)
    df.attrs = {**frames[0].attrs,
                "methods": {n: rec for f in frames for n, rec in f.attrs.get("methods", {}).items()}}
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
