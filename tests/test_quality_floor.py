"""The quality floor (tests/quality_floor.py): every shipped data set, run through ``load_dataset``
and ``evaluate`` with the notebook tests' small parameters, keeps its document and question counts
and each method's doc_recall@5, ctx_recall@5 and doc_mrr@5 within the stated tolerance of
tests/reference/quality_floor.json. A value that leaves it fails here, better or worse: refresh the
reference on purpose (``python tests/quality_floor.py``) and say why in the commit."""
from __future__ import annotations

import pytest

from conftest import INDEXES
from quality_floor import (CASES, METRICS, REFERENCE, environment, floor_failures, measured, near_tie_allowance,
                           read_reference)

pytestmark = pytest.mark.xdist_group(INDEXES)     # shares its runs with test_reproducibility.py, its indexes with more

REFRESH = f"if the change is intended, refresh {REFERENCE.name} with `python tests/quality_floor.py` and say why in the commit"


@pytest.fixture(scope="module")
def reference() -> dict:
    return read_reference()


def test_every_shipped_data_set_has_a_floor_for_every_method_it_runs(reference):
    from rag_lab.datasets import shipped_datasets

    assert set(shipped_datasets()) | {"biomed_articles"} <= set(CASES)     # biomed_articles: a loader over data/
    assert set(reference["cases"]) == set(CASES), REFRESH
    for name, case in CASES.items():
        pinned = reference["cases"][name]
        assert pinned["load"] == case["load"] and set(pinned["methods"]) == set(case["methods"]), (name, REFRESH)
        for method, values in pinned["methods"].items():
            assert set(values) == set(METRICS) and values["doc_recall@5"] is not None, (name, method)
    assert 0 < reference["tolerance"] < 0.05 and reference["metrics"] == list(METRICS)


def test_the_reference_was_measured_with_this_encoder(reference):
    assert environment() == reference["environment"], (
        f"the floor was measured with {reference['environment']}; this run encodes with {environment()} "
        "(RAG_LAB_EMBED_BACKEND or the model changed), so its values are not comparable")


@pytest.mark.parametrize("name", list(CASES))
def test_quality_floor(name, reference):
    """Beyond the tolerance, a value may move only by what the near-ties this run noted can move
    (``near_tie_allowance``: another machine's rounding can flip exactly those decisions)."""
    pinned, tolerance = reference["cases"][name], reference["tolerance"]
    got, _, near = measured(name)
    for count in ("documents", "questions", "full_documents", "full_questions"):
        assert got[count] == pinned[count], f"{name}: {count} {got[count]}, reference {pinned[count]}; {REFRESH}"
    moved = floor_failures(name, got, near, pinned, tolerance)
    assert not moved, f"{name}: " + "; ".join(moved) + f"; {REFRESH}"


def test_the_near_tie_allowance_covers_only_the_questions_named():
    from rag_lab.core.ties import NearTie

    q = lambda m, qid, d="ds": NearTie("vector search", "a", "b", 1e-5, {"dataset": d, "method": m, "question": qid})  # noqa: E731
    assert near_tie_allowance([], "naive", "ds", 20) == (0.0, [])
    found = [q("naive", "q1"), q("naive", "q1"), q("naive", "q2"), q("bm25", "q3"), q("naive", "q4", d="other")]
    assert near_tie_allowance(found, "naive", "ds", 20)[0] == 0.1        # q1 and q2 of 20; not q3 (bm25), q4 (other set)
    build = NearTie("RAPTOR BIC", "k=2", "k=3", 1e-5, {"dataset": "ds", "method": "raptor", "step": "build", "questions": ""})
    assert near_tie_allowance([build], "raptor", "ds", 20) == (0.0, [])   # a build listing no question allows nothing
    scoped = NearTie("RAPTOR BIC", "k=2", "k=3", 1e-5,
                     {"dataset": "ds", "method": "raptor", "step": "build", "questions": "q1,q5"})
    assert near_tie_allowance([build, scoped, q("raptor", "q1")], "raptor", "ds", 20)[0] == 0.1


def test_a_move_beyond_what_the_noted_questions_can_move_fails():
    from rag_lab.core.ties import NearTie

    pinned = {"methods": {"raptor": {"doc_recall@5": 0.8}}}
    note = NearTie("vector search", "a", "b", 1e-5, {"dataset": "ds", "method": "raptor", "question": "q1"})
    got = lambda v: {"questions": 4, "methods": {"raptor": {"doc_recall@5": v}}}  # noqa: E731
    assert floor_failures("ds", got(0.55), [note], pinned, 0.01) == []           # one of 4 questions: 0.25 + 0.01
    [line] = floor_failures("ds", got(0.5), [note], pinned, 0.01)                 # 0.3 > 0.26
    assert line.startswith("raptor doc_recall@5: 0.5 (reference 0.8 ± 0.01 + 0.250 for near-ties")
    assert floor_failures("other", got(0.55), [note], pinned, 0.01)              # a note of another data set: none
