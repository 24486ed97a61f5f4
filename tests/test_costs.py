"""rag_lab.compare.costs (notebook 11): cold builds really start from empty caches, the repeated
timings carry a t-interval worked out by hand, and the ranking sentences name a fastest/slowest
method only when the intervals separate it. No model is loaded."""
import math
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rag_lab.compare import costs


def test_t_interval_by_hand():
    # 1, 2, 3: mean 2, sd 1, t(0.975, 2) = 4.302653 -> half width 4.302653 / sqrt(3) = 2.484138
    mean, low, high = costs.t_interval([1.0, 2.0, 3.0])
    assert mean == 2.0 and low == pytest.approx(2 - 2.484138, abs=1e-6) and high == pytest.approx(2 + 2.484138, abs=1e-6)
    assert costs.t_interval([5.0])[0] == 5.0 and math.isnan(costs.t_interval([5.0])[1])
    assert all(math.isnan(v) for v in costs.t_interval([]))


def test_log_t_interval_by_hand_never_below_zero():
    # e, e^2, e^3: logs 1, 2, 3 -> mean 2, half width 2.484138 (above) -> e^2 [e^-0.484138, e^4.484138]
    mean, low, high = costs.log_t_interval([math.e, math.e ** 2, math.e ** 3])
    assert mean == pytest.approx(math.exp(2)) and low == pytest.approx(math.exp(2 - 2.484138), rel=1e-6)
    assert high == pytest.approx(math.exp(2 + 2.484138), rel=1e-6)
    # 0.1 and 10 s: the plain t-interval reaches far below zero, the log one stays above it
    assert costs.t_interval([0.1, 10.0])[1] < 0 < costs.log_t_interval([0.1, 10.0])[1]
    assert costs.log_t_interval([4.0])[0] == pytest.approx(4.0) and math.isnan(costs.log_t_interval([4.0])[1])
    with pytest.raises(ValueError, match="positive"):
        costs.log_t_interval([1.0, 0.0])


def shared_table():
    return pd.DataFrame({"method": ["naive", "ssg-a", "ssg-b", "sketch", "kg", "gralc-x", "gralc-y"],
                         "index": ["naive", "ssg-a", "ssg-a", "sketch", "kg", "gralc-x", "gralc-y"],
                         "embedding_tokens_index": [10, 50, 50, 30, 5, 7, 9]}).set_index("method")


def test_shared_indexes_name_every_method_of_an_index_once(monkeypatch):
    table = costs.shared_indexes(shared_table())
    assert table.to_dict("list") == {"index": ["naive", "ssg-a", "sketch", "kg", "gralc-x", "gralc-y"],
                                     "methods": ["naive", "ssg-a, ssg-b", "sketch", "kg", "gralc-x", "gralc-y"],
                                     "count": [1, 2, 1, 1, 1, 1]}
    assert list(costs.distinct_indexes(shared_table()).index) == ["naive", "ssg-a", "sketch", "kg", "gralc-x", "gralc-y"]


def test_one_index_per_paper_is_the_one_encoding_most_tokens(monkeypatch):
    from rag_lab.evaluation import retrievers
    folders = {"naive": "baselines", "kg": "baselines", "sketch": "sketch", "ssg-a": "ssg", "ssg-b": "ssg",
               "gralc-x": "gralc", "gralc-y": "gralc"}
    monkeypatch.setattr(retrievers, "REGISTRY", {m: (f"rag_lab.methods.{f}.method:C", None, "") for m, f in folders.items()})
    # baselines: naive 10 > kg 5; ssg: only ssg-a is measured (ssg-b shares it); gralc: y 9 > x 7
    assert costs.one_per_paper(shared_table()) == ["naive", "ssg-a", "sketch", "gralc-y"]
    assert costs.growth_methods("per paper", shared_table()) == ["naive", "ssg-a", "sketch", "gralc-y"]
    assert costs.growth_methods("all", shared_table()) == list(shared_table().index)
    assert costs.growth_methods(" naive, kg ", shared_table()) == ["naive", "kg"]
    with pytest.raises(ValueError, match="scaling_methods"):
        costs.growth_methods("", shared_table())


def test_empty_caches_is_a_new_folder_and_restores_the_variable(monkeypatch, tmp_path):
    monkeypatch.setenv("RAG_LAB_CACHE", str(tmp_path))
    with costs.empty_caches() as folder:
        assert os.environ["RAG_LAB_CACHE"] == str(folder) and folder != tmp_path and not any(folder.iterdir())
    assert os.environ["RAG_LAB_CACHE"] == str(tmp_path) and not folder.exists()


class Stub:
    """A retriever whose build notes the cache folder it ran in and whether its texts were cached."""

    def __init__(self, embedder, seen):
        self.embedder, self.seen = embedder, seen

    def build(self, documents, reuse=None):
        marker = Path(self.embedder.cache_dir) / "encoded"
        self.seen.append((self.embedder.cache_dir, marker.exists()))
        marker.touch()
        return self


def test_timed_builds_pairs_a_cold_build_with_a_warm_rebuild_in_each_fresh_cache(monkeypatch):
    class Model:
        model = tokenizer = None

    seen = []
    monkeypatch.setattr(costs, "fresh_embedder", lambda model, folder: type("E", (), {"cache_dir": folder})())
    out = costs.timed_builds(lambda e: Stub(e, seen), ["doc"], Model(), repeats=2,
                             then=lambda built, e: {"last": built})
    assert len(out["cold"]) == len(out["warm"]) == 2 and min(out["cold"] + out["warm"]) >= 0
    # cold: nothing cached yet; warm: the same folder, now filled; each repeat a new folder
    assert [cached for _, cached in seen] == [False, True, False, True]
    assert seen[0][0] == seen[1][0] != seen[2][0] == seen[3][0]
    assert isinstance(out["last"], Stub)
    with pytest.raises(ValueError):
        costs.timed_builds(lambda e: Stub(e, seen), ["doc"], Model(), repeats=0)


def table(rows):
    return pd.DataFrame(rows, columns=["method", "index_seconds_cold", "index_seconds_cold_ci_low",
                                       "index_seconds_cold_ci_high", "build_repeats"]).set_index("method")


def test_slowest_build_is_named_only_when_a_test_tells_it_from_the_next():
    apart = table([("a", 1.0, 0.9, 1.1, 3), ("b", 5.0, 4.5, 5.5, 3), ("c", 0.5, 0.4, 0.6, 3)])
    assert costs.slowest_build_sentence(apart).startswith("Slowest cold build: b 5.00 s [95% interval 4.50, 5.50]")
    close = table([("a", 1.0, 0.5, 1.5, 3), ("b", 1.2, 0.9, 1.5, 3)])
    text = costs.slowest_build_sentence(close)
    assert "cannot be told apart" in text and "Slowest" not in text and "n = 3" in text
    # by hand: log half-widths (ln 1.5 - ln 0.5)/2 = 0.549 and (ln 1.5 - ln 0.9)/2 = 0.255 over t[2] = 4.303 give
    # se 0.1277 and 0.0593; t = ln(1.2)/0.1408 = 1.295 on Welch's df 2.8: p = 0.29
    assert costs.log_welch_p(1.2, 0.9, 1.5, 3, 1.0, 0.5, 1.5, 3) == pytest.approx(0.29, abs=0.01)
    # intervals that overlap can still be told apart by the test (the overlap rule is not the test)
    # (a: se (ln 1.05 - ln 0.95)/2/2.045 = 0.0245, b: (ln 1.16 - ln 1.04)/2/2.045 = 0.0267; t = ln 1.1/0.0362 = 2.6)
    overlap = table([("a", 1.0, 0.95, 1.05, 30), ("b", 1.1, 1.04, 1.16, 30)])
    assert costs.log_welch_p(1.1, 1.04, 1.16, 30, 1.0, 0.95, 1.05, 30) < 0.05
    assert costs.slowest_build_sentence(overlap).startswith("Slowest cold build: b")
    once = table([("a", 1.0, math.nan, math.nan, 1), ("b", 9.0, math.nan, math.nan, 1)])
    assert "no method is named slowest" in costs.slowest_build_sentence(once)
    # a method sharing b's index is not a runner-up of its own: a is, and b is named slowest
    shared = table([("a", 1.0, 0.9, 1.1, 3), ("b", 5.0, 4.5, 5.5, 3), ("b2", 5.0, 4.5, 5.5, 3)])
    shared["index"] = ["a", "b", "b"]
    assert costs.slowest_build_sentence(shared).startswith("Slowest cold build: b 5.00 s")


def test_fastest_query_needs_a_paired_interval_above_zero():
    q = [f"q{i}" for i in range(8)]
    apart = pd.DataFrame({"a": [1.0, 1.1, 0.9, 1.0, 1.2, 1.0, 0.95, 1.05], "b": [2.0, 2.2, 1.9, 2.1, 2.3, 2.0, 2.05, 2.1]},
                         index=q)
    assert costs.fastest_query_sentence(apart).startswith("Fastest queries: a (")
    # b is a plus or minus 0.01 ms: the median of a is lower, but the paired difference straddles zero
    noise = pd.DataFrame({"a": apart["a"], "b": apart["a"] + np.array([0.01, -0.01] * 4)}, index=q)
    text = costs.fastest_query_sentence(noise)
    assert "cannot be told apart" in text and "Fastest" not in text and "n = 8 queries" in text


def test_growth_lines_are_one_line_per_method_and_measure():
    growth = pd.DataFrame({"method": ["naive", "naive"], "documents": [3, 6], "index_seconds_cold": [1.0, 2.0],
                           "index_seconds_warm": [0.1, 0.2]})
    lines = costs.growth_lines(growth)
    assert lines.to_dict("list") == {"method": ["naive · cold"] * 2 + ["naive · warm"] * 2, "documents": [3, 6, 3, 6],
                                     "index_seconds": [1.0, 2.0, 0.1, 0.2]}
