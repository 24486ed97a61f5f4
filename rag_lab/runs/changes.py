"""The run report's "what changed between methods": from every per-question table a notebook wrote
(``evaluate``'s tidy rows: method, question_id, metric, k, value), the questions each paper method
gets right at k and its family's baseline does not, and the reverse (``flips.flip_counts``).
A question is right at k when a gold passage (else a gold document) is among the top k."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..evaluation.flips import flip_counts, flips
from ..evaluation.uncertainty import paper_pairs

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
    df = pd.read_csv(path, dtype={"question_id": str})     # ids are strings (COVID-QA's 101, "007"): never numbers
    return df if df["metric"].isin(["ctx_mrr", "doc_mrr"]).any() else None


def chosen_k(df: pd.DataFrame) -> int | None:
    """k = 5 when the table has it, else the deepest k below it, else the smallest."""
    ks = sorted({int(k) for k in df.loc[df["metric"].isin(["ctx_mrr", "doc_mrr"]), "k"].dropna()})
    if not ks:
        return None
    below = [k for k in ks if k <= PREFERRED_K]
    return below[-1] if below else ks[0]


PROVENANCE = {"index_reasoner", "answer_reasoner"}


def groups(df: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """The table split so each part has one row per (method, question, metric, k): by its other columns
    (notebook 04 repeats each question once per document-length ``condition``); one part otherwise."""
    extra = [c for c in df.columns if c not in TIDY | PROVENANCE]
    if not extra or not df.duplicated(["method", "question_id", "metric", "k"]).any():
        return [("", df)]
    return [(" / ".join(map(str, key if isinstance(key, tuple) else (key,))), part)
            for key, part in df.groupby(extra, sort=False, dropna=False)]


def changes(df: pd.DataFrame) -> pd.DataFrame:
    """One row per (part of the table, paper method, its baseline): k, wins, losses, ties, n and the
    first flipped questions."""
    rows = []
    for group, part in groups(df):
        k = chosen_k(part)
        if k is None:
            continue
        for method, baseline in paper_pairs(list(dict.fromkeys(part["method"]))):
            f = flips(part, method, baseline, k)
            rows.append({"part": group, "method": method, "baseline": baseline, "k": k,
                         **flip_counts(part, method, baseline, k),
                         "won": ", ".join(f.loc[f["winner"] == method, "question_id"].head(SHOWN_QUESTIONS)),
                         "lost": ", ".join(f.loc[f["winner"] == baseline, "question_id"].head(SHOWN_QUESTIONS))})
    out = pd.DataFrame(rows, columns=["part", "method", "baseline", "k", "wins", "losses", "ties", "n", "won", "lost"])
    return out.drop(columns="part") if (out["part"] == "").all() else out
