"""core/ties.py: rankings at a stated precision, near-ties noted with their labels. Every expected
order below is worked out by hand from TIE_TOL = 1e-5 and NOISE = 5e-6."""
import json

import numpy as np
import pytest

from rag_lab.core import ties
from rag_lab.core.index import VectorIndex


@pytest.fixture(autouse=True)
def fresh(monkeypatch):
    monkeypatch.delenv(ties.NEAR_TIES_ENV, raising=False)
    ties.forget()
    yield
    ties.forget()


def test_scores_within_the_tolerance_are_tied_and_ordered_by_key():
    # 0.900003 leads; 0.9 is 3e-6 below it (< 1e-5 - 5e-6): tied, so row 1 comes before row 2
    assert ties.order([0.5, 0.9, 0.900003, 0.3]) == [1, 2, 0, 3]
    assert ties.order([0.7, 0.7], keys=[5, 2]) == [1, 0]
    assert ties.order([0.2, 0.9, 0.9], k=1) == [1]
    assert ties.best([0.1, 0.4, 0.4 + 2e-6]) == 1
    assert ties.recorded() == []          # gaps of 0, 2e-6, 3e-6: clear ties, nothing noted


def test_a_gap_within_noise_of_the_tolerance_is_noted_with_its_labels():
    with ties.deciding(method="naive", question="q1"):
        assert ties.order([0.9, 0.9 - 1.2e-5, 0.1], what="vector search", names=["a", "b", "c"]) == [0, 1, 2]
    [tie] = ties.recorded()
    assert (tie.what, tie.first, tie.second) == ("vector search", "a", "b")
    assert tie.gap == pytest.approx(1.2e-5) and tie.labels == {"method": "naive", "question": "q1"}
    assert tie.describe() == "vector search: a vs b, gap 1.20e-05 (method naive, question q1)"


def test_only_near_ties_touching_the_first_k_are_noted():
    scores = [0.9, 0.5, 0.5 - 1.1e-5]          # the near-tie is at places 2-3
    ties.order(scores, k=1)
    assert ties.recorded() == []
    ties.order(scores, k=2)
    assert len(ties.recorded()) == 1


def test_threshold_decisions_note_values_within_noise():
    assert ties.above(0.1 + 1e-6, 0.1, what="membership") is True
    assert ties.above(0.1 - 1e-6, 0.1) is False
    assert ties.above(0.2, 0.1) is True
    assert [round(t.gap, 7) for t in ties.recorded()] == [1e-6, -1e-6]


def test_collected_near_ties_replay_under_their_labels_and_reach_the_run_file(tmp_path, monkeypatch):
    sink = tmp_path / "near.jsonl"
    monkeypatch.setenv(ties.NEAR_TIES_ENV, str(sink))
    build = {"method": "raptor", "step": "build", ties.BUILD_SCOPE: ""}
    with ties.deciding(**build), ties.collecting() as found:
        ties.above(0.5 + 2e-6, 0.5, what="w", name="node 3")
    assert len(found) == 1 and not sink.exists()          # no data set yet: names no rows, not written
    with ties.deciding(dataset="d1"):
        ties.replay(found)
    with ties.deciding(dataset="d2"):
        ties.replay(found)
    rows = [json.loads(line) for line in sink.read_text().splitlines()]
    assert [r["labels"] for r in rows] == [{**build, "dataset": "d1"}, {**build, "dataset": "d2"}]
    assert len(ties.read_near_ties(sink)) == 2            # different labels: two entries
    with ties.deciding(dataset="d1"):
        ties.replay(found)
    assert len(ties.read_near_ties(sink)) == 2            # the same entry again is read once
    assert ties.read_near_ties(tmp_path / "missing.jsonl") == []


def test_a_ranking_notes_nothing_past_the_depth_a_result_reads():
    # near-ties at places 0-1 (gap 1.2e-5) and 3-4 (gap 1.1e-5); the result reads the first 2
    scores = [0.9, 0.9 - 1.2e-5, 0.5, 0.3, 0.3 - 1.1e-5]
    with ties.reading(2):
        assert ties.order(scores) == [0, 1, 2, 3, 4]       # the order itself is unchanged
    assert [(t.first, t.second) for t in ties.recorded()] == [("0", "1")]
    ties.forget()
    with ties.reading(1):                                   # the cut after place 0: 0 vs 1 is the first past it
        ties.order(scores)
    assert len(ties.recorded()) == 1
    ties.forget()
    with ties.reading(4):
        ties.order(scores)
    assert len(ties.recorded()) == 2                        # the group at place 3 and its first past (4)
    ties.forget()
    with ties.reading(2):
        ties.order(scores, k=5)                             # the caller reads its own 5 places
        assert len(ties.recorded()) == 2
        ties.order(scores, k=5, fetch=True)                 # a fetch: only what the result reads
        assert len(ties.recorded()) == 3
    with pytest.raises(ValueError, match="depth"):
        with ties.reading(-1):
            pass


def test_a_note_covers_only_the_rows_it_can_move():
    def tie(**labels):
        return ties.NearTie("vector search", "a", "b", 1e-5, labels)

    q1 = tie(dataset="d", method="naive", question="q1")
    unscoped = tie(dataset="d", method="raptor", step="build", questions="")
    scoped = tie(dataset="d", method="raptor", step="build", questions="q2,q3")
    assert ties.covers(q1, "naive", "d", "q1") and not ties.covers(q1, "naive", "d", "q2")
    assert not ties.covers(q1, "naive", "other", "q1") and not ties.covers(q1, "bm25", "d", "q1")
    assert ties.covers(q1, "naive", "d", None) and ties.covers(q1, "naive", None, "q1")   # a mean; no data set named
    assert not ties.covers(unscoped, "raptor", "d", "q1")          # a build note listing no question excuses none
    assert ties.covers(unscoped, "raptor", "d", None)              # but a row no question owns (a build table)
    assert ties.covers(scoped, "raptor", "d", "q3") and not ties.covers(scoped, "raptor", "d", "q1")
    assert ties.covered_questions([q1, unscoped, scoped], "raptor", "d") == {"q2", "q3"}
    assert ties.covered_questions([q1, unscoped, scoped], "naive", "e") == set()
    assert ties.labelled(q1.labels) and ties.labelled(unscoped.labels)
    assert not ties.labelled({"method": "naive", "question": "q1"})                       # no data set
    assert not ties.labelled({"dataset": "d", "method": "raptor", "step": "build"})       # no build scope


def _unit(v):
    v = np.asarray(v, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_vector_search_orders_tied_scores_by_row_even_past_faiss_first_k():
    # query e0. Rows 0-10: e0 + 0.003 e1, cosine 1/sqrt(1 + 9e-6) = 1 - 4.5e-6; row 11: e0, cosine 1.
    # Exact FAISS puts row 11 first; at the stated precision all twelve are tied, so row 0 leads,
    # and row 0 lies beyond FAISS's first k + TIE_SLACK = 9 results: the search must fetch more.
    near = _unit([1.0, 0.003, 0.0])
    vectors = np.stack([near] * 11 + [_unit([1.0, 0.0, 0.0])])
    index = VectorIndex(3).add(vectors, [f"c{i}" for i in range(12)])
    scores, rows = index.search(_unit([1.0, 0.0, 0.0]), 1)
    assert rows.tolist() == [[0]]
    scores, rows = index.search(_unit([1.0, 0.0, 0.0]), 3)
    assert rows.tolist() == [[0, 1, 2]]
    # a clear winner still wins: e1 is far from everything else
    index.add(_unit([0.0, 1.0, 0.0])[None, :], ["far"])
    assert index.search(_unit([0.0, 1.0, 0.0]), 1)[1].tolist() == [[12]]


def test_a_stop_test_between_two_scores_is_decided_at_the_stated_precision():
    assert ties.beats(0.5 + 2e-5, 0.5) and not ties.beats(0.5 + 3e-6, 0.5)    # a lead under 1e-5 is a tie
    assert not ties.beats(0.5, 0.5) and not ties.beats(0.4, 0.5)
    assert ties.recorded() == []                                            # gaps 2e-5, 3e-6, 0, -0.1: clear
    assert ties.beats(0.5 + 1.2e-5, 0.5, what="stop rule", name="s vs w")   # 1.2e-5: within noise of 1e-5
    [tie] = ties.recorded()
    assert (tie.what, tie.first, tie.gap) == ("stop rule", "s vs w", pytest.approx(1.2e-5))
