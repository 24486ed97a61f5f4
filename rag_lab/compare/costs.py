"""Cost and speed per method (notebook 11): index builds timed cold and warm, each several times,
query latency per query, tokens, peak heap and chunks; index time as the corpus grows on
distinct texts; and the sentences that name a fastest or slowest method only when the package's one
paired test (``statistics.paired_difference``, decided by ``uncertainty.decide``) tells it from the next
one, never from whether two intervals overlap.

Each distinct index is built and timed once: methods whose index has the same identity in the
index store (``index_store.index_identity``: SSG's seven algorithms share one graph) are measured
through the first of them and get a copy of its built index for their queries; the table names,
per method, the method its index was measured as. Build times are summarised on the log scale
(geometric mean and ``statistics.mean_ci``'s t-interval on log seconds, shown back-transformed), so an
interval never reaches below zero; and only from ``MIN_BUILDS`` builds or more: a t-interval from two
builds has one degree of freedom (bm25 cold 0.228 s [0.000, 1.9e11]), so with fewer the builds are
listed and no interval is given and no method named slowest.

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
from ..evaluation.decisions import verdict_said
from ..evaluation.harness import build, retrieve
from ..evaluation.statistics import SUPPORTED, format_ci, format_p, mean_ci, paired_difference
from ..evaluation.uncertainty import decide
from ..methods import get_retriever

COLD, WARM = "cold", "warm"
MIN_BUILDS = 5    # an interval, and a slowest build, only from this many timings or more (module docstring)
MEASURES = {COLD: "first build, empty caches", WARM: "rebuild, every text already in the caches"}
# the growth figures' axis titles, with units (the columns of ``scaling`` / ``growth_lines`` they plot)
AXIS_TITLES = {"documents": "corpus size (documents, log scale)", "index_seconds": "index time (seconds, log scale)",
               "peak_heap_mb": "peak Python/NumPy heap (MB, log scale)"}


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


def log_t_interval(values: Sequence[float]) -> tuple[float, float, float]:
    """Geometric mean and the 95% t-interval of log ``values`` (``statistics.mean_ci``, unbounded),
    back-transformed: always above zero (timings are skewed and positive). NaN bounds from fewer than
    ``MIN_BUILDS`` timings (or no spread)."""
    x = np.asarray([v for v in values if not math.isnan(v)], dtype=float)
    if (x <= 0).any():
        raise ValueError(f"log_t_interval needs positive values (seconds), got {x[x <= 0].tolist()}")
    if len(x) == 0:
        return math.nan, math.nan, math.nan
    e = mean_ci(np.log(x), kind="unbounded")
    low, high = (e.ci_low, e.ci_high) if len(x) >= MIN_BUILDS else (math.nan, math.nan)
    return tuple(math.nan if math.isnan(v) else math.exp(v) for v in (e.mean, low, high))


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
                build(built, documents, reuse=False)
                seconds[kind].append(time.perf_counter() - t0)
            if r == repeats - 1 and then is not None:
                extra = then(built, embedder)
    return {**seconds, **extra}


def builds_listed(seconds: Sequence[float]) -> str:
    """``0.221, 0.235``: every build's seconds, for a table that gives no interval from so few."""
    return ", ".join(f"{v:.3f}" for v in seconds)


def _seconds_columns(seconds: dict) -> dict:
    """Per kind the geometric mean and every build's seconds; the interval columns only from ``MIN_BUILDS``."""
    out = {}
    for kind in (COLD, WARM):
        mean, low, high = log_t_interval(seconds[kind])
        out |= {f"index_seconds_{kind}": mean, f"index_seconds_{kind}_builds": builds_listed(seconds[kind])}
        if len(seconds[kind]) >= MIN_BUILDS:
            out |= {f"index_seconds_{kind}_ci_low": low, f"index_seconds_{kind}_ci_high": high}
    return out


def query_times_ms(retriever, queries: Sequence[str], k: int, repeats: int = 3) -> np.ndarray:
    """Each query's wall time in ms, the median of ``repeats`` calls (after one warm-up query)."""
    retrieve(retriever, queries[0], k)
    times = np.empty((len(queries), repeats))
    for r in range(repeats):
        for i, q in enumerate(queries):
            t0 = time.perf_counter()
            retrieve(retriever, q, k)
            times[i, r] = (time.perf_counter() - t0) * 1000
    return np.median(times, axis=1)


def index_groups(names: Sequence[str], documents, embedder) -> dict[str, list[str]]:
    """The first method of each distinct index -> every method building that same index (itself first),
    by the methods' identity in the index store (``index_store.index_identity``), in ``names``' order."""
    from ..evaluation.index_store import index_identity

    groups: dict[str, list[str]] = {}
    for name in names:
        groups.setdefault(index_identity(get_retriever(name, embedder=embedder), documents), []).append(name)
    return {members[0]: members for members in groups.values()}


def method_costs(methods: Sequence[str], dataset: str, limit_queries: int = 20, k: int = 5, repeats: int = 2,
                 query_repeats: int = 3) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per method: cold and warm index seconds (geometric mean, every build, and from ``MIN_BUILDS``
    builds the 95% t-interval on log seconds) over ``repeats`` builds, query latency (median and p95 over
    queries), tokens, peak heap of an untraced-then-traced warm build (tracemalloc slows allocation, so it
    never runs during a timed build) and chunks. Each distinct index is built once (``index_groups``); a method sharing it gets a
    copy for its queries and the measured method's build columns, its name in ``index``. Also the
    per-query latencies (query x method, ms) the ranking sentence compares, paired by query."""
    from ..core.embedding import shared_embedder
    from ..evaluation.index_store import share_index
    from .comparison import resolve_methods

    model = shared_embedder()
    warm_up(model)
    data = load_dataset(dataset)
    queries = [q.question for q in data.questions][:limit_queries] or [data.documents[0].title or "overview"]
    rows, built_by, latencies, seconds = {}, {}, {}, {}
    names = resolve_methods(methods)
    for measured, members in index_groups(names, data.documents, model).items():
        def measure(built, embedder):
            _, peak = peak_memory_mb(lambda: build(get_retriever(measured, embedder=embedder), data.documents, reuse=False))
            out = {"peak": peak, "retrievers": {}, "latency": {}, "query_cost": {}}
            for name in members:
                r = built if name == measured else get_retriever(name, embedder=embedder)
                if r is not built:
                    share_index(built, r, data.documents)
                out["retrievers"][name] = r
                out["latency"][name] = query_times_ms(r, queries, k, query_repeats)
                out["query_cost"][name] = [retrieve(r, q, k).cost for q in queries]
            return out

        timed = timed_builds(lambda e: get_retriever(measured, embedder=e), data.documents, model, repeats, measure)
        seconds[measured] = {kind: list(timed[kind]) for kind in (COLD, WARM)}
        for name in members:
            built, query_cost, latencies[name] = timed["retrievers"][name], timed["query_cost"][name], timed["latency"][name]
            built_by[name] = index_reasoner_name(built)
            c = built.build_cost
            rows[name] = {"method": name, "index": measured, **_seconds_columns(timed), "build_repeats": repeats,
                          "query_median_ms": float(np.median(latencies[name])),
                          "query_p95_ms": float(np.percentile(latencies[name], 95, method="inverted_cdf")),
                          "embedding_tokens_index": c.embedding_tokens,
                          "embedding_tokens_per_query": sum(q.embedding_tokens for q in query_cost) / len(query_cost),
                          "llm_tokens_index": c.llm_prompt_tokens + c.llm_completion_tokens,
                          "llm_tokens_per_query": sum(q.llm_prompt_tokens + q.llm_completion_tokens
                                                      for q in query_cost) / len(query_cost),
                          "peak_heap_mb": timed["peak"], "chunks": len(built.chunks)}
    out = pd.DataFrame([rows[n] for n in names]).set_index("method")
    out.attrs["index_reasoners"] = {n: built_by[n] for n in names}   # method -> the reasoner its index was built with
    out.attrs["build_seconds"] = seconds      # measured index -> {"cold": [s, ...], "warm": [...]}: the ranking's data
    return out, pd.DataFrame({n: latencies[n] for n in names}, index=pd.Index(queries, name="query"))


def shared_indexes(costs: pd.DataFrame) -> pd.DataFrame:
    """One row per index measured: the method it was measured as, and every method that shares it."""
    groups = costs.reset_index().groupby("index", sort=False)["method"]
    return pd.DataFrame({"index": list(groups.groups), "methods": [", ".join(m) for _, m in groups],
                         "count": groups.size().tolist()})


def distinct_indexes(costs: pd.DataFrame) -> pd.DataFrame:
    """The rows of the methods an index was measured as (one per distinct index)."""
    return costs[costs.index == costs["index"]] if "index" in costs.columns else costs


def one_per_paper(costs: pd.DataFrame) -> list[str]:
    """For each paper's folder of methods (``rag_lab.methods.<paper>``; a plug-in's top module), the
    measured index that encodes the most tokens (the first such, in the table's order): the method whose
    growth says most about that paper's encoder load. Token counts, not timings, decide: the choice is the
    same in every run."""
    from ..evaluation.retrievers import REGISTRY

    def paper(name: str) -> str:
        module = REGISTRY[name][0].split(":")[0]
        parts = module.split(".")
        return parts[2] if parts[:2] == ["rag_lab", "methods"] and len(parts) > 2 else parts[0]

    rows = distinct_indexes(costs)
    best: dict[str, str] = {}
    for name, tokens in rows["embedding_tokens_index"].items():
        p = paper(name)
        if p not in best or tokens > rows.loc[best[p], "embedding_tokens_index"]:
            best[p] = name
    return list(best.values())


PER_PAPER = "per paper"


def growth_methods(choice: str, costs: pd.DataFrame) -> list[str]:
    """Notebook 11's ``scaling_methods``: ``"per paper"`` (``one_per_paper`` of the cost table), ``"all"``
    (every method of the table) or comma-separated names."""
    if not isinstance(choice, str) or not choice.strip():
        raise ValueError(f"scaling_methods must be {PER_PAPER!r}, 'all' or comma-separated method names, got {choice!r}")
    if choice == PER_PAPER:
        return one_per_paper(costs)
    if choice == "all":
        return list(costs.index)
    return [m.strip() for m in choice.split(",") if m.strip()]


def scaling(methods: Sequence[str], dataset: str, copies: Sequence[int] = (1, 2, 4), repeats: int = 1,
            measured: pd.DataFrame | None = None) -> pd.DataFrame:
    """Index time (cold and warm, ``timed_builds``) and peak heap at ``copies`` times the corpus's
    article count, the copies made textually distinct (``benchmarking.distinct_copies``: same tokens,
    new texts) so no cache carries one size's encoding into the next. One copy is the corpus itself:
    a method ``measured`` (``method_costs``' table) already timed there is taken from it, not built
    again (``builds`` says how many timings each row holds)."""
    from ..core.embedding import shared_embedder
    from .comparison import resolve_methods

    model = shared_embedder()
    warm_up(model)
    docs = load_dataset(dataset).documents
    rows, built_by = [], {}
    for name in resolve_methods(methods):
        for n in copies:
            corpus = distinct_copies(docs, len(docs) * n)
            if n == 1 and measured is not None and name in measured.index:
                row = measured.loc[name]
                built_by[name] = measured.attrs["index_reasoners"][name]
                rows.append({"method": name, "copies": n, "documents": len(corpus), "builds": int(row["build_repeats"]),
                             **{c: row[c] for c in measured.columns if c.startswith("index_seconds_")},
                             "peak_heap_mb": row["peak_heap_mb"], "chunks": int(row["chunks"])})
                continue

            def measure(built, embedder):
                _, peak = peak_memory_mb(lambda: build(get_retriever(name, embedder=embedder), corpus, reuse=False))
                return {"retriever": built, "peak": peak}

            timed = timed_builds(lambda e: get_retriever(name, embedder=e), corpus, model, repeats, measure)
            built_by[name] = index_reasoner_name(timed["retriever"])
            rows.append({"method": name, "copies": n, "documents": len(corpus), "builds": repeats,
                         **_seconds_columns(timed), "peak_heap_mb": timed["peak"], "chunks": len(timed["retriever"].chunks)})
    out = pd.DataFrame(rows)
    out.attrs["index_reasoners"] = built_by
    return out


def growth_lines(growth: pd.DataFrame) -> pd.DataFrame:
    """``scaling``'s table long: one line per method and measure ("naive · cold"), for the log-log plot."""
    parts = [growth.assign(method=growth["method"] + f" · {kind}", index_seconds=growth[f"index_seconds_{kind}"])
             for kind in (COLD, WARM)]
    return pd.concat(parts, ignore_index=True)[["method", "documents", "index_seconds"]]


def slowest_build_sentence(costs: pd.DataFrame, kind: str = COLD) -> str:
    """The slowest build named only when the package's paired test (``statistics.paired_difference`` on
    log seconds, decided by ``uncertainty.decide``) tells it from the runner-up, and only from
    ``MIN_BUILDS`` builds each; with fewer, no method is named. The builds of two methods are separate
    timings matched by repeat: independent, so the matched differences are independent draws with the
    mean log difference, and the one-sample test on them is valid (a little less powerful than a
    two-sample one). Each distinct index counts once (``distinct_indexes``)."""
    col = f"index_seconds_{kind}"
    costs = distinct_indexes(costs)
    if len(costs) < 2:
        return f"Only {', '.join(costs.index)} was timed: no ranking of {kind} builds."
    n = int(costs["build_repeats"].min())
    if n < MIN_BUILDS:
        return (f"{kind.capitalize()} builds: {n} timing{'s' * (n != 1)} of each index (listed in the table), fewer than "
                f"the {MIN_BUILDS} an interval or a ranking needs, so no method is named slowest.")
    order = costs[col].sort_values(ascending=False).index
    top, second = order[0], order[1]
    seconds = costs.attrs["build_seconds"]
    d = paired_difference(np.log(seconds[top][kind]), np.log(seconds[second][kind]), kind="unbounded")
    row = decide(pd.DataFrame([d.as_dict()]), f"{top} minus {second}, log {kind} build seconds (slowest against the "
                                               "next)").iloc[0]
    def said(name: str) -> str:
        low, high = costs.loc[name, col + "_ci_low"], costs.loc[name, col + "_ci_high"]
        return f"{name} {costs.loc[name, col]:.2f} s" + ("" if math.isnan(low) else f" [95% interval {low:.2f}, {high:.2f}]")
    test = (f"n = {d.n} builds each, matched by repeat; ratio {math.exp(d.diff):.2f}, p = {format_p(row['p'])}: "
            + verdict_said(row).replace("question", "build"))   # the decider counts its units as questions
    if row["verdict"] == SUPPORTED:
        return f"Slowest {kind} build: {said(top)} against the next, {said(second)} ({test})."
    return f"The two slowest {kind} builds, {said(top)} and {said(second)}, cannot be told apart ({test})."


def fastest_query_sentence(latencies: pd.DataFrame) -> str:
    """The method with the lowest median query time named fastest only when the paired test of the
    runner-up minus it (same queries: ``statistics.paired_difference``, a declared family of one decided
    by ``uncertainty.decide``) is supported."""
    if latencies.shape[1] < 2:
        return f"Only {', '.join(latencies.columns)} was queried: no ranking of query times."
    order = latencies.median().sort_values().index
    a, b = order[0], order[1]
    d = paired_difference(latencies[b].to_numpy(), latencies[a].to_numpy())
    row = decide(pd.DataFrame([d.as_dict()]), f"{b} minus {a}, query milliseconds (fastest against the next)").iloc[0]
    medians = f"{a} {latencies[a].median():.2f} ms, {b} {latencies[b].median():.2f} ms median"
    diff = (f"{b} − {a} per query: {format_ci(d.diff, d.ci_low, d.ci_high, 3)} ms, n = {d.n} queries, "
            f"p = {format_p(row['p'])}")
    if row["verdict"] == SUPPORTED:
        return f"Fastest queries: {a} ({medians}; {diff}: {SUPPORTED})."
    return f"The two fastest query times cannot be told apart ({medians}; {diff}: {verdict_said(row)})."
