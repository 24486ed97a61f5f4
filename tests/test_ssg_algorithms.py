"""The seven SSG algorithms on the hand-made graph of ssg_handmade.py (query at 0 degrees).
Every path, stopping point and sentence list below was worked out by hand first; the numbers
in the comments are cosines of angle differences."""
from __future__ import annotations

import pytest

from rag_lab.methods.ssg import algorithms as alg
from rag_lab.methods.ssg.algorithms import (EARLY_STOP, MAX_SENTENCES, NO_CANDIDATES, NOT_INCREASING, REASONER_STOP,
                                            basic_retrieval, llm_guided_traversal, query_traversal, ssg_traversal,
                                            triangulation_average, triangulation_fulldim, triangulation_geometric_3d)
from rag_lab.reasoning import Choice
from ssg_handmade import A, B, hand_graph, main_graph, query_at, sa, sb


@pytest.fixture(scope="module")
def graph():
    return main_graph()[0]


def test_anchor_is_the_window_most_similar_to_the_query(graph):
    assert query_at(graph).anchor() == A(0)            # 10 degrees from the query
    assert query_at(graph, 95).anchor() == B(2)        # 5 degrees from B2 at 100


def test_basic_retrieval(graph):
    # ranking: A0 .985, B0 .940, A1 .906, B1 .643, ...
    # take A0 (3 sentences); 3 < 5 so take B0 (6); best sentence A s2 (26 deg) .899 < A1 .906: take A1 (adds A s3, 7);
    # best sentence .899 > next window B1 .643 and 7 >= 5: stop.
    r = basic_retrieval(graph, query_at(graph), max_sentences=10)
    assert r.path == [A(0), B(0), A(1)]
    assert r.sentences == sa(0, 1, 2) + sb(0, 1, 2) + sa(3)
    assert r.stop_reason == EARLY_STOP


def test_basic_retrieval_cap_keeps_the_most_query_similar_new_sentences(graph):
    # A0 gives 3; B0 has room for one: B s1 (-30 deg, .866) beats s0 (-45, .707) and s2 (-60, .5)
    r = basic_retrieval(graph, query_at(graph), max_sentences=4)
    assert r.sentences == sa(0, 1, 2) + sb(1)
    assert r.path == [A(0), B(0)] and r.stop_reason == MAX_SENTENCES


def test_query_traversal(graph):
    # A0 -> neighbours A1 .906, A2 .5, B0 .940: B0 (6 sentences)
    # B0 -> B1 .643, B2 -.174 (A0 visited): B1 (adds B s3: 7)
    # B1 -> only B2 left (B0, A0 visited): B2 (adds B s4: 8)
    # B2 -> A3 .174; 8 sentences gathered and best sentence B s3 (-10 deg, .985) > .174: stop
    r = query_traversal(graph, query_at(graph), max_sentences=10)
    assert r.path == [A(0), B(0), B(1), B(2)]
    assert r.sentences == sa(0, 1, 2) + sb(0, 1, 2, 3, 4)
    assert r.stop_reason == EARLY_STOP
    assert [s.candidates for s in r.steps] == [7, 3, 2, 1]


def test_query_traversal_stops_at_max_sentences(graph):
    r = query_traversal(graph, query_at(graph), max_sentences=7)
    assert r.path == [A(0), B(0), B(1)] and len(r.sentences) == 7 and r.stop_reason == MAX_SENTENCES


def test_query_traversal_does_not_stop_early_below_eight_sentences():
    # same graph but query at 100 degrees: anchor B2 (1.0). B2 -> A3 .940 (B0 -.5, B1 -.866): 6 sentences;
    # A3 -> A2 .766 (A1 .259): A2 (adds A s2, 7); the best sentence B s4 (110, .985) beats every
    # candidate from here on, but fewer than 8 are gathered, so A2 -> A1 .259 (adds A s1, 8);
    # A1 -> A0 0.0 (B0 -.5): now 8 sentences and .985 > 0: stop.
    g = main_graph()[0]
    r = query_traversal(g, query_at(g, 100), max_sentences=10)
    assert r.path == [B(2), A(3), A(2), A(1)]
    assert r.sentences == sb(2, 3, 4) + sa(3, 4, 5) + sa(2) + sa(1)
    assert r.stop_reason == EARLY_STOP


def test_triangulation_average(graph):
    # score(n) = (q.c + q.n + c.n) / 3
    # A0: A1 (.985+.906+.966)/3=.952, A2 .709, B0 (.985+.940+.866)/3=.930 -> A1 (adds A s3: 4)
    # A1: A2 (.906+.5+.819)/3=.742, B0 (.906+.940+.707)/3=.851 -> B0 (7)
    # B0: B1 (.940+.643+.866)/3=.816, B2 .089 -> B1 (adds B s3: 8)
    # B1: only B2 (.643-.174-.866)/3=-.132; 8 gathered, sentence triangles are higher (e.g. B s3) -> stop
    r = triangulation_average(graph, query_at(graph), max_sentences=10)
    assert r.path == [A(0), A(1), B(0), B(1)]
    assert r.sentences == sa(0, 1, 2, 3) + sb(0, 1, 2, 3)
    assert r.stop_reason == EARLY_STOP
    assert r.steps[1].score == pytest.approx((0.98481 + 0.90631 + 0.96593) / 3, abs=1e-4)


def test_triangulation_fulldim(graph):
    # |centroid(q,c,n) - q| = |c + n - 2q| / 3 is smallest where 2 q.n - c.n is largest
    # A0: A1 2(.906)-.966=.847, A2 .357, B0 2(.940)-.866=1.013 -> B0 (6)
    # B0: B1 2(.643)-.866=.420, B2 2(-.174)+.5=.153 -> B1 (7); B1: B2 only (8)
    # B2: A3 2(.174)-.940=-.592; sentence A s2 gives 2(.899)-cos74(.276)=1.52 > -.592: stop
    r = triangulation_fulldim(graph, query_at(graph), max_sentences=10)
    assert r.path == [A(0), B(0), B(1), B(2)] and r.stop_reason == EARLY_STOP
    assert r.steps[1].score == pytest.approx(-abs(6 + 2 * 0.86603 - 4 * 0.98481 - 4 * 0.93969) ** 0.5 / 3, abs=1e-4)


def test_triangulation_geometric_3d_on_planar_data_matches_full_dimension(graph):
    # the vectors are 2-D, so the 3-D PCA is a rotation plus a shift and keeps every distance:
    # the same decisions as triangulation_fulldim
    r = triangulation_geometric_3d(graph, query_at(graph), max_sentences=10)
    assert r.path == [A(0), B(0), B(1), B(2)] and r.stop_reason == EARLY_STOP


def test_triangulation_average_and_query_traversal_differ_at_the_first_hop(graph):
    # B0 is closer to the query, A1 closer to the anchor: the averaged triangle prefers A1
    assert query_traversal(graph, query_at(graph), 10).path[1] == B(0)
    assert triangulation_average(graph, query_at(graph), 10).path[1] == A(1)


SSG_WINDOWS = {"C": [0, 10, 20, 30, 70]}              # window 2, stride 1 over six sentences


@pytest.mark.parametrize("d_angle,path,stop", [
    # D at 60: from C2 the best non-overlapping hop is D, cos40=.766 <= previous hop .940: stop
    (60, ["C#w0", "C#w2"], NOT_INCREASING),
    # D at 35: from C2, D is cos15=.966 > .940: take it; from D the only neighbour C3 overlaps: stop
    (35, ["C#w0", "C#w2", "D#w0"], NO_CANDIDATES),
])
def test_ssg_traversal(d_angle, path, stop):
    # C windows (2 sentences): C0=[s0 s1] 0, C1=[s1 s2] 10, C2=[s2 s3] 20, C3=[s3 s4] 30, C4=[s4 s5] 70; D0=[s0 s1]
    # top_k=4, top_x=1, query at 0: anchor C0. C1 is the most similar to C0 (.985) but shares s1:
    # skipped; C2 .940 beats C3 .866, C4 .342 and D -> C2 (first hop, nothing to compare with).
    g, _ = hand_graph({**SSG_WINDOWS, "D": [d_angle]}, {"C": [0] * 6, "D": [0, 0]}, window=2, top_k=4, top_x=1)
    r = ssg_traversal(g, query_at(g), max_sentences=10)
    assert r.path == path and r.stop_reason == stop
    assert r.steps[1].score == pytest.approx(0.93969, abs=1e-4)


def test_ssg_traversal_ignores_the_query_after_the_anchor(graph):
    # main graph: A0 -> candidates must not share sentences with A s0-s2: A1, A2 do; B0 (.866) is left.
    # B0 -> B1, B2 share B s1/s2, A0 visited: no candidates.
    r = ssg_traversal(graph, query_at(graph), max_sentences=10)
    assert r.path == [A(0), B(0)] and r.stop_reason == NO_CANDIDATES


class ScriptedReasoner:
    """Fake reasoner: returns the scripted choices in order and records what it was shown."""

    name = "scripted"

    def __init__(self, *choices):
        from rag_lab.reasoning import Usage
        self.choices, self.calls, self.usage = list(choices), [], Usage()

    def choose_next(self, query, gathered, candidates, similarities, candidate_ids=None):
        self.calls.append({"query": query, "gathered": list(gathered), "candidates": list(candidates),
                           "similarities": list(similarities), "ids": list(candidate_ids)})
        return self.choices.pop(0)


def test_llm_guided_traversal_follows_the_reasoner(graph):
    # A0: candidates by query similarity B0 .940, A1 .906, A2 .5; the reasoner picks the 2nd -> A1 (4 sentences)
    # A1: candidates B0, A2; the reasoner stops
    reasoner = ScriptedReasoner(Choice("next", 1), Choice("stop"))
    r = llm_guided_traversal(graph, query_at(graph, text="what?"), 10, reasoner)
    assert r.path == [A(0), A(1)] and r.stop_reason == REASONER_STOP
    assert r.llm_choices == 2 and r.llm_fallbacks == 0
    first, second = reasoner.calls
    assert first["ids"] == [B(0), A(1), A(2)] and first["query"] == "what?"
    assert first["similarities"] == pytest.approx([0.93969, 0.90631, 0.5], abs=1e-4)
    assert first["candidates"][0] == graph.window(B(0)).text
    assert len(first["gathered"]) == 3 and second["ids"] == [B(0), A(2)] and len(second["gathered"]) == 4


def test_llm_guided_invalid_choice_falls_back_to_the_most_similar_candidate(graph):
    reasoner = ScriptedReasoner(Choice("next", 7), Choice("maybe"), Choice("stop"))
    r = llm_guided_traversal(graph, query_at(graph), 10, reasoner)
    # index 7 of 3 candidates -> B0 (most similar); "maybe" at B0 -> B1 (.643 > B2 -.174); then stop
    assert r.path == [A(0), B(0), B(1)] and r.llm_fallbacks == 2
    assert [s.fallback for s in r.steps] == [False, True, True]


def test_llm_guided_needs_a_reasoner(graph):
    with pytest.raises(ValueError, match="needs a reasoner"):
        llm_guided_traversal(graph, query_at(graph), 10, None)


def test_llm_guided_fallback_on_invalid_json_from_an_llm(graph):
    from fake_openai_server import FakeOpenAIServer
    from rag_lab.reasoning import get_reasoner

    with FakeOpenAIServer() as server:
        # first hop: two invalid replies (the reasoner retries once) -> its documented fallback;
        # second hop: a valid "stop"
        server.queue("I think number two looks best", "{choice: 2", '{"choice": "stop", "reasoning": "enough"}')
        reasoner = get_reasoner(f"openai-compatible:fake-model@{server.base_url}", cache=False)
        r = llm_guided_traversal(graph, query_at(graph, text="which window?"), 10, reasoner)
        prompt = server.requests[0]["messages"][-1]["content"]
    assert r.path == [A(0), B(0)] and r.stop_reason == REASONER_STOP
    assert r.llm_fallbacks == 1 and r.steps[1].fallback
    assert reasoner.usage.per_job["choose_next"].llm_fallbacks == 1
    assert "which window?" in prompt and f"[{B(0)}]" in prompt and "0.94" in prompt


def test_every_algorithm_has_the_same_signature_and_never_revisits(graph):
    for name, fn in alg.ALGORITHMS.items():
        reasoner = ScriptedReasoner(*[Choice("next", 0)] * 10) if name == "llm_guided_traversal" else None
        r = fn(graph, query_at(graph, 30), 6, reasoner)
        assert r.algorithm == name
        assert len(r.path) == len(set(r.path)) and len(r.sentences) == len(set(r.sentences)) <= 6
        assert r.sentences == [s for step in r.steps for s in step.added]


def test_similarities_come_from_the_query_context_computed_once(graph, monkeypatch):
    ctx = query_at(graph)
    ctx.window_sims[graph.window_row[B(0)]] = 0.99     # pretend B0 is the best window: the cache is what counts
    assert basic_retrieval(graph, ctx, 10).path[0] == B(0)
    assert query_traversal(graph, ctx, 10).path[0] == B(0)


def test_triangulation_geometric_3d_walks_in_the_pca_coordinates():
    # move B0's 3-D point far away (its full vector stays): the 3-D walk now prefers A1 (next best
    # triangle, .847 against A2 .357 in the hand table), while the full-dimensional walk still takes B0
    g = main_graph()[0]
    g.window_coords3 = g.window_coords3.copy()
    g.window_coords3[g.window_row[B(0)]] += 100.0
    assert triangulation_geometric_3d(g, query_at(g), 10).path[1] == A(1)
    assert triangulation_fulldim(g, query_at(g), 10).path[1] == B(0)


# -- the offline reasoner's own choice (llm_guided_traversal without an LLM) --------------------
def test_marginal_relevance_choice_by_hand():
    from rag_lab.reasoning.offline import marginal_relevance_choice

    # scores .5*sim - .5*red: .5*.6-.5*.9 = -.15, .5*.5-.5*.2 = .15, .5*.4-.5*.3 = .05 -> candidate 1,
    # where query similarity alone would take candidate 0
    assert marginal_relevance_choice([0.6, 0.5, 0.4], [0.9, 0.2, 0.3], 3).candidate == 1
    # 8 gathered, best score .5*.5-.5*.5 = 0 (not above zero) -> stop; with 7 gathered -> next, candidate 1
    assert marginal_relevance_choice([0.6, 0.5], [0.7, 0.5], 8).action == "stop"
    assert marginal_relevance_choice([0.6, 0.5], [0.7, 0.5], 7) == Choice(
        "next", 1, "highest marginal relevance 0.000 (query similarity 0.500, redundancy 0.500)")
    # equal scores -> the earlier candidate; lambda 1 is query similarity alone
    assert marginal_relevance_choice([0.5, 0.5], [0.1, 0.1], 0).candidate == 0
    assert marginal_relevance_choice([0.6, 0.5, 0.4], [0.9, 0.2, 0.3], 3, lam=1.0).candidate == 0
    assert marginal_relevance_choice([], [], 9).action == "stop"
    with pytest.raises(ValueError, match="1 redundancies for 2 similarities"):
        marginal_relevance_choice([0.1, 0.2], [0.3], 0)
    with pytest.raises(ValueError, match=r"lambda must be in \[0, 1\], got 1.5"):
        marginal_relevance_choice([0.1], [0.3], 0, lam=1.5)
