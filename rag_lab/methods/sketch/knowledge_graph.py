"""SKETCH's knowledge graph: triples per chunk -> entity nodes and relation edges -> structured context.

Following the SKETCH paper (Mahalingam et al.): the reasoner reads each chunk and returns
(subject, relation, object) triples with entity types; every subject and object becomes a
node keyed by its normalised name, every triple an edge, and a node keeps the ids and texts
of the chunks it was found in (the paper's nodes "store the smaller context"). At query
time the reasoner names the query's entities, they are matched to nodes, the graph store is
asked for their neighbourhood, and the answer is rendered as the structured context: the
relations as facts plus the node contexts.

Rules decided here (the paper leaves them open):
- node key = ``entity_key(name)``: case-folded, whitespace collapsed, edge punctuation and a
  leading article ("the", "a", "an") removed; name = first spelling seen; type = first
  non-generic type seen (a named-entity label beats "CONCEPT"/empty), else the first type;
- a triple whose subject and object have the same key is dropped (no self loops);
- query-entity matching, per query entity: a node with the same key if there is one
  ("exact"); otherwise the ``max_per_entity`` nodes whose names' embeddings have cosine
  >= ``threshold`` with the entity's embedding ("embedding"), most similar first;
- chunk ranking from a neighbourhood: a chunk scores sum over the neighbourhood's nodes that
  mention it of 1 / (1 + distance) (1 for a matched node, 1/2 for a neighbour one hop away);
  ties go to the chunk that comes first in the corpus;
- paths for the trace: for every reached node, one shortest chain of relations from a seed,
  found by breadth-first search over the returned edges in their sorted order (so both stores
  give the same paths).
"""
from __future__ import annotations

import functools
import re
from collections import deque
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ...core import ties

from ...core.types import Chunk
from .graph_stores import Edge, GraphStore, Node, Subgraph, make_graph_store

GENERIC_TYPES = {"", "CONCEPT", "ENTITY", "THING", "OTHER"}
_ARTICLE = re.compile(r"^(the|a|an)\s+")


def entity_key(name: str) -> str:
    """The key two spellings of one entity share ("The Colosseum " and "colosseum")."""
    if not isinstance(name, str):
        raise TypeError(f"entity name must be a string, got {type(name).__name__}")
    key = " ".join(name.split()).strip(" .,;:!?\"'()[]{}").casefold()
    return _ARTICLE.sub("", key)


def graph_records(chunks: Sequence[Chunk], triples_per_chunk: Sequence[Sequence]) -> tuple[list[Node], list[Edge]]:
    """Nodes and edges from the triples of each chunk (``triples_per_chunk[i]`` belongs to ``chunks[i]``)."""
    if len(chunks) != len(triples_per_chunk):
        raise ValueError(f"got triples for {len(triples_per_chunk)} chunks but {len(chunks)} chunks")
    names: dict[str, str] = {}
    types: dict[str, str] = {}
    mentions: dict[str, dict[str, str]] = {}   # key -> chunk id -> text, in first-mention order
    edges: dict[Edge, None] = {}
    for chunk, triples in zip(chunks, triples_per_chunk):
        for t in triples:
            s_key, o_key = entity_key(t.subject), entity_key(t.object)
            relation = " ".join(str(t.relation).split())
            if not s_key or not o_key or not relation or s_key == o_key:
                continue
            for key, name, type_ in ((s_key, t.subject, t.subject_type), (o_key, t.object, t.object_type)):
                names.setdefault(key, " ".join(name.split()))
                if key not in types or (types[key] in GENERIC_TYPES and (type_ or "") not in GENERIC_TYPES):
                    types[key] = type_ or ""
                mentions.setdefault(key, {}).setdefault(chunk.id, chunk.text)
            edges[Edge(s_key, relation, o_key, chunk.id)] = None
    nodes = [Node(k, names[k], types[k], tuple(mentions[k]), tuple(mentions[k].values())) for k in sorted(names)]
    return nodes, sorted(edges)


@dataclass(frozen=True)
class Match:
    entity: str        # as the reasoner named it in the query
    node: str          # key of the matched node
    how: str           # "exact" or "embedding"
    similarity: float


def fact_text(edge: Edge, nodes: dict[str, Node]) -> str:
    """One relation as a line of the structured context: ``subject -[relation]-> object``."""
    name = lambda k: nodes[k].name if k in nodes else k  # noqa: E731
    return f"{name(edge.source)} -[{edge.relation}]-> {name(edge.target)}"


def shortest_paths(subgraph: Subgraph) -> dict[str, list[Edge]]:
    """For each reached non-seed node, one shortest chain of edges from a seed (BFS over sorted edges)."""
    adjacent: dict[str, list[tuple[str, Edge]]] = {}
    for edge, _ in subgraph.edges:
        adjacent.setdefault(edge.source, []).append((edge.target, edge))
        adjacent.setdefault(edge.target, []).append((edge.source, edge))
    seeds = sorted(k for k, d in subgraph.distances.items() if d == 0)
    parent: dict[str, tuple[str, Edge] | None] = {s: None for s in seeds}
    queue = deque(seeds)
    while queue:
        here = queue.popleft()
        for there, edge in adjacent.get(here, []):
            if there not in parent:
                parent[there] = (here, edge)
                queue.append(there)
    paths = {}
    for key in subgraph.distances:
        if subgraph.distances[key] == 0 or key not in parent:
            continue
        chain, at = [], key
        while parent[at] is not None:
            prev, edge = parent[at]
            chain.append(edge)
            at = prev
        paths[key] = chain[::-1]
    return paths


class KnowledgeGraph:
    """A graph store plus what matching needs (node-name vectors) and the chunk order for ties."""

    def __init__(self, store: GraphStore, nodes: Sequence[Node], chunks: Sequence[Chunk], embedder):
        self.store = store
        self.embedder = embedder
        self.keys = [n.key for n in nodes]
        self.names = [n.name for n in nodes]
        self.chunk_by_id = {c.id: c for c in chunks}
        self.chunk_order = {c.id: i for i, c in enumerate(chunks)}
        self.name_vectors = (embedder.encode(self.names) if self.names
                             else np.zeros((0, 1), dtype=np.float32))
        self.embedding_tokens = embedder.count_tokens(self.names)

    @classmethod
    def from_triples(cls, chunks: Sequence[Chunk], triples_per_chunk: Sequence[Sequence], embedder,
                     graph_store: str | GraphStore, **store_params) -> "KnowledgeGraph":
        nodes, edges = graph_records(chunks, triples_per_chunk)
        store = make_graph_store(graph_store, **store_params) if isinstance(graph_store, str) else graph_store
        store.add(nodes, edges)
        return cls(store, nodes, chunks, embedder)

    def __len__(self) -> int:
        return len(self.keys)

    @functools.cached_property
    def key_set(self) -> frozenset[str]:
        """The node keys, for exact matches (made once; an index pickled before it existed makes it on use)."""
        return frozenset(self.keys)

    # -- query-entity matching ---------------------------------------------------------------
    def match(self, entities: Sequence[str], threshold: float, max_per_entity: int) -> tuple[list[Match], int]:
        """Nodes for each query entity (see the module docstring) and the embedding tokens spent."""
        if not 0.0 <= threshold <= 1.0:
            raise ValueError(f"match threshold must be in [0, 1], got {threshold}")
        if max_per_entity <= 0:
            raise ValueError(f"max_per_entity must be positive, got {max_per_entity}")
        matches, fuzzy = [], []
        for entity in dict.fromkeys(entities):
            key = entity_key(entity)
            if not key:
                continue
            if key in self.key_set:
                matches.append(Match(entity, key, "exact", 1.0))
            else:
                fuzzy.append(entity)
        tokens = 0
        if fuzzy and self.keys:
            vectors = self.embedder.encode(fuzzy)
            tokens = self.embedder.count_tokens(fuzzy)
            sims = vectors @ self.name_vectors.T
            for entity, row in zip(fuzzy, sims.astype(np.float64)):
                for i in np.flatnonzero(np.abs(row - threshold) <= ties.NOISE):   # only these can be noted
                    ties.at_least(row[i], threshold, what="SKETCH entity match", name=f"{entity} ~ {self.keys[i]}")
                passing = np.flatnonzero(row >= threshold).tolist()
                best = [passing[j] for j in ties.order(row[passing], keys=[self.keys[i] for i in passing],
                                                       k=max_per_entity, what="SKETCH entity match",
                                                       names=lambda j: self.keys[passing[j]])]
                matches += [Match(entity, self.keys[i], "embedding", float(row[i])) for i in best]
        return matches, tokens

    # -- graph query and what it yields ---------------------------------------------------------
    def neighbourhood(self, seeds: Sequence[str], hops: int) -> Subgraph:
        return self.store.neighbourhood(seeds, hops)

    def rank_chunks(self, subgraph: Subgraph) -> list[tuple[Chunk, float]]:
        """Chunks the neighbourhood's nodes point to, best first (score rule in the module docstring)."""
        scores: dict[str, float] = {}
        for key, node in subgraph.nodes.items():
            weight = 1.0 / (1 + subgraph.distances[key])
            for chunk_id in node.chunk_ids:
                scores[chunk_id] = scores.get(chunk_id, 0.0) + weight
        ranked = sorted((cid for cid in scores if cid in self.chunk_by_id),
                        key=lambda cid: (-scores[cid], self.chunk_order[cid]))
        return [(self.chunk_by_id[cid], scores[cid]) for cid in ranked]

    def facts(self, subgraph: Subgraph, limit: int | None = None) -> list[str]:
        """The neighbourhood's relations as text lines (one per distinct fact), nearest first."""
        lines = list(dict.fromkeys(fact_text(e, subgraph.nodes) for e, _ in subgraph.edges))
        return lines if limit is None else lines[:limit]

    def structured_context(self, subgraph: Subgraph, chunks: Sequence[Chunk], max_facts: int | None) -> str:
        """The structured context: the facts, then the node contexts (texts of the given chunks)."""
        facts = self.facts(subgraph, max_facts)
        parts = []
        if facts:
            parts.append("Facts:\n" + "\n".join(facts))
        if chunks:
            parts.append("Contexts:\n" + "\n\n".join(c.text for c in chunks))
        return "\n\n".join(parts)

    def paths(self, subgraph: Subgraph, limit: int | None = 20) -> list[list[str]]:
        """Shortest relation chains from a matched node to each reached node, as fact lines."""
        chains = [[fact_text(e, subgraph.nodes) for e in chain] for chain in shortest_paths(subgraph).values()]
        return chains if limit is None else chains[:limit]

    def close(self) -> None:
        self.store.close()
