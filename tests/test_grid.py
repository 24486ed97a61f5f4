"""Grid sweeps on a process pool and on a Dask LocalCluster bound to 127.0.0.1, with one failing task."""
import json

import pytest

from rag_lab.cli import main
from rag_lab.grid import Grid, run_grid
from test_cli_and_runner import tiny_notebook

BODY = ("from pathlib import Path\nif value == 3: raise RuntimeError('value 3 always fails')\n"
        "Path(figures_dir).mkdir(parents=True, exist_ok=True)\nPath(figures_dir, 'v.txt').write_text(str(value))")


@pytest.fixture
def notebooks(tmp_path):
    folder = tmp_path / "notebooks"
    folder.mkdir()
    tiny_notebook(folder / "01_sweep.ipynb", BODY)
    return folder


def check(manifest, run_dir):
    tasks = manifest["tasks"]
    assert {t["parameters"]["value"]: t["status"] for t in tasks.values()} == {1: "ok", 2: "ok", 3: "failed"}
    failed = next(t for t in tasks.values() if t["parameters"]["value"] == 3)
    assert len(failed["attempts"]) == 2 and "value 3 always fails" in failed["attempts"][-1]["error"]
    ok = next(t for t in tasks.values() if t["parameters"]["value"] == 2)
    assert len(ok["attempts"]) == 1
    out = run_dir / ok["task_id"] / "attempt-1"
    assert (out / "figures" / "01_sweep" / "v.txt").read_text() == "2"
    inner = json.loads((out / "runs" / "run" / "manifest.json").read_text())
    assert inner["notebooks"][0]["parameters"]["value"] == 2 and inner["notebooks"][0]["parameters"]["tag"] == "x"
    assert json.loads((run_dir / "manifest.json").read_text())["status"] == "failed"


def test_grid_tasks_are_the_product():
    g = Grid(["a", "b"], {"x": [1, 2], "y": ["p"]}, {"z": 0})
    assert [t["parameters"] for t in g.tasks()][:2] == [{"z": 0, "x": 1, "y": "p"}, {"z": 0, "x": 2, "y": "p"}]
    assert len(g.tasks()) == 4
    with pytest.raises(ValueError, match="non-empty list"):
        Grid(["a"], {"x": 3}).validate()


def test_process_pool_retries_the_failing_task_once(tmp_path, notebooks):
    grid = Grid(["01_sweep"], {"value": [1, 2, 3]}, {"tag": "x"}, retries=1, workers=2)
    manifest = run_grid(grid, run_id="g", runs_dir=tmp_path / "runs", notebook_dir=notebooks)
    check(manifest, tmp_path / "runs" / "g")


def test_dask_local_cluster(tmp_path, notebooks):
    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1", dashboard_address=None,
                      processes=True) as cluster:
        grid = Grid(["01_sweep"], {"value": [1, 2, 3]}, {"tag": "x"}, retries=1)
        manifest = run_grid(grid, address=cluster.scheduler_address, run_id="d", runs_dir=tmp_path / "runs",
                            notebook_dir=notebooks)
    assert manifest["engine"].startswith("dask:tcp://127.0.0.1:")
    check(manifest, tmp_path / "runs" / "d")


def test_grid_file_errors(tmp_path):
    bad = tmp_path / "grid.yaml"
    bad.write_text("notebooks: [x]\ngrids: {}\n")
    assert main(["run", "--grid", str(bad)]) == 2
