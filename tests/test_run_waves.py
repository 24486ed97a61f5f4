"""``rag_lab run --jobs N`` (rag_lab/runs/waves.py): which notebooks may run side by side, and a run of two at a
time gives the manifest (order, statuses, parameters, tables) of a run one after another."""
from pathlib import Path

import pandas as pd
import pytest

from rag_lab.runs.runner import NOTEBOOK_DIR, run_notebooks
from rag_lab.runs.waves import LONGEST_FIRST, RUN_ALONE, default_jobs, parse_jobs, waves
from test_cli_and_runner import tiny_notebook
from test_runner import TABLES


def test_the_timing_notebooks_run_alone_after_the_others():
    names = ["00_quickstart", "01_sketch", "02_unweaver", "03_ssg_traversal", "04_gralc_rag", "10_compare_retrieval",
             "11_cost_and_speed"]
    got = [[p.stem for p in wave] for wave in waves([Path(f"{n}.ipynb") for n in names])]
    # by hand: notebook 10 (the longest) first, then the others in the run's order; 04 and 11 (they time) alone
    assert got == [["10_compare_retrieval", *names[:4]], ["04_gralc_rag"], ["11_cost_and_speed"]]
    alone, first = {"b": "times", "d": "times"}, ("e",)
    got = [[p.stem for p in w] for w in waves([Path(n) for n in "abcde"], alone, first)]
    assert got == [["e", "a", "c"], ["b"], ["d"]]
    assert [[p.stem for p in w] for w in waves([Path("b")], alone, first)] == [["b"]]
    assert waves([]) == []
    assert set(RUN_ALONE) | set(LONGEST_FIRST) <= {p.stem for p in NOTEBOOK_DIR.glob("*.ipynb")}   # no stale name


def test_jobs_are_a_positive_count_or_auto():
    assert default_jobs(1) == 1 and default_jobs(2) == 2 and default_jobs(64) == 2 and default_jobs(None) >= 1
    assert parse_jobs("3") == 3 and parse_jobs(1) == 1 and parse_jobs("auto") == default_jobs()
    for bad in ("0", "-1", "two"):
        with pytest.raises(ValueError, match="--jobs must be a positive number"):
            parse_jobs(bad)
    with pytest.raises(ValueError, match="jobs must be a positive number"):
        run_notebooks(["x"], jobs=0)


def test_two_at_a_time_gives_the_run_of_one_at_a_time(tmp_path):
    folder = tmp_path / "notebooks"
    folder.mkdir()
    tiny_notebook(folder / "01_tables.ipynb", TABLES)
    tiny_notebook(folder / "04_gralc_rag.ipynb", "w = value")          # named as a notebook that runs alone
    tiny_notebook(folder / "05_adds.ipynb", "y = value * 2", "z = y + 1")
    tiny_notebook(folder / "06_raises.ipynb", "x = value + 1", "raise ValueError(f'bad {x}')")
    runs = {}
    for jobs in (1, 2):
        runs[jobs] = run_notebooks(None, {"value": 4}, runs_dir=tmp_path / f"runs{jobs}",
                                   figures_root=tmp_path / f"figures{jobs}", notebook_dir=folder, progress=False,
                                   jobs=jobs)
    one, two = runs[1], runs[2]
    # run as [01, 05, 06] two at a time, then 04 alone; listed in the run's order
    assert [e["notebook"] for e in two["notebooks"]] == ["01_tables", "04_gralc_rag", "05_adds", "06_raises"]
    started = {e["notebook"]: e["started"] for e in two["notebooks"]}
    assert started["04_gralc_rag"] >= max(started[n] for n in ("01_tables", "05_adds", "06_raises"))
    assert [e["status"] for e in two["notebooks"]] == [e["status"] for e in one["notebooks"]] == ["ok", "ok", "ok", "failed"]
    assert [e["parameters"] for e in two["notebooks"]] == [e["parameters"] for e in one["notebooks"]]
    assert "bad 5" in two["notebooks"][3]["error"] and two["status"] == "failed" and two["jobs"] == 2
    assert two["wall_seconds"] > 0 and one["jobs"] == 1
    tables = [pd.read_csv(tmp_path / f"figures{j}" / "01_tables" / "scores.csv") for j in (1, 2)]
    pd.testing.assert_frame_equal(*tables)
    assert tables[0]["score"].tolist() == [4, 40]
    for jobs in (1, 2):           # each notebook's executed copy and its tables are in the run folder
        run_dir = tmp_path / f"runs{jobs}" / runs[jobs]["run_id"]
        assert all((run_dir / e["output"]).exists() for e in runs[jobs]["notebooks"])
        assert (run_dir / "tables" / "01_tables" / "scores.csv").exists()
