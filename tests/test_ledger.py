"""The ledger (rag_lab/evaluation/ledger.py): decided tables appended per notebook, gathered into one
comparisons.csv, and every comparison given two answers named — at the ledger level with hand-made rows,
and through the runner with two tiny notebooks that disagree."""
import json
import math

import pandas as pd
import pytest

from rag_lab.evaluation import ledger
from rag_lab.runs.runner import run_notebooks
from test_cli_and_runner import tiny_notebook


def decided(diff=-0.25, p=0.02, verdict="contradicted", family="f", n=20, units=3, method="semantic",
            metric="ctx_recall@5", threshold=0.0, **extra):
    """One row of a decided table (uncertainty.decide's columns), numbers made up by hand."""
    return pd.DataFrame([{"method": method, "baseline": "naive", "metric": metric, "threshold": threshold,
                          "diff": diff, "n": n, "n_dropped": 0, "units": units, "design_effect": 1.4,
                          "ci_low": diff - 0.2, "ci_high": diff + 0.2, "interval": "t, clustered", "p": p,
                          "resamples": 16384, "p_floor": 0.25, "mde": 0.3, "family": family,
                          "family_size": 1, "p_holm": p, "verdict": verdict, **extra}])


def test_metric_and_setting_are_split_from_the_column():
    assert ledger.split_metric("ctx_recall@5") == ("ctx_recall", "k=5")
    assert ledger.split_metric("ctx_recall@136tok") == ("ctx_recall", "136 tokens")
    assert ledger.split_metric("gold_recall") == ("gold_recall", "")


def test_rows_carry_exactly_the_ledger_columns():
    rows = ledger.ledger_rows(decided(threshold=-0.05, reason="3 documents"), "italian_cuisine", "00_quickstart")
    assert list(rows.columns) == ledger.COLUMNS
    row = rows.iloc[0]
    assert (row["notebook"], row["dataset"], row["metric"]) == ("00_quickstart", "italian_cuisine", "ctx_recall")
    assert row["setting"] == "k=5; threshold -0.05"           # a non-inferiority p is another comparison's
    assert row["interval"] == "t, clustered; unadjusted" and row["reason"] == "3 documents"
    assert (row["method"], row["baseline"], row["n"], row["units"]) == ("semantic", "naive", 20, 3)


def test_a_condition_or_a_setting_without_k_is_part_of_the_setting():
    rows = ledger.ledger_rows(decided(condition="full"), "d")
    assert rows["setting"].tolist() == ["k=5; full"]
    gathered = ledger.ledger_rows(decided(metric="gold_sentence_recall", setting="own stopping point"), "d")
    assert gathered["setting"].tolist() == ["own stopping point"]


def test_a_table_without_the_tests_columns_or_a_dataset_is_refused():
    with pytest.raises(ValueError, match="lacks"):
        ledger.ledger_rows(decided().drop(columns=["p_holm"]), "d")
    with pytest.raises(ValueError, match="baseline"):
        ledger.ledger_rows(decided().drop(columns=["baseline"]), "d")
    with pytest.raises(ValueError, match="dataset"):
        ledger.ledger_rows(decided(), "")


def test_record_appends_per_table_and_writes_nothing_without_a_path(tmp_path, monkeypatch):
    monkeypatch.delenv(ledger.LEDGER_ENV, raising=False)
    assert ledger.record(decided(), "d") is None
    path = tmp_path / "ledger" / "01_sketch.csv"
    monkeypatch.setenv(ledger.LEDGER_ENV, str(path))
    table = decided()
    assert ledger.recorded(table, "d") is table
    ledger.record(decided(method="kg"), "d")
    rows = ledger.read(path)
    assert rows["method"].tolist() == ["semantic", "kg"] and set(rows["notebook"]) == {"01_sketch"}
    assert [p.name for p in path.parent.iterdir()] == ["01_sketch.csv"]     # no temporary file left


def test_gather_stacks_notebooks_and_one_answer_each_is_no_conflict(tmp_path):
    folder = tmp_path / "ledger"
    ledger.record(decided(), "d", folder / "00_quickstart.csv")
    ledger.record(decided(family="g"), "d", folder / "10_compare.csv")        # same numbers, another family
    ledger.record(decided(family="g"), "d", folder / "10_compare.csv")        # the same table read twice: kept once
    rows = ledger.gather(folder, tmp_path / "comparisons.csv")
    assert rows["notebook"].tolist() == ["00_quickstart", "10_compare"]
    assert ledger.conflicts(rows) == []
    assert len(pd.read_csv(tmp_path / "comparisons.csv")) == 2


def test_two_sets_of_numbers_for_one_comparison_are_a_conflict_naming_both_notebooks(tmp_path):
    folder = tmp_path / "ledger"
    ledger.record(decided(diff=-0.242, p=0.02, units=20), "italian_cuisine", folder / "00_quickstart.csv")
    ledger.record(decided(diff=-0.242, p=0.25, units=3, verdict="cannot be decided", family="g"), "italian_cuisine",
                  folder / "10_compare.csv")
    ledger.record(decided(diff=0.1, metric="ctx_recall@10"), "italian_cuisine", folder / "10_compare.csv")  # another k
    (found,) = ledger.conflicts(ledger.gather(folder))
    assert found["kind"] == "numbers" and found["notebooks"] == ["00_quickstart", "10_compare"]
    assert found["comparison"] == "italian_cuisine: semantic - naive on ctx_recall (k=5)"
    assert "units=20" in found["detail"] and "units=3" in found["detail"]


def test_two_verdicts_in_one_family_are_a_conflict(tmp_path):
    rows = pd.concat([ledger.ledger_rows(decided(verdict="supported"), "d", "03"),
                      ledger.ledger_rows(decided(verdict="inconclusive"), "d", "10")])
    kinds = [c["kind"] for c in ledger.conflicts(rows)]
    assert kinds == ["verdicts"]
    # the same numbers decided in two families may differ in verdict (Holm over other comparisons)
    other = pd.concat([ledger.ledger_rows(decided(verdict="supported", family="a"), "d", "03"),
                       ledger.ledger_rows(decided(verdict="inconclusive", family="b"), "d", "10")])
    assert ledger.conflicts(other) == []


def test_a_csv_round_trip_is_not_a_conflict(tmp_path):
    folder = tmp_path / "ledger"
    ledger.record(decided(diff=1 / 3, p=math.nan, verdict="cannot be decided"), "d", folder / "a.csv")
    ledger.record(decided(diff=1 / 3 + 1e-12, p=math.nan, verdict="cannot be decided"), "d", folder / "b.csv")
    assert ledger.conflicts(ledger.gather(folder)) == []


# Two notebooks that decide the same comparison with different numbers, through the package's own record.
PLANTED = ("import pandas as pd\nfrom rag_lab.evaluation.ledger import record\n"
           "row = dict(method='semantic', baseline='naive', metric='ctx_recall@5', threshold=0.0, diff=-0.2, n=20, "
           "units=units, design_effect=1.0, ci_low=-0.4, ci_high=0.0, interval='t', p=p, p_floor=0.0, mde=0.3, "
           "family='f', family_size=1, p_holm=p, verdict='inconclusive')\n"
           "record(pd.DataFrame([row]), 'italian_cuisine')")


def test_a_planted_disagreement_between_two_notebooks_fails_the_run(tmp_path):
    folder = tmp_path / "notebooks"
    folder.mkdir()
    tiny_notebook(folder / "01_first.ipynb", PLANTED, parameters="units = 20\np = 0.06\nvalue = 1")
    tiny_notebook(folder / "02_second.ipynb", PLANTED, parameters="units = 3\np = 0.25\nvalue = 1")
    kw = dict(runs_dir=tmp_path / "runs", figures_root=tmp_path / "figures", notebook_dir=folder, progress=False)
    manifest = run_notebooks(["01", "02"], **kw)
    assert [nb["status"] for nb in manifest["notebooks"]] == ["ok", "ok"]
    assert manifest["status"] == "failed"
    (found,) = manifest["ledger"]["conflicts"]
    assert found["kind"] == "numbers" and found["notebooks"] == ["01_first", "02_second"]
    run_dir = tmp_path / "runs" / manifest["run_id"]
    gathered = pd.read_csv(run_dir / "comparisons.csv")
    assert gathered["notebook"].tolist() == ["01_first", "02_second"] and list(gathered.columns) == ledger.COLUMNS
    assert json.loads((run_dir / "manifest.json").read_text())["ledger"]["rows"] == 2
    assert "comparisons.csv" in (run_dir / "index.html").read_text()
    lines = ledger.ledger_lines(manifest)
    assert any("FAILED" in line for line in lines) and any("CONFLICT (numbers)" in line for line in lines)
    agreeing = run_notebooks(["01"], **kw)           # one notebook alone gives one answer
    assert agreeing["status"] == "ok" and agreeing["ledger"]["rows"] == 1


def test_a_design_that_cannot_decide_files_no_mde():
    # 16 questions in 8 documents: each comparison's own floor is 2 / 2^8 = 0.0078, so a family of 2 can decide
    # (Holm's floor 0.016) and keeps its MDE, a family of 60 cannot (60 * 0.0078 = 0.47): no finite MDE is filed
    from rag_lab.evaluation.statistics import UNDECIDABLE, paired_difference
    from rag_lab.evaluation.uncertainty import decide

    units = [f"d{i % 8}" for i in range(16)]
    one = paired_difference([0.9, 0.4] * 8, [0.5, 0.3] * 8, units=units).as_dict()
    assert one["p_floor"] == pytest.approx(2 / 2 ** 8, abs=0.002) and math.isfinite(one["mde"])

    def filed(size):
        rows = pd.DataFrame([{"method": f"m{i}", "baseline": "naive", "metric": "ctx_recall@5", **one}
                             for i in range(size)])
        return ledger.ledger_rows(decide(rows, f"a family of {size}"), "fenwold_gazetteer")

    big, small = filed(60), filed(2)
    assert (big["verdict"] == UNDECIDABLE).all() and big["reason"].str.startswith("a family of 60").all()
    assert big["mde"].isna().all()
    assert small["mde"].notna().all() and (small["verdict"] != UNDECIDABLE).all()
