"""Each paper's headline claim, checked against one run's summary tables.

A check reads ``summaries`` (dataset name -> ``evaluation.summarize`` table: methods × metric@k)
and answers supported / not supported with the numbers it compared, or "not tested" when the
methods or metrics it needs are absent from the run. The claims are paraphrased from the papers.
A method whose every metric equals another's retrieved the same in practice and is counted once.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import pandas as pd

Summaries = dict[str, pd.DataFrame]


@dataclass
class Claim:
    paper: str
    claim: str
    check: Callable[[Summaries, int], tuple[bool | None, str]]


def _value(table: pd.DataFrame, method: str, column: str) -> float | None:
    if method in table.index and column in table.columns and pd.notna(table.loc[method, column]):
        return float(table.loc[method, column])
    return None


def _beats_all(method: str, rivals: list[str], columns: list[str]):
    def check(summaries: Summaries, k: int):
        verdicts, notes = [], []
        for name, table in summaries.items():
            for col in (c.format(k=k) for c in columns):
                ours = _value(table, method, col)
                others = {r: _value(table, r, col) for r in rivals}
                others = {r: v for r, v in others.items() if v is not None}
                if ours is None or not others:
                    continue
                best_rival = max(others, key=others.get)
                verdicts.append(ours >= others[best_rival])
                notes.append(f"{name} {col}: {method} {ours:.3f} vs best rival {best_rival} {others[best_rival]:.3f}")
        return (all(verdicts) if verdicts else None), "; ".join(notes) or "methods not in this run"
    return check


def _twins(table: pd.DataFrame, methods: list[str]) -> dict[str, str]:
    """method -> the earlier method whose every metric it equals (NaN matching NaN): the same
    retrievals in practice (e.g. llm_guided_traversal making query_traversal's choices), counted once."""
    numeric = table.select_dtypes("number")
    kept: list[str] = []
    twins: dict[str, str] = {}
    for m in methods:
        twin = next((k for k in kept if numeric.loc[m].equals(numeric.loc[k])), None)
        if twin is None:
            kept.append(m)
        else:
            twins[m] = twin
    return twins


def _ssg_majority(summaries: Summaries, k: int):
    verdicts, notes = [], []
    for name, table in summaries.items():
        base = "ssg-basic-retrieval"
        algos = [m for m in table.index if m.startswith("ssg-") and m != base]
        p_col, r_col = f"ctx_precision@{k}", f"ctx_recall@{k}"
        if base not in table.index or not algos or p_col not in table.columns:
            continue
        twins = _twins(table, [base, *algos])
        algos = [m for m in algos if m not in twins]
        wins = [m for m in algos if (_value(table, m, p_col) or 0) > (_value(table, base, p_col) or 0)
                or (_value(table, m, r_col) or 0) > (_value(table, base, r_col) or 0)]
        verdicts.append(len(wins) > len(algos) / 2)
        note = f"{name}: {len(wins)}/{len(algos)} algorithms beat basic_retrieval on ctx precision or recall@{k}"
        if twins:
            note += " (not counted, equal to another on every metric: " + ", ".join(
                f"{m} = {t}" for m, t in twins.items()) + ")"
        notes.append(note)
    return (all(verdicts) if verdicts else None), "; ".join(notes) or "SSG methods not in this run"


def _gralc_coverage(summaries: Summaries, k: int):
    content = ["gralc-naive", "gralc-semantic", "gralc-late"]
    structure = ["gralc-structure", "gralc-kg", "gralc-graph"]
    verdicts, notes = [], []
    for name, table in summaries.items():
        col = f"section_coverage_source@{k}"
        c = [v for m in content if (v := _value(table, m, col)) is not None]
        s = [v for m in structure if (v := _value(table, m, col)) is not None]
        if not c or not s:
            continue
        verdicts.append(min(s) > max(c))
        notes.append(f"{name} SecCov@{k}: content-only max {max(c):.2f}, structure-aware min {min(s):.2f}")
    return (all(verdicts) if verdicts else None), "; ".join(notes) or "GraLC strategies or sections not in this run"


CLAIMS = [
    Claim("SKETCH", "SKETCH retrieves better context than Naive RAG, Semantic-only, KG-only and RAPTOR",
          _beats_all("sketch", ["naive", "semantic", "kg", "raptor"], ["ctx_precision@{k}", "ctx_recall@{k}"])),
    Claim("UnWeaver", "Entity-based retrieval (UnWeaver) is at least as good as plain VectorRAG",
          _beats_all("unweaver", ["naive"], ["ctx_recall@{k}", "doc_recall@{k}"])),
    Claim("SSG traversal", "Most traversal algorithms beat basic_retrieval on precision or recall", _ssg_majority),
    Claim("GraLC-RAG", "Structure-aware strategies retrieve from more sections than content-only ones",
          _gralc_coverage),
]


def claims_table(summaries: Summaries, k: int = 5) -> pd.DataFrame:
    rows = []
    for c in CLAIMS:
        verdict, evidence = c.check(summaries, k)
        rows.append({"paper": c.paper, "claim": c.claim,
                     "this run": {True: "supported", False: "not supported", None: "not tested"}[verdict],
                     "numbers": evidence})
    return pd.DataFrame(rows)
