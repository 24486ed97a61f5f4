"""One SSG walk told step by step, for a reader learning the seven algorithms: what each looks at
and when it stops (``guide``), and one traversal's candidates with their scores at every step, the
choice, the gold sentences it brought and the comparison that stopped it (``trace_walk``).

Nothing here decides anything: the algorithms record their scored candidates and their stopping
comparison (``algorithms.Step.scored``, ``algorithms.StopCheck``) and this module lays them out.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import pandas as pd

from ...core.types import Document, Question
from ...evaluation.metrics import context_matches, locate_contexts
from .algorithms import (BASIC_MIN_SENTENCES, EARLY_STOP, EXHAUSTED, LLM_CANDIDATES, MAX_SENTENCES, NO_CANDIDATES,
                         NOT_INCREASING, REASONER_STOP, TRAVERSAL_MIN_SENTENCES, TraversalResult, run_algorithm)
from .experiment import cap_for
from .graph import SimilarityGraph
from .method import sentence_chunks
from .query import QueryContext

# what each algorithm's step score is (the number its choice maximises)
SCORE_NAMES = {
    "basic_retrieval": "query similarity",
    "query_traversal": "query similarity",
    "ssg_traversal": "similarity to the current window",
    "triangulation_average": "mean of sim(q, current), sim(q, candidate), sim(current, candidate)",
    "triangulation_geometric_3d": "minus the distance from q to the triangle's centroid (3-D PCA)",
    "triangulation_fulldim": "minus the distance from q to the triangle's centroid (full space)",
    "llm_guided_traversal": "query similarity (shown to the chooser, which picks)",
}


def guide() -> pd.DataFrame:
    """The seven algorithms as the SSG paper defines them: what each looks at when it moves, and when it
    stops (the minimum counts are the code's constants, so the table cannot drift from the code)."""
    greedy_stop = (f"once {TRAVERSAL_MIN_SENTENCES} sentences are gathered, when some gathered sentence "
                   "scores above every candidate (the same score, with the sentence in the candidate's place); "
                   "or max_sentences")
    rows = [
        ("basic_retrieval", "no graph: windows in order of query similarity (the control, plain RAG)",
         f"once {BASIC_MIN_SENTENCES} sentences are gathered, when the best gathered sentence is more "
         "query-similar than the next window; or max_sentences"),
        ("query_traversal", "from the anchor, the current window's edges; moves to the unvisited neighbour "
         "most similar to the query", greedy_stop),
        ("ssg_traversal", "the current window's edges, skipping windows that share a gathered sentence; moves "
         "to the neighbour most similar to the CURRENT window (the query only picks the anchor)",
         "when this hop's similarity is not above the previous hop's (exploration potential falls); when no "
         "candidate is left; or max_sentences"),
        ("triangulation_average", "the triangle (query, current, candidate): moves to the candidate with the "
         "highest mean of its three similarities", greedy_stop),
        ("triangulation_geometric_3d", "the same triangle in the 3-D PCA space: moves to the candidate whose "
         "triangle's centroid lies closest to the query", greedy_stop + " (the paper states none; ours)"),
        ("triangulation_fulldim", "as triangulation_geometric_3d, in the full embedding space",
         greedy_stop + " (the paper states none; ours)"),
        ("llm_guided_traversal", f"the {LLM_CANDIDATES} unvisited neighbours most similar to the query, shown "
         "to an LLM with what is gathered; it picks one (offline: relevance minus redundancy)",
         "when the LLM says stop (offline: no candidate adds new relevant content); max_sentences only as a "
         "safety cap"),
    ]
    table = pd.DataFrame(rows, columns=["algorithm", "looks at, moves to", "stops when"]).set_index("algorithm")
    return table.assign(**{"step score": [SCORE_NAMES[a] for a in table.index]})


def gold_sentence_ids(graph: SimilarityGraph, question: Question, documents: Sequence[Document],
                      min_overlap: float = 0.5) -> set[str]:
    """The graph's sentences that are gold for ``question``: those whose span overlaps one of its gold
    contexts (the rule gold-sentence precision uses, ``experiment.gathered_scores``)."""
    golds = locate_contexts(question, {d.id: d for d in documents})
    chunks = sentence_chunks(graph, documents)
    return {c.id for c, m in zip(chunks, context_matches(chunks, golds, min_overlap)) if m}


def stop_sentence(result: TraversalResult) -> str:
    """The comparison that ended the walk, in words and numbers."""
    stop = result.stop
    if stop is None:
        raise ValueError(f"{result.algorithm}: the result records no stopping comparison")
    if stop.rule == EARLY_STOP:
        least = BASIC_MIN_SENTENCES if result.algorithm == "basic_retrieval" else TRAVERSAL_MIN_SENTENCES
        return (f"stopped: {stop.gathered} sentences gathered (at least {least}) and the gathered sentence "
                f"{stop.value_of} scores {stop.value:.3f}, above the best candidate {stop.against_of} "
                f"({stop.against:.3f}): nothing left to take beats what is already gathered.")
    if stop.rule == NOT_INCREASING:
        return (f"stopped: the best hop from {stop.against_of} is {stop.value_of} at {stop.value:.3f}, not above "
                f"the previous hop's {stop.against:.3f} (exploration potential falls).")
    if stop.rule == MAX_SENTENCES:
        return f"stopped: {stop.gathered} sentences gathered, the cap (max_sentences)."
    if stop.rule == NO_CANDIDATES:
        return f"stopped: no unvisited neighbour left to take ({stop.gathered} sentences gathered)."
    if stop.rule == REASONER_STOP:
        return f"stopped: the chooser said stop ({stop.note or 'no reason given'}; {stop.gathered} gathered)."
    if stop.rule == EXHAUSTED:
        return f"stopped: every window taken ({stop.gathered} sentences gathered)."
    raise ValueError(f"unknown stop rule {stop.rule!r}")


def _stop_short(result: TraversalResult) -> str:
    """The stop as the step table's last decision (``stop_sentence`` says it in full)."""
    stop = result.stop
    if stop.rule == EARLY_STOP:
        return (f"stop: gathered sentence {stop.value_of} scores {stop.value:.3f} > best candidate "
                f"{stop.against:.3f} ({stop.gathered} gathered)")
    if stop.rule == NOT_INCREASING:
        return f"stop: best hop {stop.value:.3f} <= previous hop {stop.against:.3f}"
    return stop_sentence(result)


def _gold_in(graph: SimilarityGraph, window: str, gold: set[str]) -> str:
    ids = graph.sentences_of(window)
    return f"{sum(s in gold for s in ids)}/{len(ids)}"


def steps_table(graph: SimilarityGraph, result: TraversalResult, gold: set[str], shown: int = 5) -> pd.DataFrame:
    """One row per candidate considered (the ``shown`` best of each step): the step, the window the walk
    stood on, the candidate, its score, how many of its sentences are gold, and the decision (take it,
    with the sentences it added; or the stop)."""
    rows = []
    gathered = 0
    for i, step in enumerate(result.steps):
        at = "" if i == 0 or result.algorithm == "basic_retrieval" else result.path[i - 1]
        gathered += len(step.added)
        new_gold = sum(s in gold for s in step.added)
        took = f"take: +{len(step.added)} sentences ({new_gold} gold), {gathered} gathered"
        if i == 0 and not step.scored:
            rows.append({"step": 0, "at": "", "candidate": step.window, "score": step.score,
                         "gold in window": _gold_in(graph, step.window, gold),
                         "decision": "anchor (the window most similar to the query); " + took})
            continue
        listed = step.scored[:shown]
        if step.window not in [c for c, _ in listed]:   # the chooser may take one below the shown best
            listed = [*listed, next(p for p in step.scored if p[0] == step.window)]
        rank = 1 + [c for c, _ in step.scored].index(step.window)
        for c, score in listed:
            rows.append({"step": i, "at": at, "candidate": c, "score": score,
                         "gold in window": _gold_in(graph, c, gold),
                         "decision": f"{took.replace('take', f'take (rank {rank} of {step.candidates})', 1)}"
                                     + (" (fallback)" if step.fallback else "") if c == step.window else ""})
    stop = result.stop
    at = result.path[-1] if result.path and result.algorithm != "basic_retrieval" else ""
    candidates = stop.scored[:shown] if stop is not None else []
    if candidates:
        for j, (c, score) in enumerate(candidates):
            rows.append({"step": len(result.steps), "at": at, "candidate": c, "score": score,
                         "gold in window": _gold_in(graph, c, gold),
                         "decision": _stop_short(result) if j == 0 else ""})
    else:
        rows.append({"step": len(result.steps), "at": at, "candidate": "", "score": float("nan"),
                     "gold in window": "", "decision": stop_sentence(result)})
    return pd.DataFrame(rows).set_index("step")


def gathered_table(graph: SimilarityGraph, query: QueryContext, result: TraversalResult,
                   gold: set[str]) -> pd.DataFrame:
    """Every gathered sentence in order: the step that brought it, its query similarity, whether it is
    gold (✓), and its text; then the gold sentences the walk missed (step blank)."""
    rows = [{"sentence": s, "step": i, "query similarity": query.sentence_sim(s), "gold": "✓" if s in gold else "",
             "text": graph.sentence(s).text} for i, step in enumerate(result.steps) for s in step.added]
    taken = set(result.sentences)
    rows += [{"sentence": s, "step": None, "query similarity": query.sentence_sim(s), "gold": "✓ missed",
              "text": graph.sentence(s).text} for s in graph.sentence_ids if s in gold and s not in taken]
    return pd.DataFrame(rows).astype({"step": "Int64"}).set_index("sentence")


@dataclass
class Walk:
    """One traversal laid out: its result, the step table, the gathered sentences and the stop in words; the
    query it started from and the gold sentence ids it was marked against."""

    result: TraversalResult
    steps: pd.DataFrame
    gathered: pd.DataFrame
    stop: str
    score_name: str
    query: QueryContext
    gold: set[str]

    def sentence(self) -> str:
        """How the walk went, in one sentence (counts from the tables)."""
        golds = self.gathered["gold"]
        got, missed = int((golds == "✓").sum()), int((golds == "✓ missed").sum())
        return (f"{self.result.algorithm} took {len(self.result.path)} windows ({' → '.join(self.result.path)}),\n"
                f"gathered {len(self.result.sentences)} sentences of which {got} are gold ({missed} gold "
                f"sentences missed); step score: {self.score_name}; {self.stop}")


def trace_walk(graph: SimilarityGraph, question: Question, documents: Sequence[Document], embedder, algorithm: str,
               max_sentences: int | Mapping[str, int], reasoner=None, shown: int = 5) -> Walk:
    """Run ``algorithm`` on ``question`` (its text embedded, capped as the runs cap it: ``experiment.cap_for``) and
    lay its walk out step by step against its gold sentences (``gold_sentence_ids``)."""
    query = QueryContext(graph, question.question, embedder.encode_one(question.question))
    gold = gold_sentence_ids(graph, question, documents)
    result = run_algorithm(algorithm, graph, query, cap_for(question, max_sentences), reasoner)
    return Walk(result, steps_table(graph, result, gold, shown), gathered_table(graph, query, result, gold),
                stop_sentence(result), SCORE_NAMES[algorithm], query, gold)
