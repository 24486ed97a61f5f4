"""Each paper's headline claim, checked against one run's per-question scores, with its uncertainty.

A claim is a set of paired comparisons (a method minus a rival on the same questions, one metric@k,
one dataset). Each comparison has a difference, its 95% interval, p (``statistics.paired_difference``)
and the minimum detectable effect. The comparisons of one claim are one **declared family**: the
``Claim`` lists them in code before the run, and Holm's adjustment runs within that family only, so
one paper's verdict never depends on how many other methods ran. A comparison's verdict
(``statistics.verdict``) is **supported** or **contradicted** only when its Holm-adjusted p is below
0.05, on the side its difference lies; **cannot be decided at this n** when no p below 0.05 is
attainable with these questions (or units), or when a non-inferiority comparison left undecided has
an MDE above the margin; **inconclusive** otherwise. "Better than" tests a difference of 0; "at
least as good as" is a non-inferiority claim tested against ``-NON_INFERIORITY_MARGIN``, with its own
p. A claim over several comparisons combines them as the claim's words say (all of them, or most of
them); "not tested" when the run lacks its methods. A method whose every per-question score equals
another's retrieved the same and is counted once. With ``units`` (dataset -> question id -> the
document it targets) the comparisons are clustered by document. The claims are paraphrased from the
papers.

The SSG claim is checked on gold-sentence precision and recall of every sentence a traversal gathered
(``descriptions.definition_sentence``; rows from ``ssg_gathered_rows``), the definition notebook 03
uses and the paper's (it scores the whole retrieved context), not on the first k sentences.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Collection, Mapping

import pandas as pd

from ..evaluation.statistics import (CONTRADICTED, INCONCLUSIVE, NON_INFERIORITY_MARGIN, SUPPORTED, UNDECIDABLE,
                                    format_ci, format_p)
from ..evaluation.uncertainty import TEST_COLUMNS, Units, clustering_note, decide, paired_on, per_question
from ..core.types import Dataset
from .intervals import methods_of, rows_of

Results = dict[str, pd.DataFrame]      # dataset -> evaluate()'s tidy per-question table
NOT_TESTED = "not tested"
COMPARISON_COLUMNS = ["paper", "dataset", "method", "rival", "metric", *TEST_COLUMNS]


@dataclass(frozen=True)
class Comparison:
    dataset: str
    method: str
    rival: str
    metric: str
    threshold: float = 0.0


@dataclass
class Claim:
    paper: str
    claim: str
    comparisons: Callable[[Results, Mapping[str, str]], list[Comparison]]   # (results, dataset -> metric suffix)
    combine: Callable[[pd.DataFrame], tuple[str, str]]   # the claim's comparisons -> verdict, how it was reached
    # hits every method must fit in a token budget for the claim to be decided there (0: any budget): section
    # coverage counts the sections of several hits, so a budget under three of the longest method's chunks
    # compares nothing; the claim is then decided at equal chunk count (k) only
    min_hits: int = 0


def twins(df: pd.DataFrame, methods: list[str]) -> dict[str, str]:
    """method -> the earlier method whose every per-question score it equals (NaN matching NaN):
    the same retrievals in practice (e.g. llm_guided_traversal making query_traversal's choices).
    Latency rows are left out: they measure the machine, so two runs of one retrieval never match."""
    d = df[df["method"].isin(methods) & (df["metric"] != "latency_seconds")]
    wide = d.pivot_table(index=["question_id", "metric", "k"], columns="method", values="value", aggfunc="first",
                         dropna=False)
    kept: list[str] = []
    out: dict[str, str] = {}
    for m in methods:
        twin = next((k for k in kept if m in wide and k in wide and wide[m].equals(wide[k])), None)
        if twin is None:
            kept.append(m)
        else:
            out[m] = twin
    return out


def _pairs(method: str, rivals: list[str], metrics: list[str], threshold: float = 0.0):
    def comparisons(results: Results, at: Mapping[str, str]) -> list[Comparison]:
        out = []
        for name, df in results.items():
            present = methods_of(df)
            if method not in present:
                continue
            out += [Comparison(name, method, r, m.format(k=at[name]), threshold)
                    for m in metrics for r in rivals if r in present]
        return out
    return comparisons


SSG_METRICS = ("gold_sentence_precision", "gold_sentence_recall")   # no k: every sentence gathered


def ssg_gathered_rows(retrievers: dict, dataset: Dataset, max_sentences=None) -> pd.DataFrame:
    """Tidy rows (``evaluate``'s columns, no k) of gold-sentence precision and recall for every SSG
    retriever among ``retrievers`` (built): each traversal run to its cap per question
    (``max_sentences``, default the paper's: ``experiment.PAPER_MAX_SENTENCES``) over the retriever's
    own graph and reasoner, and scored by ``experiment.gathered_scores``, as notebook 03 does."""
    from ..methods.ssg import experiment
    from ..methods.ssg.method import SSGRetriever, method_name

    caps = experiment.PAPER_MAX_SENTENCES if max_sentences is None else max_sentences
    frames = []
    for name, r in retrievers.items():
        if not isinstance(r, SSGRetriever):
            continue
        gathered = experiment.run_algorithms(r.graph, dataset, [r.algorithm], caps, r.reasoner, r.embedder)
        scores = experiment.gathered_scores({name: gathered[method_name(r.algorithm)]}, dataset)
        long = scores.melt(id_vars=["method", "question_id"], value_vars=list(SSG_METRICS), var_name="metric")
        frames.append(long.assign(k=float("nan"))[["method", "question_id", "metric", "k", "value"]])
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["method", "question_id", "metric",
                                                                                      "k", "value"])


def _ssg_pairs(results: Results, at: Mapping[str, str]) -> list[Comparison]:
    base = "ssg-basic-retrieval"
    out = []
    for name, df in results.items():
        present = methods_of(df)
        algos = [m for m in present if m.startswith("ssg-") and m != base]
        if base not in present or not algos:
            continue
        same = twins(df, [base, *algos])
        out += [Comparison(name, m, base, metric) for m in algos if m not in same for metric in SSG_METRICS]
    return out


def _gralc_pairs(results: Results, at: Mapping[str, str]) -> list[Comparison]:
    content = ["gralc-naive", "gralc-semantic", "gralc-late"]
    structure = ["gralc-structure", "gralc-kg", "gralc-graph"]
    out = []
    for name, df in results.items():
        present = methods_of(df)
        out += [Comparison(name, s, c, f"section_coverage_source@{at[name]}")
                for s in structure if s in present for c in content if c in present]
    return out


def _undecided(verdicts) -> str:
    """Of verdicts none of which decides the claim: "cannot be decided at this n" when every one of them
    is, else inconclusive (some comparison could have gone either way with these questions)."""
    return UNDECIDABLE if verdicts and all(v == UNDECIDABLE for v in verdicts) else INCONCLUSIVE


def every_one(rows: pd.DataFrame) -> tuple[str, str]:
    """A claim that must hold in every comparison: supported when each is, contradicted when any is
    (the verdicts are Holm-adjusted within the claim's family, so "any" is corrected too)."""
    counts = rows["verdict"].value_counts()
    how = ", ".join(f"{counts.get(v, 0)} {v}" for v in (SUPPORTED, INCONCLUSIVE, CONTRADICTED, UNDECIDABLE))
    if counts.get(CONTRADICTED, 0):
        return CONTRADICTED, how
    if counts.get(SUPPORTED, 0) == len(rows):
        return SUPPORTED, how
    return _undecided([v for v in rows["verdict"] if v != SUPPORTED]), how


def most_methods(rows: pd.DataFrame) -> tuple[str, str]:
    """"Most algorithms beat the baseline on one metric or another": an algorithm beats it when any of
    its comparisons is supported, fails to when all are contradicted. Supported when more than half
    beat it; contradicted when a majority is out of reach even if every undecided one did; "cannot be
    decided at this n" when it turns on algorithms none of whose comparisons this n can decide."""
    outcome = {}
    for (dataset, method), g in rows.groupby(["dataset", "method"], sort=False):
        v = set(g["verdict"])
        outcome[(dataset, method)] = (SUPPORTED if SUPPORTED in v else CONTRADICTED if v == {CONTRADICTED}
                                      else _undecided([x for x in v if x != CONTRADICTED]))
    verdicts = []
    notes = []
    for dataset in dict.fromkeys(d for d, _ in outcome):
        mine = [v for (d, _), v in outcome.items() if d == dataset]
        n, won, lost = len(mine), mine.count(SUPPORTED), mine.count(CONTRADICTED)
        open_ = [v for v in mine if v not in (SUPPORTED, CONTRADICTED)]
        verdicts.append(SUPPORTED if won > n / 2 else CONTRADICTED if n - lost <= n / 2 else _undecided(open_))
        notes.append(f"{dataset}: {won}/{n} algorithms beat basic_retrieval, {lost} fall short, "
                     f"{len(open_)} undecided ({open_.count(UNDECIDABLE)} of them {UNDECIDABLE})")
    final = (CONTRADICTED if CONTRADICTED in verdicts else SUPPORTED if set(verdicts) == {SUPPORTED}
             else _undecided([v for v in verdicts if v != SUPPORTED]))
    return final, "; ".join(notes)


CLAIMS = [
    Claim("SKETCH", "SKETCH retrieves better context than Naive RAG, Semantic-only, KG-only and RAPTOR",
          _pairs("sketch", ["naive", "semantic", "kg", "raptor"], ["ctx_precision@{k}", "ctx_recall@{k}"]), every_one),
    Claim("UnWeaver", f"Entity-based retrieval (UnWeaver) is at least as good as plain VectorRAG "
                      f"(non-inferiority, margin {NON_INFERIORITY_MARGIN})",
          _pairs("unweaver", ["naive"], ["ctx_recall@{k}", "doc_recall@{k}"], -NON_INFERIORITY_MARGIN), every_one),
    Claim("SSG traversal", "Most traversal algorithms beat basic_retrieval on precision or recall (gold sentences, "
                           "every sentence gathered)", _ssg_pairs, most_methods),
    Claim("GraLC-RAG", "Structure-aware strategies retrieve from more sections than content-only ones",
          _gralc_pairs, every_one, min_hits=3),
]


def claim_comparisons(results: Results, k: int = 5, units: Mapping[str, Units] | None = None,
                      at: Mapping[str, str] | None = None, setting: str = "",
                      not_here: Mapping[str, Collection[str]] | None = None) -> pd.DataFrame:
    """Every comparison of every claim (``COMPARISON_COLUMNS``, and ``reason`` where ``decide`` gives one):
    difference, interval, p against the comparison's threshold, Holm p within the claim's family
    (``family`` = the paper, and the ``setting`` when one is named: each setting is a family of its own),
    MDE and verdict.
    ``units``: dataset -> question id -> unit, to cluster each dataset's questions by document. ``at``:
    dataset -> the suffix of the metric columns read (default ``k``: ``ctx_recall@5``; an equal budget's
    ``136tok`` reads ``ctx_recall@136tok``). ``not_here``: paper -> the data sets where its claim is not
    decided in this setting (a budget its methods do not fit: ``Claim.min_hits``)."""
    at = {name: str(k) for name in results} if at is None else at
    tables: dict[tuple[str, str], pd.DataFrame] = {}     # one pivot per (data set, metric), read by every claim
    frames = []
    for claim in CLAIMS:
        rows = []
        for c in claim.comparisons(results, at):
            if c.dataset in (not_here or {}).get(claim.paper, ()):
                continue
            if (c.dataset, c.metric) not in tables:
                tables[(c.dataset, c.metric)] = per_question(rows_of(results[c.dataset], [c.metric]), c.metric)
            table = tables[(c.dataset, c.metric)]
            if c.method not in table.columns or c.rival not in table.columns:
                continue
            d = paired_on(table, c.method, c.rival, c.threshold, (units or {}).get(c.dataset))
            rows.append({"paper": claim.paper, "dataset": c.dataset, "method": c.method, "rival": c.rival,
                         "metric": c.metric, **d.as_dict()})
        if rows:
            frames.append(decide(pd.DataFrame(rows), f"{claim.paper} ({setting})" if setting else claim.paper))
    if not frames:
        return pd.DataFrame(columns=COMPARISON_COLUMNS)
    out = pd.concat(frames, ignore_index=True)
    return out[COMPARISON_COLUMNS + [c for c in ("reason",) if c in out.columns and c not in COMPARISON_COLUMNS]]


def evidence(row: pd.Series) -> str:
    """One comparison in words: ``italian_cuisine ctx_recall@5: sketch - raptor = -0.020 [-0.110, 0.070]
    (n = 20, p = 0.62, p Holm = 1.00 in a family of 8, MDE 0.150): inconclusive``."""
    target = f"p against the margin {-row['threshold']:g}: " if row["threshold"] else ""
    p = format_p(row["p"])
    p_holm = format_p(row["p_holm"])
    mde = "n/a" if pd.isna(row["mde"]) else f"{row['mde']:.3f}"
    said = format_ci(row["diff"], row["ci_low"], row["ci_high"])
    if pd.isna(row["ci_low"]):
        said += f" ({row['interval']})"        # e.g. "none: one unit": why there is no interval
    return (f"{row['dataset']} {row['metric']}: {row['method']} - {row['rival']} = "
            f"{said} (n = {row['n']}{clustering_note(row)}, "
            f"{target}p = {p}, p Holm = {p_holm} in a family of {row['family_size']}, MDE {mde}): {row['verdict']}")


def claims_table(results: Results, k: int = 5, comparisons: pd.DataFrame | None = None,
                 units: Mapping[str, Units] | None = None, untested: Mapping[str, str] | None = None) -> pd.DataFrame:
    """One row per claim: its verdict in this run, how it was reached (``decided by``, a line) and every number
    behind it (``numbers``, kept for the CSV; the comparisons' own table is the one to read).
    ``untested``: paper -> why a claim with no comparison here was not tested (default: its methods or
    metrics are not in this run)."""
    comparisons = claim_comparisons(results, k, units) if comparisons is None else comparisons
    rows = []
    for claim in CLAIMS:
        mine = comparisons[comparisons["paper"] == claim.paper]
        if mine.empty:
            why = (untested or {}).get(claim.paper, "the methods or metrics it needs are not in this run")
            rows.append({"paper": claim.paper, "claim": claim.claim, "this run": NOT_TESTED, "comparisons": 0,
                         "decided by": why, "numbers": why})
            continue
        final, how = claim.combine(mine)
        rows.append({"paper": claim.paper, "claim": claim.claim, "this run": final, "comparisons": len(mine),
                     "decided by": how, "numbers": f"{how}. " + "; ".join(evidence(r) for _, r in mine.iterrows())})
    return pd.DataFrame(rows)
