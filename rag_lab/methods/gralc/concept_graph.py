"""The per-document knowledge subgraph G_k: the concepts linked in a document, their 1-hop
neighbours in the vocabulary, and semantic-type nodes for the linked concepts.

Edges are undirected (the GAT layer attends both ways) and keep their relation type
(``is_a``, ``part_of``, ``may_treat``, ``causes``, ``associated_with``, ``has_type``).
"""
from __future__ import annotations

from typing import Iterable

from ...datasets.vocabulary import ConceptVocabulary

TYPE_PREFIX = "type:"


def concept_subgraph(linked: Iterable[str], vocabulary: ConceptVocabulary, with_types: bool = True):
    """networkx Graph over linked concepts + 1-hop neighbours (+ their semantic types)."""
    import networkx as nx

    linked = list(dict.fromkeys(linked))
    g = nx.Graph()
    for cid in linked:
        if cid not in vocabulary:
            raise KeyError(f"concept {cid!r} is not in the vocabulary {vocabulary.source or '<memory>'}")
        c = vocabulary[cid]
        g.add_node(cid, kind="concept", linked=True, name=c.name, semantic_type=c.semantic_type)
    for cid in linked:
        for rel, other in vocabulary.neighbours(cid):
            if other not in g:
                o = vocabulary[other]
                g.add_node(other, kind="concept", linked=False, name=o.name, semantic_type=o.semantic_type)
            if not g.has_edge(cid, other):
                g.add_edge(cid, other, relation=rel)
        stype = vocabulary[cid].semantic_type
        if with_types and stype:
            node = TYPE_PREFIX + stype
            if node not in g:
                g.add_node(node, kind="semantic_type", linked=False, name=stype, semantic_type=stype)
            g.add_edge(cid, node, relation="has_type")
    return g


def node_text(graph, node: str) -> str:
    """The text a node is embedded from: its preferred name (or the semantic-type label)."""
    return graph.nodes[node]["name"]
