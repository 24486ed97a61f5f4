"""One walk laid out step by step (walkthrough.py) on the hand-made graph of ssg_handmade.py, query at
0 degrees. Every score, choice and stop below was worked out by hand first (cosines of angle
differences, the same numbers as test_ssg_algorithms.py)."""
from __future__ import annotations

import pytest

from rag_lab.methods.ssg.algorithms import ALGORITHMS, EARLY_STOP, NOT_INCREASING
from rag_lab.core.types import Question
from rag_lab.methods.ssg.walkthrough import gold_sentence_ids, guide, stop_sentence, trace_walk
from ssg_handmade import A, B, hand_graph, main_graph, query_at, sa, sb, unit

GOLD = {*sb(3), *sa(1)}       # B s3 (-10 deg) and A s1 (40 deg), chosen by hand
QUESTION = Question("q", "the query", gold_doc_ids=["A", "B"],      # GOLD by span overlap (gold_sentence_ids)
                    gold_contexts=["Document B states fact three.", "Document A states fact one."])


class AngleEmbedder:
    """Every query at 0 degrees, as ``query_at`` (the hand-made graph's vectors are 2-D)."""

    def encode_one(self, text):
        return unit(0)


@pytest.fixture(scope="module")
def graph():
    return main_graph()[0]


def walk_of(graph, algorithm: str, question: Question = QUESTION, documents=None, max_sentences=10, shown: int = 5):
    return trace_walk(graph, question, documents or main_graph()[1], AngleEmbedder(), algorithm, max_sentences,
                      shown=shown)


def test_query_traversal_walk_step_by_step(graph):
    # step 0: anchor A0 (.985), adds A s0-s2 (A s1 gold: 1 of 3)
    # step 1 at A0: candidates by query similarity B0 .940, A1 .906, A2 .5 -> take B0 (+3, 6 gathered)
    # step 2 at B0: B1 .643, B2 -.174 -> take B1 (+ B s3, gold: 7 gathered)
    # step 3 at B1: B2 -.174 only -> take it (+ B s4, 8 gathered)
    # step 4 at B2: A3 .174; 8 gathered and B s3 scores .985 > .174: stop
    walk = walk_of(graph, "query_traversal")
    steps = walk.steps
    assert steps.loc[1, "candidate"].tolist() == [B(0), A(1), A(2)]
    assert steps.loc[1, "score"].tolist() == pytest.approx([0.93969, 0.90631, 0.5], abs=1e-4)
    assert (steps.loc[1, "at"] == A(0)).all()
    assert steps.loc[1, "decision"].tolist()[0] == "take (rank 1 of 3): +3 sentences (0 gold), 6 gathered"
    assert steps.loc[1, "decision"].tolist()[1:] == ["", ""]
    assert steps.loc[2, "candidate"].tolist() == [B(1), B(2)]
    assert steps.loc[2, "decision"].tolist()[0] == "take (rank 1 of 2): +1 sentences (1 gold), 7 gathered"
    assert steps.loc[0, "gold in window"] == "1/3" and steps.loc[0, "decision"].startswith("anchor")
    last = steps.loc[4]
    assert last["candidate"] == A(3) and last["score"] == pytest.approx(0.17365, abs=1e-4)
    assert last["decision"] == "stop: gathered sentence B#s3 scores 0.985 > best candidate 0.174 (8 gathered)"
    assert walk.result.stop.rule == EARLY_STOP
    assert walk.stop == ("stopped: 8 sentences gathered (at least 8) and the gathered sentence B#s3 scores 0.985, "
                         "above the best candidate A#w3 (0.174): nothing left to take beats what is already gathered.")
    # gathered sentences in order, gold marked; nothing gold is missed
    assert walk.gathered.index.tolist() == sa(0, 1, 2) + sb(0, 1, 2, 3, 4)
    assert walk.gathered.loc[sb(3)[0], "gold"] == "✓" and walk.gathered.loc[sa(0)[0], "gold"] == ""
    assert "2 are gold (0 gold sentences missed)" in walk.sentence()


def test_basic_retrieval_walk_marks_the_missed_gold(graph):
    # A0, B0, A1 taken; then A s2 (.899) > next window B1 (.643) with 7 >= 5 gathered: stop. B s3 is never gathered.
    walk = walk_of(graph, "basic_retrieval")
    assert walk.steps["candidate"].tolist() == [A(0), B(0), A(1), B(1)]
    assert walk.steps["decision"].iloc[-1] == "stop: gathered sentence A#s2 scores 0.899 > best candidate 0.643 (7 gathered)"
    missed = walk.gathered[walk.gathered["gold"] == "✓ missed"]
    assert missed.index.tolist() == sb(3) and missed["step"].isna().all()


def test_triangulation_average_walk_scores_are_triangle_means(graph):
    # step 1 at A0: A1 (.985+.906+.966)/3 = .952, B0 (.985+.940+.866)/3 = .930, A2 (.985+.5+.643)/3 = .709
    walk = walk_of(graph, "triangulation_average")
    assert walk.steps.loc[1, "candidate"].tolist() == [A(1), B(0), A(2)]
    assert walk.steps.loc[1, "score"].tolist() == pytest.approx([0.9524, 0.9302, 0.7094], abs=1e-3)


def test_ssg_traversal_walk_stops_when_the_hop_similarity_falls():
    # C windows at 0, 10, 20, 30, 70 degrees (2 sentences each), D0 at 60; anchor C0. C1 shares a
    # sentence: skipped. Step 1 at C0: C2 .940, C3 .866, D0 .5, C4 .342 -> C2. At C2 (C1, C3 share a
    # sentence): D0 cos40 = .766, C4 cos50 = .643; the best, .766, is not above .940: stop.
    g, docs = hand_graph({"C": [0, 10, 20, 30, 70], "D": [60]}, {"C": [0] * 6, "D": [0, 0]}, window=2, top_k=4, top_x=1)
    walk = walk_of(g, "ssg_traversal", Question("q", "the query"), docs)
    assert walk.steps.loc[1, "candidate"].tolist() == ["C#w2", "C#w3", "D#w0", "C#w4"]
    assert walk.result.stop.rule == NOT_INCREASING
    assert walk.steps.loc[2, "candidate"].tolist() == ["D#w0", "C#w4"]
    assert walk.steps.loc[2, "decision"].tolist() == ["stop: best hop 0.766 <= previous hop 0.940", ""]
    assert walk.stop == ("stopped: the best hop from C#w2 is D#w0 at 0.766, not above the previous hop's 0.940 "
                         "(exploration potential falls).")


def test_shown_keeps_the_best_candidates_and_the_one_taken(graph):
    walk = walk_of(graph, "query_traversal", shown=1)
    assert walk.steps.loc[1, "candidate"] == B(0)          # one row per step: the best, which was taken


def test_stop_sentence_needs_a_recorded_stop(graph):
    result = walk_of(graph, "query_traversal").result
    result.stop = None
    with pytest.raises(ValueError, match="records no stopping comparison"):
        stop_sentence(result)


def test_guide_covers_every_algorithm_with_the_codes_minimum_counts():
    table = guide()
    assert list(table.index) == list(ALGORITHMS)
    assert "5 sentences" in table.loc["basic_retrieval", "stops when"]
    assert "8 sentences" in table.loc["query_traversal", "stops when"]
    assert "previous hop" in table.loc["ssg_traversal", "stops when"]


def test_gold_sentence_ids_by_span_overlap():
    g, docs = main_graph()
    from rag_lab.core.types import Question

    q = Question("q", "?", gold_doc_ids=["B"], gold_contexts=["Document B states fact three."])
    assert gold_sentence_ids(g, q, docs) == set(sb(3))
    q2 = Question("q2", "?", gold_doc_ids=["A"], gold_contexts=["Document A states fact one.", "Document A states fact five."])
    assert gold_sentence_ids(g, q2, docs) == set(sa(1, 5))



def test_a_walk_is_traced_from_the_questions_text_at_its_strategys_cap_against_its_gold(graph):
    # the walk carries what it was marked against: GOLD by span overlap, the query at 0 degrees
    walk = walk_of(graph, "query_traversal")
    assert walk.gold == GOLD and walk.query.text == "the query"
    assert walk.query.window_sim(A(0)) == pytest.approx(query_at(graph).window_sim(A(0)))
    # a theme_based question capped at 4 by its strategy (not SSGConfig's 10): the anchor's 3, then 1 of B0's
    capped = Question("q", "the query", gold_doc_ids=["B"], gold_contexts=["Document B states fact three."],
                      meta={"strategy": "theme_based"})
    walk = walk_of(graph, "query_traversal", capped, max_sentences={"theme_based": 4})
    assert len(walk.result.sentences) == 4 and walk.gold == set(sb(3))
    assert walk.gathered.loc[sb(3)[0], "gold"] == "✓ missed"
