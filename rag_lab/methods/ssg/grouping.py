"""The SSG paper's context-grouping strategies: gold sentence groups to write questions from.

The paper builds its benchmark by walking the graph to pick 10-15 sentences, then has an LLM
write a question for them; walking the graph (rather than drawing random chunks) makes the
questions need the kind of multi-hop retrieval the traversals do. Each strategy here takes the
graph and a ``random.Random`` and returns a ``GoldGroup``:

- ``intra_document``: from a random window, repeatedly move to the window of the SAME document
  most similar to the current one that holds no sentence already taken (the document's own
  similarity matrix, not only the sparse edges), until ``max_sentences``.
- ``theme_based``: from a random window, hop only across documents: among the current window's
  inter-document neighbours (preferring documents the current one has a theme bridge to; any
  inter-document neighbour when ``fallback_to_inter_document``), take the one whose inherited
  themes match best (cosine of the documents' theme embeddings plus the Jaccard overlap of the
  theme phrases; ties by window similarity), until ``max_sentences``.
- ``sequential_multi_hop``: "read" ``num_paragraph_sentences`` consecutive sentences from a random
  window, forwards or backwards (towards the neighbouring window more similar to the start), then
  make a theme hop (as above, from a window inside the passage, else from any window read so far)
  into a document not yet read, and read again;
  ``num_reading_hops`` readings joined by at most ``num_cross_doc_hops`` hops (3 x 5 = 15 sentences).
- ``random_grouping``: the plain baseline (the paper's DeepEval-native grouping): ``chunks_per_group``
  random windows, from different documents when ``ensure_document_diversity``; sentences
  de-duplicated, at most ``max_sentences``. (DeepEval's LLM quality filter is not reproduced.)

A group never takes a window twice; sentences are de-duplicated and kept in the order taken.
"""
from __future__ import annotations

from ...core import ties

import random
from dataclasses import asdict, dataclass, field
from typing import Callable

from ...core.types import Question
from .graph import SimilarityGraph


@dataclass
class GoldGroup:
    strategy: str
    sentence_ids: list[str] = field(default_factory=list)
    path: list[str] = field(default_factory=list)     # windows taken, in order
    params: dict = field(default_factory=dict)

    def doc_ids(self, graph: SimilarityGraph) -> list[str]:
        return list(dict.fromkeys(graph.sentence(s).doc_id for s in self.sentence_ids))

    def texts(self, graph: SimilarityGraph) -> list[str]:
        return [graph.sentence(s).text for s in self.sentence_ids]

    def as_meta(self) -> dict:
        return asdict(self)


class _Taken:
    """Ordered, de-duplicated sentence ids with a cap (extra sentences of the last window are cut, in order)."""

    def __init__(self, graph: SimilarityGraph, cap: int):
        if cap <= 0:
            raise ValueError(f"max_sentences must be positive, got {cap}")
        self.graph, self.cap, self.ids, self.seen = graph, cap, [], set()

    @property
    def full(self) -> bool:
        return len(self.ids) >= self.cap

    def overlaps(self, wid: str) -> bool:
        return any(s in self.seen for s in self.graph.sentences_of(wid))

    def add(self, sentence_ids) -> None:
        for s in sentence_ids:
            if not self.full and s not in self.seen:
                self.ids.append(s)
                self.seen.add(s)


def theme_score(graph: SimilarityGraph, doc_a: str, doc_b: str) -> float:
    """How well two documents' themes match: theme-embedding cosine + Jaccard overlap of the phrases."""
    a = {t.casefold() for t in graph.themes(doc_a)}
    b = {t.casefold() for t in graph.themes(doc_b)}
    jaccard = len(a & b) / len(a | b) if a | b else 0.0
    return graph.theme_similarity(doc_a, doc_b) + jaccard


def theme_hop(graph: SimilarityGraph, sources: list[str], visited: set[str], taken: _Taken,
              exclude_docs: set[str], fallback_to_inter_document: bool = True) -> str | None:
    """The best theme-matched inter-document neighbour of any window in ``sources`` (or None)."""
    pool = []
    for src in sources:
        doc = graph.window(src).doc_id
        for n, sim in graph.neighbours(src):
            nd = graph.window(n).doc_id
            if nd != doc and nd not in exclude_docs and n not in visited and not taken.overlaps(n):
                pool.append((src, n, sim))
    if not pool:
        return None
    bridged = [p for p in pool if graph.window(p[1]).doc_id in graph.bridged_docs(graph.window(p[0]).doc_id)]
    if not bridged and not fallback_to_inter_document:
        return None
    candidates = bridged or pool
    best = max(candidates, key=lambda p: (theme_score(graph, graph.window(p[0]).doc_id, graph.window(p[1]).doc_id),
                                          p[2], -graph.window_row[p[1]]))
    return best[1]


def intra_document(graph: SimilarityGraph, rng: random.Random, max_sentences: int = 10) -> GoldGroup:
    current = rng.choice(graph.window_ids)
    taken, visited = _Taken(graph, max_sentences), {current}
    group = GoldGroup("intra_document", taken.ids, [current], {"max_sentences": max_sentences})
    taken.add(graph.sentences_of(current))
    while not taken.full:
        doc = graph.window(current).doc_id
        candidates = [w for w in graph.windows_of(doc) if w not in visited and not taken.overlaps(w)]
        if not candidates:
            break
        current = candidates[ties.best([graph.similarity(current, w) for w in candidates],
                                       keys=[graph.window_row[w] for w in candidates], what="")]
        visited.add(current)
        group.path.append(current)
        taken.add(graph.sentences_of(current))
    return group


def theme_based(graph: SimilarityGraph, rng: random.Random, max_sentences: int = 10,
                fallback_to_inter_document: bool = True) -> GoldGroup:
    current = rng.choice(graph.window_ids)
    taken, visited = _Taken(graph, max_sentences), {current}
    group = GoldGroup("theme_based", taken.ids, [current],
                      {"max_sentences": max_sentences, "fallback_to_inter_document": fallback_to_inter_document})
    taken.add(graph.sentences_of(current))
    while not taken.full:
        nxt = theme_hop(graph, [current], visited, taken, set(), fallback_to_inter_document)
        if nxt is None:
            break
        current = nxt
        visited.add(current)
        group.path.append(current)
        taken.add(graph.sentences_of(current))
    return group


def read_passage(graph: SimilarityGraph, start: str, n_sentences: int) -> tuple[list[str], list[str]]:
    """``n_sentences`` consecutive sentences around the start window, in document order: the window's
    own sentences, extended in the direction of the neighbouring window more similar to it (the
    other way once the document ends). Returns (sentence ids, windows lying inside the passage)."""
    w = graph.window(start)
    doc_windows = graph.windows_of(w.doc_id)
    doc_sentences = [s.id for s in graph.sentences if s.doc_id == w.doc_id]
    before = doc_windows[w.index - 1] if w.index > 0 else None
    after = doc_windows[w.index + 1] if w.index + 1 < len(doc_windows) else None
    forwards = after is not None and (before is None or not ties.beats(graph.similarity(start, before),
                                                                       graph.similarity(start, after), what=""))
    lo = doc_sentences.index(w.sentence_ids[0])
    hi = doc_sentences.index(w.sentence_ids[-1]) + 1          # passage = doc_sentences[lo:hi]
    if hi - lo > n_sentences:                                 # window longer than a passage
        lo, hi = (lo, lo + n_sentences) if forwards else (hi - n_sentences, hi)
    for direction in ((1, -1) if forwards else (-1, 1)):
        while hi - lo < n_sentences:
            if direction == 1 and hi < len(doc_sentences):
                hi += 1
            elif direction == -1 and lo > 0:
                lo -= 1
            else:
                break
    ids = doc_sentences[lo:hi]
    inside = [x for x in doc_windows if set(graph.sentences_of(x)) <= set(ids)]
    return ids, ([start] + [x for x in inside if x != start])


def sequential_multi_hop(graph: SimilarityGraph, rng: random.Random, num_reading_hops: int = 3,
                         num_paragraph_sentences: int = 5, num_cross_doc_hops: int = 3,
                         fallback_to_inter_document: bool = True) -> GoldGroup:
    if num_reading_hops <= 0 or num_paragraph_sentences <= 0 or num_cross_doc_hops < 0:
        raise ValueError("sequential_multi_hop: need num_reading_hops > 0, num_paragraph_sentences > 0, "
                         f"num_cross_doc_hops >= 0; got {num_reading_hops}, {num_paragraph_sentences}, "
                         f"{num_cross_doc_hops}")
    cap = num_reading_hops * num_paragraph_sentences
    taken, visited = _Taken(graph, cap), set()
    group = GoldGroup("sequential_multi_hop", taken.ids, [],
                      {"num_reading_hops": num_reading_hops, "num_paragraph_sentences": num_paragraph_sentences,
                       "num_cross_doc_hops": num_cross_doc_hops, "readings": []})
    current, docs_read, hops = rng.choice(graph.window_ids), set(), 0
    for reading in range(num_reading_hops):
        sentences, passed = read_passage(graph, current, num_paragraph_sentences)
        visited.update(passed)
        group.path += [w for w in passed if w not in group.path]
        taken.add(sentences)
        group.params["readings"].append(sentences)
        docs_read.add(graph.window(current).doc_id)
        if reading == num_reading_hops - 1 or hops >= num_cross_doc_hops:
            break
        nxt = theme_hop(graph, passed, visited, taken, docs_read, fallback_to_inter_document)
        if nxt is None:  # no way out of this passage: hop from anything read so far
            nxt = theme_hop(graph, group.path, visited, taken, docs_read, fallback_to_inter_document)
        if nxt is None:
            break
        current, hops = nxt, hops + 1
    return group


def random_grouping(graph: SimilarityGraph, rng: random.Random, max_sentences: int = 10, chunks_per_group: int = 3,
                    ensure_document_diversity: bool = True) -> GoldGroup:
    if ensure_document_diversity:
        docs = rng.sample(graph.doc_ids, min(chunks_per_group, len(graph.doc_ids)))
        windows = [rng.choice(graph.windows_of(d)) for d in docs]
    else:
        windows = rng.sample(graph.window_ids, min(chunks_per_group, len(graph.window_ids)))
    taken = _Taken(graph, max_sentences)
    for w in windows:
        taken.add(graph.sentences_of(w))
    return GoldGroup("random", taken.ids, windows,
                     {"max_sentences": max_sentences, "chunks_per_group": chunks_per_group,
                      "ensure_document_diversity": ensure_document_diversity})


GROUPING_STRATEGIES: dict[str, Callable[..., GoldGroup]] = {
    "intra_document": intra_document,
    "theme_based": theme_based,
    "sequential_multi_hop": sequential_multi_hop,
    "random": random_grouping,
}


def build_groups(graph: SimilarityGraph, strategy: str, n: int, seed: int = 0, **params) -> list[GoldGroup]:
    """``n`` groups of one strategy with distinct sentence sets, reproducible from ``seed``.

    The random stream is ``random.Random(f"{strategy}:{seed}")``; a draw that repeats an earlier
    group's sentences is skipped (at most ``20 * n`` draws)."""
    if strategy not in GROUPING_STRATEGIES:
        raise ValueError(f"unknown grouping strategy {strategy!r}; expected one of {', '.join(GROUPING_STRATEGIES)}")
    rng = random.Random(f"{strategy}:{seed}")
    groups, seen = [], set()
    for draw in range(20 * n):
        if len(groups) == n:
            break
        g = GROUPING_STRATEGIES[strategy](graph, rng, **params)
        key = frozenset(g.sentence_ids)
        if key not in seen:
            seen.add(key)
            g.params["seed"], g.params["draw"] = seed, draw
            groups.append(g)
    return groups


def group_question(graph: SimilarityGraph, group: GoldGroup, qid: str, question: str, answer: str) -> Question:
    """A question whose gold is the group: its documents and its exact sentences."""
    return Question(qid, question, answer, group.doc_ids(graph), group.texts(graph),
                    meta={"strategy": group.strategy, "group": group.as_meta()})
