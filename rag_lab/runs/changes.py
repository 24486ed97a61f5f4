"""The run report's "what changed between methods": from every per-question table a notebook wrote
(``evaluate``'s tidy rows: method, question_id, metric, k, value), the questions each paper method
gets right at k and its family's baseline does not, and the reverse (``uncertainty.flip_counts``).
A question is right at k when a gold passage (else a gold document) is among the top k."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..evaluation.uncertainty import flip_counts, flips, paper_pairs

TIDY = {"method", "question_id", "metric", "k", "value"}
PREFERRED_K = 5
SHOWN_QUESTIONS = 5


def per_question_table(path: Path) -> pd.DataFrame | None:
    """The CSV at ``path`` if it holds evaluate's tidy per-question rows with a gold-found metric, else None."""
    try:
        head = pd.read_csv(path, nrows=0)
    except (OSError, ValueError, pd.errors.ParserError):
        return None
    if not TIDY <= set(head.columns):
        return None
    df = pd.read_csv(path)
    return df if df["metric"].isin(["ctx_mrr", "doc_mrr"]).any() else None


def chosen_k(df: pd.DataFrame) -> int | None:
    """k = 5 when the table has it, else the deepest k below it, else the smallest."""
    ks = sorted({int(k) for k in df.loc[df["metric"].isin(["ctx_mrr", "doc_mrr"]), "k"].dropna()})
    if not ks:
        return None
    below = [k for k in ks if k <= PREFERRED_K]
    return below[-1] if below else ks[0]


def changes(df: pd.DataFrame) -> pd.DataFrame:
    """One row per (paper method, its baseline): k, wins, losses, ties, n and the first flipped questions."""
    k = chosen_k(df)
    rows = []
    if k is not None:
        for method, baseline in paper_pairs(list(dict.fromkeys(df["method"]))):
            f = flips(df, method, baseline, k)
            rows.append({"method": method, "baseline": baseline, "k": k, **flip_counts(df, method, baseline, k),
                         "won": ", ".join(f.loc[f["winner"] == method, "question_id"].head(SHOWN_QUESTIONS)),
                         "lost": ", ".join(f.loc[f["winner"] == baseline, "question_id"].head(SHOWN_QUESTIONS))})
    return pd.DataFrame(rows, columns=["method", "baseline", "k", "wins", "losses", "ties", "n", "won", "lost"])
