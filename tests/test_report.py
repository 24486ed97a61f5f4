"""The run's report page (rag_lab/runs/report.py) on a run folder made by hand, and written by the runner."""
import json
import os
import struct
import zlib
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote

import nbformat
import pytest

from rag_lab.caching.atomic import write_bytes, write_text
from rag_lab.runs.report import PLOTLY_JS, write_report


class Links(HTMLParser):
    """Every href and src of a page (in-page anchors left out)."""

    def __init__(self):
        super().__init__()
        self.links = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("href", "src") and value and not value.startswith("#"):
                self.links.append(value)


def page_links(path: Path) -> list[str]:
    parser = Links()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser.links


def png_bytes(width=2, height=2) -> bytes:
    """A valid RGB PNG, built from its chunks (signature, IHDR, IDAT, IEND)."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    rows = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


@pytest.fixture
def run(tmp_path):
    """A run of two notebooks: 01_demo (ok: a figure, a captioned table, a 40-row table, a plotly output)
    and 02_broken (failed before papermill wrote a notebook)."""
    figures, run_dir = tmp_path / "figures" / "01_demo", tmp_path / "runs" / "r1"
    write_bytes(figures / "bars.png", png_bytes())
    write_text(figures / "bars.html", "<html><body>interactive bars</body></html>")
    write_text(figures / "scores.md", "Scores on tiny (reasoner: offline)\n\n| method | score |\n|---|---|\n| a | 0.123 |\n")
    tables = {"scores.csv": "method,score\na,0.123456\nb,12.5\n",
              "long.csv": "i,value\n" + "".join(f"{i},{i / 3}\n" for i in range(40))}
    for name, text in tables.items():
        write_text(figures / name, text)
        write_text(run_dir / "tables" / "01_demo" / name, text)
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("fig")
    cell.outputs = [nbformat.v4.new_output("display_data", data={
        "application/vnd.plotly.v1+json": {"data": [{"type": "bar", "x": [1, 2], "y": [3, 4]}], "layout": {}}})]
    nb.cells = [cell]
    nbformat.write(nb, run_dir / "01_demo.ipynb")
    write_text(run_dir / "02_broken.ipynb", json.dumps({"error": "NoSuchKernel: rag_lab"}))
    manifest = {
        "run_id": "r1", "status": "failed", "started": "2026-01-01T00:00:00", "finished": "2026-01-01T00:01:00",
        "seconds": 60.0, "parameters": {"limit": 4}, "per_notebook": {}, "cell_timeout": 1800,
        "git": {"commit": "abc123", "dirty": True}, "python": "3.11.7", "kernel": "rag_lab", "packages": {"numpy": "2.4.6"},
        "notebooks": [
            {"notebook": "01_demo", "status": "ok", "seconds": 12.5, "output": "01_demo.ipynb", "reasoner": "offline",
             "judge": None, "param_hash": "h1", "parameters": {"limit": 4, "title": "<script>x</script>"},
             "changed": {"limit": 4}, "figures_dir": str(figures),
             "files": sorted(str(p) for p in figures.iterdir()),
             "tables": ["tables/01_demo/long.csv", "tables/01_demo/scores.csv"],
             "cells": [{"index": 0, "first_line": "fig", "seconds": 0.25, "status": "ok"}]},
            {"notebook": "02_broken", "status": "failed", "seconds": 0.5, "output": "02_broken.ipynb",
             "reasoner": "offline", "judge": None, "param_hash": "h2", "parameters": {}, "changed": {},
             "figures_dir": str(tmp_path / "figures" / "02_broken"), "files": [], "tables": [], "cells": [],
             "failure": {"kind": "error", "cell": None, "first_line": None, "error": "NoSuchKernel: rag_lab"}}]}
    write_text(run_dir / "manifest.json", json.dumps(manifest))
    return run_dir, figures


def test_page_lists_each_notebook_with_status_parameters_and_revision(run):
    run_dir, _ = run
    page = write_report(run_dir).read_text(encoding="utf-8")
    assert '<section id="nb-01_demo">' in page and '<section id="nb-02_broken">' in page
    assert "abc123</code> (uncommitted changes)" in page and "3.11.7" in page
    assert '<tr class=changed><th class="l">limit</th>' in page          # the changed parameter is marked
    assert "&lt;script&gt;x&lt;/script&gt;" in page and "<script>x</script>" not in page
    assert "NoSuchKernel: rag_lab" in page and "could not be rendered as HTML" in page
    assert "12.5 s" in page


def test_every_link_resolves_to_a_file_of_the_run(run):
    run_dir, _ = run
    links = page_links(write_report(run_dir))
    assert {"manifest.json", "01_demo.html", "01_demo.ipynb", "figures/01_demo/bars.png", "figures/01_demo/bars.html",
            "tables/01_demo/scores.csv"} <= set(links)
    for link in links:
        target = (run_dir / unquote(link)).resolve()
        assert target.is_file() and run_dir.resolve() in target.parents, link


def test_tables_are_rendered_with_their_captions_and_long_ones_folded(run):
    run_dir, _ = run
    page = write_report(run_dir).read_text(encoding="utf-8")
    assert '<p class="caption">Scores on tiny (reasoner: offline)</p>' in page
    assert "<td>0.1235</td>" in page and "<td>12.5</td>" in page and "<td class=l>a</td>" in page   # 4 digits
    assert "<summary>long (40 rows)</summary>" in page and "first 30 of 40 rows" in page


def test_figures_are_hard_links_that_keep_this_runs_version(run):
    run_dir, figures = run
    write_report(run_dir)
    linked = run_dir / "figures" / "01_demo" / "bars.html"
    assert os.stat(linked).st_ino == os.stat(figures / "bars.html").st_ino
    write_text(figures / "bars.html", "<html>the next run's figure</html>")   # as save_figure replaces it
    assert linked.read_text() == "<html><body>interactive bars</body></html>"
    write_report(run_dir)                                                     # a second report is fine too
    assert not (run_dir / "figures" / "01_demo" / "scores.csv").exists()     # tables live in tables/


def test_rendered_notebook_draws_plotly_with_the_run_folders_one_script(run):
    run_dir, _ = run
    write_report(run_dir)
    rendered = (run_dir / "01_demo.html").read_text(encoding="utf-8")
    assert PLOTLY_JS == "figures/plotly.min.js"
    assert f'src="{PLOTLY_JS}"' in rendered and "Plotly.newPlot" in rendered
    assert (run_dir / PLOTLY_JS).stat().st_size > 1_000_000
    assert [p.name for p in run_dir.rglob("plotly*.js")] == ["plotly.min.js"]


def test_saved_figures_share_one_script_that_the_report_links(tmp_path):
    import plotly.graph_objects as go

    from rag_lab.core.figures import save_figure

    figures = tmp_path / "figures" / "01_demo"
    (html,) = save_figure(go.Figure(go.Bar(x=[1], y=[2])), figures, "a", png=False)
    save_figure(go.Figure(go.Bar(x=[1], y=[3])), figures, "b", png=False)
    assert 'src="../plotly.min.js"' in html.read_text() and html.stat().st_size < 100_000   # not embedded
    assert (tmp_path / "figures" / "plotly.min.js").stat().st_size > 1_000_000
    run_dir = tmp_path / "runs" / "r1"
    write_text(run_dir / "manifest.json", json.dumps({"run_id": "r1", "notebooks": [
        {"notebook": "01_demo", "status": "ok", "output": "01_demo.ipynb", "figures_dir": str(figures),
         "files": sorted(str(p) for p in figures.iterdir()), "tables": [], "cells": []}]}))
    write_report(run_dir)
    assert sorted(p.relative_to(run_dir).as_posix() for p in run_dir.rglob("*.js")) == ["figures/plotly.min.js"]
    assert os.stat(run_dir / "figures" / "plotly.min.js").st_ino == os.stat(tmp_path / "figures" / "plotly.min.js").st_ino


def test_a_folder_without_manifest_is_named():
    with pytest.raises(FileNotFoundError, match="no manifest.json in"):
        write_report(Path("/nonexistent/run"))


@pytest.mark.notebook
def test_the_runner_writes_the_page(tmp_path):
    from rag_lab.runs.runner import run_notebooks
    from test_cli_and_runner import tiny_notebook
    from test_runner import TABLES

    folder = tmp_path / "notebooks"
    folder.mkdir()
    tiny_notebook(folder / "01_tables.ipynb", TABLES)
    manifest = run_notebooks(["01_tables"], {"value": 2}, runs_dir=tmp_path / "runs", figures_root=tmp_path / "figures",
                             notebook_dir=folder, progress=False)
    page = tmp_path / "runs" / manifest["run_id"] / "index.html"
    text = page.read_text(encoding="utf-8")
    assert "<h4>scores</h4>" in text and "<td>20</td>" in text          # value 2 -> scores 2 and 20
    assert (page.parent / "01_tables.html").is_file()


def test_a_widget_with_a_saved_view_is_rendered_as_that_view(tmp_path):
    from rag_lab.runs.report import render_notebook

    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("explorer_widget(...)")
    cell.outputs = [nbformat.v4.new_output("display_data", data={
        "application/vnd.jupyter.widget-view+json": {"version_major": 2, "version_minor": 0, "model_id": "model-7f3e9"},
        "text/html": "<div class='rag-lab-explorer'><mark>saffron</mark></div>", "text/plain": "ExplorerBox(...)"})]
    nb.cells = [cell]
    nbformat.write(nb, tmp_path / "w.ipynb")
    page = render_notebook(tmp_path / "w.ipynb", tmp_path / "w.html").read_text(encoding="utf-8")
    assert 'class="rag-lab-explorer"><mark>saffron</mark></div>' in page and "model-7f3e9" not in page   # nbconvert re-quotes


def test_what_changed_between_methods_names_the_flipped_questions(run):
    """A per-question table (evaluate's tidy rows) gives the section its wins, losses and ties: q1 SKETCH
    finds gold at 5 and naive does not (a win), q2 the reverse (a loss), q3 both (a tie)."""
    from rag_lab.runs.changes import changes, per_question_table

    run_dir, _ = run
    rows = "".join(f"{m},{q},ctx_mrr,5,{v}\n" for m, q, v in (("sketch", "q1", 1.0), ("naive", "q1", 0.0),
                                                               ("sketch", "q2", 0.0), ("naive", "q2", 0.5),
                                                               ("sketch", "q3", 1.0), ("naive", "q3", 0.2)))
    write_text(run_dir / "tables" / "01_demo" / "results.csv", "method,question_id,metric,k,value\n" + rows)
    table = changes(per_question_table(run_dir / "tables" / "01_demo" / "results.csv"))
    assert table.to_dict("records") == [{"method": "sketch", "baseline": "naive", "k": 5, "wins": 1, "losses": 1,
                                         "ties": 1, "n": 3, "won": "q1", "lost": "q2"}]
    assert per_question_table(run_dir / "tables" / "01_demo" / "scores.csv") is None     # not per-question rows
    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    manifest["notebooks"][0]["tables"].append("tables/01_demo/results.csv")
    page = write_report(run_dir, manifest).read_text(encoding="utf-8")
    section = page.split("<h3>What changed between methods</h3>")[1].split("<details")[0]
    assert "sketch" in section and "naive" in section and "<td>q1</td>" in section and "<td>q2</td>" in section


def test_numeric_question_ids_read_back_as_written(tmp_path):
    """COVID-QA's question ids are numbers in its file; a per-question CSV read back keeps them as the strings
    they were written as ("007" keeps its zeros) and the flipped questions are listed (was a TypeError)."""
    from rag_lab.runs.changes import changes, per_question_table

    rows = "".join(f"{m},{q},ctx_mrr,5,{v}\n" for m, q, v in (("sketch", "101", 1.0), ("naive", "101", 0.0),
                                                                ("sketch", "007", 0.0), ("naive", "007", 1.0)))
    write_text(tmp_path / "results.csv", "method,question_id,metric,k,value\n" + rows)
    table = changes(per_question_table(tmp_path / "results.csv"))
    assert table[["wins", "losses", "won", "lost"]].values.tolist() == [[1, 1, "101", "007"]]


def test_a_table_repeating_questions_per_condition_is_split_by_it():
    """Notebook 04's per-question table repeats every question once per document-length condition: the
    flips are counted within each condition, never across them."""
    import pandas as pd

    from rag_lab.runs.changes import changes

    rows = [("gralc-graph", "q1", "doc_mrr", 5, 1.0, "abstract"), ("gralc-naive", "q1", "doc_mrr", 5, 0.0, "abstract"),
            ("gralc-graph", "q1", "doc_mrr", 5, 0.0, "full"), ("gralc-naive", "q1", "doc_mrr", 5, 0.5, "full")]
    table = changes(pd.DataFrame(rows, columns=["method", "question_id", "metric", "k", "value", "condition"]))
    assert table[["part", "wins", "losses", "won", "lost"]].values.tolist() == [["abstract", 1, 0, "q1", ""],
                                                                               ["full", 0, 1, "", "q1"]]
