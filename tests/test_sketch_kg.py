"""SKETCH's knowledge graph: triples -> nodes/edges -> neighbourhood query, on networkx and on Kùzu
(Cypher), with every expected value worked out by hand from the four toy chunks below."""
from __future__ import annotations

import numpy as np
import pytest

from rag_lab.methods.sketch.graph_stores import (Edge, KuzuGraphStore, Node, Subgraph, make_graph_store,
                                                render_cypher)
from rag_lab.methods.sketch.knowledge_graph import KnowledgeGraph, entity_key, graph_records, shortest_paths
from rag_lab.reasoning import Triple
from rag_lab.core.types import Chunk
from sketch_fakes import TableEmbedder

C = [Chunk("c1", "d", "Saffron colours risotto alla milanese.", 0, 38),
     Chunk("c2", "d", "Risotto alla Milanese comes from Milan.", 39, 78),
     Chunk("c3", "d", "Milan is the capital of Lombardy.", 79, 112),
     Chunk("c4", "d", "Saffron grows in Abruzzo.", 113, 138)]
TRIPLES = [
    [Triple("Saffron", "colours", "risotto alla milanese", "FOOD", "DISH")],
    [Triple("Risotto alla Milanese", "comes_from", "Milan", "DISH", "GPE")],
    [Triple("Milan", "capital_of", "Lombardy", "GPE", "GPE"),
     Triple("The Milan", "is", "Milan", "GPE", "GPE")],            # same key both ends: dropped
    [Triple("saffron", "grows_in", "Abruzzo", "CONCEPT", "GPE")],  # CONCEPT does not replace FOOD
]
E_COLOURS = Edge("saffron", "colours", "risotto alla milanese", "c1")
E_COMES = Edge("risotto alla milanese", "comes_from", "milan", "c2")
E_CAPITAL = Edge("milan", "capital_of", "lombardy", "c3")
E_GROWS = Edge("saffron", "grows_in", "abruzzo", "c4")
NAMES = ["Abruzzo", "Lombardy", "Milan", "risotto alla milanese", "Saffron"]
# one axis per node name, so cosine between names is 0 and query vectors are built by hand
AXES = {name: [1.0 if i == j else 0.0 for j in range(5)] for i, name in enumerate(NAMES)}


def test_entity_key():
    assert entity_key("  The  Colosseum. ") == "colosseum"
    assert entity_key("An apple") == "apple" and entity_key("Theatre") == "theatre"
    with pytest.raises(TypeError):
        entity_key(None)


def test_graph_records_by_hand():
    nodes, edges = graph_records(C, TRIPLES)
    assert nodes == [
        Node("abruzzo", "Abruzzo", "GPE", ("c4",), (C[3].text,)),
        Node("lombardy", "Lombardy", "GPE", ("c3",), (C[2].text,)),
        Node("milan", "Milan", "GPE", ("c2", "c3"), (C[1].text, C[2].text)),
        Node("risotto alla milanese", "risotto alla milanese", "DISH", ("c1", "c2"), (C[0].text, C[1].text)),
        Node("saffron", "Saffron", "FOOD", ("c1", "c4"), (C[0].text, C[3].text)),
    ]
    assert edges == [E_CAPITAL, E_COMES, E_COLOURS, E_GROWS]   # sorted by source key
    with pytest.raises(ValueError, match="triples for 3 chunks but 4 chunks"):
        graph_records(C, TRIPLES[:3])


@pytest.fixture(params=["networkx", "kuzu"])
def store(request, tmp_path):
    params = {"path": tmp_path / "kg"} if request.param == "kuzu" else {}
    s = make_graph_store(request.param, **params)
    s.add(*graph_records(C, TRIPLES))
    yield s
    s.close()


def test_neighbourhood_by_hand(store):
    sub = store.neighbourhood(["saffron"], 1)
    assert sub.distances == {"saffron": 0, "abruzzo": 1, "risotto alla milanese": 1}
    assert sub.edges == [(E_COLOURS, 1), (E_GROWS, 1)]
    # two hops: Milan (via the risotto) joins; comes_from is traversed at hop 2; capital_of is not
    # (both its ends are at distance >= 2, so no walk of <= 2 steps from saffron uses it)
    sub = store.neighbourhood(["saffron"], 2)
    assert sub.distances == {"saffron": 0, "abruzzo": 1, "risotto alla milanese": 1, "milan": 2}
    assert sub.edges == [(E_COLOURS, 1), (E_GROWS, 1), (E_COMES, 2)]
    assert set(sub.nodes) == set(sub.distances) and sub.nodes["milan"].chunk_ids == ("c2", "c3")
    # two seeds, one hop: edges sorted by (hop, source, relation, target, chunk)
    sub = store.neighbourhood(["milan", "abruzzo", "unknown"], 1)
    assert sub.distances == {"abruzzo": 0, "milan": 0, "lombardy": 1, "risotto alla milanese": 1, "saffron": 1}
    assert sub.edges == [(E_CAPITAL, 1), (E_COMES, 1), (E_GROWS, 1)]
    assert store.neighbourhood(["saffron"], 0).edges == []
    assert store.neighbourhood(["nowhere"], 2).distances == {}
    with pytest.raises(ValueError, match="hops must be a non-negative integer"):
        store.neighbourhood(["saffron"], -1)


def test_kuzu_and_networkx_agree_on_every_query(tmp_path):
    stores = [make_graph_store("networkx"), KuzuGraphStore()]
    for s in stores:
        s.add(*graph_records(C, TRIPLES))
    nx_store, kz_store = stores
    assert nx_store.nodes() == kz_store.nodes() and nx_store.edges() == kz_store.edges()
    keys = [n.key for n in nx_store.nodes()]
    for hops in range(4):
        for seed in keys:
            assert nx_store.neighbourhood([seed], hops) == kz_store.neighbourhood([seed], hops), (seed, hops)
        assert nx_store.neighbourhood(keys[:2], hops) == kz_store.neighbourhood(keys[:2], hops)
    # each statement is prepared once and run again with other values: an empty list after full ones
    # (hops 0 touches no relation), then full ones again
    for hops in (0, 1):
        assert nx_store.neighbourhood(keys[::-1], hops) == kz_store.neighbourhood(keys[::-1], hops)
    # the Cypher itself, for the record: who is one relation away from Milan?
    rows = kz_store.cypher("MATCH (a:Entity {key: 'milan'})-[r:RELATES]-(b:Entity) RETURN b.key, r.relation "
                           "ORDER BY b.key")
    assert rows == [["lombardy", "capital_of"], ["risotto alla milanese", "comes_from"]]
    folder = kz_store.folder
    kz_store.close()
    assert not folder.exists()                 # the temporary database folder is removed


@pytest.mark.parametrize("name", ["networkx", "kuzu"])
def test_store_rejects_dangling_edges_and_repeated_nodes(name, tmp_path):
    s = make_graph_store(name, **({"path": tmp_path / "kg"} if name == "kuzu" else {}))
    with pytest.raises(ValueError, match="names a node that is not among"):
        s.add([Node("a", "A")], [Edge("a", "r", "b", "c1")])
    s.add([Node("a", "A")], [])
    with pytest.raises(ValueError, match="already holds node"):
        s.add([Node("a", "A again")], [])
    s.close()


def test_kuzu_records_the_cypher_of_a_neighbourhood_query(tmp_path):
    store = make_graph_store("kuzu", path=tmp_path / "kg")
    store.add(*graph_records(C, TRIPLES))
    sub = store.neighbourhood(["saffron", "unknown"], 2)
    # three statements, in order: which seeds are nodes, the hop distances (the bound 2 is written
    # into the pattern), the relations touching nodes nearer than 2 hops, then the reached nodes
    assert [q["parameters"] for q in sub.queries] == [
        {"keys": ["saffron", "unknown"]}, {"seeds": ["saffron"]},
        {"inner": ["abruzzo", "risotto alla milanese", "saffron"]},
        {"keys": ["abruzzo", "milan", "risotto alla milanese", "saffron"]}]
    assert "RELATES* SHORTEST 1..2" in sub.queries[1]["cypher"]
    assert render_cypher(sub.queries[1]["cypher"], sub.queries[1]["parameters"]).startswith(
        "MATCH (s:Entity)-[p:RELATES* SHORTEST 1..2]-(t:Entity) "
        "WHERE s.key IN ['saffron'] AND NOT t.key IN ['saffron']")
    # rows come back as before; statements outside a neighbourhood query are not recorded
    rows = store.cypher("MATCH (n:Entity) WHERE n.key IN $keys RETURN n.key ORDER BY n.key", {"keys": ["milan"]})
    assert rows == [["milan"]] and store.neighbourhood(["nowhere"], 1).queries == [
        {"cypher": sub.queries[0]["cypher"], "parameters": {"keys": ["nowhere"]}}]
    assert store.neighbourhood([], 1) == Subgraph() and store.neighbourhood([], 1).queries == []   # nothing sent
    on_networkx = make_graph_store("networkx")
    on_networkx.add(*graph_records(C, TRIPLES))
    assert on_networkx.neighbourhood(["saffron"], 2).queries == [] and on_networkx.neighbourhood(["saffron"], 2) == sub
    store.close()


@pytest.mark.parametrize("name", ["networkx", "kuzu"])
def test_a_neighbourhood_asked_again_is_answered_from_the_last_one(name):
    """SKETCH asks the same neighbourhood at k 5 and k 10: the second answer is the first (a copy, with
    the statements that produced it), the store is not asked again; other seeds or hops, or an add, ask it."""
    store = make_graph_store(name)
    store.add(*graph_records(C, TRIPLES))
    sent = []
    if name == "kuzu":
        run = store.cypher
        store.cypher = lambda query, parameters=None: sent.append(query) or run(query, parameters)
    first = store.neighbourhood(["saffron", "milan"], 1)
    asked = len(sent)
    first.distances.clear()                                   # the caller's copy: the store keeps its own
    again = store.neighbourhood(["milan", "saffron", "milan"], 1)   # the same seeds, in another order
    assert len(sent) == asked and again == store.neighbourhood(["saffron", "milan"], 1)
    assert again.distances == {"milan": 0, "saffron": 0, "abruzzo": 1, "lombardy": 1, "risotto alla milanese": 1}
    assert again.queries == ([] if name == "networkx" else first.queries) and len(again.queries) == asked
    assert store.neighbourhood(["saffron", "milan"], 0).distances == {"milan": 0, "saffron": 0}
    store.add([Node("pavia", "Pavia", "GPE", ("c5",), ("Pavia is near Milan.",))],
              [Edge("pavia", "near", "milan", "c5")])
    assert "pavia" in store.neighbourhood(["saffron", "milan"], 1).distances
    store.close()


def test_render_cypher_inlines_parameters_as_literals():
    assert render_cypher("MATCH (n {key: $key}) WHERE n.x IN $xs AND n.k = $k RETURN n",
                         {"key": "it's", "xs": ["a", "b\\c"], "k": 2}) == \
        "MATCH (n {key: 'it\\'s'}) WHERE n.x IN ['a', 'b\\\\c'] AND n.k = 2 RETURN n"
    with pytest.raises(KeyError, match="no value for parameter \\$key"):
        render_cypher("MATCH (n {key: $key}) RETURN n", {})


def test_sketch_and_kg_use_kuzu_by_default():
    # the paper reads its graph with Cypher queries (SKETCH §3.2.2.1): Kùzu is the default store
    from rag_lab.methods.baselines.config import KGConfig
    from rag_lab.methods.sketch.config import SketchConfig

    assert SketchConfig().graph_store == "kuzu" and KGConfig().graph_store == "kuzu"
    assert SketchConfig(graph_store="networkx").graph_store == "networkx"


def test_unknown_store_name():
    with pytest.raises(ValueError, match="unknown graph_store"):
        make_graph_store("neo4j")


def _graph(store="networkx"):
    return KnowledgeGraph.from_triples(C, TRIPLES, TableEmbedder(AXES), store)


def test_query_entity_matching():
    g = _graph()
    # "milanese risotto" = 0.9 * risotto axis + 0.6 * Milan axis, normalised by sqrt(0.81 + 0.36) = 1.0817:
    # cosine 0.832 with "risotto alla milanese", 0.555 with "Milan", 0 with the rest
    g.embedder.vectors["milanese risotto"] = g.embedder.vectors["risotto alla milanese"] * 0.9 + \
        g.embedder.vectors["Milan"] * 0.6
    g.embedder.vectors["milanese risotto"] /= 1.0816653826391966
    g.embedder.vectors["pasta"] = g.embedder.vectors["Saffron"] * 0.3 + g.embedder.vectors["Milan"] * 0.3
    g.embedder.vectors["pasta"] /= 0.4242640687119285                  # 0.707 with both: below 0.75
    matches, tokens = g.match(["The Saffron", "milanese risotto", "pasta"], threshold=0.75, max_per_entity=3)
    assert [(m.entity, m.node, m.how) for m in matches] == [
        ("The Saffron", "saffron", "exact"), ("milanese risotto", "risotto alla milanese", "embedding")]
    assert matches[1].similarity == pytest.approx(0.832, abs=1e-3)
    assert tokens == 3                                                 # the two non-exact names, in words
    low, _ = g.match(["milanese risotto"], threshold=0.5, max_per_entity=3)
    assert [m.node for m in low] == ["risotto alla milanese", "milan"]     # most similar first
    one, _ = g.match(["milanese risotto"], threshold=0.5, max_per_entity=1)
    assert [m.node for m in one] == ["risotto alla milanese"]
    with pytest.raises(ValueError, match="threshold must be in"):
        g.match(["x"], threshold=1.5, max_per_entity=3)


def test_entity_matching_at_the_threshold_and_on_ties():
    """A similarity at the threshold passes and is noted as a near-tie; equal similarities go by node key."""
    from rag_lab.core import ties

    g = _graph()
    v = g.embedder.vectors
    v["x"] = np.asarray([0.0, 0.0, 0.6, 0.0, 0.8], np.float32)             # 0.8 Saffron, 0.6 Milan
    v["y"] = ((v["Abruzzo"] + v["Lombardy"]) / np.float32(np.sqrt(2))).astype(np.float32)   # 0.7071 with both
    with ties.collecting() as notes:
        matches, _ = g.match(["x", "y"], threshold=0.6, max_per_entity=3)
    # float32 0.6 is 0.6000000238 >= 0.6: Milan passes, 2.4e-8 from the threshold (noted); y's tie: key order
    assert [(m.entity, m.node) for m in matches] == [("x", "saffron"), ("x", "milan"), ("y", "abruzzo"),
                                                    ("y", "lombardy")]
    assert [(n.what, n.first, n.second) for n in notes] == [("SKETCH entity match", "x ~ milan", "threshold 0.6")]
    one, _ = g.match(["y"], threshold=0.6, max_per_entity=1)
    assert [m.node for m in one] == ["abruzzo"]
    assert g.match(["y"], threshold=0.71, max_per_entity=3)[0] == []


@pytest.mark.parametrize("store_name", ["networkx", "kuzu"])
def test_chunk_ranking_facts_and_paths(store_name):
    g = _graph(store_name)
    sub = g.neighbourhood(["saffron"], 1)
    # saffron (distance 0) is in c1 and c4: +1 each; the risotto (1 hop) in c1, c2: +1/2 each;
    # Abruzzo (1 hop) in c4: +1/2. c1 = c4 = 1.5 (c1 first in the corpus), c2 = 0.5
    assert [(c.id, s) for c, s in g.rank_chunks(sub)] == [("c1", 1.5), ("c4", 1.5), ("c2", 0.5)]
    assert g.facts(sub) == ["Saffron -[colours]-> risotto alla milanese", "Saffron -[grows_in]-> Abruzzo"]
    two = g.neighbourhood(["saffron"], 2)
    assert {k: [(e.relation) for e in chain] for k, chain in shortest_paths(two).items()} == {
        "abruzzo": ["grows_in"], "risotto alla milanese": ["colours"], "milan": ["colours", "comes_from"]}
    assert g.paths(two)[-1] == ["Saffron -[colours]-> risotto alla milanese",
                                "risotto alla milanese -[comes_from]-> Milan"]
    context = g.structured_context(sub, [C[0]], max_facts=50)
    assert context == ("Facts:\nSaffron -[colours]-> risotto alla milanese\nSaffron -[grows_in]-> Abruzzo\n\n"
                       "Contexts:\n" + C[0].text)
    g.close()
