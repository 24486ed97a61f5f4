"""Notebook 04 on the shipped JATS articles: every table and figure is written, captions name the
reasoners, the λ ablation has its three rows with λ = 0 equal to the Structure-Aware rows of Tables 4–5
(the same configuration), and the printed findings quote numbers that are in the tables."""
import json
import re
from pathlib import Path

import pandas as pd
import pytest

from conftest import assert_captions_name_reasoners, run_notebook_smoke
from rag_lab.methods.gralc import paper
from rag_lab.methods.gralc.experiment import ALL_COSINE, MENTION_COSINE

pytestmark = pytest.mark.notebook

SMALL = {"articles": 2, "ks": [1, 3, 5, 10, 20], "generation_questions": 4, "efficiency_articles": 1,
         "efficiency_condition": "introduction", "efficiency_repeats": 1}
FINDINGS_CELL = "02c2fffa"     # the cell id of "What this run found"
SEC5 = paper.seccov_label(5)


def printed(manifest: dict, tmp_path: Path, cell_id: str) -> str:
    """The text one cell of the executed notebook printed."""
    nb = json.loads((tmp_path / "runs" / manifest["run_id"] / manifest["notebooks"][0]["output"]).read_text("utf-8"))
    cell = next(c for c in nb["cells"] if c.get("id") == cell_id)
    return "".join("".join(o.get("text", "")) for o in cell["outputs"] if o.get("output_type") == "stream")


def check_lambda_table(folder: Path) -> pd.DataFrame:
    """Three rows λ = 0, 0.1, 0.5; scores and shares in [0, 1]; SecCov a section count."""
    sweep = pd.read_csv(folder / "lambda_sweep.csv", index_col=0)
    assert sweep.index.tolist() == [0.0, 0.1, 0.5]
    shares = [c for c in sweep.columns if c.startswith(("MRR@", "R@", "top ", "cos("))]
    assert len(shares) == 5 and {MENTION_COSINE, ALL_COSINE} <= set(shares)
    assert ((sweep[shares] >= 0) & (sweep[shares] <= 1)).all().all() and not sweep[shares].isna().any().any()
    top = next(c for c in shares if c.startswith("top "))
    assert sweep.loc[0.0, top] == 0 and sweep.loc[0.0, MENTION_COSINE] == 1.0   # λ = 0 changes nothing
    assert (sweep["chunks"] > 0).all()
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


def check_table1_intervals(folder: Path, questions: int, like_for_like: bool) -> pd.DataFrame:
    """Table 1 carries n (the questions scored), our 95% interval around every mean, and whether the
    paper's number is inside it — "yes"/"no" only where the setting is like-for-like; the order table
    holds every pair of strategies, the better first."""
    t1 = pd.read_csv(folder / "table1.csv", header=[0, 1], index_col=0)
    for metric in dict.fromkeys(t1.columns.get_level_values(0)):
        part = t1[metric]
        assert (part["n"] == questions).all(), (metric, part["n"].tolist())
        assert ((part["ci_low"] <= part["ours"] + 1e-4) & (part["ours"] <= part["ci_high"] + 1e-4)).all(), metric
        verdicts = set(part["paper in our 95% CI"])
        assert verdicts <= ({"yes", "no"} if like_for_like else {"not like-for-like"}), verdicts
        expected = (part["ci_low"] <= part["paper-reported"]) & (part["paper-reported"] <= part["ci_high"])
        if like_for_like:
            assert (part["paper in our 95% CI"] == expected.map({True: "yes", False: "no"})).all()
    order = pd.read_csv(folder / "table1_order.csv")
    assert len(order) == 15 and (order["diff"] >= -1e-12).all() and (order["p_holm"] >= order["p"] - 1e-12).all()
    assert "· ours" in (folder / "table1.md").read_text(encoding="utf-8")      # readable two-level headers
    return t1


def test_gralc_notebook_runs(tmp_path):
    manifest = run_notebook_smoke("04_gralc_rag", SMALL, tmp_path)
    files = {p.rsplit("/", 1)[-1] for p in manifest["notebooks"][0]["files"]}
    expected = {f"table{i}.{ext}" for i in range(1, 7) for ext in ("csv", "md")}
    expected |= {f"{name}.{ext}" for name in ("fig2_mrr", "fig3_recall_at_k", "fig4_ablation", "fig5_efficiency",
                                              "fig6_mrr_by_length", "fig7_seccov_by_length", "boundary_trace",
                                              "lambda_sweep") for ext in ("png", "html")}
    assert expected <= files
    assert_captions_name_reasoners(manifest)

    folder = tmp_path / "figures" / "04_gralc_rag"
    sweep = check_lambda_table(folder)
    assert "random GAT/MLP weights" in (folder / "lambda_sweep.md").read_text(encoding="utf-8").splitlines()[0]
    # λ = 0 is gralc-structure's configuration: its row repeats the Structure-Aware rows of the full condition
    t4 = pd.read_csv(folder / "table4.csv", header=[0, 1], index_col=[0, 1]).xs("ours", axis=1, level=1)
    t5 = pd.read_csv(folder / "table5.csv", header=[0, 1], index_col=0).xs("ours", axis=1, level=1)
    structure = t4.loc[("full", "Structure-Aware")]
    assert sweep.loc[0.0, "MRR@20"] == pytest.approx(structure["MRR"], abs=6e-4)          # table4 is rounded to 3
    assert sweep.loc[0.0, "R@5"] == pytest.approx(structure["R@5"], abs=6e-4)
    assert sweep.loc[0.0, SEC5] == pytest.approx(t5.loc["Structure-Aware", f"{SEC5} full"], abs=6e-3)  # rounded to 2

    text = printed(manifest, tmp_path, FINDINGS_CELL)
    questions = len(pd.read_csv(folder / "per_question_scores.csv").query("condition == 'abstract'")["question_id"].unique())
    t1 = check_table1_intervals(folder, questions, like_for_like=False).xs("ours", axis=1, level=1)
    check_findings_numbers(text, t1, sweep)
    assert "other data than the paper's PubMedQA*, so our 95% intervals are not set against its numbers" in text
    assert re.search(r"our MRR order is .* \(n = \d+ questions\); \d+ of its 15 pairs differ beyond", text), text
    assert "λ ablation (gralc-kg, full condition, against λ = 0)" in text
    assert "paper-reported -0.0420 (GraLC-RAG (KG) minus Structure-Aware, Table 4, full)" in text
