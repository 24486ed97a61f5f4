"""The cost table (compare.costs) times index builds without tracemalloc and measures memory in a separate build."""
import tracemalloc
from dataclasses import dataclass

import pytest

from rag_lab.compare.costs import method_costs, scaling
from rag_lab.core.configs import Config
from rag_lab.evaluation.retrievers import REGISTRY, Method, register
from rag_lab.core.types import Chunk, Hit, Retrieval

BUILDS: list[bool] = []   # for each build of the probe: was tracemalloc tracing?


@dataclass(frozen=True)
class NoKnobs(Config):
    """The probe's config: it has no knobs."""


class TracingProbe(Method):
    """One chunk per document; notes whether each build ran under tracemalloc."""

    def __init__(self, config=None, *, reasoner=None, embedder=None):
        super().__init__()
        self.config = NoKnobs.resolve(config)

    def build(self, documents):
        BUILDS.append(tracemalloc.is_tracing())
        self.chunks = [Chunk(d.id, d.id, d.text[:50], 0, min(50, len(d.text))) for d in documents]
        return self

    def retrieve(self, query, k):
        return Retrieval(query, [Hit(c, 0.0) for c in self.chunks[:k]])


@pytest.fixture
def probe():
    register("tracing-probe", f"{__name__}:TracingProbe", "test probe", NoKnobs())
    BUILDS.clear()
    yield "tracing-probe"
    REGISTRY.pop("tracing-probe", None)


def test_build_time_is_never_measured_under_tracemalloc(probe):
    costs, latencies = method_costs([probe], "italian_cuisine", limit_queries=2, k=2, repeats=1, query_repeats=1)
    assert BUILDS == [False, False, True]      # cold and warm builds untraced, then a traced build for memory
    assert costs.loc[probe, "index_seconds_cold"] > 0 and costs.loc[probe, "peak_heap_mb"] > 0
    assert latencies.shape == (2, 1)
    assert costs.loc[probe, "chunks"] == 3


@dataclass(frozen=True)
class QueryKnob(Config):
    """A knob read only at query time: variants differing in it share one index."""
    depth: int = 1


class SharingProbe(TracingProbe):
    index_family = "sharing-probe"

    def __init__(self, config=None, *, reasoner=None, embedder=None):
        Method.__init__(self)
        self.config = QueryKnob.resolve(config)

    def index_knobs(self):
        return {}

    def retrieve(self, query, k):
        return Retrieval(query, [Hit(c, 0.0) for c in self.chunks[: min(k, self.config.depth)]])


@pytest.fixture
def sharing():
    names = ["sharing-a", "sharing-b"]
    for depth, name in enumerate(names, start=1):
        register(name, f"{__name__}:SharingProbe", "test probe", QueryKnob(depth=depth))
    BUILDS.clear()
    yield names
    for name in names:
        REGISTRY.pop(name, None)


def test_methods_sharing_an_index_are_measured_once(probe, sharing):
    costs, latencies = method_costs([probe, *sharing], "italian_cuisine", limit_queries=2, k=2, repeats=1, query_repeats=1)
    # two distinct indexes (the probe's and the one both sharing probes build): 2 x (cold, warm, traced)
    assert BUILDS == [False, False, True] * 2
    assert costs["index"].to_dict() == {probe: probe, "sharing-a": "sharing-a", "sharing-b": "sharing-a"}
    assert costs.loc["sharing-b", "index_seconds_cold"] == costs.loc["sharing-a", "index_seconds_cold"]
    assert costs.loc["sharing-b", "chunks"] == 3 and list(latencies.columns) == [probe, *sharing]
    # growth: the corpus itself is the cost table's measurement (no build), twice the corpus is built
    BUILDS.clear()
    grown = scaling(["sharing-a"], "italian_cuisine", copies=(1, 2), measured=costs)
    assert BUILDS == [False, False, True]
    assert grown["builds"].tolist() == [1, 1] and grown["chunks"].tolist() == [3, 6]
    assert grown.loc[0, "index_seconds_cold"] == costs.loc["sharing-a", "index_seconds_cold"]


def test_scaling_times_and_traces_separately(probe):
    grown = scaling([probe], "italian_cuisine", copies=(1, 2))
    assert BUILDS == [False, False, True, False, False, True]
    assert grown["documents"].tolist() == [3, 6] and grown["chunks"].tolist() == [3, 6]
