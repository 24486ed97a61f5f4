"""rag_lab.compare.costs (notebook 11): cold builds really start from empty caches, the repeated
timings carry a t-interval worked out by hand (from 5 builds or more), and the ranking sentences name a
fastest/slowest method only when the package's paired test decides it. No model is loaded."""
import math
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rag_lab.compare import costs
from rag_lab.core.types import Retrieval


def test_log_t_interval_by_hand_only_from_five_builds():
    # e^1..e^5: logs 1..5 -> mean 3, sd sqrt(2.5), se 0.707107, t(0.975, 4) = 2.776445 -> half width 1.963243
    mean, low, high = costs.log_t_interval([math.e ** i for i in range(1, 6)])
    assert mean == pytest.approx(math.exp(3)) and low == pytest.approx(math.exp(3 - 1.963243), rel=1e-6)
    assert high == pytest.approx(math.exp(3 + 1.963243), rel=1e-6) and low > 0
    # fewer than 5 builds: the geometric mean, no interval (two builds would give t on 1 df)
    mean, low, high = costs.log_t_interval([math.e, math.e ** 2, math.e ** 3])
    assert mean == pytest.approx(math.exp(2)) and math.isnan(low) and math.isnan(high)
    assert costs.log_t_interval([4.0])[0] == pytest.approx(4.0) and math.isnan(costs.log_t_interval([4.0])[1])
    assert costs.builds_listed([0.2214, 0.2351]) == "0.221, 0.235"
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

    name, config = "stub", None

    def __init__(self, embedder, seen):
        self.embedder, self.seen = embedder, seen

    def build(self, documents):
        marker = Path(self.embedder.cache_dir) / "encoded"
        self.seen.append((self.embedder.cache_dir, marker.exists()))
        marker.touch()
        return self

    def retrieve(self, query, k):
        return Retrieval(query, [])


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


def table(builds: dict, index: dict | None = None):
    """A cost table as ``method_costs`` writes it, from method -> its cold build seconds."""
    rows = []
    for name, seconds in builds.items():
        mean, low, high = costs.log_t_interval(seconds)
        rows.append({"method": name, "index": (index or {}).get(name, name), "index_seconds_cold": mean,
                     "index_seconds_cold_ci_low": low, "index_seconds_cold_ci_high": high, "build_repeats": len(seconds)})
    out = pd.DataFrame(rows).set_index("method")
    out.attrs["build_seconds"] = {n: {costs.COLD: s} for n, s in builds.items()}
    return out


def test_slowest_build_is_named_only_when_the_paired_test_decides_it_from_five_or_more_builds():
    a, b, c = [1.0, 1.1, 0.9, 1.0, 1.05, 0.95], [5.0, 5.2, 4.9, 5.1, 5.0, 4.8], [0.5, 0.4, 0.6, 0.5, 0.45, 0.55]
    # log(b / a) per matched pair: 1.609, 1.553, 1.695, 1.629, 1.561, 1.620 (mean 1.611, sd 0.0515):
    # paired t = 1.611 / (0.0515 / sqrt(6)) = 76.6 on 5 df, p = 7.2e-09 (log seconds are unbounded: t)
    text = costs.slowest_build_sentence(table({"a": a, "b": b, "c": c}))
    assert text.startswith("Slowest cold build: b 5.00 s [95% interval") and "n = 6 builds each" in text
    assert "p = 7.2e-09" in text and text.endswith(": supported).")
    # five builds decide too (t has no floor): the first five pairs, t = 62.7 on 4 df, p = 3.9e-07
    five = costs.slowest_build_sentence(table({"a": a[:5], "b": b[:5]}))
    assert five.startswith("Slowest cold build: b") and "n = 5 builds each" in five and five.endswith(": supported).")
    # log ratios +0.405, -0.405 alternating around 0: inconclusive
    close = costs.slowest_build_sentence(table({"a": [1.0] * 6, "b": [1.5, 1 / 1.5] * 3}))
    assert "cannot be told apart" in close and "inconclusive" in close and "nan" not in close   # a: no spread, no interval
    # fewer than five builds: no interval in the table, no method named
    few = table({"a": [1.0, 1.2], "b": [9.0, 9.5]})
    assert few["index_seconds_cold_ci_low"].isna().all()
    assert costs.slowest_build_sentence(few) == ("Cold builds: 2 timings of each index (listed in the table), fewer "
                                                 "than the 5 an interval or a ranking needs, so no method is named slowest.")
    # a method sharing b's index is not a runner-up of its own: a is, and b is named slowest
    shared = table({"a": a, "b": b, "b2": b}, index={"b2": "b"})
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
