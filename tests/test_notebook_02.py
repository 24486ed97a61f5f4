import pytest

from conftest import assert_captions_name_reasoners, run_notebook_smoke

pytestmark = pytest.mark.notebook


def test_unweaver_notebook_runs(tmp_path):
    manifest = run_notebook_smoke("02_unweaver", {"compare_datasets": ["italian_cuisine", "ragbench_covidqa"],
                                                  "baselines": ["naive"], "limit": 2, "ks": [1, 5],
                                                  "description_cap": 60}, tmp_path)
    files = {p.rsplit("/", 1)[-1] for p in manifest["notebooks"][0]["files"]}
    assert {"chunk_class_heatmap.png", "question_votes.png", "alignment_example_kkt.csv", "evaluation.csv",
            "token_usage.md", "table1_beside_paper.csv"} <= files
    assert_captions_name_reasoners(manifest)
