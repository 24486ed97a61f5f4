"""SSG's decided tables, clustered and filed alike in notebooks 03 and 10: each question's unit (the
document it was written from) from ``experiment.gathered_scores``' ``unit`` column, the ledger setting a
table speaks of (the own stopping points, or the equal sentence budget), and the registry's names
(``ssg-…``) the ledger files algorithms under, as notebook 10 names them."""
from __future__ import annotations

import pandas as pd

from ...evaluation.ledger import record
from ...evaluation.uncertainty import Units
from .method import method_name


def units_of(scores: pd.DataFrame) -> Units | None:
    """question id -> its unit (its document), from ``gathered_scores``' ``unit`` column (None without one)."""
    if "unit" not in scores.columns:
        return None
    return dict(zip(scores["question_id"].astype(str), scores["unit"].astype(str)))


OWN_STOP, EQUAL_BUDGET = "own stopping point", "equal sentence budget"   # the ledger's setting of each table


def setting_of(label: str) -> str:
    """The ledger setting a notebook label names: the equal sentence budget, else the own stopping points."""
    return EQUAL_BUDGET if "equal" in label.lower() else OWN_STOP


def recorded_algorithms(table: pd.DataFrame, scores: pd.DataFrame, label: str, other: str = "baseline") -> pd.DataFrame:
    """Record a decided table of algorithms in the ledger under the registry's names (``ssg-…``, as notebook
    10 names them) and its setting; returns ``table`` unchanged."""
    if len(table) and "dataset" in scores.columns:
        named = table.assign(method=table["method"].map(method_name), setting=setting_of(label),
                             **{other: table[other].map(method_name)})
        record(named, str(scores["dataset"].iloc[0]))
    return table
