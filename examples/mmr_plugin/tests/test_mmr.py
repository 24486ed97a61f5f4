"""The example plugin's own tests: MMR's picks on vectors worked out by hand, the config's checks, and
the registration the entry point calls. They need neither the encoder nor the plugin installed."""
import numpy as np
import pytest

from rag_lab.evaluation import retrievers
from rag_lab_mmr import register_methods
from rag_lab_mmr.config import MMRConfig
from rag_lab_mmr.method import mmr_order

# query q = (0.8, 0.6); windows a = (1, 0), b = (0.96, 0.28), c = (0, 1), all unit length.
# cos to q: a 0.8, b 0.936, c 0.6;  cos(a, b) = 0.96, cos(a, c) = 0, cos(b, c) = 0.28.
Q = np.array([0.8, 0.6])
V = np.array([[1.0, 0.0], [0.96, 0.28], [0.0, 1.0]])
IDS = ["a", "b", "c"]


def test_mmr_picks_the_novel_window_before_the_near_copy():
    # lambda 0.5.  pick 1: 0.5 * cos(., q): b 0.468 > a 0.4 > c 0.3            -> b (0.468)
    #              pick 2: a 0.4 - 0.5 * 0.96 = -0.08;  c 0.3 - 0.5 * 0.28 = 0.16 -> c (0.16)
    #              pick 3: a 0.4 - 0.5 * max(0.96, 0) = -0.08                    -> a (-0.08)
    order = mmr_order(Q, V, IDS, lambda_=0.5, fetch_k=3)
    assert [IDS[r] for r, _ in order] == ["b", "c", "a"]
    assert [s for _, s in order] == pytest.approx([0.468, 0.16, -0.08])


def test_lambda_one_is_plain_cosine_and_the_pool_is_cut_at_fetch_k():
    assert [IDS[r] for r, _ in mmr_order(Q, V, IDS, lambda_=1.0, fetch_k=3)] == ["b", "a", "c"]
    assert [IDS[r] for r, _ in mmr_order(Q, V, IDS, lambda_=0.5, fetch_k=2)] == ["b", "a"]   # c is not a candidate


def test_equal_scores_go_to_the_smaller_id():
    twins = np.array([[1.0, 0.0], [1.0, 0.0]])
    assert [r for r, _ in mmr_order(np.array([1.0, 0.0]), twins, ["z", "y"], 0.5, 2)] == [1, 0]


def test_config_checks_its_knobs():
    with pytest.raises(ValueError, match="lambda_"):
        MMRConfig(lambda_=1.5)
    with pytest.raises(ValueError, match="overlap"):
        MMRConfig(size=16, overlap=16)


def test_register_methods_registers_mmr_with_its_config(monkeypatch):
    monkeypatch.setattr(retrievers, "REGISTRY", {})      # the lab's registry is left as it was
    register_methods()
    target, config, description = retrievers.REGISTRY["mmr"]
    assert target == "rag_lab_mmr.method:MMRRetriever" and config == MMRConfig() and "MMR" in description
