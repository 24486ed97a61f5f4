import math

import pandas as pd
import pytest

from rag_lab.core.figures import readable_numbers, save_figure, save_table
from rag_lab.core.plots import grouped_bars, question_metric_heatmap, similarity_heatmap, with_paper


def test_with_paper_puts_ours_beside_paper_with_difference():
    ours = pd.DataFrame({"recall": [0.5, 0.7]}, index=["naive", "sketch"])
    paper = pd.DataFrame({"recall": [0.6, 0.9], "faithfulness": [0.8, 0.9]}, index=["naive", "sketch"])
    table = with_paper(ours, paper)
    assert list(table.columns) == [("recall", "ours"), ("recall", "paper-reported"), ("recall", "difference")]
    assert table.loc["sketch", ("recall", "difference")] == pytest.approx(-0.2)


def test_figures_and_tables_are_written(tmp_path):
    import numpy as np

    summary = pd.DataFrame({"ctx_recall@5": [0.4, 0.6]}, index=["naive", "semantic"])
    fig = grouped_bars(summary, ["ctx_recall@5"], "t", reasoner="offline")
    assert [t.name for t in fig.data] == ["naive", "semantic"] and "reasoner: offline" in fig.layout.title.text
    paths = save_figure(fig, tmp_path, "bars")
    assert [p.name for p in paths] == ["bars.html", "bars.png"]
    assert paths[1].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    v = np.eye(3, dtype=np.float32)
    assert similarity_heatmap(v, ["a", "b", "c"], "s").data[0].z.tolist() == v.tolist()
    csv, md = save_table(summary, tmp_path, "t", caption="Caption line")
    assert md.read_text().startswith("Caption line\n\n|") and "0.600" in md.read_text()
    assert not list(tmp_path.glob(".*tmp*"))  # no temp files left behind


def test_question_metric_heatmap_layout():
    df = pd.DataFrame({"method": ["m"] * 4, "question_id": ["q1", "q1", "q2", "q2"],
                       "metric": ["a", "b", "a", "b"], "k": [5] * 4, "value": [0.1, 0.2, 0.3, 0.4]})
    fig = question_metric_heatmap(df, "m", ["b", "a"], 5, "t")
    assert list(fig.data[0].x) == ["b", "a"] and fig.data[0].z.tolist() == [[0.2, 0.1], [0.4, 0.3]]


def test_png_from_kaleido_server_matches_one_shot_export(tmp_path, monkeypatch):
    """The persistent kaleido server draws exactly what a one-shot export draws."""
    import kaleido

    from rag_lab.core import figures

    kaleido.stop_sync_server(silence_warnings=True)    # an earlier test of this process may have started it
    monkeypatch.setattr(figures, "_server", "off")
    summary = pd.DataFrame({"MRR": [0.25, 0.75]}, index=["naive", "graph"])
    fig = grouped_bars(summary, ["MRR"], "server check", reasoner="offline")
    one_shot = fig.to_image(format="png", width=400, height=300)
    served = save_figure(fig, tmp_path, "first", width=400, height=300)[1].read_bytes()
    assert figures._server == "on"
    assert served == one_shot == save_figure(fig, tmp_path, "again", width=400, height=300)[1].read_bytes()


def test_png_export_without_a_browser_says_so(tmp_path, monkeypatch):
    from choreographer.browsers.chromium import Chromium

    import kaleido

    from rag_lab.core import figures

    kaleido.stop_sync_server(silence_warnings=True)    # as in a process that has drawn nothing yet
    monkeypatch.setattr(figures, "_server", "off")
    monkeypatch.delenv("BROWSER_PATH", raising=False)
    monkeypatch.setattr(Chromium, "find_browser", classmethod(lambda cls, **kw: None))
    fig = grouped_bars(pd.DataFrame({"MRR": [0.5]}, index=["naive"]), ["MRR"], "no browser", reasoner="offline")
    with pytest.raises(RuntimeError, match=r"(?s)could not export nobrowser.png as PNG.*png=False"):
        save_figure(fig, tmp_path, "nobrowser")
    assert figures._server == "off" and (tmp_path / "nobrowser.html").exists() and not (tmp_path / "nobrowser.png").exists()


def test_a_served_image_that_never_comes_is_an_error_not_a_hang(tmp_path, monkeypatch):
    """kaleido's server waits on its task queue for ever once its thread has died: every served image has a
    deadline, after which the export says so, and later exports in the process fail at once."""
    import threading

    from rag_lab.core import figures

    release = threading.Event()
    monkeypatch.setattr(figures, "_server", "on")
    monkeypatch.setattr(figures, "IMAGE_S", 0.2)
    monkeypatch.setattr(figures, "_served_png", lambda fig, width, height: release.wait(30) and b"")
    fig = grouped_bars(pd.DataFrame({"MRR": [0.5]}, index=["naive"]), ["MRR"], "stuck", reasoner="offline")
    try:
        with pytest.raises(RuntimeError, match=r"(?s)could not export stuck.png.*gave no image within 0 s"):
            save_figure(fig, tmp_path, "stuck")
        assert figures._server == "broken"
        with pytest.raises(RuntimeError, match="stopped answering earlier in this process"):
            save_figure(fig, tmp_path, "after")
    finally:
        release.set()
    assert not (tmp_path / "stuck.png").exists() and (tmp_path / "stuck.html").exists()


def test_readable_numbers_prints_counts_as_integers():
    import numpy as np

    # worked by hand: 12.0 and 90 are counts -> "12", "90"; 78.2889 -> "78.289"; NaN -> ""; text stays text
    stats = pd.Series({"chunks": 12.0, "pieces": np.int64(90), "mean tokens": 78.28888, "none": float("nan")}, name="s")
    shown = readable_numbers(stats)
    assert shown["s"].tolist() == ["12", "90", "78.289", ""]
    frame = pd.DataFrame({"chunks": [58.0, 12.0], "seconds": [4.6912, 2.0], "note": ["a", "b"]})
    assert readable_numbers(frame, digits=1).to_dict("list") == {"chunks": ["58", "12"], "seconds": ["4.7", "2"],
                                                                  "note": ["a", "b"]}


def test_similarity_heatmap_marks_document_boundaries():
    import numpy as np

    from rag_lab.core.plots import group_boundaries

    # by hand: documents a a | b b b | a -> runs a 0-1, b 2-4, a 5-5; lines between cells 1|2 and 4|5,
    # i.e. at 1.5 and 4.5 on both axes; each document named at its block's middle (0.5, 3, 5)
    docs = ["a", "a", "b", "b", "b", "a"]
    assert group_boundaries(docs) == [("a", 0, 1), ("b", 2, 4), ("a", 5, 5)]
    fig = similarity_heatmap(np.eye(6, dtype=np.float32), [f"c{i}" for i in range(6)], "t", groups=docs)
    vertical = sorted(s.x0 for s in fig.layout.shapes if s.x0 == s.x1)
    horizontal = sorted(s.y0 for s in fig.layout.shapes if s.y0 == s.y1)
    assert vertical == horizontal == [1.5, 4.5]
    assert list(fig.layout.xaxis.tickvals) == [0.5, 3, 5] and list(fig.layout.xaxis.ticktext) == ["a", "b", "a"]
    assert "document" in fig.layout.xaxis.title.text and fig.layout.yaxis.title.text == fig.layout.xaxis.title.text
    assert fig.data[0].text[2][5] == "c2 × c5"                       # hover names both chunks
    # without groups: chunk ids as ticks, no lines; a wrong number of groups is refused
    plain = similarity_heatmap(np.eye(3), ["x", "y", "z"], "t")
    assert not plain.layout.shapes and list(plain.layout.xaxis.ticktext) == ["x", "y", "z"]
    with pytest.raises(ValueError, match="groups"):
        similarity_heatmap(np.eye(3), ["x", "y", "z"], "t", groups=["a"])


def test_block_sentence_gives_inside_and_across_means():
    import numpy as np

    from rag_lab.core.plots import block_sentence

    # by hand: unit vectors a0 = a1 = (1, 0), b0 = (0, 1): inside pairs (a0, a1) cosine 1 (1 pair);
    # across pairs (a0, b0), (a1, b0) cosine 0 (2 pairs); difference +1
    v = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    assert block_sentence(v, ["a", "a", "b"]) == (
        "Mean cosine of two chunks of one document (inside the white squares): 1.000 over 1 pairs; of two chunks "
        "from different documents: 0.000 over 2 pairs; difference +1.000.")
    assert block_sentence(v, ["a", "a", "a"]).startswith("One document only")
    with pytest.raises(ValueError, match="groups"):
        block_sentence(v, ["a"])


def test_log_log_lines_titles_every_axis_with_its_unit():
    from rag_lab.core.plots import log_log_lines

    df = pd.DataFrame({"method": ["a", "a"], "documents": [3, 6], "index_seconds": [1.0, 2.0]})
    fig = log_log_lines(df, "documents", "index_seconds", "t", x_title="corpus size (documents)",
                        y_title="index time (seconds)", legend_title="index · build")
    assert fig.layout.xaxis.title.text == "corpus size (documents)"
    assert fig.layout.yaxis.title.text == "index time (seconds)"
    assert fig.layout.legend.title.text == "index · build"
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    with pytest.raises(ValueError, match="y_title"):
        log_log_lines(df, "documents", "index_seconds", "t", x_title="corpus size (documents)", y_title=" ")


def test_forest_grid_has_a_row_per_setting_and_labels_every_budget():
    from rag_lab.core.plots import forest_grid

    rows = []
    for setting, suffix, tokens in (("smallest equal budget: 6 tokens (x)", "@6tok", (6.0, 6.0)),
                                    ("at k=5, unequal budgets", "@5", (6.0, 10.0))):
        for metric in ("ctx_recall", "doc_recall"):
            rows.append({"setting": setting, "method": "sketch", "baseline": "naive", "metric": metric + suffix,
                         "diff": 0.5, "ci_low": 0.1, "ci_high": 0.9, "n": 2, "p_holm": 0.01, "mde": 0.2,
                         "verdict": "supported" if suffix == "@6tok" else "inconclusive",
                         "method_tokens": tokens[0], "baseline_tokens": tokens[1]})
    fig = forest_grid(pd.DataFrame(rows), "t")
    # 2 settings x 2 metrics = 4 panels, each a trace; y labels carry the method's tokens in that setting
    assert len(fig.data) == 4
    assert [list(t.y) for t in fig.data] == [["sketch (6 tok)"]] * 2 + [["sketch (6 tok)"]] * 2
    titles = [a.text for a in fig.layout.annotations]
    assert titles == ["ctx_recall<br>smallest equal budget: 6 tokens · naive 6 tok",
                      "doc_recall<br>smallest equal budget: 6 tokens · naive 6 tok",
                      "ctx_recall<br>at k=5, unequal budgets · naive 10 tok",
                      "doc_recall<br>at k=5, unequal budgets · naive 10 tok"]
    assert [t.marker.color[0] for t in fig.data] == ["#1f77b4", "#1f77b4", "#999999", "#999999"]
    from rag_lab.core.figures import untitled_value_axes
    assert untitled_value_axes(fig) == []                 # every panel's difference axis is titled


def test_forest_panels_that_cannot_be_decided_say_so_instead_of_drawing_bars():
    from rag_lab.core.plots import forest_grid

    rows = [{"setting": "at k=5, unequal budgets", "method": m, "baseline": "naive", "metric": "ctx_recall@5",
             "diff": 0.1, "ci_low": -1.0, "ci_high": 1.0, "n": 20, "p_holm": 1.0, "mde": 0.7,
             "verdict": "cannot be decided", "reason": "3 documents: no test at 0.05 is possible",
             "method_tokens": 10.0, "baseline_tokens": 10.0} for m in ("sketch", "kg")]
    fig = forest_grid(pd.DataFrame(rows), "t")
    trace = fig.data[0]
    assert all(math.isnan(v) for v in trace.error_x.array)          # no [-1, 1] bars
    assert list(trace.marker.symbol) == ["circle-open", "circle-open"]
    notes = [a.text for a in fig.layout.annotations if a.text.startswith("cannot be decided")]
    assert notes == ["cannot be decided:<br>3 documents: no test at 0.05 is possible"]


def test_interval_bars_keep_a_unit_metric_on_0_to_1_with_n_in_the_labels():
    from rag_lab.core.plots import interval_bars

    board = pd.DataFrame({"method": ["naive", "sketch"], "metric": ["ctx_recall@5"] * 2, "mean": [0.9, 0.95],
                          "ci_low": [0.8, 0.85], "ci_high": [0.97, 1.0], "n": [20, 20]})
    fig = interval_bars(board, "ctx_recall@5", "t")
    assert list(fig.layout.yaxis.range) == [0.0, 1.0]
    assert list(fig.data[0].x) == ["naive (n=20)", "sketch (n=20)"] and fig.data[0].text is None


def test_markdown_copy_shows_at_most_60_rows_and_200_character_cells_and_says_so(tmp_path):
    long_text = "x" * 250
    table = pd.DataFrame({"name": [f"row {i}" for i in range(75)], "text": ["short"] * 74 + [long_text]})
    csv, md = save_table(table, tmp_path, "big", index=False)
    text = md.read_text(encoding="utf-8")
    body = [line for line in text.splitlines() if line.startswith("|")]
    assert len(body) == 2 + 60                       # header, rule, 60 rows
    assert "row 59" in text and "row 60" not in text
    assert "The first 60 of 75 rows are shown; big.csv holds the whole table." in text
    assert len(pd.read_csv(csv)) == 75               # the CSV keeps every row
    from output_checks import table_problems
    assert table_problems(md) == []                  # what the notebook tests check, kept by construction


def test_markdown_copy_cuts_a_long_cell_and_counts_it(tmp_path):
    table = pd.DataFrame({"claim": ["a", "b"], "numbers": ["y" * 201, "z" * 200]})
    _, md = save_table(table, tmp_path, "cells", index=False)
    text = md.read_text(encoding="utf-8")
    assert "y" * 199 + "…" in text and "y" * 200 not in text
    assert "z" * 200 in text                          # exactly 200: kept whole
    assert "1 cell is cut at 200 characters; cells.csv holds the whole table." in text


def test_markdown_copy_of_a_small_table_has_no_note(tmp_path):
    _, md = save_table(pd.DataFrame({"a": [1, 2]}), tmp_path, "small", index=False)
    assert "holds the whole table" not in md.read_text(encoding="utf-8")


def test_untitled_value_axes_names_numeric_axes_without_a_title():
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots
    from rag_lab.core.figures import untitled_value_axes

    bars = go.Figure(go.Bar(x=["naive", "sketch"], y=[0.5, 0.7]))
    assert untitled_value_axes(bars) == ["yaxis"]              # the bar length is a value; method names are not
    bars.update_layout(yaxis_title="recall@5")
    assert untitled_value_axes(bars) == []
    sideways = go.Figure(go.Bar(y=["naive"], x=[0.1], orientation="h"))
    assert untitled_value_axes(sideways) == ["xaxis"]
    grid = make_subplots(rows=1, cols=2)
    grid.add_trace(go.Scatter(x=[0.1, 0.2], y=["a", "b"]), row=1, col=1)
    grid.add_trace(go.Scatter(x=[0.3, 0.4], y=["a", "b"]), row=1, col=2)
    grid.update_xaxes(title_text="difference", row=1, col=1)
    assert untitled_value_axes(grid) == ["xaxis2"]
    hidden = go.Figure(go.Scatter(x=[1, 2], y=[3, 4]))
    hidden.update_xaxes(showticklabels=False, title_text="")
    hidden.update_yaxes(visible=False)
    assert untitled_value_axes(hidden) == []


def test_save_figure_warns_about_an_untitled_value_axis(tmp_path):
    import plotly.graph_objects as go
    from rag_lab.core.figures import UntitledAxisWarning

    with pytest.warns(UntitledAxisWarning, match="'bars': value axes without a title: yaxis"):
        save_figure(go.Figure(go.Bar(x=["a"], y=[1.0])), tmp_path, "bars", png=False)


def test_markdown_copy_leaves_out_columns_and_rows_that_say_nothing_and_names_them(tmp_path):
    table = pd.DataFrame({"recall": [0.5, 0.0, float("nan")], "llm_tokens": [0, 0, 0], "judge": [float("nan")] * 3,
                          "note": ["a", "", float("nan")]}, index=["naive", "kg", "raptor"])
    csv, md = save_table(table, tmp_path, "t")
    text = md.read_text(encoding="utf-8")
    header = next(line for line in text.splitlines() if line.startswith("|"))
    assert "recall" in header and "note" in header and "llm_tokens" not in header and "judge" not in header
    # kg: recall 0 and an empty note -> all 0; raptor: NaN and NaN -> no value
    assert "| naive" in text and "| kg " not in text and "| raptor" not in text
    assert ("Columns left out: llm_tokens (all 0), judge (no value); rows left out: kg (all 0), raptor (no value); "
            "t.csv holds the whole table.") in text
    assert list(pd.read_csv(csv, index_col=0).index) == ["naive", "kg", "raptor"]


def test_markdown_copy_joins_multi_level_row_labels(tmp_path):
    table = pd.DataFrame({"tokens": [5, 6]}, index=pd.MultiIndex.from_tuples([("ic (20 questions)", "naive"),
                                                                             ("ic (20 questions)", "kg")]))
    _, md = save_table(table, tmp_path, "t")
    text = md.read_text(encoding="utf-8")
    assert "| ic (20 questions) · naive " in text and "('ic" not in text
