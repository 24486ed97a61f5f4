"""Notebook 04 on PubMedQA (fixture in the upstream ori_pqal.json layout): Table 1 runs the six strategies on the
whole abstracts, says so in its caption, and stands beside the paper's numbers; the λ ablation runs on the same
abstracts, its λ = 0 row repeats Table 1's Structure-Aware row, and the findings quote the tables' numbers."""
import re
from pathlib import Path

import pandas as pd
import pytest

from conftest import run_notebook_smoke
from test_notebook_04 import FINDINGS_CELL, check_findings_numbers, check_lambda_table, check_table1_intervals, printed
from rag_lab.methods.gralc import paper

pytestmark = pytest.mark.notebook

PQAL = Path(__file__).resolve().parent / "fixtures" / "pubmedqa_pqal" / "ori_pqal.json"
SMALL = {"dataset": "pubmedqa", "data_path": str(PQAL), "generation_questions": 2, "efficiency_articles": 2,
         "efficiency_repeats": 1}


def test_table1_on_whole_pubmedqa_abstracts(tmp_path):
    manifest = run_notebook_smoke("04_gralc_rag", SMALL, tmp_path)
    folder = tmp_path / "figures" / "04_gralc_rag"
    caption = (folder / "table1.md").read_text(encoding="utf-8").splitlines()[0]
    assert caption.startswith("Table 1 — PubMedQA*: 7 full abstracts (all context sections), 7 questions, one each, "
                              "gold = its source abstract")
    t1 = pd.read_csv(folder / "table1.csv", index_col=[0, 1])
    assert list(t1.loc["MRR"].index) == paper.ORDER                          # all six strategies
    ours = check_table1_intervals(folder, questions=7, like_for_like=True)  # whole PubMedQA abstracts: the paper's setting
    assert ((ours >= 0) & (ours <= 1)).all().all() and not ours.isna().any().any()
    reported = t1["paper-reported"].unstack(0)
    pd.testing.assert_frame_equal(reported.loc[paper.ORDER, paper.reported(1).columns], paper.reported(1).loc[paper.ORDER],
                                  check_names=False)
    assert "No introduction, partial, full condition here" in (folder / "table4.md").read_text(encoding="utf-8")

    sweep = check_lambda_table(folder, one_question_per_document=True)
    # only abstracts ran: the ablation is on Table 1's questions, and λ = 0 is gralc-structure's configuration
    assert sweep.loc[0.0, "MRR@10"] == pytest.approx(ours.loc["Structure-Aware", "MRR"], abs=2e-4)
    assert sweep.loc[0.0, "R@5"] == pytest.approx(ours.loc["Structure-Aware", "R@5"], abs=2e-4)
    text = printed(manifest, tmp_path, FINDINGS_CELL)
    check_findings_numbers(text, ours, sweep)
    assert "Tables 4–5: no introduction, partial or full condition ran" in text
    assert "paper-reported -0.0078 (GraLC-RAG (KG) minus Structure-Aware, Table 1, PubMedQA*)" in text
    assert re.search(r"the paper-reported number lies inside our 95% interval for MRR \d/6", text), text
