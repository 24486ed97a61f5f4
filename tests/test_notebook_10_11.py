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

    board = pd.read_csv(files["leaderboard_italian_cuisine.csv"], index_col=0)
    assert sorted(board.index) == sorted(family)
    assert {"doc_mrr@5", "doc_recall@5", "ctx_recall@5"} <= set(board.columns)
    rates = board[[c for c in board.columns if c.startswith(("doc_", "ctx_"))]].to_numpy(dtype=float).ravel()
    assert all(0.0 <= v <= 1.0 for v in rates if not math.isnan(v))
    recall = board["ctx_recall@5"].tolist()
    assert recall == sorted(recall, reverse=True), "the leaderboard is sorted by context recall, best first"

    per_question = pd.read_csv(files["results_italian_cuisine.csv"])
    assert set(per_question["method"]) == set(family) and per_question["question_id"].nunique() == 2

    claims = pd.read_csv(files["claims.csv"])
    assert list(claims["paper"]) == [c.paper for c in CLAIMS]
    assert set(claims["this run"]) <= {"supported", "not supported", "not tested"}
    assert claims["numbers"].notna().all()


def test_cost_and_speed_notebook_tables(tmp_path):
    manifest = run_notebook_smoke("11_cost_and_speed", {"methods": "naive,semantic", "copies": [1, 2],
                                                        "limit_queries": 3, "scaling_methods": "naive"}, tmp_path)
    assert_captions_name_reasoners(manifest)
    files = written(manifest)

    costs = pd.read_csv(files["method_costs.csv"], index_col=0)
    assert sorted(costs.index) == ["naive", "semantic"] and (costs >= 0).all().all()
    assert (costs["chunks"] > 0).all() and (costs["llm_tokens_index"] == 0).all()
    assert (costs["query_p95_ms"] >= costs["query_median_ms"]).all()

    growth = pd.read_csv(files["growth.csv"])
    assert list(growth["copies"]) == [1, 2] and set(growth["method"]) == {"naive"}
    # the corpus replicated twice has twice the documents and, split the same way, twice the chunks
    assert growth["documents"].iloc[1] == 2 * growth["documents"].iloc[0]
    assert growth["chunks"].iloc[1] == 2 * growth["chunks"].iloc[0]
