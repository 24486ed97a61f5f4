import pytest

from conftest import assert_captions_name_reasoners, run_notebook_smoke

pytestmark = pytest.mark.notebook


def test_quickstart_runs(tmp_path):
    manifest = run_notebook_smoke("00_quickstart", {"limit": 4, "ks": [1, 3, 5]}, tmp_path)
    files = {p.rsplit("/", 1)[-1] for p in manifest["notebooks"][0]["files"]}
    assert {"chunk_similarity_heatmap.png", "chunk_similarity_heatmap.html", "retrieval_metrics.csv",
            "retrieval_metrics.md"} <= files
    assert_captions_name_reasoners(manifest)
    check_intervals(manifest, tmp_path)


def check_intervals(manifest, tmp_path):
    """The comparative tables carry n and a 95% interval around each mean; the findings pair the methods."""
    import pandas as pd

    folder = tmp_path / "figures" / "00_quickstart"
    for name in ("retrieval_metrics", "answer_metrics"):
        table = pd.read_csv(folder / f"{name}.csv")
        assert list(table.columns) == ["method", "metric", "mean", "n", "ci_low", "ci_high"]
        assert set(table["method"]) == {"naive", "semantic"}
        assert (table["n"] == 4).all(), table                 # every one of the 4 questions has gold and an answer
        ok = table.dropna(subset=["ci_low"])
        assert ((ok["ci_low"] <= ok["mean"] + 1e-4) & (ok["mean"] <= ok["ci_high"] + 1e-4)).all()
        assert "[" in (folder / f"{name}.md").read_text(encoding="utf-8")   # "mean [low, high]" cells
    nb = (tmp_path / "runs" / manifest["run_id"] / manifest["notebooks"][0]["output"]).read_text(encoding="utf-8")
    assert "semantic - naive on ctx_recall@5: " in nb and "(n = 4, p = " in nb
