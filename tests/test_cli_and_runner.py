import json
import subprocess
import sys

import nbformat
import pandas as pd
import pytest

from rag_lab.cli import main
from rag_lab.core.generic_form import write_dataset
from rag_lab.runs.runner import run_notebooks
from rag_lab.core.types import Dataset, Document, Question


def generic_folder(tmp_path):
    docs = [Document("pasta", "Pesto comes from Genoa. It is made with basil, pine nuts and pecorino cheese."),
            Document("rice", "Risotto alla milanese is coloured with saffron. Carnaroli rice keeps its bite."),
            Document("pizza", "Neapolitan pizza is baked in a wood-fired oven for about ninety seconds.")]
    qs = [Question("q1", "Which spice colours risotto?", "saffron", ["rice"], ["Risotto alla milanese is coloured with saffron."]),
          Question("q2", "Where does pesto come from?", "Genoa", ["pasta"], ["Pesto comes from Genoa."]),
          Question("q3", "A question with no gold at all")]
    return write_dataset(Dataset("t", docs, qs), tmp_path / "data")


def test_eval_writes_tidy_rows(tmp_path, capsys):
    folder = generic_folder(tmp_path)
    out = tmp_path / "results.csv"
    assert main(["eval", "--data", str(folder), "--methods", "naive", "--k", "1,3", "--out", str(out)]) == 0
    df = pd.read_csv(out)
    assert list(df.columns) == ["method", "question_id", "metric", "k", "value", "index_reasoner", "answer_reasoner"]
    assert set(df["index_reasoner"]) == {"none"} and set(df["answer_reasoner"]) == {"none"}  # no reasoner anywhere
    assert set(df["metric"]) >= {"doc_mrr", "doc_recall", "doc_precision", "doc_ndcg", "ctx_mrr", "ctx_recall"}
    # one tiny chunk per document: the gold document is ranked first for both answerable questions
    top = df[(df.metric == "doc_mrr") & (df.k == 1)].set_index("question_id")["value"]
    assert top.to_dict() == {"q1": 1.0, "q2": 1.0}
    assert "q3" not in set(df[df.metric == "doc_mrr"]["question_id"])  # documented skip: no gold
    assert "doc_mrr@1" in capsys.readouterr().out


def test_eval_bad_arguments_are_clear(tmp_path, capsys):
    assert main(["eval", "--data", str(tmp_path / "missing"), "--methods", "naive"]) == 2
    assert "unknown dataset" in capsys.readouterr().err
    folder = generic_folder(tmp_path)
    assert main(["eval", "--data", str(folder), "--methods", "nope"]) == 2
    assert "unknown method 'nope'" in capsys.readouterr().err
    assert main(["eval", "--data", str(folder), "--k", "0,x"]) == 2
    assert main(["eval", "--data", str(folder), "--judge", "openai:gpt-4o-mini"]) == 2
    assert "give --reasoner" in capsys.readouterr().err
    assert main(["eval", "--data", str(folder), "--reasoner", "offline", "--answer-k", "0"]) == 2
    assert main(["eval", "--data", str(folder), "--out", str(tmp_path / "r.json")]) == 2
    assert "give the CSV's path" in capsys.readouterr().err


def test_methods_and_datasets_listing():
    out = subprocess.run([sys.executable, "-m", "rag_lab", "methods"], capture_output=True, text=True, check=True).stdout
    lines = dict(line.split("\t", 1) for line in out.strip().splitlines())
    assert {"naive", "semantic"} <= set(lines) and all(desc.strip() for desc in lines.values())
    out = subprocess.run([sys.executable, "-m", "rag_lab", "datasets"], capture_output=True, text=True, check=True).stdout
    assert "italian_cuisine" in out


def tiny_notebook(path, *bodies, parameters="figures_dir = 'x'\nvalue = 1"):
    """A notebook: a parameters cell (cell 0), then one code cell per body (cells 1, 2, ...)."""
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell(parameters)
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, *(nbformat.v4.new_code_cell(body) for body in bodies)]
    nb.metadata["kernelspec"] = {"name": "rag_lab", "display_name": "rag_lab", "language": "python"}
    nbformat.write(nb, path)


def test_runner_records_a_failure_and_runs_the_rest(tmp_path):
    nbdir = tmp_path / "notebooks"
    nbdir.mkdir()
    tiny_notebook(nbdir / "01_fails.ipynb", "raise ValueError('boom')")
    tiny_notebook(nbdir / "02_writes.ipynb",
                  "from pathlib import Path\nPath(figures_dir).mkdir(parents=True, exist_ok=True)\n"
                  "Path(figures_dir, 'out.txt').write_text(str(value * 2))")
    manifest = run_notebooks(None, {"value": 21}, run_id="r1", runs_dir=tmp_path / "runs",
                             figures_root=tmp_path / "fig", notebook_dir=nbdir, progress=False)
    status = {e["notebook"]: e["status"] for e in manifest["notebooks"]}
    assert status == {"01_fails": "failed", "02_writes": "ok"} and manifest["status"] == "failed"
    assert "boom" in manifest["notebooks"][0]["error"]
    assert (tmp_path / "fig" / "02_writes" / "out.txt").read_text() == "42"
    on_disk = json.loads((tmp_path / "runs" / "r1" / "manifest.json").read_text())
    assert on_disk["notebooks"][1]["files"] == [str(tmp_path / "fig" / "02_writes" / "out.txt")]
    assert on_disk["parameters"] == {"value": 21} and "git" in on_disk and on_disk["packages"]["papermill"]
    names = {p.name for p in (tmp_path / "runs" / "r1").iterdir()}
    assert {"01_fails.ipynb", "02_writes.ipynb", "manifest.json", "index.html"} <= names   # + the HTML renderings
    assert not [n for n in names if n.startswith(".") or n.endswith((".tmp", ".part"))], names   # nothing half-written
