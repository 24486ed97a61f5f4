"""Run folders named by notebook + parameter hash, tables kept per run, per-cell durations, cell
timeouts and mid-notebook failures in the manifest, and `rag_lab runs` / `rag_lab collect`."""
import hashlib
import json
import time

import pandas as pd
import pytest

from rag_lab.cli import main
from rag_lab.cli.collect import table_cells
from rag_lab.runs.runner import notebook_defaults, parameter_hash, read_runs, run_notebooks
from test_cli_and_runner import tiny_notebook

# writes scores.csv = "method,score / a,<value> / b,<10*value>" through the package's own save_table
TABLES = ("import pandas as pd\nfrom rag_lab.core.figures import save_table\n"
          "table = pd.DataFrame({'score': [value, value * 10]}, index=pd.Index(['a', 'b'], name='method'))\n"
          "save_table(table, figures_dir, 'scores')")


@pytest.fixture
def notebooks(tmp_path):
    folder = tmp_path / "notebooks"
    folder.mkdir()
    tiny_notebook(folder / "01_tables.ipynb", TABLES)
    tiny_notebook(folder / "02_sleeps.ipynb", "x = value + 1", "import time\ntime.sleep(3600)", "y = 2")
    tiny_notebook(folder / "03_raises.ipynb", "x = value + 1", "# the third cell\nraise ValueError(f'bad {x}')",
                  "never = True")
    tiny_notebook(folder / "04_adds.ipynb", "y = value * 2", "z = y + 1")
    return folder


def run(notebooks, tmp_path, names, params=None, **kw):
    return run_notebooks(names, params or {}, runs_dir=tmp_path / "runs", figures_root=tmp_path / "figures",
                         notebook_dir=notebooks, progress=False, **kw)


def test_parameter_hash_ignores_order_float_spelling_and_figures_dir():
    # the hash is the first 10 hex digits of sha256 over the sorted, compact JSON
    assert parameter_hash({"k": 5, "t": 90.0}) == hashlib.sha256(b'{"k":5,"t":90}').hexdigest()[:10]
    assert parameter_hash({"t": 90, "k": 5, "figures_dir": "/x"}) == parameter_hash({"k": 5, "t": 90.0})
    assert parameter_hash({"k": 5}) != parameter_hash({"k": 6})
    assert parameter_hash({"ks": (1, 3)}) == parameter_hash({"ks": [1, 3]})


def test_notebook_defaults_read_tuple_assignments(tmp_path):
    path = tmp_path / "n.ipynb"
    tiny_notebook(path, "pass", parameters="a, b = 3, 1   # two at once\nks = [1, 3]\nname: str = 'x'\n"
                                           "f = dict(a=1)\nfigures_dir = '../f'")
    assert notebook_defaults(path) == {"a": 3, "b": 1, "ks": [1, 3], "name": "x", "f": "dict(a=1)",
                                       "figures_dir": "../f"}


def test_runs_are_named_by_notebook_and_effective_parameters(tmp_path, notebooks):
    first = run(notebooks, tmp_path, ["01_tables"], {"value": 2})
    again = run(notebooks, tmp_path, ["01_tables"], {"value": 2})
    other = run(notebooks, tmp_path, ["01_tables"], {"value": 3})
    default = run(notebooks, tmp_path, ["01"], {"value": 1})   # 1 is the notebook's default value
    bare = run(notebooks, tmp_path, ["01"])
    digest = parameter_hash({"value": 2})
    assert first["run_id"].startswith(f"01_tables-{digest}-") and again["run_id"].startswith(f"01_tables-{digest}-")
    assert first["run_id"] != again["run_id"]                           # reruns are kept apart
    assert other["param_hash"] == parameter_hash({"value": 3}) != digest
    assert default["param_hash"] == bare["param_hash"] == parameter_hash({"value": 1})
    assert bare["notebooks"][0]["changed"] == {} and first["notebooks"][0]["changed"] == {"value": 2}
    two = run(notebooks, tmp_path, ["01", "03"])
    assert two["run_id"].startswith("01+03-")


def test_each_run_keeps_its_own_tables_and_cell_durations(tmp_path, notebooks):
    first = run(notebooks, tmp_path, ["01_tables"], {"value": 2})
    run(notebooks, tmp_path, ["01_tables"], {"value": 3})               # overwrites figures/01_tables/
    assert "a,3" in (tmp_path / "figures" / "01_tables" / "scores.csv").read_text()
    entry = first["notebooks"][0]
    assert entry["tables"] == ["tables/01_tables/scores.csv"]
    kept = (tmp_path / "runs" / first["run_id"] / entry["tables"][0]).read_text()
    assert kept.splitlines() == ["method,score", "a,2", "b,20"]
    assert [c["index"] for c in entry["cells"]] == [0, 1] and all(c["status"] == "ok" for c in entry["cells"])
    assert entry["cells"][1]["first_line"] == "import pandas as pd" and entry["cells"][1]["seconds"] > 0
    on_disk = json.loads((tmp_path / "runs" / first["run_id"] / "manifest.json").read_text())
    assert on_disk["notebooks"][0]["cells"] == entry["cells"] and on_disk["status"] == "ok"
    assert on_disk["notebooks"][0]["reasoner"] == "offline" and on_disk["notebooks"][0]["judge"] is None
    assert on_disk["git"]["commit"] and on_disk["packages"]["papermill"]


def test_a_cell_past_the_timeout_fails_its_notebook_and_the_rest_still_run(tmp_path, notebooks):
    # The limit is far from both sides whatever the load: 5 s against an hour's sleep, and against cells
    # of plain arithmetic (no imports) in the notebooks that must pass.
    t0 = time.perf_counter()
    manifest = run(notebooks, tmp_path, ["02_sleeps", "04_adds"], timeout=5)
    assert time.perf_counter() - t0 < 600                                # the hour's sleep was cut short
    sleeps, adds = manifest["notebooks"]
    assert sleeps["status"] == "failed" and adds["status"] == "ok" and manifest["status"] == "failed"
    assert sleeps["failure"]["kind"] == "timeout" and sleeps["failure"]["cell"] == 2
    assert sleeps["failure"]["first_line"] == "import time" and "timed out after 5 s" in sleeps["error"]
    assert [c["status"] for c in sleeps["cells"]] == ["ok", "ok", "timeout", "not run"]
    assert [c["status"] for c in adds["cells"]] == ["ok", "ok", "ok"]
    assert manifest["cell_timeout"] == 5


def test_a_failing_cell_is_named_in_the_manifest(tmp_path, notebooks):
    manifest = run(notebooks, tmp_path, ["03_raises"])
    entry = manifest["notebooks"][0]
    assert entry["failure"] == {"kind": "error", "cell": 2, "first_line": "# the third cell", "error": "ValueError: bad 2"}
    assert [c["status"] for c in entry["cells"]] == ["ok", "ok", "failed", "not run"]
    assert "ValueError" in entry["traceback"] and "\x1b[" not in entry["traceback"]


def test_run_command_exits_non_zero_and_says_which_failed(tmp_path, notebooks, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)   # relative folders are taken from here, not from the notebook's folder
    code = main(["run", str(notebooks / "03_raises.ipynb"), str(notebooks / "01_tables.ipynb"),
                 "--runs-dir", "runs", "--figures-dir", "figures", "--timeout", "20"])
    out = capsys.readouterr().out
    assert code == 1
    assert (tmp_path / "figures" / "01_tables" / "scores.csv").is_file()
    (run_dir,) = (tmp_path / "runs").iterdir()
    assert (run_dir / "tables" / "01_tables" / "scores.csv").is_file()
    assert "FAILED  03_raises: cell 2 ('# the third cell'): ValueError: bad 2" in out
    assert json.loads(out.strip().splitlines()[-1])["failed"] == ["03_raises"]
    assert main(["run", "01", "--timeout", "0"]) == 2


def test_collect_gathers_two_runs_into_one_table(tmp_path, notebooks, capsys):
    for value in (2, 3):
        run(notebooks, tmp_path, ["01_tables"], {"value": value})
    run(notebooks, tmp_path, ["03_raises"])                              # failed: left out unless --all
    out = tmp_path / "results.csv"
    assert main(["collect", "--runs-dir", str(tmp_path / "runs"), "--out", str(out)]) == 0
    df = pd.read_csv(out)
    assert list(df.columns) == ["run_id", "notebook", "status", "reasoner", "param_hash", "parameters", "param.value",
                                "table", "row", "label", "column", "value"]
    assert df.run_id.nunique() == 2 and set(df.notebook) == {"01_tables"} and set(df.table) == {"scores"}
    scores = df[df.column == "score"].pivot(index="label", columns="param.value", values="value").astype(float)
    assert scores.to_dict() == {2: {"a": 2.0, "b": 20.0}, 3: {"a": 3.0, "b": 30.0}}   # value and 10 * value
    assert set(df.parameters) == {'{"value": 2}', '{"value": 3}'}
    assert set(df.param_hash) == {parameter_hash({"value": 2}), parameter_hash({"value": 3})}
    assert "collected 8 cells from 2 tables of 2 runs" in capsys.readouterr().out
    assert main(["collect", "--runs-dir", str(tmp_path / "runs"), "--out", str(out), "--all"]) == 0
    assert "03_raises" not in set(pd.read_csv(out).notebook)            # it failed before writing a table


def test_collect_with_nothing_to_collect_says_so_and_fails(tmp_path, capsys):
    folder = tmp_path / "runs" / "r1"
    folder.mkdir(parents=True)
    (folder / "manifest.json").write_text(json.dumps({"run_id": "r1", "notebooks": [
        {"notebook": "03_raises", "status": "failed", "parameters": {}, "changed": {}, "tables": []}]}))
    out = tmp_path / "results.csv"
    assert main(["collect", "--runs-dir", str(tmp_path / "runs"), "--out", str(out)]) == 1
    assert "nothing to collect" in capsys.readouterr().err and not out.exists()
    assert main(["collect", "--runs-dir", str(tmp_path / "runs"), "--out", str(out), "--all"]) == 1
    assert not out.exists()


def test_runs_lists_every_run_newest_first_in_short_lines(tmp_path, notebooks, capsys):
    ok = run(notebooks, tmp_path, ["01_tables"], {"value": 2})
    bad = run(notebooks, tmp_path, ["03_raises"])
    assert main(["runs", "--runs-dir", str(tmp_path / "runs")]) == 0
    lines = capsys.readouterr().out.splitlines()
    folders = [line.split()[0] for line in lines if line.startswith("    ") and "(hash " in line]
    assert folders == [bad["run_id"], ok["run_id"]]                     # newest first
    heads = [line for line in lines if line[:4].isdigit()]
    assert " ok " in heads[1] and "01_tables" in heads[1] and "value=2" in heads[1] and "offline" in heads[1]
    assert " failed " in heads[0] and "defaults" in heads[0]
    assert "    failed at cell 2: ValueError: bad 2" in lines
    assert max(len(line) for line in lines[:-1]) <= 110
    assert lines[-1].startswith("2 notebook runs, 1 not ok")
    assert [m["run_id"] for _, m in read_runs(tmp_path / "runs")] == sorted([ok["run_id"], bad["run_id"]])


def test_runs_cuts_long_parameter_values():
    from rag_lab.cli.runs import run_lines

    row = {"run": "r", "status": "ok", "started": "2026-11-27T15:40:01", "notebook": "01_sketch", "hash": "h",
           "seconds": 2.0, "reasoner": "offline", "judge": "", "parameters": "ks=" + "[1, 2, 3]" * 40, "failure": ""}
    head, folder = run_lines(row)
    assert len(head) == 110 and head.endswith("...") and head.startswith("2026-11-27 15:40  ok      01_sketch  2.0 s")
    assert folder == "    r  (hash h)"


def test_runs_dir_missing_is_a_clear_error(tmp_path, capsys):
    assert main(["runs", "--runs-dir", str(tmp_path / "nope")]) == 2
    assert "no runs folder" in capsys.readouterr().err


def write(tmp_path, frame, index=True):
    path = tmp_path / "t.csv"
    frame.to_csv(path, index=index)
    return [(c["row"], c["label"], c["column"], c["value"]) for c in table_cells(path)]


def test_table_cells_reads_the_shapes_pandas_writes(tmp_path):
    unnamed = pd.DataFrame({"p": [1, 2]}, index=["a", "b"])
    assert write(tmp_path, unnamed) == [(0, "a", "p", "1"), (1, "b", "p", "2")]
    named = unnamed.rename_axis("m")
    assert write(tmp_path, named) == [(0, "a", "m", "a"), (0, "a", "p", "1"), (1, "b", "m", "b"), (1, "b", "p", "2")]
    plain = pd.DataFrame({"copies": [1, 1], "method": ["x", None]})
    assert write(tmp_path, plain, index=False) == [(0, "1", "copies", "1"), (0, "1", "method", "x"),
                                                   (1, "1", "copies", "1")]           # the empty cell is left out
    both = pd.DataFrame([[1, 2]], index=pd.MultiIndex.from_tuples([("d1", "naive")], names=["dataset", "method"]),
                        columns=pd.MultiIndex.from_tuples([("FC", "ours"), ("FC", "paper")]))
    assert write(tmp_path, both) == [(0, "d1 / naive", "dataset", "d1"), (0, "d1 / naive", "method", "naive"),
                                     (0, "d1 / naive", "FC / ours", "1"), (0, "d1 / naive", "FC / paper", "2")]
    cols_only = pd.DataFrame([[1, 2]], index=["a"], columns=both.columns)
    assert write(tmp_path, cols_only) == [(0, "a", "FC / ours", "1"), (0, "a", "FC / paper", "2")]


def test_a_per_dataset_cell_gets_the_cell_timeout_for_each_data_set(tmp_path, monkeypatch):
    """Notebook 10 builds and scores every method on each data set in one cell: tagged ``per_dataset``, it may
    run the cell timeout once per data set (the real preset's four would otherwise share 1,800 s); every other
    cell keeps the timeout; the papermill call receives that as nbclient's ``timeout_func``."""
    import rag_lab.runs.runner as runner
    from rag_lab.runs.parameters import cell_timeout
    from rag_lab.runs.runner import NOTEBOOK_DIR

    tagged, plain = {"metadata": {"tags": ["per_dataset"]}}, {"metadata": {}}
    assert cell_timeout(tagged, 1800, {"datasets": ["a", "b", "c", "d"]}) == 7200
    assert cell_timeout(plain, 1800, {"datasets": ["a", "b", "c", "d"]}) == 1800
    assert cell_timeout(tagged, 1800, {"datasets": []}) == 1800 and cell_timeout(tagged, None, {"datasets": ["a"]}) is None
    nb = json.loads((NOTEBOOK_DIR / "10_compare_retrieval.ipynb").read_text(encoding="utf-8"))
    compare_cell = next(c for c in nb["cells"] if "per_dataset" in c["metadata"].get("tags", []))
    assert "compare(" in "".join(compare_cell["source"])
    seen = {}

    def fake_execute(path, out, parameters, **kw):
        seen["timeouts"] = [kw["timeout_func"](c) for c in nb["cells"] if c["cell_type"] == "code"]
        open(out, "w").write("{}")

    monkeypatch.setattr("papermill.execute_notebook", fake_execute)
    monkeypatch.setattr(runner, "kernel_name", lambda: "rag_lab")
    run_notebooks([str(NOTEBOOK_DIR / "10_compare_retrieval.ipynb")], {"datasets": ["x", "y", "z"]},
                  runs_dir=tmp_path / "runs", figures_root=tmp_path / "fig", progress=False, timeout=100)
    assert sorted(set(seen["timeouts"])) == [100, 300] and seen["timeouts"].count(300) == 1
