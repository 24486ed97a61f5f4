"""Grid sweeps on a process pool and on a Dask LocalCluster bound to 127.0.0.1 (the session's), with one
failing task."""
import json

import pytest

from rag_lab.cli import main
from rag_lab.runs.grid import Grid, run_grid
from rag_lab.runs.runner import parameter_hash
from test_cli_and_runner import tiny_notebook

BODY = ("from pathlib import Path\nif value == 3: raise RuntimeError('value 3 always fails')\n"
        "Path(figures_dir).mkdir(parents=True, exist_ok=True)\nPath(figures_dir, 'v.txt').write_text(str(value))")


@pytest.fixture
def notebooks(tmp_path):
    folder = tmp_path / "notebooks"
    folder.mkdir()
    tiny_notebook(folder / "01_sweep.ipynb", BODY, parameters="figures_dir = 'x'\nvalue = 1\ntag = ''")  # every swept name
    return folder


def check(manifest, run_dir):
    tasks = manifest["tasks"]
    assert {t["parameters"]["value"]: t["status"] for t in tasks.values()} == {1: "ok", 2: "ok", 3: "failed"}
    failed = next(t for t in tasks.values() if t["parameters"]["value"] == 3)
    assert len(failed["attempts"]) == 2 and "value 3 always fails" in failed["attempts"][-1]["error"]
    ok = next(t for t in tasks.values() if t["parameters"]["value"] == 2)
    assert len(ok["attempts"]) == 1
    # a task is named by its notebook and the hash of the parameters it ran with (defaults included)
    assert ok["task_id"] == f"01_sweep-{parameter_hash({'value': 2, 'tag': 'x'})}" == f"01_sweep-{ok['param_hash']}"
    out = run_dir / ok["task_id"] / "attempt-1"
    assert (out / "figures" / "01_sweep" / "v.txt").read_text() == "2"
    inner = json.loads((out / "manifest.json").read_text())   # each attempt folder is a run folder
    entry = inner["notebooks"][0]
    assert entry["parameters"]["value"] == 2 and entry["parameters"]["tag"] == "x"
    assert entry["param_hash"] == ok["param_hash"] and (out / entry["output"]).is_file()
    assert inner["run_id"] == f"{run_dir.name}/{ok['task_id']}/attempt-1"
    assert entry["files"] == [str(out / "figures" / "01_sweep" / "v.txt")]   # moved from the worker's scratch
    assert json.loads((run_dir / "manifest.json").read_text())["status"] == "failed"


def test_grid_tasks_are_the_product():
    g = Grid(["a", "b"], {"x": [1, 2], "y": ["p"]}, {"z": 0})
    assert [t["parameters"] for t in g.tasks()][:2] == [{"z": 0, "x": 1, "y": "p"}, {"z": 0, "x": 2, "y": "p"}]
    assert len(g.tasks()) == 4
    with pytest.raises(ValueError, match="non-empty list"):
        Grid(["a"], {"x": 3}).validate()
    with pytest.raises(ValueError, match="lists a value twice"):
        Grid(["a"], {"x": [1, 1.0]}).validate()
    with pytest.raises(ValueError, match="timeout must be a positive"):
        Grid(["a"], timeout=0).validate()
    # task names: notebook + hash of the parameters it runs with; a default the notebook states counts
    assert [t["task_id"] for t in g.tasks({"a": {"x": 9}})][:1] == [f"a-{parameter_hash({'x': 1, 'y': 'p', 'z': 0})}"]
    assert g.tasks({"a": {"w": 9}})[0]["param_hash"] == parameter_hash({"w": 9, "z": 0, "x": 1, "y": "p"})


def test_process_pool_retries_the_failing_task_once(tmp_path, notebooks):
    grid = Grid(["01_sweep"], {"value": [1, 2, 3]}, {"tag": "x"}, retries=1, workers=2)
    manifest = run_grid(grid, run_id="g", runs_dir=tmp_path / "runs", notebook_dir=notebooks)
    check(manifest, tmp_path / "runs" / "g")


def test_dask_local_cluster(tmp_path, notebooks, dask_cluster):
    grid = Grid(["01_sweep"], {"value": [1, 2, 3]}, {"tag": "x"}, retries=1)
    manifest = run_grid(grid, address=dask_cluster.address, run_id="d", runs_dir=tmp_path / "runs",
                        notebook_dir=notebooks)
    assert manifest["engine"].startswith("dask:tcp://127.0.0.1:")
    check(manifest, tmp_path / "runs" / "d")


def test_grid_file_errors(tmp_path):
    bad = tmp_path / "grid.yaml"
    bad.write_text("notebooks: [x]\ngrids: {}\n")
    assert main(["run", "--grid", str(bad)]) == 2


def test_grid_timeout_is_applied_to_every_task(tmp_path):
    folder = tmp_path / "notebooks"
    folder.mkdir()
    # 5 s: far above a kernel's first cells under any load, far below the hour value 2 sleeps
    tiny_notebook(folder / "01_slow.ipynb", "import time\ntime.sleep(3600 if value == 2 else 0)")
    grid = Grid(["01_slow"], {"value": [1, 2]}, retries=0, workers=1, timeout=5)
    manifest = run_grid(grid, run_id="t", runs_dir=tmp_path / "runs", notebook_dir=folder)
    status = {t["parameters"]["value"]: t["status"] for t in manifest["tasks"].values()}
    assert status == {1: "ok", 2: "failed"} and manifest["cell_timeout"] == 5
    slow = next(t for t in manifest["tasks"].values() if t["parameters"]["value"] == 2)
    assert "timed out after 5 s" in slow["attempts"][0]["error"]
