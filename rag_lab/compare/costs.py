"""Cost and speed per method (notebook 11): index builds timed cold and warm, each several times,
query latency per query, tokens, peak heap and chunks; index time as the corpus grows on
distinct texts; and the sentences that name a fastest or slowest method only when the
intervals separate it from the next one.

*Cold* means what a first build pays: a fresh, empty temporary ``RAG_LAB_CACHE`` (the embedding
cache, the token-embedding files of late chunking, the offline reasoner's results, persisted
indexes) and no in-process token encodings or spaCy parses; only the model weights and the
sentence splitter are loaded beforehand (``benchmarking.warm_up``). *Warm* is a second build in
that same folder right after, with every text already encoded: the method's own work around the
encoder.
"""
from __future__ import annotations

import math
import os
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, Sequence

import numpy as np
import pandas as pd

from .benchmarking import distinct_copies, peak_memory_mb, warm_up
from ..datasets import load_dataset
from ..evaluation.provenance import index_reasoner_name
from ..evaluation.statistics import format_ci, paired_difference
from ..methods import get_retriever

COLD, WARM = "cold", "warm"
MEASURES = {COLD: "first build, empty caches", WARM: "rebuild, every text already in the caches"}


@contextmanager
def empty_caches() -> Iterator[Path]:
    """A fresh temporary ``RAG_LAB_CACHE`` for the block, in-process caches cleared before and after."""
    from ..methods.gralc.encoding import clear_memory_cache
    from ..reasoning.linguistics import parse

    old = os.environ.get("RAG_LAB_CACHE")
    with tempfile.TemporaryDirectory(prefix="rag_lab_cold_") as tmp:
        os.environ["RAG_LAB_CACHE"] = tmp
        clear_memory_cache(); parse.cache_clear()
        try:
            yield Path(tmp)
        finally:
            if old is None:
                os.environ.pop("RAG_LAB_CACHE", None)
            else:
                os.environ["RAG_LAB_CACHE"] = old
            clear_memory_cache(); parse.cache_clear()


def fresh_embedder(model_embedder, cache_dir: Path):
    """An Embedder with its own (empty) cache in ``cache_dir`` sharing the loaded model weights."""
    from ..core.embedding import Embedder

    e = Embedder(cache_dir=cache_dir)
    e._model, e._tokenizer = model_embedder.model, model_embedder.tokenizer
    return e


def t_interval(values: Sequence[float], confidence: float = 0.95) -> tuple[float, float, float]:
    """Mean and Student-t interval of a few repeated timings (NaN bounds for fewer than two)."""
    from scipy import stats

    x = np.asarray([v for v in values if not math.isnan(v)], dtype=float)
    if len(x) == 0:
        return math.nan, math.nan, math.nan
    mean = float(x.mean())
    if len(x) < 2:
        return mean, math.nan, math.nan
    half = float(stats.t.ppf(0.5 + confidence / 2, len(x) - 1) * x.std(ddof=1) / math.sqrt(len(x)))
    return mean, mean - half, mean + half


def timed_builds(make: Callable[[object], object], documents, model_embedder, repeats: int,
                 then: Callable[[object, object], dict] | None = None) -> dict:
    """``repeats`` pairs of builds, each pair in its own empty cache: a cold build, then a warm rebuild
    by a fresh retriever. Returns the seconds of each ({"cold": [...], "warm": [...]}) and, from
    ``then(retriever, embedder)`` called on the last warm build while its cache still exists, any
    further measurements (queries, a traced build)."""
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    seconds, extra = {COLD: [], WARM: []}, {}
    for r in range(repeats):
        with empty_caches() as tmp:
            embedder = fresh_embedder(model_embedder, tmp)
            for kind in (COLD, WARM):
                built = make(embedder)
                t0 = time.perf_counter()
                built.build(documents, reuse=False)
                seconds[kind].append(time.perf_counter() - t0)
            if r == repeats - 1 and then is not None:
                extra = then(built, embedder)
    return {**seconds, **extra}


def _seconds_columns(seconds: dict) -> dict:
    out = {}
    for kind in (COLD, WARM):
        mean, low, high = t_interval(seconds[kind])
        out |= {f"index_seconds_{kind}": mean, f"index_seconds_{kind}_ci_low": low, f"index_seconds_{kind}_ci_high": high}
    return out


def query_times_ms(retriever, queries: Sequence[str], k: int, repeats: int = 3) -> np.ndarray:
    """Each query's wall time in ms, the median of ``repeats`` calls (after one warm-up query)."""
    retriever.retrieve(queries[0], k)
    times = np.empty((len(queries), repeats))
    for r in range(repeats):
        for i, q in enumerate(queries):
            t0 = time.perf_counter()
            retriever.retrieve(q, k)
            times[i, r] = (time.perf_counter() - t0) * 1000
    return np.median(times, axis=1)


def method_costs(methods: Sequence[str], dataset: str, limit_queries: int = 20, k: int = 5, repeats: int = 3,
                 query_repeats: int = 3) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per method: mean cold and warm index seconds with a 95% t-interval over ``repeats`` builds,
    query latency (median and p95 over queries), tokens, peak heap of an untraced-then-traced warm
    build (tracemalloc slows allocation, so it never runs during a timed build) and chunks. Also the
    per-query latencies (query x method, ms) the ranking sentence compares, paired by query."""
    from ..core.embedding import shared_embedder
    from .comparison import resolve_methods

    model = shared_embedder()
    warm_up(model)
    data = load_dataset(dataset)
    queries = [q.question for q in data.questions][:limit_queries] or [data.documents[0].title or "overview"]
    rows, built_by, latencies = [], {}, {}
    for name in resolve_methods(methods):
        def measure(built, embedder):
            _, peak = peak_memory_mb(lambda: get_retriever(name, embedder=embedder).build(data.documents, reuse=False))
            return {"retriever": built, "peak": peak, "latency": query_times_ms(built, queries, k, query_repeats),
                    "query_cost": [built.retrieve(q, k).cost for q in queries]}

        timed = timed_builds(lambda e: get_retriever(name, embedder=e), data.documents, model, repeats, measure)
        built, query_cost, latencies[name] = timed["retriever"], timed["query_cost"], timed["latency"]
        built_by[name] = index_reasoner_name(built)
        c = built.build_cost
        rows.append({"method": name, **_seconds_columns(timed), "build_repeats": repeats,
                     "query_median_ms": float(np.median(latencies[name])),
                     "query_p95_ms": float(np.percentile(latencies[name], 95, method="inverted_cdf")),
                     "embedding_tokens_index": c.embedding_tokens,
                     "embedding_tokens_per_query": sum(q.embedding_tokens for q in query_cost) / len(query_cost),
                     "llm_tokens_index": c.llm_prompt_tokens + c.llm_completion_tokens,
                     "llm_tokens_per_query": sum(q.llm_prompt_tokens + q.llm_completion_tokens for q in query_cost) / len(query_cost),
                     "peak_heap_mb": timed["peak"], "chunks": len(built.chunks)})
    out = pd.DataFrame(rows).set_index("method")
    out.attrs["index_reasoners"] = built_by      # method -> the reasoner its index was built with
    return out, pd.DataFrame(latencies, index=pd.Index(queries, name="query"))


def scaling(methods: Sequence[str], dataset: str, copies: Sequence[int] = (1, 2, 4), repeats: int = 1) -> pd.DataFrame:
    """Index time (cold and warm, ``timed_builds``) and peak heap at ``copies`` times the corpus's
    article count, the copies made textually distinct (``benchmarking.distinct_copies``: same tokens,
    new texts) so no cache carries one size's encoding into the next."""
    from ..core.embedding import shared_embedder
    from .comparison import resolve_methods

    model = shared_embedder()
    warm_up(model)
    docs = load_dataset(dataset).documents
    rows, built_by = [], {}
    for name in resolve_methods(methods):
        for n in copies:
            corpus = distinct_copies(docs, len(docs) * n)

            def measure(built, embedder):
                _, peak = peak_memory_mb(lambda: get_retriever(name, embedder=embedder).build(corpus, reuse=False))
                return {"retriever": built, "peak": peak}

            timed = timed_builds(lambda e: get_retriever(name, embedder=e), corpus, model, repeats, measure)
            built_by[name] = index_reasoner_name(timed["retriever"])
            rows.append({"method": name, "copies": n, "documents": len(corpus), **_seconds_columns(timed),
                         "peak_heap_mb": timed["peak"], "chunks": len(timed["retriever"].chunks)})
    out = pd.DataFrame(rows)
    out.attrs["index_reasoners"] = built_by
    return out


def growth_lines(growth: pd.DataFrame) -> pd.DataFrame:
    """``scaling``'s table long: one line per method and measure ("naive · cold"), for the log-log plot."""
    parts = [growth.assign(method=growth["method"] + f" · {kind}", index_seconds=growth[f"index_seconds_{kind}"])
             for kind in (COLD, WARM)]
    return pd.concat(parts, ignore_index=True)[["method", "documents", "index_seconds"]]


def _shown(mean: float, low: float, high: float, unit: str, digits: int) -> str:
    return (f"{mean:.{digits}f} {unit}" if math.isnan(low) else
            f"{mean:.{digits}f} {unit} [95% interval {low:.{digits}f}, {high:.{digits}f}]")


def slowest_build_sentence(costs: pd.DataFrame, kind: str = COLD) -> str:
    """The slowest build named only when its interval lies wholly above the runner-up's; otherwise the
    two are said to be within noise."""
    col = f"index_seconds_{kind}"
    if len(costs) < 2:
        return f"Only {', '.join(costs.index)} was timed: no ranking of {kind} builds."
    order = costs[col].sort_values(ascending=False).index
    top, second = costs.loc[order[0]], costs.loc[order[1]]
    n = int(top["build_repeats"])
    say = lambda name, row: f"{name} {_shown(row[col], row[col + '_ci_low'], row[col + '_ci_high'], 's', 2)}"  # noqa: E731
    if n < 2:
        return (f"{kind.capitalize()} builds, one timing each: {say(order[0], top)} and {say(order[1], second)}; "
                f"one timing has no interval, so no method is named slowest.")
    if top[col + "_ci_low"] > second[col + "_ci_high"]:
        return (f"Slowest {kind} build: {say(order[0], top)} against the next, {say(order[1], second)} "
                f"(n = {n} builds each; the intervals do not overlap).")
    return (f"The two slowest {kind} builds, {say(order[0], top)} and {say(order[1], second)}, cannot be told apart "
            f"with n = {n} builds each (their intervals overlap).")


def fastest_query_sentence(latencies: pd.DataFrame) -> str:
    """The method with the lowest median query time named fastest only when the paired difference to
    the runner-up (same queries, paired 95% interval: ``statistics.paired_difference``) excludes zero."""
    if latencies.shape[1] < 2:
        return f"Only {', '.join(latencies.columns)} was queried: no ranking of query times."
    order = latencies.median().sort_values().index
    a, b = order[0], order[1]
    d = paired_difference(latencies[b].to_numpy(), latencies[a].to_numpy())
    medians = f"{a} {latencies[a].median():.2f} ms, {b} {latencies[b].median():.2f} ms median"
    diff = f"{b} − {a} per query: {format_ci(d.diff, d.ci_low, d.ci_high, 3)} ms, n = {d.n} queries"
    if not math.isnan(d.ci_low) and d.ci_low > 0:
        return f"Fastest queries: {a} ({medians}; {diff})."
    return f"The two fastest query times cannot be told apart ({medians}; {diff}: the interval holds zero or is undefined)."
