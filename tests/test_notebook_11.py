"""Notebook 11 end to end on small parameters, checked by the contents of its tables and sentences:
cold and warm index times each with n and its builds listed (no interval from 2 builds), a cold build encoding its texts and a warm
one finding them all cached (what the two columns measure; which is faster is a timing, measured in
benchmarks/cold_warm.py, not asserted here), the growth corpus of distinct copies, and ranking
sentences that name no slowest build from fewer than 5 builds."""
import json
import re
from pathlib import Path

import pandas as pd
import pytest

from conftest import assert_captions_name_reasoners, run_notebook_smoke

pytestmark = pytest.mark.notebook
SENTENCES_CELL = "9ded5034"


def encoded_per_build(method: str, model) -> tuple[dict, dict]:
    """The embedder's counters (texts encoded, cache hits) over the cold and over the warm build of one
    pair, made as notebook 11 makes them (``costs.timed_builds``) on its data set."""
    from rag_lab.compare import costs
    from rag_lab.datasets import load_dataset
    from rag_lab.methods import get_retriever

    starts = []                               # the counters as the cold and as the warm build begin

    def make(embedder):
        starts.append(dict(embedder.stats))
        return get_retriever(method, embedder=embedder)
    end = costs.timed_builds(make, load_dataset("italian_cuisine").documents, model, repeats=1,
                             then=lambda built, embedder: {"stats": dict(embedder.stats)})["stats"]
    return tuple({k: stop[k] - start[k] for k in start} for start, stop in zip(starts, [starts[1], end]))


def test_cost_and_speed_notebook_tables(tmp_path, embedder):
    manifest = run_notebook_smoke("11_cost_and_speed", {"methods": "naive,semantic", "copies": [1, 2], "build_repeats": 2,
                                                        "query_repeats": 2, "limit_queries": 3,
                                                        "scaling_methods": "naive"}, tmp_path)
    assert_captions_name_reasoners(manifest)
    files = {Path(p).name: Path(p) for p in manifest["notebooks"][0]["files"]}

    costs = pd.read_csv(files["method_costs.csv"], index_col=0)
    assert sorted(costs.index) == ["naive", "semantic"]
    assert (costs["chunks"] > 0).all() and (costs["llm_tokens_index"] == 0).all() and (costs["build_repeats"] == 2).all()
    assert (costs["query_p95_ms"] >= costs["query_median_ms"]).all()
    for kind in ("cold", "warm"):
        # 2 builds: their seconds listed, the geometric mean, and no interval (t on 1 df says nothing)
        builds = costs[f"index_seconds_{kind}_builds"].map(lambda b: [float(v) for v in b.split(", ")])
        assert (builds.map(len) == 2).all() and (costs[f"index_seconds_{kind}"] > 0).all()
        assert not {f"index_seconds_{kind}_ci_low", f"index_seconds_{kind}_ci_high"} & set(costs.columns)
    # what the two columns measure (not which is faster: timings are not asserted in tests; benchmarks/cold_warm.py
    # measures the ratio): a cold build encodes its texts, a warm one finds every one in its cache
    for method in costs.index:
        cold, warm = encoded_per_build(method, embedder)
        assert cold["encoded"] > 0 and warm["encoded"] == 0 and warm["cache_hits"] >= costs.loc[method, "chunks"], \
            (method, cold, warm)
    caption = files["method_costs.md"].read_text(encoding="utf-8").splitlines()[0]
    assert "cold (first build, empty caches)" in caption and "warm (rebuild" in caption and "geometric mean of 2 builds" in caption
    # where and when the timings were taken (the session's store is new: nothing kept to reuse, measured by this run)
    from rag_lab.compare.timing_store import machine, machine_label
    assert caption.endswith(f"on {machine_label(machine())} by this run") and "; timings measured 20" in caption
    assert files["growth.md"].read_text(encoding="utf-8").splitlines()[0].endswith("by this run")

    # every distinct index measured once: naive and semantic build different ones
    shared = pd.read_csv(files["shared_indexes.csv"])
    assert shared.to_dict("list") == {"index": ["naive", "semantic"], "methods": ["naive", "semantic"], "count": [1, 1]}
    assert (costs["index"] == costs.index).all() and "a 95% t-interval on log seconds only from 5 builds" in caption

    growth = pd.read_csv(files["growth.csv"])
    assert list(growth["copies"]) == [1, 2] and set(growth["method"]) == {"naive"}
    # distinct copies: twice the documents and, split the same way, twice the chunks
    assert growth["documents"].iloc[1] == 2 * growth["documents"].iloc[0]
    assert growth["chunks"].iloc[1] == 2 * growth["chunks"].iloc[0]
    # the corpus itself is the cost table's measurement (2 builds); twice the corpus is built once
    assert list(growth["builds"]) == [2, 1] and growth["index_seconds_cold"].iloc[0] == costs.loc["naive", "index_seconds_cold"]
    assert (growth[["index_seconds_cold", "index_seconds_warm"]] > 0).all().all()
    assert "distinct copies" in files["growth.md"].read_text(encoding="utf-8").splitlines()[0]

    nb = json.loads((tmp_path / "runs" / manifest["run_id"] / manifest["notebooks"][0]["output"]).read_text("utf-8"))
    cell = next(c for c in nb["cells"] if c.get("id") == SENTENCES_CELL)
    text = "".join("".join(o.get("text", "")) for o in cell["outputs"] if o.get("output_type") == "stream")
    lines = text.strip().splitlines()
    assert len(lines) == 3, text
    for line, kind in zip(lines[:2], ("cold", "warm")):
        # 2 builds each: no method is named slowest and no interval is given
        assert line == (f"{kind.capitalize()} builds: 2 timings of each index (listed in the table), fewer than the 5 an "
                        "interval or a ranking needs, so no method is named slowest."), line
    assert re.match(r"(Fastest queries: .*|The two fastest query times cannot be told apart .*)n = 3 queries", lines[2])

    # the growth figures: every axis titled in words with its unit, never a raw column name
    from rag_lab.compare.costs import AXIS_TITLES
    figures = [o["data"]["application/vnd.plotly.v1+json"]["layout"] for c in nb["cells"] if c["cell_type"] == "code"
               for o in c["outputs"] if "application/vnd.plotly.v1+json" in o.get("data", {})]
    titles = [(f["xaxis"]["title"]["text"], f["yaxis"]["title"]["text"]) for f in figures]
    assert titles == [(AXIS_TITLES["documents"], AXIS_TITLES["index_seconds"]),
                      (AXIS_TITLES["documents"], AXIS_TITLES["peak_heap_mb"])], titles
    assert all("(" in t and "_" not in t for pair in titles for t in pair), titles
