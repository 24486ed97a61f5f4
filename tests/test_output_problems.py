"""output_checks.output_problems (tests/output_checks.py) on hand-made executed notebooks: what a reader should never meet
(a Python warning, a log warning, a traceback, a progress-bar fragment) is found in stream, error and
display outputs; clean output, prose about warnings and markdown cells are not reported."""
import nbformat
import pytest

from output_checks import output_problems


def notebook(*outputs, markdown=""):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(markdown or "A `UserWarning: ` in prose is fine."),
                nbformat.v4.new_code_cell("x = 1", outputs=list(outputs))]
    return nb


def stream(text, name="stdout"):
    return nbformat.v4.new_output("stream", name=name, text=text)


def display(text):
    return nbformat.v4.new_output("display_data", data={"text/plain": text})


CLEAN = [stream("naive: 12 chunks, MRR 0.61 [0.48, 0.74] (n = 20)\n"),
         stream("WARNING:rag_lab.evaluation.harness:naive: 2 of 2 queries asked for k=5 but it holds 3 chunks\n",
                "stderr"),                                     # ours: something the reader must know
         display("   method  recall@5\n0   naive      0.61"),
         nbformat.v4.new_output("execute_result", data={"text/plain": "'50 % of the questions'"}, execution_count=1)]


def test_clean_outputs_have_no_problems():
    assert output_problems(notebook(*CLEAN)) == []


@pytest.mark.parametrize("output, kind", [
    (stream("/x/torch/onnx/utils.py:12: TracerWarning: Converting a tensor to a Python boolean\n", "stderr"), "warning"),
    (stream("  warnings.warn(msg)\n", "stderr"), "warning"),
    (stream("WARNING:root:Please consider to run pre-processing before quantization.\n", "stderr"), "log warning"),
    (stream("Traceback (most recent call last):\n  File ...\n", "stderr"), "traceback"),
    (nbformat.v4.new_output("error", ename="ValueError", evalue="bad k", traceback=["..."]), "traceback"),
    (stream("\rretrieving:   0%|          | 0/40 [00:00<?, ?it/s]", "stderr"), "progress bar"),
    (stream("embedding: 100%|##########| 560/560 [00:01<00:00, 538.60text/s]\n", "stderr"), "progress bar"),
    (display("sketch: triples: 100%|##########| 90/90 [00:05<00:00, 26.82it/s]"), "progress bar"),
    (display(["SSG themes: 10/10 [00:07<00:00,  2.50s/it]"]), "progress bar"),
    (display(repr(__import__("pandas").DataFrame({"x": range(100)}))), "cut table"),     # over display.max_rows
    (display("   method  doc_mrr@5\n0   naive   0.017241"), "long decimals"),     # pandas' default six decimals
    (stream("price lam 2.666667\n"), "long decimals"),
    (stream("sketch - naive = 0.042 [-1.000, 1.000] (n = 20)\n"), "whole-range interval"),
])
def test_each_kind_is_found_with_its_cell_and_output(output, kind):
    problems = output_problems(notebook(*CLEAN, output))
    assert len(problems) == 1 and problems[0].startswith("cell 1 (") and f"): {kind}: " in problems[0]


def test_short_numbers_scientific_notation_and_versions_are_not_long_decimals():
    fine = [stream("KKT residual 2.141509e-11, p = 3.4e-04, faiss 1.15.1, run all-a42c4b4e5a-20261126T105937\n"),
            stream("MRR 0.6123 [0.4801, 0.7412]; 8/3 = 2.667; interval [-0.442, 1.000]\n")]
    assert output_problems(notebook(*CLEAN, *fine)) == []


def test_reading_display_prints_three_decimals_and_keeps_labels_whole():
    import pandas as pd
    from rag_lab.core.figures import reading_display

    with pd.option_context("display.precision", 6, "display.max_colwidth", 50):
        reading_display()
        table = pd.DataFrame({"label": ["no paper row for this method: " + "x" * 60], "mrr": [1 / 58]})
        text = repr(table)
        assert "0.017" in text and "0.017241" not in text and "x" * 60 in text
        assert output_problems(notebook(display(text))) == []


def test_reads_a_file_and_refuses_what_is_not_a_notebook(tmp_path):
    path = tmp_path / "run.ipynb"
    nbformat.write(notebook(stream("\rbar 1/2"), stream("UserWarning: x\n", "stderr")), path)
    assert [p.split(": ")[1] for p in output_problems(path)] == ["progress bar", "warning"]
    with pytest.raises(FileNotFoundError, match="no executed notebook"):
        output_problems(tmp_path / "missing.ipynb")
    with pytest.raises(ValueError, match="'cells' list"):
        output_problems({"metadata": {}})


def test_table_problems_finds_long_tables_long_cells_and_empty_columns(tmp_path):
    from output_checks import table_problems

    good = tmp_path / "good.md"
    good.write_text("Caption\n\n| method | recall |\n|:--|--:|\n| naive | 0.5 |\n", encoding="utf-8")
    assert table_problems(good) == []
    bad = tmp_path / "bad.md"
    rows = "".join(f"| m{i} | nan | {'x' * 201 if i == 0 else 'y'} |\n" for i in range(61))
    bad.write_text("Caption\n\n| method | judge | note |\n|:--|--:|:--|\n" + rows, encoding="utf-8")
    assert table_problems(bad) == ["bad.md: 61 rows (at most 60)", "bad.md: a cell of 201 characters (at most 200)",
                                   "bad.md: column 'judge' has no value"]
