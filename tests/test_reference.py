"""The committed reference results: a run with default parameters names every table whose values
moved against the copy committed in git, leaving out columns that measure the machine."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pandas as pd
import pytest

from rag_lab.core.ties import NearTie
from rag_lab.runs.moved_rows import NOT_EXPLAINED, differing_rows, explain
from rag_lab.runs.reference import (changed_tables, reference_check, reference_lines, table_difference,
                                   write_reference_near_ties)


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path):
    """A checkout whose figures/nb/ holds two committed tables."""
    folder = tmp_path / "figures" / "nb"
    folder.mkdir(parents=True)
    pd.DataFrame({"method": ["naive", "sketch"], "mrr": [0.5, 0.75], "index_seconds": [1.2, 3.4]}) \
        .to_csv(folder / "leaderboard.csv", index=False)
    pd.DataFrame({"metric": ["recall", "query time (ms)"], "value": [0.8, 12.0]}).to_csv(folder / "long.csv", index=False)
    git(tmp_path, "init", "-q")
    git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@example.org", "add", ".")
    git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-q", "-m", "reference")
    return tmp_path, folder


def test_a_changed_value_is_named_with_its_column_and_row(repo):
    root, folder = repo
    pd.DataFrame({"method": ["naive", "sketch"], "mrr": [0.5, 0.70], "index_seconds": [1.2, 3.4]}) \
        .to_csv(folder / "leaderboard.csv", index=False)
    changed = changed_tables([folder / "leaderboard.csv", folder / "long.csv"], folder, root)
    assert changed == [{"table": "leaderboard", "why": "column 'mrr', row 1: 0.75 -> 0.7",
                        "rows": [{"table": "leaderboard", "row": 1, "method": ["sketch"], "dataset": None,
                                  "question": None, "metric": "mrr", "was": "0.75", "now": "0.7"}]}]


def test_timing_columns_and_rows_are_left_out(repo):
    root, folder = repo
    pd.DataFrame({"method": ["naive", "sketch"], "mrr": [0.5, 0.75], "index_seconds": [9.9, 0.1]}) \
        .to_csv(folder / "leaderboard.csv", index=False)
    pd.DataFrame({"metric": ["recall", "query time (ms)"], "value": [0.8, 99.0]}).to_csv(folder / "long.csv", index=False)
    assert changed_tables([folder / "leaderboard.csv", folder / "long.csv"], folder, root) == []
    pd.DataFrame({"metric": ["recall", "query time (ms)"], "value": [0.6, 99.0]}).to_csv(folder / "long.csv", index=False)
    assert changed_tables([folder / "long.csv"], folder, root)[0]["table"] == "long"


def test_new_missing_and_reshaped_tables_are_named(repo):
    root, folder = repo
    pd.DataFrame({"a": [1]}).to_csv(folder / "extra.csv", index=False)
    pd.DataFrame({"method": ["naive"], "mrr": [0.5], "index_seconds": [1.0]}).to_csv(folder / "leaderboard.csv", index=False)
    changed = {c["table"]: c["why"] for c in changed_tables([folder / "extra.csv", folder / "leaderboard.csv"],
                                                            folder, root)}
    assert changed == {"extra": "new: no committed reference", "leaderboard": "2 rows -> 1",
                       "long": "in the reference, not written by this run"}


def test_floats_from_another_machine_match_within_tolerance():
    ref = pd.DataFrame({"mrr": [0.123456789012, float("nan")]})
    assert table_difference(pd.DataFrame({"mrr": [0.123456789013, float("nan")]}), ref) is None
    assert table_difference(pd.DataFrame({"mrr": [0.1235, float("nan")]}), ref) is not None
    assert table_difference(pd.DataFrame({"MRR": [0.1, 0.2]}), ref).startswith("columns differ")


def test_only_default_runs_into_the_repository_figures_are_compared(repo):
    root, folder = repo
    entry = {"notebook": "nb", "status": "ok", "changed": {}, "files": [str(folder / "leaderboard.csv"),
                                                                        str(folder / "long.csv")]}
    assert reference_check(entry, folder, root) == {"compared": True, "changed": [], "near_ties": []}
    assert not reference_check({**entry, "changed": {"limit": 3}}, folder, root)["compared"]
    assert not reference_check(entry, root / "elsewhere" / "nb", root)["compared"]
    assert not reference_check({**entry, "status": "failed"}, folder, root)["compared"]


def test_the_printed_lines_name_each_changed_table():
    manifest = {"notebooks": [
        {"notebook": "01_sketch", "reference": {"compared": True, "changed": [{"table": "t1", "why": "2 rows -> 1", "rows": []}]}},
        {"notebook": "02_unweaver", "reference": {"compared": True, "changed": []}},
        {"notebook": "03_ssg", "reference": {"compared": False, "why": "ran with parameters other than the reference's defaults"}}]}
    lines = reference_lines(manifest)
    assert lines[0].startswith("reference: 01_sketch: 1 table(s) differ") and lines[1] == "  t1: 2 rows -> 1"
    assert lines[2] == f"    the whole table: {NOT_EXPLAINED}"
    assert lines[3] == f"  1 moved row(s) or table(s) {NOT_EXPLAINED}: look for it"
    assert lines[4] == "reference: 02_unweaver: every table matches figures/02_unweaver/ as committed"
    assert "not compared" in lines[5] and "parameters" in lines[5]


def _per_question(values: dict) -> pd.DataFrame:
    """A long per-question table: (method, question) -> doc_mrr at k = 5."""
    return pd.DataFrame([{"method": m, "question_id": q, "metric": "doc_mrr", "k": 5, "value": v}
                         for (m, q), v in values.items()])


def test_each_moved_row_is_matched_to_the_near_tie_of_its_own_method_data_set_and_question(repo):
    root, folder = repo
    before = {("naive", "q1"): 1.0, ("naive", "q2"): 0.5, ("raptor", "q1"): 1.0, ("raptor", "q2"): 1.0}
    _per_question(before).to_csv(folder / "per_question.csv", index=False)
    git(root, "-c", "user.name=t", "-c", "user.email=t@example.org", "add", ".")
    git(root, "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-q", "-m", "per question")
    # naive q1 and raptor q1, q2 move; the run noted near-ties for naive q1 and for raptor q9 only
    after = {**before, ("naive", "q1"): 0.5, ("raptor", "q1"): 0.5, ("raptor", "q2"): 0.0}
    _per_question(after).to_csv(folder / "per_question.csv", index=False)
    tie = lambda m, q: {"what": "vector search", "first": "a", "second": "b", "gap": 1.2e-5,  # noqa: E731
                        "labels": {"dataset": "ic", "method": m, "question": q}}
    entry = {"notebook": "nb", "status": "ok", "changed": {}, "parameters": {"dataset": "ic"},
             "files": [str(folder / f) for f in ("per_question.csv", "leaderboard.csv", "long.csv")], "near_ties": [tie("naive", "q1"), tie("raptor", "q9")]}
    check = reference_check(entry, folder, root)
    [table] = check["changed"]
    explained = {(r["method"][0], r["question"]): r["explained_by"] for r in table["rows"]}
    assert explained == {("naive", "q1"): "vector search: a vs b, gap 1.20e-05 (dataset ic, method naive, question q1)",
                         ("raptor", "q1"): NOT_EXPLAINED, ("raptor", "q2"): NOT_EXPLAINED}
    assert (table["moved_rows"], table["unexplained_rows"]) == (3, 2)
    lines = reference_lines({"notebooks": [{"notebook": "nb", "reference": check}]})
    assert "    3 row(s) moved, 2 " + NOT_EXPLAINED in lines
    assert f"    raptor, ic, q1, doc_mrr@5: 1.0 -> 0.5: {NOT_EXPLAINED}" in lines
    assert lines[-1] == f"  2 moved row(s) or table(s) {NOT_EXPLAINED}: look for it"
    # the reference run's own notes, committed beside its tables, explain a flip seen from its side
    write_reference_near_ties([tie("raptor", "q1"), tie("raptor", "q2")], folder)
    _per_question(before).to_csv(folder / "per_question.csv", index=False)
    git(root, "-c", "user.name=t", "-c", "user.email=t@example.org", "add", ".")
    git(root, "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-q", "-m", "notes")
    _per_question(after).to_csv(folder / "per_question.csv", index=False)
    check = reference_check(entry, folder, root)
    assert check["changed"][0]["unexplained_rows"] == 0 and check["reference_near_ties"] == 2
    assert reference_lines({"notebooks": [{"notebook": "nb", "reference": check}]})[-1].startswith(
        "  every moved row has a near-tie")


def test_a_row_missing_on_one_side_and_a_table_without_a_method_column(repo):
    root, folder = repo
    ref = pd.DataFrame({"level": [0, 1, 2], "nodes": [85, 14, 3]})
    new = pd.DataFrame({"level": [0, 1, 2, 3], "nodes": [85, 18, 4, 1]})
    from rag_lab.runs.reference import _same, _stable_columns, _stable_rows
    rows = differing_rows(new, ref, "raptor_tree", _same, _stable_columns, _stable_rows, "ic")
    assert [(r["row"], r["was"], r["now"]) for r in rows] == [(1, "14", "18"), (2, "3", "4"), ("new 3", "(no row)", "level=3, nodes=1")]
    build = NearTie("RAPTOR BIC", "k=2", "k=3", 1e-5, {"dataset": "ic", "method": "raptor", "step": "build", "questions": ""})
    other = NearTie("vector search", "a", "b", 1e-5, {"dataset": "ic", "method": "naive", "question": "q1"})
    assert {r["explained_by"] for r in explain(rows, [build])} == {build.describe()}   # the table names raptor
    assert {r["explained_by"] for r in explain(rows, [other])} == {NOT_EXPLAINED}      # naive's note: not raptor's tree


def test_a_table_written_with_its_method_index_names_the_method_and_aligns_by_it():
    from rag_lab.runs.reference import _same, _stable_columns, _stable_rows
    ref = pd.DataFrame({"Unnamed: 0": ["naive", "raptor"], "f1": ["0.5", "0.4"], "n": ["20", "20"]})
    new = pd.DataFrame({"Unnamed: 0": ["naive", "raptor"], "f1": ["0.5", "0.3"], "n": ["20", "20"]})
    [row] = differing_rows(new, ref, "table1_ours_vs_paper", _same, _stable_columns, _stable_rows, "ic")
    assert (row["method"], row["metric"], row["was"], row["now"]) == (["raptor"], "f1", "'0.4'", "'0.3'")
