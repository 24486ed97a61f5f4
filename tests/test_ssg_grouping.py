"""Context-grouping strategies on hand-made graphs (ssg_handmade.py); a scripted random stream
picks the start so every group is worked out by hand."""
from __future__ import annotations

import random

import pytest

from rag_lab.methods.ssg.grouping import (build_groups, group_question, intra_document, random_grouping, read_passage,
                                          sequential_multi_hop, theme_based)
from ssg_handmade import A, B, main_graph, hand_graph, sa, sb


class FirstChoice:
    """A stand-in for random.Random: ``choice`` returns the scripted items in turn, ``sample`` the first n."""

    def __init__(self, *picks):
        self.picks = list(picks)

    def choice(self, seq):
        pick = self.picks.pop(0)
        assert pick in seq
        return pick

    def sample(self, seq, n):
        return list(seq)[:n]


@pytest.fixture(scope="module")
def graph():
    return main_graph()[0]


def test_intra_document_uses_the_whole_document_not_only_edges(graph):
    # from A0 (A s0-s2): A1 and A2 share sentences, so the only candidate is A3 (not an edge of A0);
    # after A3 every window of A is visited or overlapping: stop with 6 sentences
    g = intra_document(graph, FirstChoice(A(0)), max_sentences=10)
    assert g.path == [A(0), A(3)] and g.sentence_ids == sa(0, 1, 2, 3, 4, 5) and g.doc_ids(graph) == ["A"]


def test_intra_document_cap(graph):
    g = intra_document(graph, FirstChoice(A(0)), max_sentences=4)
    assert g.sentence_ids == sa(0, 1, 2, 3)           # the cap cuts A3's sentences in order


def three_documents():
    # one window per document (3 sentences, window 3); window angles X 0, Y 30, Z 40; top_x=2
    # themes: X (1,0) and Z (.8,.6) are close, Y (0,1) is not -> top_t=1 bridges X->Z, Z->X, Y->Z
    return hand_graph({"X": [0], "Y": [30], "Z": [40]}, {"X": [0] * 3, "Y": [0] * 3, "Z": [0] * 3},
                      theme_angles={"X": 0, "Y": 90, "Z": 36.87},
                      themes={"X": ["planning", "search"], "Y": ["cooking"], "Z": ["planning", "games"]},
                      top_k=2, top_x=2, top_t=1)[0]


def test_theme_based_prefers_theme_bridges_over_window_similarity():
    g3 = three_documents()
    assert g3.bridged_docs("X") == ["Z"] and g3.bridged_docs("Z") == ["X"]
    # from X: Y is the more similar window (cos30 > cos40) but only Z is theme-bridged -> Z;
    # from Z: X visited, Y not bridged -> with the fallback, Y; then nothing is left
    g = theme_based(g3, FirstChoice("X#w0"), max_sentences=10)
    assert g.path == ["X#w0", "Z#w0", "Y#w0"] and len(g.sentence_ids) == 9
    g = theme_based(g3, FirstChoice("X#w0"), max_sentences=10, fallback_to_inter_document=False)
    assert g.path == ["X#w0", "Z#w0"]


def test_theme_based_hops_only_across_documents(graph):
    # from A2 (A s2-s4): its inter neighbour B2 (B s2-s4); from B2 the inter neighbour A3 shares A s3, s4: stop
    g = theme_based(graph, FirstChoice(A(2)), max_sentences=10)
    assert g.path == [A(2), B(2)] and g.sentence_ids == sa(2, 3, 4) + sb(2, 3, 4)


def test_read_passage_direction_and_document_edges(graph):
    # A1 (25 deg): previous window A0 cos15=.966 beats next A2 cos35=.819 -> read backwards: A s0-s3
    assert read_passage(graph, A(1), 4) == (sa(0, 1, 2, 3), [A(1), A(0)])
    # A3 is the last window: backwards; B0 is the first: forwards
    assert read_passage(graph, A(3), 4)[0] == sa(2, 3, 4, 5)
    assert read_passage(graph, B(0), 4) == (sb(0, 1, 2, 3), [B(0), B(1)])
    # B2 backwards to the start of the document for five sentences
    assert read_passage(graph, B(2), 5)[0] == sb(0, 1, 2, 3, 4)


def test_sequential_multi_hop(graph):
    # read 4 from A1 (A s0-s3, windows A1, A0); theme hop from A1/A0 into a new document: B0 (their
    # inter neighbour); read 4 from B0 forwards (B s0-s3)
    g = sequential_multi_hop(graph, FirstChoice(A(1)), num_reading_hops=2, num_paragraph_sentences=4,
                             num_cross_doc_hops=1)
    assert g.sentence_ids == sa(0, 1, 2, 3) + sb(0, 1, 2, 3)
    assert g.path == [A(1), A(0), B(0), B(1)]
    assert g.params["readings"] == [sa(0, 1, 2, 3), sb(0, 1, 2, 3)]
    # no hop allowed: one reading only
    g = sequential_multi_hop(graph, FirstChoice(A(1)), num_reading_hops=3, num_paragraph_sentences=4,
                             num_cross_doc_hops=0)
    assert g.sentence_ids == sa(0, 1, 2, 3)


def test_random_grouping(graph):
    g = random_grouping(graph, FirstChoice(A(0), B(0)), max_sentences=5)
    assert g.path == [A(0), B(0)] and g.sentence_ids == sa(0, 1, 2) + sb(0, 1)
    g = random_grouping(graph, random.Random(3), max_sentences=10, chunks_per_group=2)
    assert sorted(graph.window(w).doc_id for w in g.path) == ["A", "B"]     # one window per document


def test_build_groups_is_reproducible_and_distinct(graph):
    a = build_groups(graph, "intra_document", 3, seed=5)
    b = build_groups(graph, "intra_document", 3, seed=5)
    assert [x.sentence_ids for x in a] == [x.sentence_ids for x in b]
    assert len({frozenset(x.sentence_ids) for x in a}) == 3
    assert all(x.params["seed"] == 5 for x in a)
    with pytest.raises(ValueError, match="unknown grouping strategy 'nope'"):
        build_groups(graph, "nope", 1)


def test_group_question_carries_the_exact_gold(graph):
    g = intra_document(graph, FirstChoice(A(0)), max_sentences=10)
    q = group_question(graph, g, "q1", "What?", "That.")
    assert q.gold_doc_ids == ["A"] and q.gold_contexts == [graph.sentence(s).text for s in sa(0, 1, 2, 3, 4, 5)]
    assert q.meta["strategy"] == "intra_document" and q.meta["group"]["path"] == [A(0), A(3)]


def test_generate_questions_through_an_llm_reasoner(graph):
    from fake_openai_server import FakeOpenAIServer
    from rag_lab.methods.ssg.questions import generate_questions
    from rag_lab.reasoning import get_reasoner

    groups = [intra_document(graph, FirstChoice(A(0))), theme_based(graph, FirstChoice(A(2)))]
    with FakeOpenAIServer() as server:
        # group 1: a valid reply; group 2: two invalid replies (one retry) -> skipped
        server.queue('{"question": "Which facts does document A state?", "answer": "Facts zero to five."}',
                     "not json at all", '{"question": "too"}')
        reasoner = get_reasoner(f"openai-compatible:fake-model@{server.base_url}", cache=False)
        questions, skipped = generate_questions(reasoner, graph, groups)
        prompt = server.requests[0]["messages"][-1]["content"]
    assert skipped == 1 and len(questions) == 1
    q = questions[0]
    assert q.question == "Which facts does document A state?" and q.gold_contexts == groups[0].texts(graph)
    assert q.meta["strategy"] == "intra_document" and graph.sentence("A#s5").text in prompt
    assert reasoner.usage.per_job["question"].llm_calls == 3
    with pytest.raises(ValueError, match="needs an LLM reasoner"):
        generate_questions(object(), graph, groups)


def test_fresh_questions_write_one_question_a_group_of_every_strategy(graph):
    from rag_lab.methods.ssg.grouping import GROUPING_STRATEGIES
    from rag_lab.methods.ssg.questions import fresh_questions

    class Writer:      # an LLM reasoner that always replies validly
        name = "writer"

        def complete_json(self, job, messages, schema):
            return {"question": "What do these sentences state?", "answer": "They state facts about A and B."}

    questions, skipped = fresh_questions(Writer(), graph, 2, seed=5)
    groups = [g for s in GROUPING_STRATEGIES for g in build_groups(graph, s, 2, seed=5)]
    assert skipped == 0 and len(questions) == len(groups) == 2 * len(GROUPING_STRATEGIES)
    assert [q.meta["strategy"] for q in questions] == [g.strategy for g in groups]
    assert [q.gold_contexts for q in questions] == [g.texts(graph) for g in groups]
