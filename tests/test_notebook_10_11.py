import pytest

from conftest import assert_captions_name_reasoners, run_notebook_smoke

pytestmark = pytest.mark.notebook


def test_compare_runs(tmp_path):
    # one method per family keeps CI short; every method also runs in its own paper notebook's test
    from rag_lab.methods import available_methods

    family = [m for m in ("naive", "semantic", "sketch", "unweaver", "ssg-query-traversal", "gralc-graph")
              if m in available_methods()]
    manifest = run_notebook_smoke("10_compare_retrieval", {"datasets": ["italian_cuisine"], "limit": 2, "ks": [1, 5],
                                                           "methods": ",".join(family)}, tmp_path)
    assert_captions_name_reasoners(manifest)


def test_cost_and_speed_runs(tmp_path):
    run_notebook_smoke("11_cost_and_speed", {"methods": "naive,semantic", "copies": [1, 2], "limit_queries": 3,
                                             "scaling_methods": "naive"}, tmp_path)
