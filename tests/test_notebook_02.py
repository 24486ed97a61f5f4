import pandas as pd
import pytest

from conftest import assert_captions_name_reasoners, run_notebook_smoke

pytestmark = pytest.mark.notebook


def test_unweaver_notebook_runs(tmp_path):
    manifest = run_notebook_smoke("02_unweaver", {"compare_datasets": ["italian_cuisine", "ragbench_covidqa"],
                                                  "baselines": ["naive"], "limit": 2, "ks": [1, 5],
                                                  "description_cap": 60}, tmp_path)
    paths = {p.rsplit("/", 1)[-1]: p for p in manifest["notebooks"][0]["files"]}
    assert {"chunk_class_heatmap.png", "question_votes.png", "alignment_example_kkt.csv", "evaluation.csv",
            "token_usage.md", "table1_beside_paper.csv", "alignment_example_kkt_system.csv"} <= set(paths)
    # the worked example: every solver meets its KKT conditions; the constrained form's solution is the
    # hand-worked x = (1, 1/5, 13/20), z = -2/5 (tests/test_unweaver_constrained_lsq.py)
    kkt = pd.read_csv(paths["alignment_example_kkt.csv"], index_col=0)
    assert list(kkt.columns) == ["kelly (price iteration)", "constrained lsq (KKT system)", "bounded lsq (ours)"]
    assert (kkt.max() < 1e-8).all()
    system = pd.read_csv(paths["alignment_example_kkt_system.csv"], index_col=0)
    assert system.loc["solution [x; z]"].iloc[:4].tolist() == pytest.approx([1, 0.2, 0.65, -0.4])
    assert "constrained_lsq" in pd.read_csv(paths["question_elected.csv"], index_col=0).columns
    assert_captions_name_reasoners(manifest)
    # the comparison with the baselines: n and a 95% interval around every mean
    evaluation = pd.read_csv(paths["evaluation.csv"])
    assert list(evaluation.columns) == ["dataset", "method", "metric", "mean", "n", "ci_low", "ci_high"]
    assert {"unweaver", "naive"} <= set(evaluation["method"]) and "italian_cuisine" in set(evaluation["dataset"])
    assert (evaluation["n"] <= 2).all() and (evaluation["n"] >= 1).all()          # limit 2 questions per dataset
    ok = evaluation.dropna(subset=["ci_low"])
    assert ((ok["ci_low"] <= ok["mean"] + 1e-4) & (ok["mean"] <= ok["ci_high"] + 1e-4)).all()
