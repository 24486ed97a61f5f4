import pytest

from conftest import assert_captions_name_reasoners, run_notebook_smoke

pytestmark = pytest.mark.notebook


def test_ssg_traversal_notebook_runs(tmp_path):
    manifest = run_notebook_smoke("03_ssg_traversal", {"limit": 3, "limit_documents": 0}, tmp_path)
    files = {p.rsplit("/", 1)[-1] for p in manifest["notebooks"][0]["files"]}
    assert {"window_similarity_heatmap.png", "window_similarity_heatmap.html", "multilayer_graph.png",
            "traversal_paths_3d.png", "traversal_paths_3d.html", "traversal_paths_3d_focus.png",
            "sequential_path.png", "ssg_results.csv", "ssg_results.md", "vs_paper_1.md", "vs_paper_2.md",
            "document_themes.csv", "stop_reasons.csv"} <= files
    assert_captions_name_reasoners(manifest)
