"""The verdict words: how a decided comparison's verdict is said, with its reason. One wording for every
notebook and paper folder, so "undecided" is never said five ways: the words are ``statistics``' constants,
"cannot be decided" always carries the reason ``decide`` gave, and ``side``, ``relation`` and ``copula``
put a verdict into a sentence. Also the data set a tidy table came from (``dataset_of``, for the ledger)
and a notebook's first statistical sentence (``estimand_of``).
"""
from __future__ import annotations

from typing import Mapping

import pandas as pd

from .statistics import CONTRADICTED, SUPPORTED, UNDECIDABLE, VERDICTS, decided, estimand_sentence

HOW_DECIDED = ("How the verdicts below are decided: every difference is paired by question (clustered by document),\n"
               "with one test giving its p and its 95% interval (rag_lab.evaluation.statistics: the bounded-mean test "
               "with an unseen unit for scores in [0, 1], the paired t-test otherwise),\np adjusted by Holm within its "
               "table's declared family; a difference is called only when that p is below 0.05, otherwise the "
               "sentence gives the verdict word\n(inconclusive, or cannot be decided with its reason). Intervals are "
               "each comparison's own, unadjusted for the family.")


def reason_of(row: Mapping) -> str:
    """The reason a row "cannot be decided" ("" for a decided or inconclusive one)."""
    reason = row.get("reason", "") if hasattr(row, "get") else ""
    return "" if reason is None or (isinstance(reason, float) and pd.isna(reason)) else str(reason)


def verdict_said(row: Mapping) -> str:
    """The verdict word, and for "cannot be decided" its reason in brackets."""
    word = str(row["verdict"])
    reason = reason_of(row)
    return f"{word} ({reason})" if word == UNDECIDABLE and reason else word


def side(word: str, up: str = "ahead", down: str = "behind") -> str:
    """Where a verdict puts the first method: ``up`` when supported, ``down`` when contradicted, else the
    undecided word itself (inconclusive, cannot be decided)."""
    if word not in VERDICTS:
        raise ValueError(f"verdict must be one of {VERDICTS}, got {word!r}")
    return {SUPPORTED: up, CONTRADICTED: down}.get(word, word)


def relation(word: str) -> str:
    """The verdict as the words before the other method's name: ``ahead of``, ``behind``, ``inconclusive
    against``, ``cannot be decided against``."""
    return side(word, "ahead of", "behind") if decided(word) else f"{side(word)} against"


def copula(word: str) -> str:
    """The verb before a verdict word in a sentence: ``is `` (``is inconclusive``, ``is ahead of``), and
    nothing before ``cannot be decided`` (never "is cannot be decided")."""
    return "" if word == UNDECIDABLE else "is "


def dataset_of(results: pd.DataFrame, default: str = "") -> str:
    """The data set ``evaluate`` scored (``results.attrs["dataset"]``), else ``default``."""
    return str(getattr(results, "attrs", {}).get("dataset") or default)


def estimand_of(dataset) -> str:
    """The notebook's first statistical sentence (``statistics.estimand_sentence``) for ``dataset``: its
    questions with gold (the ones scored) and the documents they were written from (``question_units``)."""
    from .metrics import questions_with_gold
    from .uncertainty import question_units

    scored = questions_with_gold(dataset)[0]
    units = question_units(dataset)
    return f"{dataset.name}: " + estimand_sentence(len(scored), len({units[q.id] for q in scored}))

