"""Every registered method on every shipped dataset, through one metric layer (notebook 10).
Cost and speed per method (notebook 11) live in ``compare.costs``."""
from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import cached_property
from typing import Mapping, Sequence

import pandas as pd

from ..datasets import DataSource, data_source
from ..core.progress import announce
from .intervals import rank_metric
from ..core.types import Dataset
from ..evaluation.harness import as_retrievers, evaluate, summarize
from ..evaluation.metric_specs import LEADERBOARD_SCORES as LEADERBOARD_METRICS
from ..evaluation.retrievers import Retriever
from ..methods import available_methods, get_retriever

log = logging.getLogger(__name__)


def resolve_methods(methods: str | Sequence[str]) -> list[str]:
    """``"all"`` or a comma-separated string or a list -> registered names (unknown names are an error)."""
    names = list(available_methods()) if methods == "all" else (
        [m.strip() for m in methods.split(",") if m.strip()] if isinstance(methods, str) else list(methods))
    unknown = [m for m in names if m not in available_methods()]
    if unknown:
        raise ValueError(f"unknown methods {unknown}; registered: {', '.join(available_methods())}")
    return names


@dataclass
class Run:
    """What ``compare`` ran on one dataset, kept for the tables that need more than the scores: the
    dataset, the built retrievers and every retrieval (k -> method -> question id -> Retrieval)."""
    dataset: Dataset
    retrievers: dict[str, Retriever]
    retrievals: dict

    @cached_property
    def same(self) -> dict[str, str]:
        """method -> the earlier method (in the run's order) with the same index and the same rankings:
        the same chunks (ids, documents, spans) and, for every question at every k, the same hits in the
        same order. Every table of hits scores the two alike, so tables show such a method once."""
        first: dict[tuple, str] = {}
        out: dict[str, str] = {}
        for name, r in self.retrievers.items():
            chunks = tuple((c.id, c.doc_id, c.start, c.end) for c in r.chunks)
            ranked = tuple((k, qid, tuple(h.chunk.id for h in ret.hits)) for k in sorted(self.retrievals)
                           for qid, ret in sorted(self.retrievals[k].get(name, {}).items()))
            twin = first.setdefault((chunks, ranked), name)
            if twin != name:
                out[name] = twin
        return out


def compare(datasets: Sequence[str | DataSource], methods="all", ks=(1, 3, 5, 10), reasoner="offline", judge=None,
            limit: int | None = None, judge_repeats: int = 1, keep: dict | None = None,
            options: Mapping[str, dict] | None = None) -> dict[str, pd.DataFrame]:
    """dataset label -> tidy results of every method; datasets without questions are skipped (logged).
    ``datasets``: what ``data_source`` reads (names, generic-form folders, loaders with arguments).
    ``options``: dataset label -> its loader's arguments (``load_dataset``; e.g. a sub-sample by document).
    ``judge_repeats``: ask the judge that many times per answer (``evaluate``). Besides ``evaluate``'s
    rows: the tokens of the hits at every k (``budget.context_token_rows``) and, for the SSG traversals,
    gold-sentence precision and recall of every sentence gathered (``claims.ssg_gathered_rows``).
    ``keep``: a dict that receives dataset -> ``Run``."""
    from .budget import context_token_rows
    from .claims import ssg_gathered_rows

    out = {}
    for i, value in enumerate(datasets):
        source = data_source(value)
        name = source.label
        data = source.load((options or {}).get(name), limit=limit)
        announce(f"data set {i + 1} of {len(datasets)}: {name}, {len(data.documents)} documents, "
                 f"{len(data.questions)} questions")       # one unit of the runner's per_dataset cell timeout
        if not data.questions:
            log.warning("dataset %s has no questions: skipped", name)
            continue
        retrievers = as_retrievers([get_retriever(m) for m in resolve_methods(methods)])
        ran: dict = {}
        df = evaluate(retrievers, data, ks, reasoner=reasoner, judge=judge, judge_repeats=judge_repeats, keep=ran)
        scored_ks = [k for k in ran["retrievals"] if k in set(int(k) for k in ks)]
        extra = pd.concat([context_token_rows({k: ran["retrievals"][k] for k in scored_ks}),
                           ssg_gathered_rows(retrievers, data)], ignore_index=True)
        out[name] = with_rows(df, extra)
        if keep is not None:
            keep[name] = Run(data, retrievers, ran["retrievals"])
    return out


def with_rows(results: pd.DataFrame, rows: pd.DataFrame) -> pd.DataFrame:
    """``results`` with further tidy rows of its methods, each labelled with the method's reasoners as
    ``evaluate`` labels its own rows; ``attrs`` (the provenance) kept."""
    if rows.empty:
        return results
    labels = results.drop_duplicates("method").set_index("method")
    rows = rows.assign(**{c: rows["method"].map(labels[c]) for c in results.columns if c not in rows.columns})
    out = pd.concat([results, rows[results.columns]], ignore_index=True)
    out.attrs = results.attrs
    return out


def leaderboard(results: pd.DataFrame, k: int) -> pd.DataFrame:
    """Mean metrics at ``k`` per method, best context recall (``intervals.rank_metric``) first."""
    table = summarize(results)
    cols = [f"{m}@{k}" for m in LEADERBOARD_METRICS if f"{m}@{k}" in table.columns]
    answer = [c for c in table.columns if c.endswith(f"@{k}") and c not in cols
              and not c.startswith(("doc_", "ctx_", "section_", "context_budget"))]
    board = table[cols + answer]
    sort_col = f"{rank_metric(board.columns)}@{k}"
    sort_col = sort_col if sort_col in board.columns else cols[0]
    return board.sort_values(sort_col, ascending=False)
