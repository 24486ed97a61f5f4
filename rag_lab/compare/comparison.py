"""Every registered method on every shipped dataset, through one metric layer, and where notebook 10 decides.
Cost and speed per method (notebook 11) live in ``compare.costs``.

A hit is a sentence for one method and a passage of several hundred tokens for another, so a paired
difference at k (recall@5, a flip at 5, a claim at 5) sets lists many times apart in length against
each other. The decisions are therefore made at two equal budgets (``budget.equal_budget``): the
smallest method's mean budget at k (about one naive chunk, which favours sentence-level methods) and a
mid-size one, the baseline's median budget at k (``budget.mid_budget``, which favours passage-level ones
less than k does and sentence-level ones less than the smallest). The results at k stay beside them,
labelled as what they are: at unequal budgets. Every verdict comes from ``evaluation.statistics``'
one procedure (``budget.budget_differences``, ``intervals.differences_table``, ``claims``), clustered by
document where units are given, and every comparison carries both methods' tokens.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import cached_property
from typing import Mapping, Sequence

import pandas as pd

from ..datasets import DataSource, data_source
from ..core.progress import announce
from ..core.types import Dataset
from ..evaluation.decisions import dataset_of
from ..evaluation.flips import without_attrs
from ..evaluation.harness import as_retrievers, evaluate, summarize
from ..evaluation.ledger import record
from ..evaluation.metric_specs import LEADERBOARD_SCORES as LEADERBOARD_METRICS
from ..evaluation.retrievers import Retriever
from ..evaluation.uncertainty import question_units
from ..methods import available_methods, get_retriever
from ..methods.ssg.ledgered import OWN_STOP
from .budget import (TOKENS, EqualBudget, budget_differences, context_token_rows, equal_budget, fits_of, mid_budget,
                     tokens_per_hit, with_tokens)
from .claims import CLAIMS, SSG_METRICS, claim_comparisons, claims_table, ssg_gathered_rows
from .intervals import differences_table, flip_summary, flipped_questions, leaderboard_shown, methods_of, rank_metric

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

    @cached_property
    def units(self) -> dict[str, str]:
        """question -> its document (``question_units``): every interval and test is clustered by it."""
        return question_units(self.dataset)

    def once(self, board: pd.DataFrame) -> pd.DataFrame:
        """``board`` (``leaderboard_ci``'s long form) as a reader sees it, each method of ``same`` shown once."""
        return leaderboard_shown(board, self.same)


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


# -- where notebook 10 decides: at two equal budgets, with k beside ------------------------------------
SMALLEST, MID = "smallest equal budget", "mid-size equal budget"


def unequal(k: int) -> str:
    """The label of the decisions at k, said as what they are."""
    return f"at k={k}, unequal budgets"


def decision_budgets(results: pd.DataFrame, run, k: int, baseline: str) -> dict[str, EqualBudget]:
    """The two budgets of one dataset, each method's deepest ranking cut to them and scored: ``SMALLEST``
    (``pick_budget``) and ``MID`` (``baseline``'s median budget at k; only the smallest when the baseline
    did not run)."""
    out = {SMALLEST: equal_budget(results, run, k)}
    if baseline in methods_of(results):
        out[MID] = equal_budget(results, run, k, mid_budget(results, k, baseline), f"{baseline}'s median budget at k={k}")
    return out


def at_budget(results: pd.DataFrame, equal: EqualBudget) -> pd.DataFrame:
    """One dataset's tidy rows at ``equal``'s budget: the equal-budget rows plus the rows that do not
    depend on a cut (SSG's gold-sentence scores over every sentence gathered, no k), so a claim read on
    those reads the same rows in every setting."""
    gathered = results[results["metric"].isin(SSG_METRICS) & results["k"].isna()]
    return pd.concat([equal.rows, gathered[equal.rows.columns]], ignore_index=True)


def as_k(rows: pd.DataFrame, budget: int) -> pd.DataFrame:
    """Equal-budget rows (``metric@<budget>tok``, no k) as rows at "k" = ``budget`` with the bare metric
    names, for the functions that read a metric at k (``flip_counts``: is the first gold within the cut)."""
    suffix = f"@{budget}tok"
    d = rows[rows["metric"].str.endswith(suffix)]
    return d.assign(metric=d["metric"].str.removesuffix(suffix), k=float(budget))


def decision_differences(results: pd.DataFrame, budgets: Mapping[str, EqualBudget], baseline: str, k: int,
                         units=None) -> pd.DataFrame:
    """Each method minus ``baseline`` at each budget (one Holm family per setting) and at k beside them,
    stacked with a ``setting`` column and both methods' tokens (handed at a budget, ``context_budget@k``
    at k). Empty when the baseline did not run."""
    frames = [budget_differences(eb, baseline, units).assign(setting=f"{label}: {eb.budget} tokens ({eb.label})")
              for label, eb in budgets.items()]
    bare = without_attrs(results)          # the provenance is read once below (the ledger's data set), not copied
    at_k = differences_table(bare, baseline, k, units=units)
    if not at_k.empty:
        frames.append(with_tokens(at_k, bare, f"{TOKENS}@{k}", unequal(k)))
    frames = [f for f in frames if not f.empty]
    out = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    if len(out):
        record(out, dataset_of(results, "unnamed"))   # the ledger: k or budget is read from each metric column
    return out


def decision_flips(results: Mapping[str, pd.DataFrame], budgets: Mapping[str, Mapping[str, EqualBudget]], k: int,
                   runs: Mapping[str, Run], limit: int | None = None) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    """(counts, questions): ``flip_summary`` at each budget (is the first gold within the tokens handed) and at
    k, with the ``setting`` and what it cuts at (``cut``: tokens or k) in columns; and per dataset (``runs``
    give the questions' text) every flipped question in each setting (``flipped_questions``), with its ``setting``."""
    frames = []
    for label in (SMALLEST, MID):
        for name, by_label in budgets.items():
            if label not in by_label:
                continue
            eb = by_label[label]
            table = flip_summary({name: as_k(eb.rows, eb.budget)}, eb.budget).drop(columns="k")
            frames.append(table.assign(setting=label, cut=f"{eb.budget} tokens"))
    frames.append(flip_summary(results, k).drop(columns="k").assign(setting=unequal(k), cut=f"k={k}"))
    counts = pd.concat(frames, ignore_index=True)
    counts = counts[["setting", "cut", "dataset", "method", "baseline", "wins", "losses", "ties", "n"]]
    questions = {}
    for name, df in results.items():
        data = runs[name].dataset
        per_setting = [flipped_questions(as_k(eb.rows, eb.budget), data, eb.budget, limit).assign(setting=label)
                       for label, eb in budgets[name].items()]
        per_setting.append(flipped_questions(df, data, k, limit).assign(setting=unequal(k)))
        flipped = pd.concat(per_setting, ignore_index=True)
        questions[name] = flipped[["setting", *[c for c in flipped.columns if c != "setting"]]]
    return counts, questions


def decision_claims(results: Mapping[str, pd.DataFrame], budgets: Mapping[str, Mapping[str, EqualBudget]], k: int,
                    units=None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every paper claim checked in each setting: (comparisons, claims). A budget differs per dataset, so
    each dataset is read at its own budget (the metric column names it, ``ctx_recall@136tok``); the claims
    table holds one row per claim and setting with its verdict, how it was reached, and how many of each
    method's hits the setting holds (``hits that fit``: at k, k each; at a token budget, the fewest any of the
    claim's methods fits). A claim that needs several hits of each method (``Claim.min_hits``: section
    coverage) is not decided on a data set whose budget holds fewer: it is decided at equal chunk count (k)."""
    results = {name: without_attrs(df) for name, df in results.items()}   # no provenance copied per operation
    comparisons, verdicts = [], []
    settings = [(label, {name: at_budget(results[name], by[label]) for name, by in budgets.items() if label in by},
                 {name: f"{by[label].budget}tok" for name, by in budgets.items() if label in by})
                for label in (SMALLEST, MID)]
    settings = [s for s in settings if s[1]]
    settings.append((unequal(k), dict(results), {name: str(k) for name in results}))
    for label, data, at in settings:
        fits = claim_fits(results, budgets, label, k) if label in (SMALLEST, MID) else {}
        not_here = {c.paper: [d for d, (_, hits) in fits[c.paper].items() if hits < c.min_hits]
                    for c in CLAIMS if c.min_hits and c.paper in fits}
        comps = claim_comparisons(data, k, units, at=at, setting=label, not_here=not_here)
        comparisons.append(comps.assign(setting=label))
        _record_claims(comps)
        untested = {paper: fewer_hits_sentence(fits[paper], min_hits_of(paper), k)
                    for paper, skipped in not_here.items() if skipped}
        table = claims_table(data, k, comps, untested=untested).assign(setting=label)
        table["hits that fit"] = [fits_sentence(fits.get(p), k) for p in table["paper"]]
        verdicts.append(table)
    return pd.concat(comparisons, ignore_index=True), pd.concat(verdicts, ignore_index=True)


def claim_fits(results: Mapping[str, pd.DataFrame], budgets: Mapping[str, Mapping[str, EqualBudget]], label: str,
               k: int) -> dict[str, dict[str, tuple[str, float]]]:
    """paper -> data set -> (method, hits): the fewest of its hits any of the claim's methods fits in the data
    set's ``label`` budget (``budget.hits_that_fit``)."""
    out: dict[str, dict[str, tuple[str, float]]] = {}
    at_k = {name: str(k) for name in results}
    per_hit: dict[str, pd.Series] = {}                 # data set -> tokens per hit: read once, not per comparison
    for claim in CLAIMS:
        for c in claim.comparisons(dict(results), at_k):
            eb = budgets.get(c.dataset, {}).get(label)
            if eb is None:
                continue
            if c.dataset not in per_hit:
                per_hit[c.dataset] = tokens_per_hit(results[c.dataset], k)
            fit = fits_of(per_hit[c.dataset], eb.budget, [c.method, c.rival])
            if fit:
                method, hits = min(fit.items(), key=lambda kv: kv[1])
                known = out.setdefault(claim.paper, {}).get(c.dataset)
                if known is None or hits < known[1]:
                    out[claim.paper][c.dataset] = (method, hits)
    return out


def min_hits_of(paper: str) -> int:
    return next(c.min_hits for c in CLAIMS if c.paper == paper)


def fits_sentence(fits: Mapping[str, tuple[str, float]] | None, k: int) -> str:
    """``hits that fit`` in words: "k=5 each" at k; at a budget the fewest per data set, "yes" when every
    method fits at least three hits."""
    if fits is None:
        return f"{k} each (k={k})"
    low = min(fits.values(), key=lambda mh: mh[1])
    worst = "; ".join(f"{d}: {m} {h:.1f}" for d, (m, h) in fits.items())
    return ("at least 3 each" if low[1] >= 3 else "fewer than 3 for some") + f" (fewest: {worst})"


def fewer_hits_sentence(fits: Mapping[str, tuple[str, float]], needed: int, k: int) -> str:
    """Why a claim is not decided at a budget: the data sets where a method fits fewer hits than it needs."""
    short = "; ".join(f"{m} fits {h:.1f} of its chunks on {d}" for d, (m, h) in fits.items() if h < needed)
    return (f"not decided at this budget: {short}, fewer than {needed}, so no section coverage can be compared; "
            f"decided at equal chunk count (k={k})")


def _record_claims(comps: pd.DataFrame) -> None:
    """Each data set's claim comparisons into the ledger; the SSG rows (no k: every sentence gathered, the
    same in every setting) under notebook 03's setting, so the two notebooks' numbers are checked alike."""
    for name, rows in comps.groupby("dataset", sort=False):
        gathered = ~rows["metric"].astype(str).str.contains("@")
        record(rows.assign(setting=[OWN_STOP if g else "" for g in gathered]), str(name))
