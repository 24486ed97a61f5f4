import pytest

from conftest import assert_captions_name_reasoners, run_notebook_smoke

pytestmark = pytest.mark.notebook


def test_quickstart_runs(tmp_path):
    manifest = run_notebook_smoke("00_quickstart", {"limit": 4, "ks": [1, 3, 5]}, tmp_path)
    files = {p.rsplit("/", 1)[-1] for p in manifest["notebooks"][0]["files"]}
    assert {"chunk_similarity_heatmap.png", "chunk_similarity_heatmap.html", "retrieval_metrics.csv",
            "retrieval_metrics.md"} <= files
    assert_captions_name_reasoners(manifest)
