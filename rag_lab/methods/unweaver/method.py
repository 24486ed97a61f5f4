"""UnWeaver ("UnWeaving the knots of GraphRAG - turns out VectorRAG is almost enough"): index
entity classes instead of chunks, then let the classes nearest to a query vote for chunks.

Knobs: ``UnWeaverConfig`` (``config.py``). Build: chunk (fixed MiniLM windows, 128/16 like the
naive baseline, so only the indexing differs) -> ``reasoner.entities`` per chunk (one call each)
-> equivalence classes of normalised names (``classes``), optionally merged by name similarity
-> per class the concatenated
descriptions, shortened by ``reasoner.summarize`` over ``description_cap`` words -> one embedding
per class. The appendix's matrices are kept as attributes (``matrices``):
``incidence`` E, ``selection`` [P_k], ``membership`` M, ``chunk_class`` A, ``class_vectors`` V.

Query: cosine of the query to every class; the ``top_n`` classes vote, each approving the chunks
it occurs in; ``voting.elect`` elects k chunks by ``rule`` (approval, pav, cc) with the
abcvoting library (``exact=True``, default: the optimal PAV / CC committee, ties to the
lexicographically first, by ``voting.optimal_committee`` or, weighted, abcvoting's HiGHS integer
program; ``exact=False``: the greedy sequential
variants; ``weighted=True`` weighs each vote by its class's similarity). If the
top classes approve fewer than k chunks, the next classes in similarity order join as voters
until k chunks are approved or no class is left (our rule; the paper does not say). Candidates are
numbered, for tie-breaking, by the summed similarity of the classes approving them, then by
chunk order. ``select="kelly"`` (proportional fairness) or ``"constrained_lsq"`` (least squares
under C x = d from its KKT system; ``demanded_ideas`` nearest classes demanded, see
``constrained_lsq``) replaces the election by the appendix's alignment solvers on the retrieval
matrix, chunk budget ``chunk_budget``; ``"bounded_lsq"`` is our box-bounded least squares
(``alignment``). Chunks are taken by strength, near-equal strengths tied and broken by the same
similarity sum, then chunk order.

Costs: reasoner tokens (entities, summaries) and embedder tokens (class texts, and names when
merging) go to ``build_cost``; a query costs the embedding of the query and no LLM call.
"""
from __future__ import annotations

import time
from typing import Sequence

import numpy as np

from ...reasoning.batch import run_batch
from ...evaluation.retrievers import Method, register
from ...core.types import Cost, Document, Hit, Retrieval
from ...core import ties
from .alignment import (bounded_least_squares, chunk_similarity, chunk_strengths, idea_upper_bounds,
                        kelly_allocation, select_chunks)
from .classes import class_descriptions, class_text, form_classes, mentions_from_entities, merge_similar_classes
from .config import UnWeaverConfig
from .constrained_lsq import constrained_least_squares, demand_constraints
from .voting import elect

MIN_WEIGHT = 1e-6      # idea weights for the alignment solvers must be positive


def _without_seconds(cost: Cost) -> Cost:
    """A reasoner's cost with its seconds dropped (build time is measured once, around the build)."""
    return Cost(cost.embedding_tokens, cost.llm_prompt_tokens, cost.llm_completion_tokens, cost.llm_calls,
                cost.llm_fallbacks, 0.0)


def first_places(scores: np.ndarray, m: int, what: str = "", names=None) -> list[int]:
    """``ties.order(scores, k=m, what=what, names=names)`` (near-ties noted alike), ordering only the
    best ``m + 8`` picked by numpy: a score past them lies more than ``TIE_TOL`` (and ``NOISE``) below
    the m-th, so it joins no group that reaches the first m places. Else all are ordered."""
    values = np.asarray(scores, dtype=np.float64)
    m = min(m, len(values))
    pick = np.argsort(-values, kind="stable")[:m + 8]
    if len(pick) < len(values) and not values[pick[-1]] < values[pick[m - 1]] - ties.TIE_TOL - ties.NOISE:
        pick = np.arange(len(values))
    named = None if names is None else (lambda i: names(int(pick[i])))
    return [int(pick[i]) for i in ties.order(values[pick], keys=pick.tolist(), k=m, what=what, names=named)]


class UnWeaverRetriever(Method):
    """See the module docstring. ``reasoner``: a Reasoner, a spec string, or None ($RAG_LAB_LLM, else offline)."""

    reasoner_at_build = True   # persisted indexes are keyed by the reasoner too (index_store.py)

    nested_ranking = False  # committees of k and K differ (PAV/CC are not nested; voters widen with k)
    config_class = UnWeaverConfig

    def __init__(self, config: UnWeaverConfig | None = None, *, reasoner=None, embedder=None, **overrides):
        super().__init__(config, reasoner=reasoner, embedder=embedder, **overrides)
        self.mentions, self.classes, self.dropped_mentions = [], [], 0
        self.incidence = self.membership = self.chunk_class = None
        self.selection: list = []
        self.class_vectors: np.ndarray | None = None
        self.build_stats: dict[str, float] = {}

    # -- collaborators, made on first use --------------------------------------------------
    def _encode(self, texts: list[str]) -> np.ndarray:
        try:
            return self.embedder.encode(texts, show_progress=False)   # no progress bars inside notebooks
        except TypeError:                                             # an embedder without that option
            return self.embedder.encode(texts)

    def make_chunks(self, documents: Sequence[Document]):
        from ...core.chunking import chunk_documents
        return chunk_documents(documents, "fixed", self.embedder, size=self.config.chunk_size,
                               overlap=self.config.chunk_overlap)

    def planned_llm_calls(self, documents: Sequence[Document]) -> list[tuple[str, str]]:
        """One ``entities`` call per chunk. Summaries of over-long class descriptions are not
        planned: which classes exceed the cap is known only after extraction."""
        return [("entities", c.text) for c in self.make_chunks(documents)]

    # -- build -----------------------------------------------------------------------------
    def document_work(self, documents: list[Document]) -> None:
        """Per document: the chunks and each chunk's entities (DocumentWork); classes and
        their descriptions span documents and are made where the index is built."""
        run_batch(self.reasoner.entities, [c.text for c in self.make_chunks(documents)], f"{self.name}: entities",
                  reasoner=self.reasoner)

    def build(self, documents: list[Document]):
        from .matrices import (chunk_class_matrix, class_membership, entity_chunk_incidence,
                                        selection_matrix)

        self.chunks = self.make_chunks(documents)
        if not self.chunks:
            raise ValueError(f"{self.name}: chunking produced no chunks")
        reasoner, cfg = self.reasoner, self.config
        before = reasoner.usage.copy()
        t0 = time.perf_counter()
        per_chunk = run_batch(reasoner.entities, [c.text for c in self.chunks], f"{self.name}: entities",
                              reasoner=reasoner)
        extract_seconds = time.perf_counter() - t0
        self.mentions, self.dropped_mentions = mentions_from_entities(per_chunk)
        if not self.mentions:
            raise ValueError(f"{self.name}: the reasoner found no entities in {len(self.chunks)} chunks; "
                             "UnWeaver has nothing to index")
        self.classes = form_classes(self.mentions)
        syntactic = len(self.classes)
        if cfg.semantic_threshold is not None:
            names = [c.name for c in self.classes]
            self.build_cost.embedding_tokens += self.embedder.count_tokens(names)
            self.classes = merge_similar_classes(self.classes, self.mentions, self._encode(names),
                                                 cfg.semantic_threshold)
        described = run_batch(lambda c: class_text(c.name, class_descriptions(c, self.mentions), cfg.description_cap,
                                                   reasoner, cfg.include_name),
                              self.classes, f"{self.name}: class descriptions", reasoner=reasoner)
        for cls, (text, summarized) in zip(self.classes, described):
            cls.text, cls.summarized = text, summarized
        texts = [c.text for c in self.classes]
        self.class_vectors = self._encode(texts)
        self.build_cost.embedding_tokens += self.embedder.count_tokens(texts)
        self.build_cost = self.build_cost + _without_seconds(reasoner.usage_since(before))

        m = len(self.mentions)
        self.incidence = entity_chunk_incidence([x.chunk_index for x in self.mentions], len(self.chunks))
        self.selection = [selection_matrix(c.mentions, m) for c in self.classes]
        self.membership = class_membership([c.mentions for c in self.classes], m)
        self.chunk_class = chunk_class_matrix(self.incidence, self.membership)
        self._chunk_class_csc = self.chunk_class.tocsc()          # column slices at query time
        self.build_stats = {"chunks": len(self.chunks), "mentions": m, "dropped_mentions": self.dropped_mentions,
                            "syntactic_classes": syntactic, "classes": len(self.classes),
                            "summarized_classes": sum(c.summarized for c in self.classes),
                            "extraction_seconds": extract_seconds}
        return self

    # -- query -----------------------------------------------------------------------------
    def class_similarities(self, query: str) -> tuple[np.ndarray, Cost]:
        self._check_built(self.class_vectors)
        q = self.embedder.encode_one(query)
        return self.class_vectors @ q, Cost(embedding_tokens=self.embedder.count_tokens(query))

    def voters_for(self, sims: np.ndarray, k: int) -> list[int]:
        """The top_n classes by similarity (ties, at ``core.ties``' precision, to the earlier class),
        widened until they approve k chunks."""
        top_n, csc = self.config.top_n, self._chunk_class_csc
        order = first_places(sims, top_n)
        voters = order[:top_n]
        approved = set(csc[:, voters].nonzero()[0].tolist())
        while len(approved) < k and len(voters) < len(sims):
            if len(voters) == len(order):
                order = first_places(sims, 2 * len(order))    # a longer prefix of the same order
            extra = order[len(voters)]
            voters.append(extra)
            approved.update(csc[:, [extra]].nonzero()[0].tolist())
        first_places(sims, len(voters) + 1, what="UnWeaver voter classes", names=lambda i: self.classes[i].name)
        return voters

    def candidates(self, query: str, k: int) -> tuple[np.ndarray, Cost, list[int], list[int], np.ndarray]:
        """(class similarities, query cost, voter classes, candidate chunk indices in tie-break order,
        the retrieval matrix R restricted to the candidates: candidates x voters, dense)."""
        from .matrices import retrieval_matrix

        sims, cost = self.class_similarities(query)
        voters = self.voters_for(sims, k)
        R = retrieval_matrix(self._chunk_class_csc, voters)               # chunks x voters
        rows = np.unique(R.nonzero()[0])
        Rsub = R[rows].toarray()
        mass = Rsub @ sims[voters]                                         # similarity of approving classes
        order = ties.order(mass, keys=rows.tolist(), what="UnWeaver candidate order",
                           names=lambda i: self.chunks[rows[i]].id)
        return sims, cost, voters, [int(rows[i]) for i in order], Rsub[order]

    def alignment_problem(self, query: str, k: int) -> dict:
        """The appendix's alignment problem for one query: R (candidate chunks x voting classes),
        idea weights w (query similarities, floored at a tiny positive value), budgets c, and how many
        ideas the constrained least squares demands."""
        sims, _, voters, candidates, R = self.candidates(query, k)
        return {"R": R, "w": np.maximum(sims[voters], MIN_WEIGHT),
                "c": np.full(len(candidates), self.config.chunk_budget),
                "chunks": [self.chunks[j].id for j in candidates], "ideas": [self.classes[v].name for v in voters],
                "demanded": min(self.config.demanded_ideas, len(voters))}

    def retrieve(self, query: str, k: int) -> Retrieval:
        sims, cost, voters, candidates, Rcand = self.candidates(query, k)
        cfg = self.config
        trace = {"rule": cfg.rule, "select": cfg.select, "top_n": cfg.top_n, "voters_used": len(voters),
                 "classes": [{"class": int(v), "name": self.classes[v].name, "similarity": float(sims[v]),
                              "chunks": [self.chunks[j].id for j in self.classes[v].chunks]} for v in voters],
                 "approvals": {self.chunks[j].id: int(Rcand[i].sum()) for i, j in enumerate(candidates)}}
        if cfg.select == "election":
            ballots = [np.flatnonzero(Rcand[:, t]).tolist() for t in range(len(voters))]
            weights = [max(float(sims[v]), MIN_WEIGHT) for v in voters] if cfg.weighted else None
            result = elect(ballots, len(candidates), k, cfg.rule, cfg.exact, weights)
            picked, scores = result.winners, result.gains
            trace.update(abc_rule_id=result.abc_rule_id, algorithm=result.algorithm)
        else:
            picked, scores, extra = self._align(Rcand, sims[voters], k)
            trace.update(extra)
        via = "vote" if cfg.select == "election" else cfg.select
        hits = [Hit(self.chunks[candidates[i]], float(s), via) for i, s in zip(picked, scores)]
        trace["elected"] = [h.chunk.id for h in hits]
        return Retrieval(query, hits, trace, cost)

    def _align(self, R: np.ndarray, sims: np.ndarray, k: int) -> tuple[list[int], list[float], dict]:
        w = np.maximum(sims, MIN_WEIGHT)
        c = np.full(R.shape[0], self.config.chunk_budget)
        if self.config.select == "kelly":
            sol = kelly_allocation(R, w, c)
            x, extra = sol.x, {"kelly_iterations": sol.iterations, "kelly_converged": sol.converged}
        elif self.config.select == "constrained_lsq":
            demand = demand_constraints(R, w, c, min(self.config.demanded_ideas, R.shape[1]))
            sol = constrained_least_squares(R, c, demand.C, demand.d)
            x, extra = sol.x, {"demanded_voters": demand.demanded, "demand": [float(v) for v in demand.d],
                               "kkt_residual": sol.kkt.worst}
        else:
            sol = bounded_least_squares(R, c, 0.0, idea_upper_bounds(R, c))
            x, extra = sol.x, {"bounded_lsq_status": sol.status}
        strengths = chunk_strengths(R, x)
        picked = select_chunks(strengths, k, chunk_similarity(R, w))
        extra["idea_strengths"] = [float(v) for v in x]
        return picked, [float(strengths[i]) for i in picked], extra



register("unweaver", "rag_lab.methods.unweaver.method:UnWeaverRetriever",
         "UnWeaver: per-chunk entities -> name-equivalence classes -> embedded concatenated descriptions; "
         "the top {c.top_n} classes vote for k chunks (approval / pav / cc, abcvoting; default {c.rule})"
         .format(c=UnWeaverConfig()), UnWeaverConfig())
