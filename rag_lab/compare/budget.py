"""The context budget: how many tokens a method hands over at k, and every method held to one budget.

A "hit" is one sentence for the SSG traversals, a 100-256-token piece for the chunkers and a whole
semantic segment (often past 500 word pieces) for semantic chunking, so a metric@k sets lists of very
different sizes against each other: more text at k finds more gold. Two remedies, both here:

- ``context_token_rows``: the tokens of the texts a method returns at each k (its hits, in order), one
  tidy row per method, question and k (metric ``context_budget``), so a leaderboard shows its budget
  beside every row.
- ``equal_budget_rows``: each method's ranking at the run's deepest k, cut to the same number of
  tokens (``cut_to_budget``), and scored again with the same metrics: the fair comparison for methods
  whose hits differ in size. ``pick_budget`` takes the budget from the run: the smallest method's
  mean budget at k, so that every method can fill it from its ranking.

Decisions (paired differences, their verdicts from ``evaluation.statistics``) are made at two budgets: the
smallest method's (``pick_budget``, about one naive chunk: it favours sentence-level methods) and a mid-size
one (``mid_budget``: the baseline's median budget at k), by ``budget_differences``; the differences at k
stay beside them, labelled as made at unequal budgets, each row with both methods' tokens
(``with_tokens``).

Tokens are cl100k_base tokens (``reasoning.tokens.count_text_tokens``): the count the project uses for
what reaches an answering model (RAPTOR's context budget, the reasoners' usage). Context blocks a
method hands over besides its hits (SKETCH's graph facts) are not counted: no retrieval metric scores
them (``block_tokens`` measures them for a sentence beside the table).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Mapping, Sequence

import pandas as pd

from ..core.types import Chunk, Dataset, Retrieval
from ..evaluation.harness import COLUMNS
from ..evaluation.flips import without_attrs
from ..evaluation.metric_specs import LEADERBOARD_SCORES as BUDGET_METRICS
from ..evaluation.retrievers import context_blocks
from ..evaluation.metrics import (ChunkPool, coverage_metric, questions_with_gold, retrieval_metrics,
                                  section_coverage)
from ..evaluation.uncertainty import question_units, summary_with_ci
from .intervals import methods_of, paired_on_columns, rank_metric, ranked, rows_of
from ..reasoning.tokens import count_text_tokens, first_tokens

TOKENS = "context_budget"          # tidy metric: tokens of the hits' texts at k
HANDED = "tokens_handed"           # tidy metric of the equal-budget table: tokens of the cut list
ByK = Mapping[int, Mapping[str, Mapping[str, Retrieval]]]     # k -> method -> question id -> Retrieval


@lru_cache(maxsize=1 << 16)
def text_tokens(text: str) -> int:
    """``count_text_tokens``, remembered per text: one hit is counted for every question, cut and budget
    it is handed at."""
    return count_text_tokens(text)


def hits_tokens(chunks: Sequence[Chunk]) -> int:
    """Tokens of the chunks' texts, summed (each text counted on its own, as it is handed over)."""
    return sum(text_tokens(c.text) for c in chunks)


def context_token_rows(by_k: ByK) -> pd.DataFrame:
    """One ``context_budget`` row per k, method and question: the tokens of the hits the method
    returned for that k (``evaluate``'s tidy columns)."""
    rows = [(method, qid, TOKENS, k, float(hits_tokens([h.chunk for h in ret.hits])))
            for k, by_method in sorted(by_k.items()) for method, by_q in by_method.items()
            for qid, ret in by_q.items()]
    return pd.DataFrame(rows, columns=COLUMNS)


def cut_chunk(chunk: Chunk, tokens: int) -> Chunk:
    """``chunk`` holding only its first ``tokens`` tokens; a span chunk's end moves with its text, so
    the span rules of the metrics apply to what is left."""
    text = first_tokens(chunk.text, tokens)
    if text == chunk.text:
        return chunk
    end = chunk.start + len(text) if chunk.is_span else chunk.end
    return replace(chunk, text=text, end=end, meta={**chunk.meta, "cut_to_tokens": tokens})


def cut_to_budget(chunks: Sequence[Chunk], budget: int) -> list[Chunk]:
    """The ranked chunks up to ``budget`` tokens: whole while they fit; the first that does not fit is
    cut to the tokens left and ends the list (so a list of long chunks still hands over ``budget``
    tokens, not nothing). A list shorter than the budget is returned whole."""
    if budget <= 0:
        raise ValueError(f"the budget must be a positive number of tokens, got {budget}")
    out, left = [], budget
    for c in chunks:
        if left == 0:
            break
        n = text_tokens(c.text)
        if n > left:
            out.append(cut_chunk(c, left))
            break
        out.append(c)
        left -= n
    return out


def pick_budget(results: pd.DataFrame, k: int) -> tuple[int, str]:
    """(budget, method): the smallest mean ``context_budget`` at ``k`` over the methods that return
    anything, rounded down, and the method it is that of. Every method can fill it from a ranking as
    deep as k (on average), so at this budget each hands over the same number of tokens."""
    d = results[(results["metric"] == TOKENS) & (results["k"] == k)]
    if d.empty:
        raise ValueError(f"no {TOKENS} rows at k={k}: add context_token_rows to the results first")
    means = d.groupby("method", sort=False)["value"].mean()
    means = means[means > 0]
    if means.empty:
        raise ValueError(f"no method returned any text at k={k}")
    method = means.idxmin()
    return max(int(math.floor(means[method])), 1), method


def mid_budget(results: pd.DataFrame, k: int, baseline: str) -> int:
    """A mid-size budget: the median over questions of ``baseline``'s ``context_budget`` at ``k``, rounded
    down (a typical list the baseline hands over at k, where ``pick_budget`` gives the smallest method's)."""
    d = results[(results["metric"] == TOKENS) & (results["k"] == k) & (results["method"] == baseline)]
    if d.empty:
        raise ValueError(f"no {TOKENS} rows of {baseline!r} at k={k}: run the baseline with context_token_rows")
    return max(int(math.floor(d["value"].median())), 1)


def hits_that_fit(results: pd.DataFrame, k: int, budget: int, methods) -> dict[str, float]:
    """method -> how many of its hits fit in ``budget`` tokens: the budget over its mean tokens per hit at ``k``
    (``context_budget@k`` / k). A method whose hits are long (a 256-token structure-aware chunk) fits under one
    where a sentence-level method fits many; a comparison that needs several hits (section coverage) is no
    comparison there."""
    return fits_of(tokens_per_hit(results, k), budget, methods)


def tokens_per_hit(results: pd.DataFrame, k: int) -> pd.Series:
    """method -> its mean tokens per hit at ``k`` (``context_budget@k`` / k), in the run's order: read once
    per data set for every claim's ``hits_that_fit``."""
    d = without_attrs(results)
    d = d[(d["metric"] == TOKENS) & (d["k"] == k)]
    return d.groupby("method", sort=False)["value"].mean() / k


def fits_of(per_hit: pd.Series, budget: int, methods) -> dict[str, float]:
    """``hits_that_fit`` from ``tokens_per_hit``'s series: ``methods``' hits that fit in ``budget``."""
    wanted = set(methods)
    return {m: budget / t for m, t in per_hit.items() if m in wanted and t > 0}


def budget_metric(metric: str, budget: int) -> str:
    """The label of a metric at a token budget: ``ctx_recall@130tok``."""
    return f"{metric}@{budget}tok"


def equal_budget_rows(deepest: Mapping[str, Mapping[str, Retrieval]], dataset: Dataset, budget: int,
                      pools: Mapping[str, Sequence[Chunk]] | None = None, min_overlap: float = 0.5,
                      section_level: str = "section") -> pd.DataFrame:
    """Every method's ranking (``deepest``: method -> question id -> Retrieval) cut to ``budget``
    tokens and scored with the retrieval metrics of ``evaluate`` (k = the hits kept; section coverage
    where documents have sections), as tidy rows named ``metric@<budget>tok`` with no k, plus a
    ``tokens_handed`` row per question (the tokens of the cut list). Questions without gold get only
    the tokens row, as in ``evaluate``."""
    docs = {d.id: d for d in dataset.documents}
    scored = {q.id for q in questions_with_gold(dataset)[0]}
    has_sections = any(d.sections for d in dataset.documents)
    coverage = coverage_metric(section_level, source=True)
    rows = []
    for method, by_q in deepest.items():
        pool = ChunkPool(pools[method]) if pools is not None and method in pools else None
        for q in dataset.questions:
            chunks = cut_to_budget([h.chunk for h in by_q[q.id].hits], budget)
            rows.append((method, q.id, HANDED, math.nan, float(hits_tokens(chunks))))
            depth = max(len(chunks), 1)
            if q.id in scored:
                rows += [(method, q.id, budget_metric(m, budget), math.nan, v)
                         for m, _, v in retrieval_metrics(chunks, q, docs, [depth], min_overlap, pool)]
            if has_sections and q.gold_doc_ids:
                cov = section_coverage(chunks, depth, docs, section_level, q.gold_doc_ids)
                rows.append((method, q.id, budget_metric(coverage, budget), math.nan, cov.value))
    return pd.DataFrame(rows, columns=COLUMNS)


def equal_budget_board(rows: pd.DataFrame, budget: int, metrics: Sequence[str] = BUDGET_METRICS,
                       units=None) -> pd.DataFrame:
    """``equal_budget_rows`` as a leaderboard (the columns of ``intervals.leaderboard_ci``): per method
    the mean tokens handed and each metric at the budget with n and a 95% interval (clustered by document
    with ``units``, as the leaderboard at k), methods ordered by context recall at the budget (``rank_metric``),
    best first."""
    wanted = [HANDED] + [budget_metric(m, budget) for m in metrics]
    long = summary_with_ci(rows, metrics=wanted, units=units)
    if long.empty:
        raise ValueError(f"no rows at a budget of {budget} tokens")
    return ranked(long, wanted, budget_metric(rank_metric(long["metric"]), budget))


DECIDED = ("doc_recall", "ctx_recall", "ctx_precision")    # the metrics every comparison is decided on


def with_tokens(diff: pd.DataFrame, rows: pd.DataFrame, tokens: str, setting: str) -> pd.DataFrame:
    """``diff`` (``paired_differences`` rows) with each side's mean tokens handed over (``tokens``: the
    column of ``rows`` holding them, ``context_budget@5`` or ``tokens_handed``) and the ``setting`` the
    comparison was made in ("at k=5, unequal budgets", "at 136 tokens"), so no difference is read
    without the budgets behind it."""
    from ..evaluation.uncertainty import metric_column

    d = rows_of(rows, [tokens])            # the few rows that may be ``tokens``, then labelled one by one
    d = d[[metric_column(m, k) == tokens for m, k in zip(d["metric"], d["k"])]]
    if d.empty:
        raise ValueError(f"no {tokens} rows to show the budgets beside the differences")
    means = d.groupby("method")["value"].mean()
    out = diff.copy()
    out.insert(0, "setting", setting)
    out["method_tokens"] = out["method"].map(means)
    out["baseline_tokens"] = out["baseline"].map(means)
    return out


def budget_differences(equal: "EqualBudget", baseline: str, units=None, metrics: Sequence[str] = DECIDED) -> pd.DataFrame:
    """Each method minus ``baseline`` at ``equal``'s budget on ``metrics``, paired by question (clustered
    by document with ``units``): the procedure of ``evaluation.uncertainty.paired_differences`` on the
    equal-budget rows, one family, with both sides' tokens handed (``with_tokens``). Empty when the
    baseline did not run."""
    from ..evaluation.uncertainty import DIFFERENCE_COLUMNS

    if baseline not in methods_of(equal.rows):
        return pd.DataFrame(columns=["setting", *DIFFERENCE_COLUMNS, "method_tokens", "baseline_tokens"])
    columns = [budget_metric(m, equal.budget) for m in metrics]
    diff = paired_on_columns(equal.rows, baseline, columns, units, f"each method minus {baseline} on {', '.join(columns)}")
    return with_tokens(diff, equal.rows, HANDED, f"at {equal.budget} tokens ({equal.label})")


def block_tokens(retrievers: Mapping[str, object], retrievals: Mapping[str, Mapping[str, Retrieval]]) -> dict[str, float]:
    """method -> mean tokens of the context blocks it hands over besides its hits (SKETCH's graph
    facts), for the methods that have any."""
    out = {}
    for method, by_q in retrievals.items():
        r = retrievers.get(method)
        if r is None or not by_q:
            continue
        counts = [sum(count_text_tokens(t) for _, t in context_blocks(r, ret)) for ret in by_q.values()]
        if any(counts):
            out[method] = sum(counts) / len(counts)
    return out


@dataclass
class EqualBudget:
    """One dataset at one token budget: the budget, the method it was taken from, the per-question rows
    (``equal_budget_rows``) and the leaderboard (``equal_budget_board``)."""
    budget: int
    method: str
    deepest_k: int
    rows: pd.DataFrame
    board: pd.DataFrame
    blocks: dict[str, float]      # method -> mean tokens at k of the context blocks it hands over besides its hits
    label: str = "the smallest method's budget"   # where the budget comes from, in words


def equal_budget(results: pd.DataFrame, run, k: int, budget: int | None = None, label: str | None = None) -> EqualBudget:
    """The equal-budget comparison of one dataset of ``compare``: the budget from ``pick_budget`` at
    ``k`` (or ``budget``, e.g. ``mid_budget``'s, described by ``label``), each method's ranking at the
    run's deepest k (``run``: a ``comparison.Run``) cut to it and scored."""
    smallest, method = pick_budget(results, k)
    if budget is None:
        budget, label = smallest, f"the smallest method's mean budget at k={k}, {method}'s"
    elif budget <= 0:
        raise ValueError(f"the budget must be a positive number of tokens, got {budget}")
    deepest = max(run.retrievals)
    pools = {name: r.chunks for name, r in run.retrievers.items()}
    rows = equal_budget_rows(run.retrievals[deepest], run.dataset, budget, pools,
                             results.attrs.get("min_overlap", 0.5), results.attrs.get("section_level", "section"))
    blocks = block_tokens(run.retrievers, run.retrievals[k]) if k in run.retrievals else {}
    board = equal_budget_board(rows, budget, units=question_units(run.dataset))   # clustered by document
    return EqualBudget(budget, method, deepest, rows, board, blocks, label or f"{budget} tokens")
