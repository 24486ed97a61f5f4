"""A regression confined to a method that notes near-ties cannot hide behind them (issue 50): RAPTOR,
made to drop its best hit (a monkeypatch of this test only), on the quality floor's italian_cuisine
case. The reference check must name every row it moved as not explained by a near-tie — with this
run's notes and the clean run's, committed beside the reference table, both offered — and the
quality floor must fail."""
from __future__ import annotations

import subprocess
from dataclasses import asdict

import pytest

from quality_floor import CASES, floor_failures, floor_values, read_reference, reusing
from rag_lab.core import ties
from rag_lab.core.types import Retrieval
from rag_lab.runs.moved_rows import NOT_EXPLAINED
from rag_lab.runs.reference import reference_check, reference_lines, write_reference_near_ties

NAME = "italian_cuisine"
pytestmark = pytest.mark.heavy


def _git(root, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args], cwd=root, check=True,
                   capture_output=True)


def _dropping_best_hit(retrieve):
    def broken(self, query: str, k: int) -> Retrieval:
        got = retrieve(self, query, k)
        return Retrieval(got.query, got.hits[1:], got.trace, got.cost)
    return broken


@pytest.fixture(scope="module")
def runs():
    """RAPTOR on the floor's case, built once: (data set, clean rows, clean notes, broken rows, broken notes).
    Its index comes from the session store (``reusing``), where the quality floor (or notebook 01's kernel)
    keeps the same one, or is built here and kept there for them: what is tested is the scoring and the
    checks, and a reused index names its build's near-ties again (``Retriever.build``)."""
    from rag_lab.datasets import load_dataset
    from rag_lab.evaluation.harness import evaluate
    from rag_lab.methods import get_retriever
    from rag_lab.methods.baselines.raptor import RaptorRetriever

    data = load_dataset(NAME, **CASES[NAME]["load"])
    raptor = get_retriever("raptor", **CASES[NAME]["methods"]["raptor"])
    with reusing(), ties.collecting() as clean_notes:
        clean = evaluate({"raptor": raptor}, data, ks=(5,), progress=False)
    with pytest.MonkeyPatch.context() as patch, ties.collecting() as broken_notes:
        patch.setattr(RaptorRetriever, "retrieve", _dropping_best_hit(RaptorRetriever.retrieve))
        broken = evaluate({"raptor": raptor}, data, ks=(5,), progress=False)     # the same built tree
    return data, clean, list(clean_notes), broken, list(broken_notes)


def test_the_quality_floor_fails_when_raptor_drops_its_best_hit(runs):
    data, clean, clean_notes, broken, broken_notes = runs
    reference = read_reference()
    pinned = {"methods": {"raptor": reference["cases"][NAME]["methods"]["raptor"]}}
    got = lambda raw: {"questions": len(data.questions), "methods": floor_values(raw, ["raptor"])}  # noqa: E731
    assert floor_failures(NAME, got(clean), clean_notes, pinned, reference["tolerance"]) == []
    failures = floor_failures(NAME, got(broken), broken_notes, pinned, reference["tolerance"])
    assert failures and all(line.startswith("raptor ") for line in failures)


def test_the_reference_check_names_raptors_moved_rows_not_explained(runs, tmp_path):
    _, clean, clean_notes, broken, broken_notes = runs
    folder = tmp_path / "figures" / "01_sketch"
    folder.mkdir(parents=True)
    columns = ["method", "question_id", "metric", "k", "value"]
    clean[columns].to_csv(folder / "per_question.csv", index=False)
    write_reference_near_ties(clean_notes, folder)             # the reference run's notes, committed beside it
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-q", "-m", "reference")
    broken[columns].to_csv(folder / "per_question.csv", index=False)
    entry = {"notebook": "01_sketch", "status": "ok", "changed": {}, "parameters": {"dataset": NAME},
             "files": [str(folder / "per_question.csv")], "near_ties": [asdict(t) for t in broken_notes]}
    check = reference_check(entry, folder, tmp_path)
    [table] = check["changed"]
    assert table["moved_rows"] > 0 and table["unexplained_rows"] == table["moved_rows"]
    assert {r["method"][0] for r in table["rows"]} == {"raptor"}
    assert all(r["explained_by"] == NOT_EXPLAINED for r in table["rows"])
    lines = reference_lines({"notebooks": [{"notebook": "01_sketch", "reference": check}]})
    assert lines[-1] == f"  {table['moved_rows']} moved row(s) or table(s) {NOT_EXPLAINED}: look for it"
