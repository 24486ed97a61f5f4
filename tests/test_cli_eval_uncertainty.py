"""``rag_lab eval`` with intervals: NAME.summary.csv (mean, n, 95% interval per method and metric@k)
and, with --baseline, NAME.differences.csv; both identical from run to run (seeded resampling)."""
from __future__ import annotations

import pandas as pd

from rag_lab.cli import main
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
    assert list(summary.columns) == ["method", "metric", "mean", "n", "ci_low", "ci_high"]
    assert set(summary["method"]) == {"naive", "semantic"} and "doc_mrr@1" in set(summary["metric"])
    assert (summary["n"] == 2).all()                      # q3 has no gold: two questions scored
    ok = summary.dropna(subset=["ci_low"])
    assert ((ok["ci_low"] <= ok["mean"] + 1e-12) & (ok["mean"] <= ok["ci_high"] + 1e-12)).all()
    diffs = pd.read_csv(tmp_path / "a" / "r.differences.csv")
    assert list(diffs.columns) == ["method", "baseline", "metric", "diff", "n", "ci_low", "ci_high", "p", "p_holm", "mde"]
    assert set(diffs["method"]) == {"semantic"} and set(diffs["baseline"]) == {"naive"}
    assert (diffs["p_holm"] >= diffs["p"]).all()
    printed = capsys.readouterr().out
    assert "mean [95% interval]" in printed and "each method minus naive" in printed


def test_eval_refuses_a_baseline_it_does_not_run(tmp_path, capsys):
    folder = generic_folder(tmp_path)
    assert main(["eval", "--data", str(folder), "--methods", "naive", "--baseline", "sketch"]) == 2
    assert "--baseline 'sketch' must be one of --methods" in capsys.readouterr().err
