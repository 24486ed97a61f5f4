"""The committed reference results: a run with default parameters names every table whose values
moved against the copy committed in git, leaving out columns that measure the machine."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pandas as pd
import pytest

from rag_lab.runs.reference import changed_tables, reference_check, reference_lines, table_difference


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
    assert changed == [{"table": "leaderboard", "why": "column 'mrr', row 1: 0.75 -> 0.7"}]


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
        {"notebook": "01_sketch", "reference": {"compared": True, "changed": [{"table": "t1", "why": "2 rows -> 1"}]}},
        {"notebook": "02_unweaver", "reference": {"compared": True, "changed": []}},
        {"notebook": "03_ssg", "reference": {"compared": False, "why": "ran with parameters other than the reference's defaults"}}]}
    lines = reference_lines(manifest)
    assert lines[0].startswith("reference: 01_sketch: 1 table(s) differ") and lines[1] == "  t1: 2 rows -> 1"
    assert lines[2].startswith("  no near-tie was noted")
    assert lines[3] == "reference: 02_unweaver: every table matches figures/02_unweaver/ as committed"
    assert "not compared" in lines[4] and "parameters" in lines[4]


def test_a_difference_beside_near_ties_names_each_with_its_question_candidates_and_gap():
    tie = {"what": "vector search", "first": "doc-a#3", "second": "doc-b#1", "gap": 1.2e-5,
           "labels": {"method": "naive", "question": "ic-q07"}}
    manifest = {"notebooks": [{"notebook": "01_sketch", "reference": {
        "compared": True, "changed": [{"table": "t1", "why": "column 'x', row 0: 0.5 -> 0.6"}], "near_ties": [tie]}}]}
    lines = reference_lines(manifest)
    assert "1 near-tie(s)" in lines[2]
    assert lines[3] == "    near-tie: vector search: doc-a#3 vs doc-b#1, gap 1.20e-05 (method naive, question ic-q07)"


def test_near_ties_are_kept_only_beside_a_difference(repo):
    root, folder = repo
    tie = {"what": "w", "first": "a", "second": "b", "gap": 1e-5, "labels": {}}
    entry = {"notebook": "nb", "status": "ok", "changed": {}, "near_ties": [tie],
             "files": [str(folder / "leaderboard.csv"), str(folder / "long.csv")]}
    assert reference_check(entry, folder, root)["near_ties"] == []     # nothing differs: nothing to explain
