"""Notebooks 10 and 11 end to end on small parameters, checked by the contents of their tables:
every method requested is present, rates stay in [0, 1], costs are never negative, the claims
table holds one verdict per paper and every caption names the reasoners."""
import math
from pathlib import Path

import pandas as pd
import pytest

from conftest import assert_captions_name_reasoners, run_notebook_smoke
from rag_lab.compare.claims import CLAIMS

pytestmark = pytest.mark.notebook


def written(manifest: dict) -> dict[str, Path]:
    return {Path(p).name: Path(p) for p in manifest["notebooks"][0]["files"]}


def test_compare_notebook_tables(tmp_path):
    # one method per family keeps CI short; every method also runs in its own paper notebook's test
    from rag_lab.methods import available_methods

    family = [m for m in ("naive", "semantic", "sketch", "unweaver", "ssg-query-traversal", "gralc-graph")
              if m in available_methods()]
    manifest = run_notebook_smoke("10_compare_retrieval", {"datasets": ["italian_cuisine"], "limit": 2, "ks": [1, 5],
                                                           "methods": ",".join(family)}, tmp_path)
    assert_captions_name_reasoners(manifest)
    files = written(manifest)

    board = pd.read_csv(files["leaderboard_italian_cuisine.csv"])
    assert list(board.columns) == ["rank", "method", "metric", "mean", "n", "ci_low", "ci_high"]
    assert sorted(board["method"].unique()) == sorted(family)
    assert {"doc_mrr@5", "doc_recall@5", "ctx_recall@5"} <= set(board["metric"])
    rates = board[board["metric"].str.startswith(("doc_", "ctx_"))]
    assert rates["mean"].between(0, 1).all() and (rates["n"] == 2).all()     # n: the questions scored
    ok = board.dropna(subset=["ci_low"])
    assert ((ok["ci_low"] <= ok["mean"] + 1e-12) & (ok["mean"] <= ok["ci_high"] + 1e-12)).all()
    recall = board[board["metric"] == "ctx_recall@5"].sort_values("rank")["mean"].tolist()
    assert recall == sorted(recall, reverse=True), "the leaderboard is ranked by context recall, best first"
    shown = files["leaderboard_italian_cuisine.md"].read_text(encoding="utf-8")
    assert "ctx_recall@5 (n=2)" in shown and "[" in shown

    per_question = pd.read_csv(files["results_italian_cuisine.csv"])
    assert set(per_question["method"]) == set(family) and per_question["question_id"].nunique() == 2

    diffs = pd.read_csv(files["differences_italian_cuisine.csv"])
    assert set(diffs["baseline"]) == {"naive"} and set(diffs["method"]) == set(family) - {"naive"}
    assert {"diff", "n", "ci_low", "ci_high", "p", "p_holm", "mde"} <= set(diffs.columns)
    assert (diffs["n"] == 2).all() and (diffs["p_holm"] >= diffs["p"] - 1e-12).all()
    # the difference is the difference of the two methods' means on the same questions
    means = board.set_index(["method", "metric"])["mean"]
    for _, row in diffs[diffs["metric"] == "ctx_recall@5"].iterrows():
        assert abs(row["diff"] - (means[(row["method"], "ctx_recall@5")] - means[("naive", "ctx_recall@5")])) < 1e-3
    assert "forest_italian_cuisine.png" in files

    flips = pd.read_csv(files["flip_counts.csv"])
    assert {("sketch", "naive"), ("unweaver", "naive")} <= set(zip(flips["method"], flips["baseline"]))
    assert ((flips["wins"] + flips["losses"] + flips["ties"]) == flips["n"]).all()
    listed = pd.read_csv(files["flips_italian_cuisine.csv"])
    counted = flips.set_index("method")
    for method in ("sketch", "unweaver"):
        assert (listed["method"] == method).sum() == counted.loc[method, "wins"] + counted.loc[method, "losses"]

    claims = pd.read_csv(files["claims.csv"])
    assert list(claims["paper"]) == [c.paper for c in CLAIMS]
    assert set(claims["this run"]) <= {"supported", "contradicted", "inconclusive", "not tested"}
    assert claims["numbers"].notna().all()
    tested = claims[claims["this run"] != "not tested"]
    assert tested["numbers"].str.contains(r"\[.*\].*p Holm = .*MDE", regex=True).all()
    comparisons = pd.read_csv(files["claim_comparisons.csv"])
    assert set(comparisons["verdict"]) <= {"supported", "contradicted", "inconclusive"}
    assert (comparisons.groupby("paper").size().reindex(tested["paper"]).fillna(0) > 0).all()

