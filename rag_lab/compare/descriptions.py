"""What notebook 10 says about its run besides its findings, each sentence computed from the run: the questions
each data set scores, the methods that retrieve or score alike, the context budgets, the encoder's cut of long
chunks, and what the SSG claim's gold-sentence scores count (notebook 03 prints it too).
The findings (decided comparisons in words) are ``evaluation.findings``'.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import pandas as pd

from ..core.types import Dataset
from ..evaluation.decisions import estimand_of
from ..evaluation.flips import without_attrs
from ..evaluation.statistics import format_ci
from ..methods.ssg.config import SSGConfig
from ..methods.ssg.experiment import PAPER_MAX_SENTENCES
from .comparison import SMALLEST
from .budget import HANDED, TOKENS, EqualBudget, budget_metric
from .intervals import LEADERBOARD_METRICS, RANK_METRIC, methods_of, rank_metric


# -- the questions ----------------------------------------------------------------------------------
def questions_sentences(results: Mapping[str, pd.DataFrame], runs: Mapping, k: int,
                        metrics: Sequence[str] = LEADERBOARD_METRICS) -> list[str]:
    """What each data set's questions are scored on, said once: how many its tables score at k (those with a
    ``ctx_recall@k`` or ``doc_recall@k`` row; a question without gold is not scored), then each data set's
    estimand (``decisions.estimand_of``: the questions with gold and the documents they were written from; ``runs``:
    data set -> ``comparison.Run``), then the leaderboard metrics a data set has no rows for (no gold passages, no
    sections) and the metric its tables are ranked by instead of context recall."""
    counts = []
    for name, df in results.items():
        scored = df.loc[df["metric"].isin(["ctx_recall", "doc_recall"]) & (df["k"] == k), "question_id"].nunique()
        counts.append(f"{name} {scored} of {df['question_id'].nunique()}")
    out = [f"Questions scored at k={k}: " + ", ".join(counts) + " (a question without gold is not scored)."]
    out += [estimand_of(runs[name].dataset) for name in results]
    for name, df in results.items():
        have = {m for m in metrics if ((df["metric"] == m) & (df["k"] == k)).any()}
        missing = [f"{m}@{k}" for m in metrics if m not in have]
        if missing:
            by = rank_metric(have)
            why = "" if by == RANK_METRIC else (f"; its questions carry gold documents but no gold passages, so its "
                                                f"tables are ranked by {by}@{k}, not {RANK_METRIC}@{k}")
            out.append(f"{name}: no {', '.join(missing)} (not shown in its tables){why}.")
    return out


# -- methods that retrieve or score alike -----------------------------------------------------------
def same_sentence(dataset: str, same: dict[str, str]) -> str:
    """Which methods a dataset's tables show once (``Run.same``), and as which method."""
    if not same:
        return f"{dataset}: no two methods retrieve exactly alike."
    groups: dict[str, list[str]] = {}
    for method, twin in same.items():
        groups.setdefault(twin, []).append(method)
    parts = [f"{' and '.join(twins)} retrieve{'s' if len(twins) == 1 else ''} exactly what {kept} does"
             for kept, twins in groups.items()]
    return (f"{dataset}: " + "; ".join(parts) + " (the same chunks, and the same hits in the same order for "
            "every question at every k): shown once, under the first.")


def _documents(n: int) -> str:
    return "1 document holds" if n == 1 else f"{n} documents hold"


GRALC_CHAIN = ("gralc-structure", "gralc-kg", "gralc-graph")   # each adds one step to the one before


def gralc_twins_sentence(dataset: Dataset, results: pd.DataFrame, retrievers: dict) -> str:
    """Why gralc-kg or gralc-graph score exactly as the GraLC strategy before them on a dataset (every
    per-question score at every k equal, ``claims.twins``), said only for the causes that hold: gralc-graph's graph
    term is 0 for every chunk when no question mentions a concept of the vocabulary; gralc-kg's infusion
    moves only the token vectors of linked mentions, so few mentions may move no hit. Empty when none is alike."""
    from .claims import twins

    present = [m for m in GRALC_CHAIN if m in set(methods_of(results))]
    linker_of = next((retrievers[m] for m in ("gralc-kg", "gralc-graph") if m in retrievers), None)
    bare = without_attrs(results)                   # the provenance is not copied into the pivot
    scored = bare[bare["k"].notna()]                # the scores at k (latency and the like differ run to run)
    same = twins(scored, present) if len(present) > 1 else {}
    if not same or linker_of is None:
        return ""
    linker = linker_of.linker
    in_docs = sum(len(linker.link(d.text)) for d in dataset.documents)
    asked = sum(1 for q in dataset.questions if linker.concepts_in(q.question))
    parts = []
    if "gralc-graph" in same and asked == 0:
        parts.append(f"gralc-graph scores as {same['gralc-graph']}: none of the {len(dataset.questions)} questions "
                     "mentions a concept of the vocabulary, so its graph term kg_prox is 0 for every chunk and only "
                     "the cosine ranks")
    if "gralc-kg" in same:
        held = "none" if in_docs == 0 else f"only {in_docs}"
        parts.append(f"gralc-kg scores as {same['gralc-kg']}: KG infusion moves only the token vectors of linked "
                     f"concept mentions, the {_documents(len(dataset.documents))} {held}, and here that moves no "
                     "hit scored (every per-question score is equal)")
    return f"{dataset.name}: " + "; ".join(parts) + "." if parts else ""


def alike_sentence(run, results: pd.DataFrame) -> str:
    """``same_sentence`` of one dataset's run (a ``comparison.Run``), followed by ``gralc_twins_sentence`` where it
    says anything."""
    twins = gralc_twins_sentence(run.dataset, results, run.retrievers)
    if twins and not run.same:       # not "no two alike" above two methods that score alike
        return f"{run.dataset.name}: no two methods return the same chunks, but some score the same on every question:\n{twins}"
    return "\n".join(t for t in (same_sentence(run.dataset.name, run.same), twins) if t)


# -- the context budgets ----------------------------------------------------------------------------
def _mean_tokens(results: pd.DataFrame, k: int) -> pd.Series:
    d = results[(results["metric"] == TOKENS) & (results["k"] == k)]
    return d.groupby("method", sort=False)["value"].mean()


def _leader(board: pd.DataFrame, metric: str) -> str:
    row = board[board["metric"] == metric].sort_values("rank").iloc[0]
    return f"{row['method']} {format_ci(row['mean'], row['ci_low'], row['ci_high'])}"


def budget_sentence(results: pd.DataFrame, k: int, budgets: Mapping[str, EqualBudget], board_at_k: pd.DataFrame) -> str:
    """In words, from the run (``budgets``: setting -> ``EqualBudget``, ``comparison.decision_budgets``): how far
    apart the methods' budgets at k are, the smallest budget every method is cut to and why, who leads context recall at k and at the budget (and where the leader at k
    lands), which methods hand over less than the budget (their ranking at the deepest k holds fewer
    tokens) and the context blocks not counted."""
    equal = budgets[SMALLEST]
    budget, deepest_k, board = equal.budget, equal.deepest_k, equal.board
    means = _mean_tokens(results, k)
    lo, hi = means.idxmin(), means.idxmax()
    handed = board[board["metric"] == HANDED].set_index("method")["mean"]
    short = [f"{m} ({v:.0f})" for m, v in handed.items() if v < 0.98 * budget]
    by = rank_metric(board_at_k["metric"])         # context recall, else (gold documents only) document recall
    at_budget = budget_metric(by, budget)
    first_at_k = board_at_k[board_at_k["metric"] == f"{by}@{k}"].sort_values("rank")["method"].iloc[0]
    ranks = board[board["metric"] == at_budget].set_index("method")["rank"]
    text = (f"At k={k} the methods hand over from {means[lo]:.0f} tokens of retrieved text per question ({lo}) to "
            f"{means[hi]:.0f} ({hi}), means over the questions in cl100k_base tokens, so {by}@{k} sets "
            f"lists {means[hi] / max(means[lo], 1):.0f} times apart in length against each other.\nThe fair comparison "
            f"for methods whose hits differ in size is at one budget: every method's ranking at k={deepest_k} cut to "
            f"{budget} tokens (the smallest method's mean budget at k={k}, {equal.method}'s, so every method can "
            f"fill it; the last hit kept is cut at the budget) and scored with the same metrics.\nHighest "
            f"{by}@{k}: {_leader(board_at_k, f'{by}@{k}')}; highest {by} at {budget} "
            f"tokens: {_leader(board, at_budget)}")
    if first_at_k in ranks and ranks[first_at_k] != 1:
        text += f" ({first_at_k} is {int(ranks[first_at_k])} of {len(ranks)} there)"
    text += "."
    if short:
        text += (f"\nHanding over less than {budget} tokens on average (their ranking at k={deepest_k} holds "
                 f"less): {', '.join(short)}.")
    if equal.blocks:
        text += ("\nNot counted in either: the graph-facts block handed over besides the hits, mean tokens at "
                 f"k={k}: " + ", ".join(f"{m} {v:.0f}" for m, v in equal.blocks.items()) + ".")
    return text


# -- the encoder's cut of long chunks ---------------------------------------------------------------
def semantic_truncation_sentence(retrievers: Mapping[str, object]) -> str:
    """For every method that embeds whole semantic chunks (the ``semantic`` chunker, GraLC-RAG's semantic
    strategy): how many of its chunks are longer than the encoder reads and their mean length in word
    pieces (``core.chunking.chunk_stats``), and what that does to its ranking."""
    from ..core.chunking import chunk_stats

    parts, cut, limit, model = [], [], None, None
    for name, r in retrievers.items():
        if "semantic" not in (getattr(r, "chunker", None), getattr(r, "strategy", None)) or not r.chunks:
            continue
        stats = chunk_stats(r.chunks, r.embedder)
        limit, model = r.embedder.max_tokens, r.embedder.model_id
        if stats["over_model_limit"]:
            cut.append(name)
        parts.append(f"{name}: {stats['over_model_limit']} of {stats['chunks']} chunks are longer (mean "
                     f"{stats['mean_tokens']:.0f} word pieces, longest {stats['max_tokens']})")
    if not parts:
        return "No method with semantic chunks ran."
    text = (f"The encoder ({model}) reads at most {limit} word pieces, its two special tokens included, and cuts "
            f"longer texts off silently.\n" + ";\n".join(parts) + ".")
    if not cut:
        return text + "\nNo semantic chunk is cut off here."
    return text + (f"\nA chunk past the limit is embedded from its opening {limit - 2} word pieces only: it is found "
                   "or missed by its opening, while the metrics credit its whole text. Read the rows of "
                   f"{' and '.join(cut)} with that in mind: they rank truncated vectors.")


# -- what the SSG claim counts ----------------------------------------------------------------------
def definition_sentence(max_sentences: int | Mapping[str, int] | None = PAPER_MAX_SENTENCES) -> str:
    """What gold-sentence precision and recall count (``ssg.experiment.gathered_scores``), in words: notebook 03
    prints it beside its results and notebook 10 beside the SSG claim it checks with the same scores."""
    if max_sentences is None:
        max_sentences = SSGConfig().max_sentences
    caps = {"default": SSGConfig().max_sentences, **max_sentences} if isinstance(max_sentences, Mapping) \
        else {"default": max_sentences}
    others = ", ".join(f"{n} for {s} questions" for s, n in caps.items() if s != "default")
    cap = f"{caps['default']} sentences" + (f"; {others}" if others else "")
    return ("Gold-sentence recall = gold sentences among every sentence the traversal gathered / gold sentences; "
            "gold-sentence precision = gathered sentences that are gold / sentences gathered (a sentence is gold "
            "when its span overlaps a gold sentence, no LLM).\nEvery gathered sentence counts, up to the "
            f"traversal's cap ({cap}) or its own stopping rule, never only its first k: the paper scores the "
            "whole retrieved context.")
