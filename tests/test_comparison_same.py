"""Notebook 10 shows a method once when another retrieves exactly alike (compare.comparison.Run.same,
compare.intervals.leaderboard_shown and shown_once, compare.descriptions.same_sentence). Small hand-made runs:
no model is loaded."""
import pandas as pd

from rag_lab.compare.comparison import Run
from rag_lab.compare.descriptions import same_sentence
from rag_lab.compare.intervals import leaderboard_shown, shown_once
from rag_lab.core.types import Chunk, Dataset, Hit, Retrieval


class Built:
    def __init__(self, chunks):
        self.chunks = chunks


def chunk(i, start=0):
    return Chunk(f"c{i}", "d", "text", start, start + 4)


def ranked(*ids):
    return Retrieval("q", [Hit(chunk(i), 1.0 / (n + 1)) for n, i in enumerate(ids)])


def run(rankings, chunks=None):
    """rankings: method -> k -> question -> hit ids; every method indexes chunks c0..c3 unless told."""
    methods = list(rankings)
    retrievers = {m: Built((chunks or {}).get(m, [chunk(i) for i in range(4)])) for m in methods}
    ks = sorted({k for r in rankings.values() for k in r})
    retrievals = {k: {m: {q: ranked(*ids) for q, ids in rankings[m][k].items()} for m in methods} for k in ks}
    return Run(Dataset("toy", [], []), retrievers, retrievals)


def test_methods_with_the_same_chunks_and_rankings_are_named_as_the_first():
    same = {1: {"q1": [0], "q2": [2]}, 3: {"q1": [0, 1, 2], "q2": [2, 3, 0]}}
    # b ranks as a everywhere; c differs at k=3 on q2 (order of two hits); d ranks as a but over other spans
    r = run({"a": same, "b": same, "c": {1: same[1], 3: {"q1": [0, 1, 2], "q2": [2, 0, 3]}}, "d": same},
            chunks={"d": [chunk(i, start=1) for i in range(4)]})
    assert r.same == {"b": "a"}


def test_shown_once_drops_the_twins_and_names_them_beside_the_first():
    table = pd.DataFrame({"ctx_recall@5": ["0.5", "0.5", "0.2", "0.5"]}, index=["x", "y", "z", "w"])
    out = shown_once(table, {"y": "x", "w": "x"})
    assert list(out.index) == ["x (= y, w)", "z"] and list(out["ctx_recall@5"]) == ["0.5", "0.2"]
    assert shown_once(table, {}).equals(table)
    # the leaderboard as shown: the twin left out, named beside the first
    board = pd.DataFrame([(1, "x", "ctx_recall@5", 0.5, 2, 0.4, 0.6), (2, "y", "ctx_recall@5", 0.5, 2, 0.4, 0.6),
                          (3, "z", "ctx_recall@5", 0.2, 2, 0.1, 0.3)],
                         columns=["rank", "method", "metric", "mean", "n", "ci_low", "ci_high"])
    shown = leaderboard_shown(board, {"y": "x"})
    assert list(shown.index) == ["x (= y)", "z"] and list(shown.columns) == ["ctx_recall@5 (n=2)"]
    assert shown.loc["z", "ctx_recall@5 (n=2)"] == "0.200 [0.100, 0.300]"
    assert list(leaderboard_shown(board).index) == ["x", "y", "z"]


def test_same_sentence_names_each_group():
    assert same_sentence("toy", {}) == "toy: no two methods retrieve exactly alike."
    text = same_sentence("toy", {"y": "x", "w": "x", "v": "u"})
    assert text.startswith("toy: y and w retrieve exactly what x does; v retrieves exactly what u does (")


def test_a_run_shows_a_board_once_and_knows_each_question_s_document():
    from rag_lab.core.types import Document, Question

    same = {1: {"q1": [0], "q2": [2]}}
    r = run({"x": same, "y": same, "z": {1: {"q1": [1], "q2": [2]}}})
    board = pd.DataFrame([(1, "x", "ctx_recall@1", 0.5, 2, 0.4, 0.6), (2, "y", "ctx_recall@1", 0.5, 2, 0.4, 0.6),
                          (3, "z", "ctx_recall@1", 0.2, 2, 0.1, 0.3)],
                         columns=["rank", "method", "metric", "mean", "n", "ci_low", "ci_high"])
    # by hand: y ranks exactly as x, so it is named beside x and not shown on a row of its own
    assert list(r.once(board).index) == ["x (= y)", "z"]
    data = Dataset("toy", [Document("d1", "one"), Document("d2", "two")],
                   [Question("q1", "?", gold_doc_ids=["d1"]), Question("q2", "?", gold_doc_ids=["d2"])])
    assert Run(data, {}, {}).units == {"q1": "d1", "q2": "d2"}
