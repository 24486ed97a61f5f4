"""Typed configs: every registered method's knobs live once, in its config dataclass, and the
registry and the retrievers use exactly those; configs validate, serialise and hash."""
from __future__ import annotations

import dataclasses
import inspect
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from rag_lab.core.configs import Config, drop_none
from rag_lab.methods import available_methods, get_retriever
from rag_lab.evaluation.retrievers import REGISTRY, Method, Retriever, method_source, register, registered_config

ROOT = Path(__file__).resolve().parents[1]
PER_NAME = {"algorithm"}            # the field that tells registered siblings apart (the SSG algorithms)
ALLOWED_INIT = {"self", "config", "reasoner", "embedder", "args", "kwargs", "overrides"}


def retriever_class(name: str) -> type[Retriever]:
    import importlib

    module, cls_name = REGISTRY[name][0].split(":")
    return getattr(importlib.import_module(module), cls_name)


@dataclass(frozen=True)
class Knobs(Config):
    size: int = 3
    weights: tuple[float, ...] = (0.5, 1.0)
    label: str = "x"

    def validate(self) -> None:
        self.check_positive("size")


def test_every_method_is_registered_with_a_config():
    own = [name for name in available_methods() if method_source(name) == "rag_lab"]   # not an installed plugin's
    assert len(own) == 21
    assert own[:7] == ["naive", "semantic", "bm25", "hybrid", "sketch", "kg", "raptor"]


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_the_registry_uses_the_config_class_defaults(name):
    registered = registered_config(name)
    cls = retriever_class(name)
    assert type(registered) is cls.config_class
    # the registered config is the class's defaults, apart from the field naming the sibling
    per_name = {f: getattr(registered, f) for f in PER_NAME if f in registered.knobs()}
    assert registered == type(registered)(**per_name)
    retriever = get_retriever(name)
    assert type(retriever) is cls and retriever.name == name
    assert retriever.config == registered
    # a retriever made without the registry starts from the same defaults
    assert cls(**per_name).config == registered


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_no_retriever_init_states_a_knob_default(name):
    knobs = set(registered_config(name).knobs())
    for cls in retriever_class(name).__mro__:
        if cls is Method or cls is object or "__init__" not in vars(cls):
            continue
        params = inspect.signature(cls.__init__).parameters
        assert set(params) <= ALLOWED_INIT, f"{cls.__name__}.__init__ takes {sorted(set(params) - ALLOWED_INIT)}"
        assert not knobs & set(params)
        defaults = {p.name: p.default for p in params.values() if p.default is not inspect.Parameter.empty}
        assert all(v is None for v in defaults.values()), f"{cls.__name__}.__init__ defaults {defaults}"


def test_overrides_reach_the_config_and_shared_objects_pass_through():
    marker = object()
    r = get_retriever("sketch", reasoner=marker, embedder=marker, hops=2, semantic_threshold=90)
    assert r.config.hops == 2 and r.config.semantic_threshold == 90.0       # 90 is stored as the float 90.0
    assert r._reasoner is marker and r._embedder is marker
    assert registered_config("sketch").hops == 1                            # the registered config is untouched
    g = get_retriever("ssg-ssg-traversal", top_k=3)
    assert (g.config.algorithm, g.config.top_k, g.algorithm) == ("ssg_traversal", 3, "ssg_traversal")


def test_unknown_knob_names_itself_and_lists_the_known_ones():
    with pytest.raises(ValueError) as err:
        get_retriever("raptor", chunk_sise=50)
    message = str(err.value)
    assert "method 'raptor'" in message and "'chunk_sise'" in message
    assert all(k in message for k in ("chunk_size", "membership_threshold", "seed"))
    with pytest.raises(ValueError, match=r"Knobs has no knob 'colour'; its knobs are: size, weights, label"):
        Knobs().replace(colour="red")
    with pytest.raises(ValueError, match="no knob 'top_n'"):
        get_retriever("naive", top_n=3)


@pytest.mark.parametrize("make, message", [
    (lambda: get_retriever("sketch", chunk_overlap=100), r"SketchConfig.chunk_overlap must be >= 0 and below chunk_"),
    (lambda: get_retriever("semantic", threshold=0), r"SemanticConfig.threshold must be in \(0.0, 100.0\], got 0.0"),
    (lambda: get_retriever("raptor", membership_threshold=0.0), r"membership_threshold must be in \(0.0, 1.0\]"),
    (lambda: get_retriever("unweaver", select="random"), r"UnWeaverConfig.select must be one of 'election'"),
    (lambda: get_retriever("ssg-query-traversal", top_k=-1), r"SSGConfig.top_k must be a number >= 0, got -1"),
    (lambda: get_retriever("ssg-query-traversal", window=2.5), r"SSGConfig.window must be an integer, got 2.5"),
    (lambda: get_retriever("gralc-structure", alphas=(1.0, 2.0)), r"alphas must be three weights"),
    (lambda: get_retriever("gralc-graph", beta=1.5), r"GraphGuidedConfig.beta must be in \[0.0, 1.0\], got 1.5"),
    (lambda: get_retriever("kg", graph_store="neo4j"), r"KGConfig.graph_store must be one of 'networkx', 'kuzu'"),
])
def test_out_of_range_knobs_are_refused(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_a_retriever_refuses_another_methods_config():
    from rag_lab.methods.baselines.config import NaiveConfig
    from rag_lab.methods.sketch.method import SketchRetriever

    with pytest.raises(TypeError, match="expected a SketchConfig, got NaiveConfig"):
        SketchRetriever(NaiveConfig())
    with pytest.raises(TypeError, match="config must be a Config instance"):
        register("broken", "rag_lab.methods.baselines.vector:NaiveRetriever", "no config", {"size": 3})
    assert "broken" not in REGISTRY


def test_canonical_json_and_round_trip():
    k = Knobs(weights=[0.5, 1])                        # a list is stored as a tuple, an int weight stays as given
    assert k.weights == (0.5, 1) and hash(k)
    assert k.to_json() == '{"label":"x","size":3,"weights":[0.5,1]}'    # sorted keys, tuple as list, no spaces
    assert Knobs.from_dict(json.loads(k.to_json())) == k
    assert Knobs.from_dict({"size": 4}) == Knobs(size=4)                 # missing knobs take their defaults
    for name in REGISTRY:
        config = registered_config(name)
        assert type(config).from_dict(json.loads(config.to_json())) == config, name


def test_config_id_is_a_short_stable_hash():
    # sha256 of 'Knobs:{"label":"x","size":3,"weights":[0.5,1.0]}', first ten hex digits
    assert Knobs().config_id == "7ba9a98b8a"
    assert Knobs(size=4).config_id != Knobs().config_id
    # the same ids in a fresh interpreter with another hash seed
    code = ("import json, rag_lab.methods; from rag_lab.evaluation.retrievers import REGISTRY; "
            "print(json.dumps({n: c.config_id for n, (_, c, _) in REGISTRY.items()}))")
    env = {**os.environ, "PYTHONHASHSEED": "12345", "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True, cwd=ROOT)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {n: c.config_id for n, (_, c, _) in REGISTRY.items()}
    assert len({c.config_id for _, c, _ in REGISTRY.values()}) == len(REGISTRY)


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_changing_any_one_knob_changes_the_id(name):
    config = registered_config(name)
    for f in dataclasses.fields(config):
        value = getattr(config, f.name)
        if isinstance(value, bool):
            other = not value
        elif isinstance(value, (int, float)):
            other = value + 1 if f.name != "membership_threshold" else value / 2
        else:
            continue                                 # strings and None are covered by the Knobs cases
        try:
            changed = config.replace(**{f.name: other})
        except ValueError:
            changed = config.replace(**{f.name: value - 1 if value >= 1 else value / 2})
        assert changed.config_id != config.config_id, f"{name}: {f.name}"


def test_drop_none_keeps_only_given_overrides():
    assert drop_none(a=None, b=0, c=False, d="x") == {"b": 0, "c": False, "d": "x"}


def test_ssg_algorithm_names_match_the_functions():
    from rag_lab.methods.ssg.algorithms import ALGORITHMS
    from rag_lab.methods.ssg.config import ALGORITHM_NAMES

    assert tuple(ALGORITHMS) == ALGORITHM_NAMES


def test_ssg_from_graph_takes_the_graphs_knobs():
    from rag_lab.methods.ssg.config import SSGConfig
    from rag_lab.methods.ssg.method import SSGRetriever
    from ssg_handmade import main_graph

    graph, docs = main_graph()                       # window 3, stride 1, top_k 2, top_x 1, top_t 1
    r = SSGRetriever.from_graph(graph, "ssg_traversal", 7, documents=docs)
    assert r.config == SSGConfig(top_k=2, top_x=1, top_t=1, algorithm="ssg_traversal", max_sentences=7)
    assert SSGRetriever.from_graph(graph, "basic_retrieval").config.max_sentences == SSGConfig().max_sentences


def test_unweaver_variant_changes_only_query_knobs():
    r = get_retriever("unweaver", top_n=4)
    v = r.variant(rule="cc", chunk_budget=2)
    assert v.config == r.config.replace(rule="cc", chunk_budget=2.0) and r.config.rule == "pav"
    with pytest.raises(ValueError, match="variant can change only"):
        r.variant(chunk_size=64)
    with pytest.raises(ValueError, match="UnWeaverConfig.rule must be one of"):
        r.variant(rule="borda")


def test_gralc_strategy_params_route_each_knob_to_the_strategies_that_have_it():
    from rag_lab.methods.gralc.experiment import strategy_params

    params = strategy_params(lam=0.5, beta=None, tau=0.2)
    assert params["gralc-kg"] == params["gralc-graph"] == {"lam": 0.5, "tau": 0.2}
    assert params["gralc-structure"] == {"tau": 0.2}
    assert params["gralc-naive"] == params["gralc-semantic"] == params["gralc-late"] == {}
    assert strategy_params(section_level="section")["gralc-naive"] == {"section_level": "section"}
    with pytest.raises(ValueError, match=r"no GraLC-RAG strategy has the knob\(s\) \['hops'\]"):
        strategy_params(hops=2)
