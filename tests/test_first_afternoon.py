"""Issue 49, a researcher's first afternoon: mistakes refused before anything is built, paths read from
where they were typed, figures/ changed only by a default run, gold contexts placed by offset, eval's
build table, progress line and leaderboard, and the listings (`datasets`, `--help`)."""
import io
import json
import logging

import pandas as pd
import pytest

from rag_lab.cli import main
from rag_lab.core.generic_form import read_dataset, write_dataset
from rag_lab.core.types import Cost, Dataset, Document, Question, Section
from rag_lab.evaluation.build_report import StepLine, build_table, clock
from rag_lab.evaluation.metric_specs import check_family, produced_columns
from rag_lab.evaluation.metrics import locate_contexts
from rag_lab.runs import reference
from rag_lab.runs.parameters import check_names, typed_paths
from rag_lab.runs.reference import figures_folder
from rag_lab.runs.runner import run_notebooks
from test_cli_and_runner import tiny_notebook

# --- 1. names checked before anything runs ---------------------------------------------------------

def test_an_unknown_parameter_is_refused_with_the_nearest_names():
    with pytest.raises(ValueError, match=r"01_x: unknown parameter 'limt' \(did you mean 'limit'\?\); the "
                                         r"parameters it takes: figures_dir, hops, limit"):
        check_names("01_x", {"limt": 5, "hops": 1}, {"limit": None, "hops": None, "figures_dir": "x"})
    check_names("01_x", {"limit": 5}, {"limit": None})                 # a known name passes
    with pytest.raises(ValueError, match="has no parameters cell"):
        check_names("01_x", {"limit": 5}, {})


def test_family_is_checked_against_the_columns_the_run_produces():
    docs = [Document("a", "Pesto comes from Genoa.", sections=[Section("a-s", "S", "section", 0, 23)])]
    data = Dataset("d", docs, [Question("q", "?", gold_doc_ids=["a"])])
    # gold documents only: doc_* at each k, and section coverage (the document has sections); no ctx_*
    assert produced_columns(data, [1, 5]) == [
        "doc_mrr@1", "doc_recall@1", "doc_precision@1", "doc_ndcg@1", "section_coverage_source@1",
        "section_coverage_source_share@1", "doc_mrr@5", "doc_recall@5", "doc_precision@5", "doc_ndcg@5",
        "section_coverage_source@5", "section_coverage_source_share@5"]
    answers = produced_columns(data, [1], reasoner=True, answer_k=3)
    assert "token_f1@3" in answers and "faithfulness@3" not in answers
    assert "faithfulness@3" in produced_columns(data, [1], reasoner=True, judge=True, answer_k=3)
    check_family(["doc_mrr@5"], produced_columns(data, [1, 5]))
    with pytest.raises(ValueError, match=r"--family 'ctx_recall@5' .*not a column this run produces"):
        check_family(["ctx_recall@5"], produced_columns(data, [1, 5]))


# --- 2. paths typed on the command line ------------------------------------------------------------

def test_typed_paths_are_made_absolute_from_where_they_were_typed(tmp_path):
    (tmp_path / "my-data").mkdir()
    work = tmp_path / "work"
    work.mkdir()
    out = typed_paths({"dataset": "../my-data", "data_path": "sub/none-yet", "reasoner": "openai:gpt-4o-mini",
                       "judge": "openai-compatible:m@http://h:8000/v1", "limit": 5, "dataset2": "italian_cuisine",
                       "loader_params": {"path": "../my-data", "max_documents": 5}}, work)
    assert out["dataset"] == str(tmp_path / "my-data")
    assert out["data_path"] == str(work / "sub" / "none-yet")          # named like a path: shown absolute
    assert out["loader_params"] == {"path": str(tmp_path / "my-data"), "max_documents": 5}
    assert {k: out[k] for k in ("reasoner", "judge", "limit", "dataset2")} == {
        "reasoner": "openai:gpt-4o-mini", "judge": "openai-compatible:m@http://h:8000/v1", "limit": 5,
        "dataset2": "italian_cuisine"}                                  # names and specs are left alone


def test_a_relative_dataset_folder_works_from_where_it_was_typed(tmp_path, monkeypatch, capsys):
    write_dataset(Dataset("mine", [Document("a", "Pesto comes from Genoa.")]), tmp_path / "my-data")
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    tiny_notebook(notebooks / "01_reads.ipynb", "from rag_lab.datasets import load_dataset\n"
                                                "print('documents:', len(load_dataset(dataset).documents))",
                  parameters="figures_dir = 'x'\ndataset = 'italian_cuisine'")
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    assert main(["run", str(notebooks / "01_reads.ipynb"), "-p", "dataset", "../my-data", "--runs-dir", "runs",
                 "--figures-dir", "figures"]) == 0
    (run_dir,) = (work / "runs").iterdir()
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["notebooks"][0]["parameters"]["dataset"] == str(tmp_path / "my-data")
    assert "documents: 1" in (run_dir / "01_reads.ipynb").read_text()


def test_an_unknown_dataset_names_the_absolute_folder_tried(tmp_path, monkeypatch):
    from rag_lab.datasets import load_dataset

    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match=f"no folder at {tmp_path.parent / 'nope'} and not one of"):
        load_dataset("../nope")


# --- 3. figures/ changes only from a default run -----------------------------------------------------

def test_the_decision_where_figures_go(tmp_path, monkeypatch):
    monkeypatch.setattr(reference, "REFERENCE_DIR", tmp_path / "figures")
    run_dir = tmp_path / "runs" / "r1"
    assert figures_folder("01_x", {}, tmp_path / "figures", run_dir) == tmp_path / "figures" / "01_x"
    assert figures_folder("01_x", {"limit": 5}, tmp_path / "figures", run_dir) == run_dir / "figures" / "01_x"
    assert figures_folder("01_x", {"limit": 5}, tmp_path / "figures", run_dir, write_reference=True) == \
        tmp_path / "figures" / "01_x"
    other = tmp_path / "elsewhere"                                   # a folder the user named: written there
    assert figures_folder("01_x", {"limit": 5}, other, run_dir) == other / "01_x"


def test_a_run_with_other_parameters_leaves_the_reference_untouched(tmp_path, monkeypatch):
    figures = tmp_path / "figures"
    monkeypatch.setattr(reference, "REFERENCE_DIR", figures)
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    tiny_notebook(notebooks / "01_tables.ipynb", "from pathlib import Path\nout = Path(figures_dir)\n"
                  "out.mkdir(parents=True, exist_ok=True)\n(out / 'scores.csv').write_text(f'v\\n{value}\\n')")
    kw = dict(runs_dir=tmp_path / "runs", figures_root=figures, notebook_dir=notebooks, progress=False)
    run_notebooks(["01"], {}, **kw)                                  # the default run writes the reference
    assert (figures / "01_tables" / "scores.csv").read_text() == "v\n1\n"
    trial = run_notebooks(["01"], {"value": 5}, **kw)
    assert (figures / "01_tables" / "scores.csv").read_text() == "v\n1\n"
    entry = trial["notebooks"][0]
    run_dir = tmp_path / "runs" / trial["run_id"]
    assert (run_dir / "figures" / "01_tables" / "scores.csv").read_text() == "v\n5\n"
    assert entry["tables"] == ["tables/01_tables/scores.csv"]
    assert entry["reference"]["compared"] is False and "figures and tables are in" in entry["reference"]["why"]
    run_notebooks(["01"], {"value": 6}, write_reference=True, **kw)   # on request
    assert (figures / "01_tables" / "scores.csv").read_text() == "v\n6\n"


# --- 4. gold contexts placed by offset ---------------------------------------------------------------

def test_an_offset_places_a_context_that_occurs_twice():
    # "HCoV is a virus. HCoV spreads.": "HCoV" at 0 and 17
    docs = {"a": Document("a", "HCoV is a virus. HCoV spreads.")}
    first, second, same = locate_contexts(Question("q", "?", gold_doc_ids=["a"], gold_contexts=["HCoV", "HCoV", "virus"],
                                                   gold_context_offsets=[None, 17, None]), docs)
    assert (first.start, first.end, second.start, second.end, same.start) == (0, 4, 17, 21, 10)
    (only,) = locate_contexts(Question("q", "?", gold_contexts=["HCoV", "HCoV"]), docs)   # one item without offsets
    assert (only.doc_id, only.start) == ("a", 0)


def test_offsets_round_trip_through_the_generic_form(tmp_path):
    data = Dataset("d", [Document("a", "HCoV is a virus. HCoV spreads.")],
                   [Question("q", "?", gold_doc_ids=["a"], gold_contexts=["HCoV"], gold_context_offsets=[17])])
    write_dataset(data, tmp_path / "d")
    assert '"gold_context_offsets": [17]' in (tmp_path / "d" / "questions.jsonl").read_text()
    assert read_dataset(tmp_path / "d").questions[0].gold_context_offsets == [17]
    (tmp_path / "d" / "questions.jsonl").write_text(json.dumps(
        {"id": "q", "question": "?", "gold_contexts": ["HCoV"], "gold_context_offsets": [17, 0]}) + "\n")
    with pytest.raises(ValueError, match="has 2 entries for 1 gold_contexts"):
        read_dataset(tmp_path / "d")


# --- 6. eval's output ----------------------------------------------------------------------------------

class Built:
    def __init__(self, seconds, reused, size):
        self.build_cost = Cost(seconds=seconds)
        self.index_reuse = {"reused": reused, "bytes": size}


def test_build_table_shows_seconds_reuse_and_size():
    table = build_table({"naive": Built(2.345, False, 1_500_000), "sketch": Built(98.0, True, 250)})
    assert table.to_dict("records") == [{"method": "naive", "build_s": 2.35, "reused": False, "index_mb": 1.5},
                                        {"method": "sketch", "build_s": 98.0, "reused": True, "index_mb": 0.0}]


def test_one_step_line_with_elapsed_time():
    stream = io.StringIO()          # not a terminal: each step printed once, then the total
    with StepLine(3, stream=stream) as line:
        line.start("building naive over 2 documents")
        line.start("building semantic over 2 documents")
        line.start("querying and scoring")
    assert stream.getvalue().splitlines() == [
        "eval [1/3] building naive over 2 documents | 0:00 elapsed",
        "eval [2/3] building semantic over 2 documents | 0:00 elapsed",
        "eval [3/3] querying and scoring | 0:00 elapsed", "eval: done in 0:00"]
    assert (clock(7), clock(228), clock(3723)) == ("0:07", "3:48", "1:02:03")


def test_every_command_help_shows_its_defaults(capsys):
    for command, shown in (("eval", "(default: naive,semantic)"), ("eval", "(default: 1,3,5,10)"),
                           ("runs", "(default: "), ("estimate", "per 1M prompt tokens")):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        assert shown in " ".join(capsys.readouterr().out.split()), (command, shown)


def test_datasets_marks_what_is_on_this_machine(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("RAG_LAB_DATA", str(tmp_path))
    (tmp_path / "covidqa").mkdir()
    (tmp_path / "covidqa" / "COVID-QA.json").write_text("{}")
    assert main(["datasets"]) == 0
    rows = {line.split()[0]: line.split()[1:3] for line in capsys.readouterr().out.splitlines()[:-1]}
    assert rows["italian_cuisine"][0] == "shipped" and rows["covidqa"][0] == "downloaded"
    assert rows["qasper"] == ["not", "here"]


def test_the_command_line_shows_info_from_rag_lab_only():
    from rag_lab.cli import quiet_libraries

    quiet_libraries()
    assert logging.getLogger("rag_lab.evaluation").getEffectiveLevel() == logging.INFO
    for name in ("faiss.loader", "kaleido", "choreographer.browser_async"):
        assert not logging.getLogger(name).isEnabledFor(logging.INFO), name


def test_eval_writes_builds_leaderboard_and_integer_k(tmp_path, capsys):
    data = Dataset("tiny", [Document("a", "Pesto comes from Genoa. It is green."),
                            Document("b", "Risotto is rice from Milan. It is yellow.")],
                   [Question("q1", "Where is pesto from?", gold_doc_ids=["a"], gold_contexts=["Pesto comes from Genoa."]),
                    Question("q2", "What is risotto?", gold_doc_ids=["b"])])
    write_dataset(data, tmp_path / "tiny")
    out = tmp_path / "res" / "r.csv"
    assert main(["eval", "--data", str(tmp_path / "tiny"), "--methods", "naive", "--k", "1,2", "--out", str(out)]) == 0
    printed = capsys.readouterr()
    assert "eval [1/2] building naive over 2 documents" in printed.err and "eval: done in" in printed.err
    rows = pd.read_csv(out)
    header, first = out.read_text().split("\n")[:2]
    assert header.split(",")[3] == "k" and first.split(",")[3] == "1"          # 1, not 1.0
    assert set(rows["k"].dropna()) == {1, 2}
    builds = pd.read_csv(out.with_name("r.builds.csv"))
    assert builds.columns.tolist() == ["method", "build_s", "reused", "index_mb"] and builds.method.tolist() == ["naive"]
    assert builds.index_mb[0] > 0 and "index per method" in printed.out
    html = out.with_name("r.leaderboard.html").read_text()
    assert 'src="plotly.min.js"' in html and "doc_mrr@2" in html and (out.parent / "plotly.min.js").is_file()
