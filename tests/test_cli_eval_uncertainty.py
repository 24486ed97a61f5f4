"""``rag_lab eval`` with intervals: NAME.summary.csv (mean, n, 95% interval per method and metric@k)
and, with --baseline, NAME.differences.csv over the declared family; both identical from run to run
(nothing is resampled at random)."""
from __future__ import annotations

import pandas as pd

from rag_lab.cli import main
from rag_lab.evaluation import ledger
from rag_lab.evaluation.statistics import CONTRADICTED, SUPPORTED, UNDECIDABLE
from rag_lab.evaluation.uncertainty import DIFFERENCE_COLUMNS, SUMMARY_COLUMNS
from test_cli_and_runner import generic_folder


def test_eval_writes_intervals_and_paired_differences_identically_twice(tmp_path, capsys):
    folder = generic_folder(tmp_path)
    tables = []
    for run in ("a", "b"):
        out = tmp_path / run / "r.csv"
        out.parent.mkdir()
        assert main(["eval", "--data", str(folder), "--methods", "naive,semantic", "--k", "1,3",
                     "--baseline", "naive", "--out", str(out)]) == 0
        tables.append((out.with_name("r.summary.csv").read_bytes(), out.with_name("r.differences.csv").read_bytes()))
    assert tables[0] == tables[1]
    summary = pd.read_csv(tmp_path / "a" / "r.summary.csv")
    assert list(summary.columns) == SUMMARY_COLUMNS and "interval" in SUMMARY_COLUMNS and "n_dropped" in SUMMARY_COLUMNS
    assert set(summary["method"]) == {"naive", "semantic"} and "doc_mrr@1" in set(summary["metric"])
    assert (summary["n"] == 2).all()                      # q3 has no gold: two questions scored
    ok = summary.dropna(subset=["ci_low"])
    assert ((ok["ci_low"] <= ok["mean"] + 1e-12) & (ok["mean"] <= ok["ci_high"] + 1e-12)).all()
    diffs = pd.read_csv(tmp_path / "a" / "r.differences.csv")
    assert list(diffs.columns) == DIFFERENCE_COLUMNS
    for column in ("interval", "n_dropped", "family", "family_size", "resamples"):
        assert column in diffs.columns
    assert set(diffs["method"]) == {"semantic"} and set(diffs["baseline"]) == {"naive"}
    # the default family: the headline metrics at the largest k run (5 is not among 1, 3)
    assert list(diffs["metric"]) == ["doc_mrr@3", "ctx_recall@3"] and set(diffs["family_size"]) <= {0, 1, 2}
    tested = diffs.dropna(subset=["p"])
    assert (tested["p_holm"] >= tested["p"]).all()
    decided = diffs["verdict"].isin([SUPPORTED, CONTRADICTED])
    assert (diffs.loc[decided, "p_holm"] < 0.05).all()
    # the ledger's columns beside it: the same comparisons, the same numbers, the setting read from the metric
    comparisons = pd.read_csv(tmp_path / "a" / "r.comparisons.csv")
    assert list(comparisons.columns) == ledger.COLUMNS and set(comparisons["notebook"]) == {"eval"}
    assert comparisons["metric"].tolist() == ["doc_mrr", "ctx_recall"] and set(comparisons["setting"]) == {"k=3"}
    assert comparisons["diff"].tolist() == diffs["diff"].tolist() and comparisons["n"].tolist() == diffs["n"].tolist()
    printed = capsys.readouterr().out
    assert "mean [95% interval]" in printed and "each method minus naive" in printed


def test_eval_refuses_a_baseline_it_does_not_run(tmp_path, capsys):
    folder = generic_folder(tmp_path)
    assert main(["eval", "--data", str(folder), "--methods", "naive", "--baseline", "sketch"]) == 2
    assert "--baseline 'sketch' must be one of --methods" in capsys.readouterr().err


def test_eval_on_one_question_with_a_baseline_runs_and_says_none(tmp_path, capsys):
    folder = generic_folder(tmp_path)
    out = tmp_path / "r.csv"
    assert main(["eval", "--data", str(folder), "--methods", "naive,semantic", "--k", "1,3", "--limit", "1",
                 "--baseline", "naive", "--out", str(out)]) == 0
    summary = pd.read_csv(tmp_path / "r.summary.csv")
    assert summary["interval"].str.startswith("none").all()          # n <= 1: labelled, no interval
    diffs = pd.read_csv(tmp_path / "r.differences.csv")
    assert diffs["p"].isna().all() and (diffs["verdict"] == "cannot be decided").all()
    assert (diffs["reason"] == "one question").all()


def test_eval_refuses_a_family_of_token_counts(tmp_path, capsys):
    folder = generic_folder(tmp_path)
    assert main(["eval", "--data", str(folder), "--methods", "naive", "--baseline", "naive",
                 "--family", "tokens_handed"]) == 2
    assert "not token counts" in capsys.readouterr().err
