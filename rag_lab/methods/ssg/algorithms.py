"""The seven retrieval algorithms of the SSG-traversal paper, one function each, one signature:

    algorithm(graph, query, max_sentences, reasoner=None) -> TraversalResult

``query`` is a ``QueryContext`` (similarities to every node computed once). Every algorithm
except ``basic_retrieval`` starts at the anchor (the window most similar to the query), moves
only along the current window's own ``intra``/``inter`` edges, never revisits a window, and
gathers the sentences of each window it visits, dropping sentences already gathered. When a
window brings more new sentences than ``max_sentences`` leaves room for, the most
query-similar of them are kept. Ties go to the window listed first in the graph. Traversals hop
between windows only; sentence nodes (children of windows) enter through the stopping rules,
which compare the gathered sentences with the candidate windows, as the paper's rules do. Each
Every stop rule compares two scores at the stated precision (``ties.beats``: a lead under
``ties.TIE_TOL`` is a tie, which beats nothing; a near-tie is noted).
``Step`` keeps every candidate with its score and the result keeps the comparison that stopped it
(``StopCheck``), so a walk can be told step by step (``walkthrough.py``).

Stopping rules (the paper's, with its minimum counts):

- basic_retrieval: ranked windows, no traversal; stop at max_sentences or, once 5 sentences are
  gathered, when the best gathered sentence is more query-similar than the next window.
- query_traversal: hop to the unvisited neighbour most similar to the query; once 8 sentences
  are gathered, stop when the best gathered sentence beats every candidate.
- ssg_traversal: hop to the neighbour most similar to the CURRENT window, skipping windows that
  share a sentence with what is gathered; stop when that hop's similarity is not above the
  previous hop's (exploration potential falls) or at max_sentences.
- triangulation_average: score = mean of sim(q, c_t), sim(q, n), sim(c_t, n); the same score with
  a gathered sentence in place of n decides the early stop (after 8 sentences). The paper
  approximates sim(c_t, s) for a sentence of another window from cached scores; we have both
  vectors, so it is the exact cosine, computed once and cached on the graph.
- triangulation_geometric_3d / triangulation_fulldim: hop to the neighbour whose triangle
  (q, c_t, n) has its centroid closest to q, in the graph's 3-D PCA space / in the full space.
  The paper states no separate stopping rule for these two; they use triangulation_average's
  (after 8 sentences, stop when a gathered sentence's triangle beats every candidate's) with the
  centroid distance as the score, plus max_sentences. The PCA is
  fitted once on the window vectors when the graph is built and the query is projected with it
  (the paper fits it on the query and the windows together; one point changes it negligibly and
  fitting once keeps the 3-D plot and the traversal in the same space).
- llm_guided_traversal: the five most query-similar unvisited neighbours go to
  ``reasoner.choose_next`` (the paper's prompt: query, gathered sentences, candidates with
  similarity and preview, JSON reply ``{"choice": 1-5 | "stop"}``); it picks one or stops. An
  invalid reply falls back to the most query-similar candidate and is counted. ``max_sentences``
  stays a safety cap (the paper lets the LLM alone decide when to stop). With the offline
  reasoner the choice is relevance minus redundancy against what is gathered, with its own stop
  rule (``reasoning.offline.marginal_relevance_choice``), so the row is not query_traversal again.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ...core import ties

from .graph import SimilarityGraph
from .query import QueryContext

BASIC_MIN_SENTENCES = 5        # basic_retrieval's early stop needs at least this many sentences
TRAVERSAL_MIN_SENTENCES = 8    # query_traversal and the triangulations: at least this many
LLM_CANDIDATES = 5             # candidates shown to the reasoner per hop (the paper's prompt lists five)

# stop reasons
MAX_SENTENCES = "max_sentences"
EARLY_STOP = "sentence_beats_candidates"
NO_CANDIDATES = "no_unvisited_neighbours"
NOT_INCREASING = "hop_similarity_not_increasing"
REASONER_STOP = "reasoner_stop"
EXHAUSTED = "all_windows_taken"


@dataclass
class Step:
    """One move: the window taken, the score that chose it, the sentences it added, how many candidates
    there were, and every candidate with its score (``scored``: what the choice was made from; the
    anchor's is empty; basic_retrieval's is the window taken, its ranking being the whole corpus)."""

    window: str
    score: float
    added: list[str]
    candidates: int
    fallback: bool = False
    scored: list[tuple[str, float]] = field(default_factory=list)


@dataclass
class StopCheck:
    """The comparison that ended a walk, in numbers: what it set against what (``walkthrough.py`` says it
    in words). ``scored``: the candidates left at the stop with their scores (empty when none were)."""

    rule: str
    gathered: int
    value: float = float("nan")          # the stopping side: best gathered sentence / this hop's similarity
    value_of: str = ""                   # ... and the node it belongs to
    against: float = float("nan")        # the continuing side: best candidate / previous hop's similarity
    against_of: str = ""
    scored: list[tuple[str, float]] = field(default_factory=list)
    note: str = ""                       # the reasoner's reason, for llm_guided_traversal


@dataclass
class TraversalResult:
    algorithm: str
    sentences: list[str]                  # sentence ids in the order gathered
    path: list[str]                       # windows visited, anchor (or top-ranked window) first
    steps: list[Step] = field(default_factory=list)
    stop_reason: str = ""
    llm_choices: int = 0
    llm_fallbacks: int = 0
    stop: StopCheck | None = None


class Gatherer:
    """Sentences gathered so far: de-duplicated, capped at ``max_sentences``."""

    def __init__(self, graph: SimilarityGraph, query: QueryContext, max_sentences: int):
        if max_sentences <= 0:
            raise ValueError(f"max_sentences must be positive, got {max_sentences}")
        self.graph, self.query, self.max = graph, query, max_sentences
        self.ids: list[str] = []
        self._seen: set[str] = set()

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def full(self) -> bool:
        return len(self.ids) >= self.max

    def new_in(self, wid: str) -> list[str]:
        return [s for s in self.graph.sentences_of(wid) if s not in self._seen]

    def overlaps(self, wid: str) -> bool:
        return any(s in self._seen for s in self.graph.sentences_of(wid))

    def add_window(self, wid: str) -> list[str]:
        new = self.new_in(wid)
        room = self.max - len(self.ids)
        if len(new) > room:
            keep = {new[i] for i in ties.order([self.query.sentence_sim(s) for s in new],
                                               keys=[self.graph.sentence_row[s] for s in new], k=room,
                                               what="SSG sentence cap", names=new)}
            new = [s for s in new if s in keep]
        self.ids += new
        self._seen.update(new)
        return new

    def best_query_sim(self) -> float:
        return max(self.query.sentence_sim(s) for s in self.ids)


def _scored(candidates: list[str], score: Callable[[str], float], graph: SimilarityGraph) -> list[tuple[str, float]]:
    """Every candidate with its score, the choice first: the best score, earliest window on ties at the
    stated precision (``ties.best``, which notes near-ties); the others follow by score, for the record."""
    scores = [float(score(c)) for c in candidates]
    rows = [graph.window_row[c] for c in candidates]
    i = ties.best(scores, keys=rows, what="SSG next window", names=candidates)
    rest = sorted((j for j in range(len(candidates)) if j != i), key=lambda j: (-scores[j], rows[j]))
    return [(candidates[j], scores[j]) for j in (i, *rest)]


def _start(name: str, graph: SimilarityGraph, query: QueryContext, max_sentences: int):
    gathered = Gatherer(graph, query, max_sentences)
    anchor = query.anchor()
    result = TraversalResult(name, gathered.ids, [anchor])
    result.steps.append(Step(anchor, query.window_sim(anchor), gathered.add_window(anchor), len(graph.window_ids)))
    return gathered, anchor, result


def _unvisited(graph: SimilarityGraph, wid: str, visited: set[str]) -> list[str]:
    return [n for n, _ in graph.neighbours(wid) if n not in visited]


def _greedy(name: str, graph: SimilarityGraph, query: QueryContext, max_sentences: int,
            chunk_score: Callable[[str, str], float], sentence_score: Callable[[str, str], float]) -> TraversalResult:
    """Shared loop of query_traversal and the triangulations: from the anchor, hop to the unvisited
    neighbour with the highest ``chunk_score(current, n)``; once TRAVERSAL_MIN_SENTENCES are
    gathered, stop when some gathered sentence has ``sentence_score(current, s)`` above every candidate."""
    gathered, current, result = _start(name, graph, query, max_sentences)
    visited = {current}
    while True:
        if gathered.full:
            result.stop_reason = MAX_SENTENCES
            break
        candidates = _unvisited(graph, current, visited)
        if not candidates:
            result.stop_reason = NO_CANDIDATES
            break
        scored = _scored(candidates, lambda n: chunk_score(current, n), graph)
        nxt, score = scored[0]
        if len(gathered) >= TRAVERSAL_MIN_SENTENCES:
            best_s, best_value = max(((s, sentence_score(current, s)) for s in gathered.ids), key=lambda p: p[1])
            if ties.beats(best_value, score, what="SSG stop rule", name=f"sentence {best_s} vs window {nxt}"):
                result.stop_reason = EARLY_STOP
                result.stop = StopCheck(EARLY_STOP, len(gathered), best_value, best_s, score, nxt, scored)
                break
        visited.add(nxt)
        result.path.append(nxt)
        result.steps.append(Step(nxt, score, gathered.add_window(nxt), len(candidates), scored=scored))
        current = nxt
    if result.stop is None:
        result.stop = StopCheck(result.stop_reason, len(gathered))
    return result


# -- 1. basic_retrieval ------------------------------------------------------------------------
def basic_retrieval(graph: SimilarityGraph, query: QueryContext, max_sentences: int,
                    reasoner=None) -> TraversalResult:
    """Plain semantic RAG as the control: windows in order of query similarity, no traversal."""
    gathered = Gatherer(graph, query, max_sentences)
    result = TraversalResult("basic_retrieval", gathered.ids, [])
    ranking = ties.order(query.window_sims, what="SSG window ranking", names=graph.window_ids)
    for row in ranking:
        wid = graph.window_ids[row]
        if gathered.full:
            result.stop_reason = MAX_SENTENCES
            break
        if not gathered.new_in(wid):
            continue  # adds nothing: not a "next chunk option"
        if len(gathered) >= BASIC_MIN_SENTENCES and ties.beats(gathered.best_query_sim(), query.window_sim(wid),
                                                               what="SSG stop rule", name=f"gathered vs window {wid}"):
            result.stop_reason = EARLY_STOP
            best = max(gathered.ids, key=query.sentence_sim)
            result.stop = StopCheck(EARLY_STOP, len(gathered), query.sentence_sim(best), best,
                                    query.window_sim(wid), wid, [(wid, query.window_sim(wid))])
            break
        result.path.append(wid)
        result.steps.append(Step(wid, query.window_sim(wid), gathered.add_window(wid), len(graph.window_ids),
                                 scored=[(wid, query.window_sim(wid))]))
    else:
        result.stop_reason = MAX_SENTENCES if gathered.full else EXHAUSTED
    if result.stop is None:
        result.stop = StopCheck(result.stop_reason, len(gathered))
    return result


# -- 2. query_traversal ------------------------------------------------------------------------
def query_traversal(graph: SimilarityGraph, query: QueryContext, max_sentences: int,
                    reasoner=None) -> TraversalResult:
    """Always hop to the neighbour most similar to the query."""
    return _greedy("query_traversal", graph, query, max_sentences,
                   lambda c, n: query.window_sim(n), lambda c, s: query.sentence_sim(s))


# -- 3. ssg_traversal --------------------------------------------------------------------------
def ssg_traversal(graph: SimilarityGraph, query: QueryContext, max_sentences: int,
                  reasoner=None) -> TraversalResult:
    """Follow local similarity (current window -> neighbour), ignoring the query after the anchor."""
    gathered, current, result = _start("ssg_traversal", graph, query, max_sentences)
    visited = {current}
    previous: float | None = None
    while True:
        if gathered.full:
            result.stop_reason = MAX_SENTENCES
            break
        candidates = [n for n in _unvisited(graph, current, visited) if not gathered.overlaps(n)]
        if not candidates:
            result.stop_reason = NO_CANDIDATES
            break
        scored = _scored(candidates, lambda n: graph.similarity(current, n), graph)
        nxt, sim = scored[0]
        if previous is not None and not ties.beats(sim, previous, what="SSG stop rule (not increasing)",
                                                   name=f"window {nxt} vs {current}"):
            result.stop_reason = NOT_INCREASING
            result.stop = StopCheck(NOT_INCREASING, len(gathered), sim, nxt, previous, current, scored)
            break
        visited.add(nxt)
        result.path.append(nxt)
        result.steps.append(Step(nxt, sim, gathered.add_window(nxt), len(candidates), scored=scored))
        current, previous = nxt, sim
    if result.stop is None:
        result.stop = StopCheck(result.stop_reason, len(gathered))
    return result


# -- 4. triangulation_average ------------------------------------------------------------------
def triangulation_average(graph: SimilarityGraph, query: QueryContext, max_sentences: int,
                          reasoner=None) -> TraversalResult:
    """Hop to the neighbour with the best mean of the three similarities of the triangle (q, c_t, n)."""
    def triangle(c: str, n: str) -> float:
        return (query.window_sim(c) + query.sim(n) + graph.similarity(c, n)) / 3.0
    return _greedy("triangulation_average", graph, query, max_sentences, triangle, triangle)


# -- 5./6. geometric triangulation ---------------------------------------------------------------
def _centroid_closeness(q: np.ndarray, c: np.ndarray, n: np.ndarray) -> float:
    """Minus the distance from q to the centroid of the triangle (q, c, n): higher is closer."""
    return -float(np.linalg.norm((q + c + n) / 3.0 - q))


def triangulation_geometric_3d(graph: SimilarityGraph, query: QueryContext,
                               max_sentences: int, reasoner=None) -> TraversalResult:
    """Triangle centroids in the 3-D PCA space of the window vectors."""
    def coords(node: str) -> np.ndarray:
        row = graph.window_row.get(node)
        return graph.window_coords3[row] if row is not None else graph.sentence_coords3[graph.sentence_row[node]]

    def score(c: str, n: str) -> float:
        return _centroid_closeness(query.coords3, coords(c), coords(n))
    return _greedy("triangulation_geometric_3d", graph, query, max_sentences, score, score)


def triangulation_fulldim(graph: SimilarityGraph, query: QueryContext,
                          max_sentences: int, reasoner=None) -> TraversalResult:
    """Triangle centroids in the full embedding space."""
    def score(c: str, n: str) -> float:
        return _centroid_closeness(query.vector, graph.vector(c), graph.vector(n))
    return _greedy("triangulation_fulldim", graph, query, max_sentences, score, score)


# -- 7. llm_guided_traversal -------------------------------------------------------------------
def llm_guided_traversal(graph: SimilarityGraph, query: QueryContext, max_sentences: int,
                         reasoner=None) -> TraversalResult:
    """query_traversal with the choice of the next window (or stopping) handed to the reasoner."""
    if reasoner is None:
        raise ValueError("llm_guided_traversal needs a reasoner (rag_lab.reasoning.get_reasoner(...))")
    gathered, current, result = _start("llm_guided_traversal", graph, query, max_sentences)
    visited = {current}
    while True:
        if gathered.full:
            result.stop_reason = MAX_SENTENCES
            break
        unvisited = list(_unvisited(graph, current, visited))
        ranked = [unvisited[i] for i in ties.order([query.window_sim(n) for n in unvisited],
                                                   keys=[graph.window_row[n] for n in unvisited], k=LLM_CANDIDATES,
                                                   what="SSG candidates shown", names=unvisited)]
        if not ranked:
            result.stop_reason = NO_CANDIDATES
            break
        sims = [query.window_sim(n) for n in ranked]
        choice = reasoner.choose_next(query.text, [graph.sentence(s).text for s in gathered.ids],
                                      [graph.window(n).text for n in ranked], sims, ranked)
        result.llm_choices += 1
        scored = list(zip(ranked, sims))
        if getattr(choice, "action", None) == "stop":
            result.stop_reason = REASONER_STOP
            result.stop = StopCheck(REASONER_STOP, len(gathered), scored=scored,
                                    note=str(getattr(choice, "reason", "") or ""))
            break
        index = getattr(choice, "candidate", None)
        valid = getattr(choice, "action", None) == "next" and isinstance(index, int) and 0 <= index < len(ranked)
        fallback = not valid or bool(getattr(choice, "fallback", False))
        if not valid:
            index = 0  # the most query-similar candidate keeps the traversal moving
        result.llm_fallbacks += int(fallback)
        nxt = ranked[index]
        visited.add(nxt)
        result.path.append(nxt)
        result.steps.append(Step(nxt, sims[index], gathered.add_window(nxt), len(ranked), fallback, scored))
        current = nxt
    if result.stop is None:
        result.stop = StopCheck(result.stop_reason, len(gathered))
    return result


ALGORITHMS: dict[str, Callable[..., TraversalResult]] = {
    f.__name__: f for f in (basic_retrieval, query_traversal, ssg_traversal, triangulation_average,
                            triangulation_geometric_3d, triangulation_fulldim, llm_guided_traversal)}


def run_algorithm(name: str, graph: SimilarityGraph, query: QueryContext, max_sentences: int,
                  reasoner=None) -> TraversalResult:
    if name not in ALGORITHMS:
        raise ValueError(f"unknown SSG algorithm {name!r}; expected one of {', '.join(ALGORITHMS)}")
    return ALGORITHMS[name](graph, query, max_sentences, reasoner)
