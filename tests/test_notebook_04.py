"""Notebook 04 on the shipped JATS articles: every table and figure is written, captions name the
reasoners, the λ ablation has its three rows with λ = 0 equal to the Structure-Aware rows of Tables 4–5
(the same configuration), and the printed findings quote numbers that are in the tables."""
import json
import re
from pathlib import Path

import pandas as pd
import pytest

from conftest import assert_captions_name_reasoners
from rag_lab.core.plots import IN_CI
from rag_lab.evaluation.decisions import HOW_DECIDED
from rag_lab.methods.gralc import paper
from rag_lab.methods.gralc.experiment import ALL_COSINE, MENTION_COSINE

pytestmark = pytest.mark.notebook

SMALL = {"articles": 2, "ks": [1, 3, 5, 10, 20], "generation_questions": 4, "efficiency_articles": 1,
         "efficiency_condition": "introduction", "efficiency_repeats": 1}
FINDINGS_CELL = "02c2fffa"     # the cell id of "What this run found"
TABLE5_CELL, LATE_CELL, CONTRAST_CELL = "2ecbf07c", "1a7e0c02", "5c5c5c01"
SEC5, FAIR5 = paper.seccov_label(5), paper.source_seccov_label(5)
INTERVAL = ["ours", "n", "ci_low", "ci_high"]


def printed(manifest: dict, root: Path, cell_id: str) -> str:
    """The text one cell of the executed notebook printed."""
    nb = json.loads((root / "runs" / manifest["run_id"] / manifest["notebooks"][0]["output"]).read_text("utf-8"))
    cell = next(c for c in nb["cells"] if c.get("id") == cell_id)
    return "".join("".join(o.get("text", "")) for o in cell["outputs"] if o.get("output_type") == "stream")


def check_lambda_table(folder: Path, one_question_per_document: bool = False) -> pd.DataFrame:
    """Three rows λ = 0, 0.1, 0.5; scores and shares in [0, 1]; SecCov a section count; beside it each λ's
    paired difference from λ = 0 with n and a 95% interval, clustered by document (PubMedQA: one question
    per abstract, so every question is its own unit)."""
    sweep = pd.read_csv(folder / "lambda_sweep.csv", index_col=0)
    assert sweep.index.tolist() == [0.0, 0.1, 0.5]
    shares = [c for c in sweep.columns if c.startswith(("MRR@", "R@", "top ", "cos("))]
    assert len(shares) == 5 and {MENTION_COSINE, ALL_COSINE} <= set(shares)
    assert ((sweep[shares] >= 0) & (sweep[shares] <= 1)).all().all() and not sweep[shares].isna().any().any()
    top = next(c for c in shares if c.startswith("top "))
    assert sweep.loc[0.0, top] == 0 and sweep.loc[0.0, MENTION_COSINE] == 1.0   # λ = 0 changes nothing
    assert (sweep["chunks"] > 0).all()
    diffs = pd.read_csv(folder / "lambda_sweep_differences.csv", index_col=[0, 1])
    assert {"diff", "n", "ci_low", "ci_high", "p_holm", "units", "family", "family_size", "verdict"} <= set(diffs.columns)
    assert sorted(set(diffs.index.get_level_values(1))) == [0.1, 0.5]
    # one declared family per column (never MRR, R and SecCov in one), named in the family column
    assert (diffs.groupby(level=0)["family"].nunique() == 1).all() and diffs["family"].nunique() == diffs.index.get_level_values(0).nunique()
    assert (diffs["units"] == diffs["n"]).all() if one_question_per_document else (diffs["units"] < diffs["n"]).all()
    shown = diffs.dropna(subset=["ci_low"])          # no spread (the same on every question): no interval claimed
    assert ((shown["ci_low"] <= shown["diff"] + 1e-9) & (shown["diff"] <= shown["ci_high"] + 1e-9)).all()
    return sweep


def check_findings_numbers(text: str, t1_ours: pd.DataFrame, sweep: pd.DataFrame) -> None:
    """The Table 1 leader's MRR and the λ ablation's cosines and chunk counts printed are the tables' values."""
    best = re.search(r"^Table 1 \(.*?\): the best MRR\D*?(\d\.\d{3})", text, re.M)     # "is X (v)" or ", v, is shared"
    assert best, text
    assert float(best.group(1)) == pytest.approx(t1_ours["MRR"].max(), abs=6e-4)
    cos = re.search(r"keep a mean cosine to their original vectors of (.+?) \(all tokens", text)
    assert cos, text
    shown = [float(v) for v in re.findall(r"(\d\.\d{4}) at λ = ", cos.group(1))]
    assert shown == pytest.approx(sweep[MENTION_COSINE].tolist(), abs=6e-5)
    chunks = [int(v) for v in re.findall(r"(\d+) \(λ = [\d.]+\)", text)]
    assert chunks == sweep["chunks"].astype(int).tolist()


def check_narrated(text: str, folder: Path, t1_ours: pd.DataFrame, sweep: pd.DataFrame) -> None:
    """The sentences the notebook writes from its tables: the ablation quotes each step's paper-reported ΔMRR
    and counts the steps its findings decide; the ceiling sentence quotes Table 1's lowest MRR; CS Recall
    Table 5's range in the full condition; section diversity the paper's group means (content-only 1.00,
    structure-aware (4.48 + 4.62 + 4.48) / 3 = 4.53); the λ verdict follows the largest 1 − cos (0.01: a size)
    and the λ table's verdicts."""
    ablation = re.search(r"^Ablation \((.*?)\):\n(.*?)\n(\d) of 3 components change MRR by a decided difference", text, re.M | re.S)
    assert ablation, text
    for step, value in paper.reported(2)["ΔMRR"].dropna().items():
        assert f"{step} {value:+.4f}" in ablation.group(1)
    # the steps' findings (finding_sentences): the count is of the decided verdicts among them
    assert int(ablation.group(3)) == len(re.findall(r": (supported|contradicted)$", ablation.group(2), re.M))
    lowest = re.search(r"^The lowest MRR, (\d\.\d{3}) \(\S+; its interval: Table 1\)", text, re.M)
    assert lowest and float(lowest.group(1)) == pytest.approx(t1_ours["MRR"].min(), abs=6e-4), text
    cs = pd.read_csv(folder / "table5.csv", header=[0, 1], index_col=[0, 1]).loc["CS Recall@20", ("full", "ours")]
    span = re.search(r"^CS Recall@20, full condition: (\d\.\d{3}) to (\d\.\d{3}) \(best ", text, re.M)
    assert span and [float(v) for v in span.groups()] == pytest.approx([cs.min(), cs.max()], abs=6e-3), text
    assert "paper-reported 1.00 vs 4.53 (its content-only 1.00 is the unlabelled reading of Table 5)" in text
    turn = re.search(r"the largest 1 − cos is (\d\.\d{4}) \((≥|<) 0.01", text)
    assert turn and float(turn.group(1)) == pytest.approx(1 - sweep[MENTION_COSINE].min(), abs=6e-5)
    assert (turn.group(2) == "≥") == (float(turn.group(1)) >= 0.01)
    verdicts = pd.read_csv(folder / "lambda_sweep_differences.csv")["verdict"]
    moved = verdicts.isin(["supported", "contradicted"]).any()
    ending = ("changes retrieval beyond the 95% interval" if moved else
              "turns the mention vectors, but no retrieval change" if turn.group(2) == "≥" else "barely touches the vectors")
    assert re.search(rf"^Over λ ∈ {{0, 0.1, 0.5}}, the random infusion {ending}", text, re.M), text


def check_table1_intervals(folder: Path, questions: int, like_for_like: bool) -> pd.DataFrame:
    """Table 1, one row per metric and strategy, carries n (the questions scored) and our 95% interval around
    every mean; on like-for-like data the difference from the paper and whether its number is inside the
    interval ("yes"/"no"), on other data neither (the paper's number is a reference only); the order table
    holds every pair of strategies, the better first. Returns our means, strategies x metrics."""
    t1 = pd.read_csv(folder / "table1.csv", index_col=[0, 1])
    assert (t1["n"] == questions).all(), t1["n"].tolist()
    assert ((t1["ci_low"] <= t1["ours"] + 1e-4) & (t1["ours"] <= t1["ci_high"] + 1e-4)).all()
    if like_for_like:
        expected = (t1["ci_low"] <= t1["paper-reported"]) & (t1["paper-reported"] <= t1["ci_high"])
        assert (t1[IN_CI] == expected.map({True: "yes", False: "no"})).all()
    else:
        assert "difference" not in t1.columns and IN_CI not in t1.columns
    order = pd.read_csv(folder / "table1_order.csv")
    tested = order.dropna(subset=["p"])
    assert len(order) == 15 and (order["diff"] >= -1e-12).all() and (tested["p_holm"] >= tested["p"] - 1e-12).all()
    assert not (order["verdict"].isin(["supported", "contradicted"]) & (order["p_holm"] >= 0.05)).any()
    # clustered by document: several questions per JATS article; PubMedQA (the paper's setting) has one per abstract
    assert (order["units"] < order["n"]).all() if not like_for_like else (order["units"] == order["n"]).all()
    assert "…" not in (folder / "table1.md").read_text(encoding="utf-8")
    return t1["ours"].unstack(0)


def check_ratio_table(folder: Path, name: str, reported: pd.DataFrame, ratios: list[str], plain: list[str]) -> None:
    """Tables 3 and 6: no difference of raw values (other corpus, machine, model); for ``ratios`` each
    strategy relative to Naive, ours and the paper's, and the difference of the two ratios."""
    table = pd.read_csv(folder / f"{name}.csv", header=[0, 1], index_col=0)
    assert "difference" not in set(table.columns.get_level_values(1)), name
    for metric in plain:     # ours (with n and its 95% interval where it is a mean over questions) and the paper's
        assert set(table[metric].columns) - {"n", "ci_low", "ci_high"} == {"ours", "paper-reported"}, (name, metric)
    for metric in ratios:
        m = table[metric]
        assert list(m.columns) == ["ours", "paper-reported", "ours ÷ Naive", "paper ÷ Naive", paper.RATIO_DIFFERENCE]
        assert m.loc["Naive", "ours ÷ Naive"] == 1 and m.loc["Naive", "paper ÷ Naive"] == 1
        naive = m.loc["Naive", "ours"]
        ours = m["ours"] / naive
        # the table is rounded: a ratio of two values each within ±h of the truth is within h (1 + r) / naive
        h = 0.5 * 10 ** -(2 if name == "table3" else 3)
        slack = h * (1 + ours.abs()) / naive + h + 1e-9
        assert ((m["ours ÷ Naive"] - ours).abs() <= slack).all(), (metric, m["ours ÷ Naive"].tolist(), ours.tolist())
        theirs = reported[metric].reindex(m.index) / reported.loc["Naive", metric]
        assert m["paper ÷ Naive"].tolist() == pytest.approx(theirs.tolist(), abs=0.006, nan_ok=True)
        diff = m["ours ÷ Naive"] - m["paper ÷ Naive"]
        assert m[paper.RATIO_DIFFERENCE].tolist() == pytest.approx(diff.tolist(), abs=0.011, nan_ok=True)


def check_table5_whole(folder: Path, shown: dict) -> pd.DataFrame:
    """Table 5 long: a row per metric and strategy (the pattern reading and CS Recall), a column group per
    condition with n, our 95% interval and the paper's number (no difference), printed without cutting
    columns or rows; Table 5b the fair reading, ours only, with intervals."""
    t5 = pd.read_csv(folder / "table5.csv", header=[0, 1], index_col=[0, 1])
    metrics = list(dict.fromkeys(t5.index.get_level_values(0)))
    assert metrics == [paper.seccov_label(5), paper.seccov_label(20), "CS Recall@20"]
    assert (t5.groupby(level=0, sort=False).size() == 6).all()
    assert set(t5.columns.get_level_values(0)) == {"introduction", "partial", "full"}
    assert list(t5["full"].columns) == INTERVAL + ["paper-reported"]
    html, plain = shown.get("text/html", ""), shown.get("text/plain", "")
    assert "…" not in html + plain and "..." not in html + plain and "rows x" not in plain, plain[-200:]
    fair = pd.read_csv(folder / "table5b_source_sections.csv", header=[0, 1], index_col=[0, 1])
    assert list(dict.fromkeys(fair.index.get_level_values(0))) == [FAIR5, paper.source_seccov_label(20)]
    assert list(fair["full"].columns) == INTERVAL
    return pd.concat([t5, fair])


def check_contrast(folder: Path, text: str) -> None:
    """Table 5c: structure-aware minus content-only on both readings, every condition and k; the printed
    sentence says which reading reproduces the paper's pattern, in the words its interval gives."""
    contrast = pd.read_csv(folder / "table5c_seccov_contrast.csv", index_col=[0, 1, 2])
    assert len(contrast) == 2 * 2 * 3
    # the test's columns, one declared family, clustered by document
    assert {"p", "p_holm", "family", "family_size", "verdict", "units"} <= set(contrast.columns)
    assert contrast["family"].nunique() == 1 and (contrast["units"] < contrast["n"]).all()
    spread = contrast.dropna(subset=["ci_low"])      # no spread (the same on every question): no interval claimed
    assert ((spread["ci_low"] <= spread["diff"] + 1e-9) & (spread["diff"] <= spread["ci_high"] + 1e-9)).all()
    for k in (5, 20):
        fair = contrast.xs((k, "full"), level=["k", "condition"]).iloc[1]
        said = "reproduces on the fair reading" if fair["verdict"] == "supported" else "does not reproduce on the fair reading"
        assert re.search(rf"SecCov@{k}, full condition(?:(?!SecCov@).)*{said} here\.", text, re.S), (k, text)   # over its lines


def check_late_view(folder: Path, text: str) -> None:
    """The late-chunking picture's data: ranks follow the cosines, the focus sentence's cosine to itself
    is 1, its three neighbours are other sentences ordered by cosine; the printed sentence quotes them."""
    spans = pd.read_csv(folder / "late_chunking_spans.csv", index_col=0)
    for kind in ("alone", "late"):
        assert spans[f"cos_query_{kind}"].idxmax() == spans[f"rank_{kind}"].idxmin()
        assert sorted(spans[f"rank_{kind}"]) == list(range(1, len(spans) + 1))
    focus = int(spans["cos_focus_late"].idxmax())
    assert spans.loc[focus, "cos_focus_alone"] == pytest.approx(1.0, abs=1e-3)
    near = pd.read_csv(folder / "late_chunking_neighbours.csv", index_col=0)
    assert near.index.tolist() == [1, 2, 3]
    for kind in ("alone", "late"):
        assert focus not in set(near[f"{kind}: span"])
        assert near[f"{kind}: cosine"].is_monotonic_decreasing
        assert near[f"{kind}: cosine"].tolist() == pytest.approx(spans.loc[near[f"{kind}: span"], f"cos_focus_{kind}"].tolist(), abs=2e-3)
    assert "Question: " in text and f"Sentence {focus} of " in text   # (the first model use may also print an ONNX export warning)
    assert f"late: {near['late: span'].tolist()}" in text


def cell_output(manifest: dict, root: Path, cell_id: str) -> dict:
    """The rich output (mime type -> text) of one cell of the executed notebook."""
    nb = json.loads((root / "runs" / manifest["run_id"] / manifest["notebooks"][0]["output"]).read_text("utf-8"))
    cell = next(c for c in nb["cells"] if c.get("id") == cell_id)
    data = next(o["data"] for o in cell["outputs"] if o.get("output_type") == "execute_result")
    return {k: "".join(v) if isinstance(v, list) else str(v) for k, v in data.items()}


def test_gralc_notebook_runs(notebook_run):
    run = notebook_run("04_gralc_rag", SMALL)         # the run test_notebook_04 alone reads
    manifest, root = run.manifest, run.root
    files = {p.rsplit("/", 1)[-1] for p in manifest["notebooks"][0]["files"]}
    expected = {f"table{i}.{ext}" for i in range(1, 7) for ext in ("csv", "md")}
    expected |= {f"{name}.{ext}" for name in ("fig2_mrr", "fig3_recall_at_k", "fig4_ablation", "fig5_efficiency",
                                              "fig6_mrr_by_length", "fig7_seccov_by_length", "boundary_trace",
                                              "lambda_sweep", "late_chunking") for ext in ("png", "html")}
    assert expected <= files
    assert_captions_name_reasoners(manifest)

    folder = root / "figures" / "04_gralc_rag"
    sweep = check_lambda_table(folder)
    assert "random GAT/MLP weights" in (folder / "lambda_sweep.md").read_text(encoding="utf-8").splitlines()[0]
    # λ = 0 is gralc-structure's configuration: its row repeats the Structure-Aware rows of the full condition
    t4 = pd.read_csv(folder / "table4.csv", header=[0, 1], index_col=[0, 1]).xs("ours", axis=1, level=1)
    t5 = check_table5_whole(folder, cell_output(manifest, root, TABLE5_CELL))
    check_contrast(folder, printed(manifest, root, CONTRAST_CELL))
    structure = t4.loc[("full", "Structure-Aware")]
    assert sweep.loc[0.0, "MRR@20"] == pytest.approx(structure["MRR"], abs=6e-4)          # table4 is rounded to 3
    assert sweep.loc[0.0, "R@5"] == pytest.approx(structure["R@5"], abs=6e-4)
    assert sweep.loc[0.0, FAIR5] == pytest.approx(t5.loc[(FAIR5, "Structure-Aware"), ("full", "ours")], abs=6e-3)  # rounded to 2
    full4 = pd.read_csv(folder / "table4.csv", header=[0, 1], index_col=[0, 1])
    assert list(full4["MRR"].columns) == INTERVAL + ["paper-reported"]     # no raw difference from the paper
    t2 = pd.read_csv(folder / "table2.csv", header=[0, 1], index_col=0)
    assert list(t2["ΔMRR"].columns) == ["ours", "n", "ci_low", "ci_high", "Holm p", "paper-reported"]
    evidence = pd.read_csv(folder / "evidence_paragraphs.csv", header=[0, 1], index_col=[0, 1])
    assert set(evidence.columns.get_level_values(1)) == set(INTERVAL)
    # the worked example: one question's gold paragraphs P1, P2 … and the rank at which each strategy holds them
    worked = pd.read_csv(folder / "worked_gold_passages.csv", index_col=0)
    assert list(worked.index) == [f"P{i}" for i in range(1, len(worked) + 1)] and len(worked) > 0
    ranks = worked.drop(columns=["document", "text"])
    assert len(ranks.columns) == 6 and ranks.stack().str.fullmatch(r"rank \d+|not elected").all()

    check_ratio_table(folder, "table3", paper.reported(3), ["Chunks", "Time (s)"], [])
    # Table 3's timings say when and where they were taken (the run's cache is new: nothing kept, timed here)
    caption3 = (folder / "table3.md").read_text(encoding="utf-8").splitlines()[0]
    assert "; timings measured 20" in caption3 and caption3.endswith("by this run"), caption3
    check_ratio_table(folder, "table6", paper.reported(6), ["Tokens"], ["Avg F1", "Sec Diversity"])
    t6 = pd.read_csv(folder / "table6.csv", header=[0, 1], index_col=0)
    assert list(t6["Avg F1"].columns) == INTERVAL + ["paper-reported"]
    check_late_view(folder, printed(manifest, root, LATE_CELL))
    ablation = (folder / "fig4_ablation.html").read_text(encoding="utf-8")
    assert '"rangemode":"tozero"' in ablation and '"error_y"' in ablation and "axis from 0" in ablation

    text = printed(manifest, root, FINDINGS_CELL)
    questions = len(pd.read_csv(folder / "per_question_scores.csv").query("condition == 'abstract'")["question_id"].unique())
    t1 = check_table1_intervals(folder, questions, like_for_like=False)
    check_findings_numbers(text, t1, sweep)
    check_narrated(text, folder, t1, sweep)
    assert "other data than the paper's PubMedQA*, so our 95% intervals are not set against its numbers" in text
    assert re.search(r"our MRR order is .* \(n = \d+ questions\); \d+ of its 15 pairs are told apart \(Holm-adjusted p < 0.05", text), text
    assert "λ ablation (gralc-kg, full condition, against λ = 0, paired by question)" in text
    assert text.startswith(HOW_DECIDED + " The paper reports no tests.") and "2/n" not in text and "threshold" not in text.lower()
    assert "paper-reported -0.0420 (GraLC-RAG (KG) minus Structure-Aware, Table 4, full)" in text
