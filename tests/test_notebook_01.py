import pytest

from conftest import assert_captions_name_reasoners, run_notebook_smoke

pytestmark = pytest.mark.notebook


def test_sketch_notebook_runs(tmp_path):
    manifest = run_notebook_smoke("01_sketch", {"limit": 3, "ks": [1, 3, 5], "raptor_levels": 2}, tmp_path)
    files = {p.rsplit("/", 1)[-1] for p in manifest["notebooks"][0]["files"]}
    expected = {"knowledge_graph.png", "knowledge_graph.html", "worked_query_subgraph.png", "approaches_bars.png",
                "retrieval_metrics.csv", "table1_ours_vs_paper.md", "paper_table4.csv", "index_stats.csv"}
    expected |= {f"heatmap_{m}.png" for m in ("naive", "semantic", "kg", "raptor", "sketch")}
    assert expected <= files, expected - files
    assert_captions_name_reasoners(manifest, paper_only=tuple(f"paper_table{n}" for n in range(1, 5)))
