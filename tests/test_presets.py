"""Paper presets (notebooks/<notebook>.<name>.yaml): loading and checking, the missing-data message with the
download command, and the override order (preset < -p). No notebook is executed here."""
from pathlib import Path

import pytest

from rag_lab.cli import main
from rag_lab.runs.presets import PresetDataMissing, apply_preset, available, load_preset, notebook_parameters
from rag_lab.runs.runner import NOTEBOOK_DIR, list_notebooks

FIX = Path(__file__).parent / "fixtures"
PQAL = FIX / "pubmedqa_pqal" / "ori_pqal.json"
PAPER_NOTEBOOKS = ["01_sketch", "02_unweaver", "03_ssg_traversal", "04_gralc_rag"]


def test_every_paper_notebook_has_a_valid_paper_preset():
    for nb in list_notebooks():
        if nb.stem in PAPER_NOTEBOOKS:
            assert "paper" in available(nb)
        for name in available(nb):
            preset = load_preset(nb, name)                 # keys, data entries and parameter names checked
            assert preset.description and preset.tables
            assert set(preset.parameters) <= notebook_parameters(nb)


def test_parameters_cell_names_include_tuple_assignments():
    names = notebook_parameters(NOTEBOOK_DIR / "03_ssg_traversal.ipynb")
    assert {"window", "stride", "top_k", "top_x", "top_t", "dataset"} <= names


def test_override_order_preset_then_command_line(tmp_path, monkeypatch):
    names, per = apply_preset(["04_gralc_rag"], "paper", {"data_path": str(PQAL), "articles": 3,
                                                          "lambda_grid": [0.0]})
    assert names == [str(NOTEBOOK_DIR / "04_gralc_rag.ipynb")]
    params = per["04_gralc_rag"]
    assert params["dataset"] == "pubmedqa" and params["ks"] == [1, 3, 5, 10]        # from the preset
    assert params["articles"] == 3 and params["lambda_grid"] == [0.0]               # -p wins
    # a relative path given on the command line is made absolute (the notebook runs in notebooks/)
    monkeypatch.chdir(Path(__file__).parent.parent)
    _, per = apply_preset(["04"], "paper", {"data_path": "tests/fixtures/pubmedqa_pqal/ori_pqal.json"})
    assert per["04_gralc_rag"]["data_path"] == str(PQAL.resolve())


def test_runner_lets_the_preset_values_reach_the_notebook(monkeypatch):
    """run_notebooks puts per-notebook values over the shared ones; apply_preset already put -p over the preset."""
    import rag_lab.runs.runner as runner

    seen = {}

    def fake_execute(nb, out, parameters, **kw):
        seen.update(parameters)
        Path(out).write_text("{}", encoding="utf-8")

    monkeypatch.setattr("papermill.execute_notebook", fake_execute)
    monkeypatch.setattr(runner, "kernel_name", lambda: "rag_lab")
    cli = {"data_path": str(PQAL), "articles": 2}
    names, per = apply_preset(["04_gralc_rag"], "paper", cli)
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        runner.run_notebooks(names, cli, runs_dir=Path(d) / "runs", figures_root=Path(d) / "fig",
                             per_notebook=per, progress=False)
    assert seen["articles"] == 2 and seen["dataset"] == "pubmedqa" and seen["generation_questions"] == 50


def test_missing_data_names_the_download_command(tmp_path):
    with pytest.raises(PresetDataMissing) as e:
        apply_preset(["04_gralc_rag"], "paper", {"data_path": str(tmp_path / "ori_pqal.json")})
    msg = str(e.value)
    assert "preset 'paper' of 04_gralc_rag needs data that is not on this machine: pubmedqa (" in msg
    assert "ori_pqal.json not found" in msg
    assert "python -m rag_lab download pubmedqa" in msg and "-p data_path PATH" in msg
    # SKETCH: the loader arguments come from the loader_params parameter (here pointing nowhere)
    with pytest.raises(PresetDataMissing, match="python -m rag_lab download qasper"):
        apply_preset(["01_sketch"], "paper", {"loader_params": {"path": str(tmp_path), "split": "dev"}})
    with pytest.raises(PresetDataMissing, match="python -m rag_lab download pmc_oa"):
        apply_preset(["04_gralc_rag"], "paper_pmc", {"data_path": str(tmp_path / "none")})


def test_ragbench_preset_checks_every_subset(monkeypatch):
    # the fixture holds covidqa's test split, emanual's validation split only and no techqa: both named at once
    monkeypatch.setenv("RAG_LAB_DATA_RAGBENCH", str(FIX / "ragbench"))
    with pytest.raises(PresetDataMissing) as e:
        apply_preset(["02_unweaver"], "paper", {})
    msg = str(e.value)
    assert "ragbench_covidqa" not in msg.split("Fetch it with")[0]
    assert "python -m rag_lab download ragbench_emanual  python -m rag_lab download ragbench_techqa" in msg


def test_present_data_passes_and_llm_requirement(tmp_path):
    _, per = apply_preset(["01_sketch"], "paper", {"loader_params": {"path": str(FIX / "qasper"), "split": "dev"}})
    assert per["01_sketch"]["semantic_threshold"] == 95.0 and per["01_sketch"]["graph_store"] == "kuzu"
    with pytest.raises(ValueError, match=r"needs an LLM in reasoner or judge .* -p reasoner openai:gpt-4o-mini"):
        apply_preset(["03_ssg_traversal"], "paper", {})


def test_bad_preset_files_are_named(tmp_path):
    nb = tmp_path / "09_x.ipynb"
    nb.write_text('{"cells": [{"cell_type": "code", "metadata": {"tags": ["parameters"]}, "source": ["a = 1\\n"]}],'
                  ' "metadata": {}, "nbformat": 4, "nbformat_minor": 5}', encoding="utf-8")
    with pytest.raises(ValueError, match=r"notebook 09_x has no preset 'paper' .* its presets: none"):
        load_preset(nb, "paper")
    (tmp_path / "09_x.paper.yaml").write_text("parameters: {a: 2, b: 3}\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"09_x.paper.yaml: b are not parameters of 09_x.ipynb"):
        load_preset(nb, "paper")
    (tmp_path / "09_x.paper.yaml").write_text("parameters: {a: 2}\ndata: [{dataset: x}]\n", encoding="utf-8")
    with pytest.raises(ValueError, match="data entry 1 must have 'dataset' and 'download'"):
        load_preset(nb, "paper")
    (tmp_path / "09_x.paper.yaml").write_text("params: {a: 2}\n", encoding="utf-8")
    with pytest.raises(ValueError, match="expected a mapping with a 'parameters' mapping"):
        load_preset(nb, "paper")


def test_a_measured_time_is_said_when_the_preset_starts(tmp_path, capfd, monkeypatch):
    monkeypatch.delenv("RAG_LAB_QUIET", raising=False)
    monkeypatch.delenv("RAG_LAB_HEADLESS", raising=False)
    nb = tmp_path / "09_x.ipynb"
    nb.write_text('{"cells": [{"cell_type": "code", "metadata": {"tags": ["parameters"]}, "source": ["a = 1\\n"]}],'
                  ' "metadata": {}, "nbformat": 4, "nbformat_minor": 5}', encoding="utf-8")
    (tmp_path / "09_x.paper.yaml").write_text("parameters: {a: 2}\nmeasured: 3 min on 2 cores\n", encoding="utf-8")
    assert load_preset(nb, "paper").measured == "3 min on 2 cores"
    apply_preset(["09_x"], "paper", {}, notebook_dir=tmp_path)
    assert "09_x --preset paper: measured 3 min on 2 cores" in capfd.readouterr().err
    (tmp_path / "09_x.paper.yaml").write_text("parameters: {a: 2}\n", encoding="utf-8")
    apply_preset(["09_x"], "paper", {}, notebook_dir=tmp_path)
    assert "measured" not in capfd.readouterr().err      # nothing said when the preset states no time


def test_cli_fails_before_running_with_the_download_command(tmp_path, capsys):
    code = main(["run", "04_gralc_rag", "--preset", "paper", "-p", "data_path", str(tmp_path / "x.json")])
    err = capsys.readouterr().err
    assert code == 2 and "python -m rag_lab download pubmedqa" in err
    assert main(["run", "00_quickstart", "--preset", "paper"]) == 2
    assert "notebook 00_quickstart has no preset 'paper'" in capsys.readouterr().err


REAL_DATA_VARIABLES = ("RAG_LAB_DATA_PUBMEDQA", "RAG_LAB_DATA_RAGBENCH", "RAG_LAB_DATA_QUALITY", "RAG_LAB_DATA_PMC_OA")


def test_real_preset_without_data_names_every_download_command(tmp_path, monkeypatch):
    monkeypatch.setenv("RAG_LAB_DATA", str(tmp_path))          # an empty data cache
    for variable in REAL_DATA_VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    with pytest.raises(PresetDataMissing) as e:
        apply_preset(["10_compare_retrieval"], "real", {})
    msg = str(e.value)
    assert "preset 'real' of 10_compare_retrieval needs data that is not on this machine" in msg
    assert msg.split("Fetch it with:")[1].split() == (
        "python -m rag_lab download pubmedqa python -m rag_lab download ragbench_covidqa python -m rag_lab download quality "
        "python -m rag_lab download pmc_oa --count 200 --seed 0 and run again, or pass its path in "
        "-p dataset_options.").split()


def test_real_preset_resolves_on_upstream_format_fixtures(monkeypatch):
    from rag_lab.datasets import load_dataset

    for variable, folder in zip(REAL_DATA_VARIABLES, ("pubmedqa_pqal", "ragbench", "quality", "pmc_oa/batch1")):
        monkeypatch.setenv(variable, str(FIX / folder))
    names, per = apply_preset(["10_compare_retrieval"], "real", {"dataset_options": {"pubmedqa": {"limit_records": 2}}})
    params = per["10_compare_retrieval"]
    assert names == [str(NOTEBOOK_DIR / "10_compare_retrieval.ipynb")]
    assert params["datasets"] == ["pubmedqa", "ragbench_covidqa", "quality", "pmc_oa"]
    assert params["dataset_options"] == {"pubmedqa": {"limit_records": 2}}               # -p wins over the preset
    assert params["figures_dir"].endswith("10_compare_retrieval_real")
    preset = load_preset(NOTEBOOK_DIR / "10_compare_retrieval.ipynb", "real").parameters["dataset_options"]
    short = {"pmc_oa": {"min_words": 0}}            # the fixture's articles are shorter than the IMRaD filter's 1,000 words
    for name in params["datasets"]:                 # each loads with the preset's sub-sample, with questions
        data = load_dataset(name, **preset[name], **short.get(name, {}))
        assert data.documents and data.questions, name
    assert len(load_dataset("pubmedqa", **params["dataset_options"]["pubmedqa"]).documents) == 2


def _no_real_data(tmp_path, monkeypatch):
    monkeypatch.setenv("RAG_LAB_DATA", str(tmp_path))          # an empty data cache, no per-data-set variable
    for variable in REAL_DATA_VARIABLES:
        monkeypatch.delenv(variable, raising=False)


def test_real_preset_takes_local_paths_and_a_substituted_data_set(tmp_path, monkeypatch):
    """The user's upstream-format files through -p datasets / dataset_options: the check loads those, not the
    preset's own entries (ragbench_covidqa is not demanded once covidqa replaces it)."""
    _no_real_data(tmp_path, monkeypatch)
    options = {"pubmedqa": {"path": str(PQAL), "limit_records": 2}, "covidqa": {"path": str(FIX / "covidqa")},
               "quality": {"path": str(FIX / "quality"), "split": "dev", "max_documents": 1},
               "pmc_oa": {"path": str(FIX / "pmc_oa" / "batch1"), "articles": 2}}
    overrides = {"datasets": ["pubmedqa", "covidqa", "quality", "pmc_oa"], "dataset_options": options}
    _, per = apply_preset(["10_compare_retrieval"], "real", overrides)
    assert per["10_compare_retrieval"]["datasets"] == overrides["datasets"]
    # the same run without covidqa's path: only covidqa is missing, with its own download command
    del options["covidqa"]
    with pytest.raises(PresetDataMissing) as e:
        apply_preset(["10_compare_retrieval"], "real", overrides)
    needs, fetch = str(e.value).split("Fetch it with:")
    assert "covidqa (covidqa: SQuAD-format file not found" in needs
    assert not any(name in needs for name in ("pubmedqa", "ragbench_covidqa", "quality (", "pmc_oa"))
    assert fetch.split("and run again")[0].split() == "python -m rag_lab download covidqa".split()


def test_real_preset_reads_the_data_set_variables_of_what_it_runs(tmp_path, monkeypatch):
    _no_real_data(tmp_path, monkeypatch)
    monkeypatch.setenv("RAG_LAB_DATA_PUBMEDQA", str(FIX / "pubmedqa_pqal"))
    apply_preset(["10_compare_retrieval"], "real", {"datasets": ["pubmedqa"]})      # the other three: not checked
    with pytest.raises(PresetDataMissing) as e:
        apply_preset(["10_compare_retrieval"], "real", {"datasets": ["pubmedqa", "quality"]})
    assert str(e.value).split("Fetch it with:")[1].split("and")[0].split() == "python -m rag_lab download quality".split()


def test_a_preset_run_with_a_folder_or_an_unknown_name(tmp_path, monkeypatch):
    _no_real_data(tmp_path, monkeypatch)
    folder = Path(__file__).parent.parent / "data" / "italian_cuisine"
    apply_preset(["10_compare_retrieval"], "real", {"datasets": [str(folder), "ml_encyclopedia"]})
    with pytest.raises(ValueError, match=r"data set 'nowhere': not a registered name and no folder at .*nowhere; "
                                         r"expected a registered data set name, a folder in the generic form"):
        apply_preset(["10_compare_retrieval"], "real", {"datasets": ["nowhere"]})
