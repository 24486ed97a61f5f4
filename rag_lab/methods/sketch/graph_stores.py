"""Where SKETCH's knowledge graph lives: Kùzu on disk (default) or networkx in memory, one interface.

Why two stores: the SKETCH paper (Mahalingam et al., "SKETCH: Structured Knowledge Enhanced
Text Comprehension for Holistic Retrieval") keeps its graph in Neo4j and reads it with Cypher
queries. No Neo4j server runs here; Kùzu is an embedded graph database that speaks Cypher, so
``KuzuGraphStore`` plays Neo4j's part (SketchConfig's default), while ``NetworkXGraphStore`` is the
dependency-light alternative. Both answer the same three questions and must give identical
answers (tests/test_sketch_kg.py):

- ``get_nodes(keys)``: the nodes with those keys, sorted by key;
- ``neighbourhood(seeds, hops)``: every node within ``hops`` undirected steps of a seed, with
  its distance (seeds 0), and every relation traversed on the way — an edge ``u -> v`` is in the
  neighbourhood when one of its ends is at distance < ``hops``, i.e. it lies on a walk of at most
  ``hops`` steps from a seed;
- ``nodes()`` / ``edges()``: everything, for drawing the graph.

A neighbourhood answer also carries the statements the store ran for it (``Subgraph.queries``:
Kùzu's Cypher with its parameters; empty for networkx), so a trace can show the graph query a
question sent; ``render_cypher`` inlines the parameters for reading.

Relations are directed (subject -> object) but traversed in both directions, since a question
about an object is answered by the triples that name it as either end.
"""
from __future__ import annotations

import json
import re
import shutil
import tempfile
import warnings
import weakref
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence


@dataclass(frozen=True)
class Node:
    """An entity: ``key`` is its normalised name; ``chunk_ids``/``texts`` are the chunks that mention it."""

    key: str
    name: str
    type: str = ""
    chunk_ids: tuple[str, ...] = ()
    texts: tuple[str, ...] = ()


@dataclass(frozen=True, order=True)
class Edge:
    """One relation as found in one chunk (the same triple from two chunks is two edges)."""

    source: str
    relation: str
    target: str
    chunk_id: str


@dataclass
class Subgraph:
    """The answer to a neighbourhood query: node distances, the nodes, and edges with their hop;
    ``queries``: the statements run to get it (``{"cypher", "parameters"}``), not part of equality."""

    distances: dict[str, int] = field(default_factory=dict)
    nodes: dict[str, Node] = field(default_factory=dict)
    edges: list[tuple[Edge, int]] = field(default_factory=list)
    queries: list[dict] = field(default_factory=list, compare=False)


def _cypher_literal(value) -> str:
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_cypher_literal(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "NULL"
    if isinstance(value, (int, float)):
        return json.dumps(value)
    raise TypeError(f"render_cypher: no Cypher literal for a {type(value).__name__}")


def render_cypher(statement: str, parameters: dict | None = None) -> str:
    """The statement with every ``$name`` replaced by its parameter as a Cypher literal (for
    reading only: the store itself sends the parameters separately)."""
    parameters = parameters or {}

    def literal(m: re.Match) -> str:
        if m.group(1) not in parameters:
            raise KeyError(f"render_cypher: no value for parameter ${m.group(1)}")
        return _cypher_literal(parameters[m.group(1)])

    return re.sub(r"\$(\w+)", literal, statement)


def sort_edges(edges: Iterable[tuple[Edge, int]]) -> list[tuple[Edge, int]]:
    """Edges by hop, then by (source, relation, target, chunk id): one order for both stores."""
    return sorted(edges, key=lambda eh: (eh[1], eh[0]))


def _check_hops(hops: int) -> int:
    if not isinstance(hops, int) or isinstance(hops, bool) or hops < 0:
        raise ValueError(f"hops must be a non-negative integer, got {hops!r}")
    return hops


class GraphStore(ABC):
    """Nodes and relations of a knowledge graph, and the neighbourhood query SKETCH needs."""

    name = "store"
    _recorded: list[dict] | None = None   # while a neighbourhood query runs: the statements it sends
    _last: tuple | None = None            # ((seeds, hops), Subgraph): the last neighbourhood answered; add() drops it

    @abstractmethod
    def add(self, nodes: Sequence[Node], edges: Sequence[Edge]) -> None:
        """Insert nodes, then edges between them (every edge end must be one of the nodes)."""

    @abstractmethod
    def get_nodes(self, keys: Sequence[str]) -> list[Node]: ...

    @abstractmethod
    def nodes(self) -> list[Node]: ...

    @abstractmethod
    def edges(self) -> list[Edge]: ...

    @abstractmethod
    def _distances(self, seeds: list[str], hops: int) -> dict[str, int]: ...

    @abstractmethod
    def _edges_touching(self, inner: list[str]) -> list[Edge]: ...

    def _known(self, keys: list[str]) -> list[str]:
        """Those of ``keys`` that are nodes, in the given order."""
        return [k for k in keys if k in self]

    def neighbourhood(self, seeds: Sequence[str], hops: int = 1) -> Subgraph:
        """The neighbourhood (module docstring). The same question asked again (SKETCH asks it at k 5 and
        again at k 10) gets the last answer, as a copy, with the statements that produced it."""
        hops = _check_hops(hops)
        asked = (tuple(sorted(set(seeds))), hops)
        last = self._last
        if last is None or last[0] != asked:
            last = self._last = (asked, self._neighbourhood(list(asked[0]), hops))
        sub = last[1]
        return Subgraph(dict(sub.distances), dict(sub.nodes), list(sub.edges), list(sub.queries))

    def _neighbourhood(self, seeds: list[str], hops: int) -> Subgraph:
        self._recorded = []
        try:
            seeds = self._known(seeds)
            if not seeds:
                return Subgraph(queries=self._recorded)
            distances = self._distances(seeds, hops)
            inner = sorted(k for k, d in distances.items() if d < hops)
            edges = [(e, min(distances[e.source], distances[e.target]) + 1) for e in self._edges_touching(inner)]
            nodes = {n.key: n for n in self.get_nodes(sorted(distances))}
            return Subgraph(dict(sorted(distances.items(), key=lambda kv: (kv[1], kv[0]))), nodes, sort_edges(edges),
                            self._recorded)
        finally:
            self._recorded = None

    @abstractmethod
    def __contains__(self, key: str) -> bool: ...

    def close(self) -> None:
        """Release files or connections (a no-op in memory)."""

    def _check_new(self, nodes: Sequence[Node], edges: Sequence[Edge]) -> None:
        """New nodes must have new keys; every edge end must be a node (new or stored)."""
        stored = {n.key for n in self.nodes()}
        again = sorted({n.key for n in nodes} & stored)
        if again:
            raise ValueError(f"{self.name} store already holds node(s) {again[:5]}; build into an empty store "
                             "(for Kùzu: a folder without a graph)")
        keys = stored | {n.key for n in nodes}
        for e in edges:
            if e.source not in keys or e.target not in keys:
                raise ValueError(f"edge {e} names a node that is not among the nodes added with it")


class NetworkXGraphStore(GraphStore):
    """In memory: a ``networkx.MultiDiGraph`` (several relations may join the same two nodes)."""

    name = "networkx"

    def __init__(self):
        import networkx as nx

        self.graph = nx.MultiDiGraph()

    def add(self, nodes: Sequence[Node], edges: Sequence[Edge]) -> None:
        self._check_new(nodes, edges)
        self._last = None
        for n in nodes:
            self.graph.add_node(n.key, node=n)
        for e in edges:
            self.graph.add_edge(e.source, e.target, key=(e.relation, e.chunk_id), edge=e)

    def __contains__(self, key: str) -> bool:
        return key in self.graph

    def get_nodes(self, keys: Sequence[str]) -> list[Node]:
        return [self.graph.nodes[k]["node"] for k in sorted(set(keys)) if k in self.graph]

    def nodes(self) -> list[Node]:
        return self.get_nodes(list(self.graph.nodes))

    def edges(self) -> list[Edge]:
        return sorted(d["edge"] for _, _, d in self.graph.edges(data=True))

    def _distances(self, seeds: list[str], hops: int) -> dict[str, int]:
        import networkx as nx

        undirected = self.graph.to_undirected(as_view=True)
        return dict(nx.multi_source_dijkstra_path_length(undirected, set(seeds), cutoff=hops))

    def _edges_touching(self, inner: list[str]) -> list[Edge]:
        inner_set = set(inner)
        return [d["edge"] for u, v, d in self.graph.edges(data=True) if u in inner_set or v in inner_set]


class KuzuGraphStore(GraphStore):
    """Kùzu, embedded and file-backed, read with Cypher (the paper's Neo4j role).

    ``path``: a folder for the database; default a fresh temporary folder removed on ``close``
    (or when the store is garbage-collected). A given folder is kept.
    """

    name = "kuzu"
    SCHEMA = ("CREATE NODE TABLE IF NOT EXISTS Entity(key STRING, name STRING, type STRING, chunk_ids STRING[], "
              "texts STRING[], PRIMARY KEY(key))",
              "CREATE REL TABLE IF NOT EXISTS RELATES(FROM Entity TO Entity, relation STRING, chunk_id STRING)")

    def __init__(self, path: str | Path | None = None):
        import kuzu

        if path is None:
            self.folder = Path(tempfile.mkdtemp(prefix="rag_lab_kuzu_"))
            self._finalizer = weakref.finalize(self, shutil.rmtree, self.folder, ignore_errors=True)
        else:
            self.folder = Path(path)
            self.folder.mkdir(parents=True, exist_ok=True)
            self._finalizer = None
        self.db = kuzu.Database(str(self.folder / "graph.kuzu"))
        self.conn = kuzu.Connection(self.db)
        self._prepared: dict[str, object] = {}      # Cypher text -> its prepared statement (``cypher``)
        for statement in self.SCHEMA:
            self.conn.execute(statement)

    def __getstate__(self) -> dict:
        """Pickled as its nodes and edges in stored order (a persisted SKETCH index): a store in a
        temporary folder is rebuilt in a fresh one on load; one kept at a given path is not pickled."""
        if self._finalizer is None:
            raise TypeError(f"a Kùzu store kept at {self.folder} is not pickled (it lives in its folder)")
        nodes = [self._node(r) for r in self.cypher("MATCH (n:Entity) RETURN n.key, n.name, n.type, n.chunk_ids, "
                                                     "n.texts")]
        edges = [Edge(*r) for r in self.cypher("MATCH (u:Entity)-[r:RELATES]->(v:Entity) "
                                               "RETURN u.key, r.relation, v.key, r.chunk_id")]
        return {"nodes": nodes, "edges": edges}

    def __setstate__(self, state: dict) -> None:
        self.__init__()
        self.add(state["nodes"], state["edges"])

    def cypher(self, query: str, parameters: dict | None = None) -> list[list]:
        """Run one Cypher statement and return its rows (recorded while a neighbourhood query runs).
        A statement with parameters is prepared once per store and run again with new values: Kùzu
        would prepare it anew each time, a quarter of a neighbourhood query's time (Kùzu 0.11 calls
        separate prepare and execute deprecated; 0.11 is its last release)."""
        if self._recorded is not None:
            self._recorded.append({"cypher": query, "parameters": dict(parameters or {})})
        statement = query
        if parameters:
            statement = self._prepared.get(query)
            if statement is None:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", DeprecationWarning)
                    statement = self._prepared[query] = self.conn.prepare(query)
        result = self.conn.execute(statement, parameters or {})
        rows = []
        while result.has_next():
            rows.append(result.get_next())
        return rows

    def add(self, nodes: Sequence[Node], edges: Sequence[Edge]) -> None:
        self._check_new(nodes, edges)
        self._last = None
        if nodes:
            self.cypher("UNWIND $rows AS r CREATE (:Entity {key: r.key, name: r.name, type: r.type, "
                        "chunk_ids: r.chunk_ids, texts: r.texts})",
                        {"rows": [{"key": n.key, "name": n.name, "type": n.type, "chunk_ids": list(n.chunk_ids),
                                   "texts": list(n.texts)} for n in nodes]})
        if edges:
            self.cypher("UNWIND $rows AS r MATCH (u:Entity {key: r.source}), (v:Entity {key: r.target}) "
                        "CREATE (u)-[:RELATES {relation: r.relation, chunk_id: r.chunk_id}]->(v)",
                        {"rows": [{"source": e.source, "relation": e.relation, "target": e.target,
                                   "chunk_id": e.chunk_id} for e in edges]})

    def __contains__(self, key: str) -> bool:
        return bool(self.cypher("MATCH (n:Entity {key: $key}) RETURN n.key", {"key": key}))

    def _known(self, keys: list[str]) -> list[str]:
        if not keys:
            return []
        found = {row[0] for row in self.cypher("MATCH (n:Entity) WHERE n.key IN $keys RETURN n.key", {"keys": keys})}
        return [k for k in keys if k in found]

    @staticmethod
    def _node(row) -> Node:
        key, name, type_, chunk_ids, texts = row
        return Node(key, name, type_ or "", tuple(chunk_ids or ()), tuple(texts or ()))

    def get_nodes(self, keys: Sequence[str]) -> list[Node]:
        rows = self.cypher("MATCH (n:Entity) WHERE n.key IN $keys "
                           "RETURN n.key, n.name, n.type, n.chunk_ids, n.texts ORDER BY n.key", {"keys": list(keys)})
        return [self._node(r) for r in rows]

    def nodes(self) -> list[Node]:
        return [self._node(r) for r in
                self.cypher("MATCH (n:Entity) RETURN n.key, n.name, n.type, n.chunk_ids, n.texts ORDER BY n.key")]

    def edges(self) -> list[Edge]:
        rows = self.cypher("MATCH (u:Entity)-[r:RELATES]->(v:Entity) RETURN u.key, r.relation, v.key, r.chunk_id")
        return sorted(Edge(*row) for row in rows)

    def _distances(self, seeds: list[str], hops: int) -> dict[str, int]:
        distances = {s: 0 for s in seeds}
        if hops == 0:
            return distances
        # The hop bound of a variable-length pattern must be a literal; ``hops`` is a checked int.
        rows = self.cypher(f"MATCH (s:Entity)-[p:RELATES* SHORTEST 1..{hops}]-(t:Entity) "
                           "WHERE s.key IN $seeds AND NOT t.key IN $seeds RETURN t.key, min(length(p))",
                           {"seeds": seeds})
        distances.update({key: int(d) for key, d in rows})
        return distances

    def _edges_touching(self, inner: list[str]) -> list[Edge]:
        rows = self.cypher("MATCH (u:Entity)-[r:RELATES]->(v:Entity) WHERE u.key IN $inner OR v.key IN $inner "
                           "RETURN u.key, r.relation, v.key, r.chunk_id", {"inner": inner})
        return [Edge(*row) for row in rows]

    def close(self) -> None:
        self._prepared.clear()
        self.conn.close()
        self.db.close()
        if self._finalizer is not None:
            self._finalizer()


GRAPH_STORES = {"networkx": NetworkXGraphStore, "kuzu": KuzuGraphStore}


def make_graph_store(name: str, **params) -> GraphStore:
    """A new empty store by name: ``kuzu`` (``path=`` to keep the files) or ``networkx``
    (SketchConfig.graph_store says which one SKETCH uses by default)."""
    if name not in GRAPH_STORES:
        raise ValueError(f"unknown graph_store {name!r}; expected one of {sorted(GRAPH_STORES)}")
    return GRAPH_STORES[name](**params)
