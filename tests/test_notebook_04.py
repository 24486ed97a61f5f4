import pytest

from conftest import assert_captions_name_reasoners, run_notebook_smoke

pytestmark = pytest.mark.notebook

SMALL = {"articles": 2, "ks": [1, 3, 5, 10, 20], "generation_questions": 4, "efficiency_articles": 1,
         "lambda_grid": [0.0, 1.0], "efficiency_condition": "introduction", "efficiency_repeats": 1}


def test_gralc_notebook_runs(tmp_path):
    manifest = run_notebook_smoke("04_gralc_rag", SMALL, tmp_path)
    files = {p.rsplit("/", 1)[-1] for p in manifest["notebooks"][0]["files"]}
    expected = {f"table{i}.{ext}" for i in range(1, 7) for ext in ("csv", "md")}
    expected |= {f"{name}.{ext}" for name in ("fig2_mrr", "fig3_recall_at_k", "fig4_ablation", "fig5_efficiency",
                                              "fig6_mrr_by_length", "fig7_seccov_by_length", "boundary_trace",
                                              "lambda_sweep") for ext in ("png", "html")}
    assert expected <= files
    assert_captions_name_reasoners(manifest)
