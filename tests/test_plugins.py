"""Methods and data sets from outside packages (rag_lab.core.plugins): a package installed into a
temporary site folder (a dist-info with entry_points.txt on sys.path or PYTHONPATH) shows up in
``rag_lab methods`` with its package and runs in ``eval``, the explorer and the LangChain face; a broken
one is listed with its error and never stops a listing or a run that does not use it."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from rag_lab.evaluation import harness
from rag_lab.core import plugins
from rag_lab.evaluation import retrievers
from rag_lab.evaluation.langchain import as_langchain_retriever

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE_SRC = ROOT / "examples" / "mmr_plugin" / "src"
GROUP = "rag_lab.test_plugins"      # the in-process tests' own group: the lab's registries are not touched


def install(site: Path, dist: str, version: str, entry_points: dict[str, dict[str, str]],
            modules: dict[str, str] = {}, top_level: str = "") -> None:
    """What pip leaves in site-packages, by hand: ``dist``'s metadata and entry points, and its modules."""
    info = site / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("".join(
        f"[{group}]\n" + "".join(f"{name} = {value}\n" for name, value in points.items())
        for group, points in entry_points.items()), encoding="utf-8")
    if top_level:
        (info / "top_level.txt").write_text(top_level + "\n", encoding="utf-8")
    for name, source in modules.items():
        (site / f"{name}.py").write_text(source, encoding="utf-8")


def test_plugins_load_once_and_a_broken_one_leaves_the_registry_as_it_was(tmp_path, monkeypatch):
    site = tmp_path / "site"
    site.mkdir()
    (site / "scratch_registry.py").write_text("REGISTRY = {'taken': 'the lab'}\nCALLS = []\n", encoding="utf-8")
    use = "from scratch_registry import REGISTRY, CALLS\n"
    install(site, "good-plugin", "1.0", {GROUP: {"good": "good_plugin:register"}}, {
        "good_plugin": use + "def register():\n    CALLS.append('good')\n    REGISTRY['good-1'] = 1\n    REGISTRY['good-2'] = 2\n"})
    install(site, "bad-plugins", "0.1", {GROUP: {
        "half": "half_plugin:register", "taker": "taker_plugin:register", "idle": "idle_plugin:register",
        "value": "idle_plugin:VALUE", "missing": "no_such_module_39:register", "reserved": "taker_plugin:reserved"}}, {
        "half_plugin": use + "def register():\n    REGISTRY['half-a'] = 1\n    raise RuntimeError('boom')\n",
        "taker_plugin": use + "def register():\n    REGISTRY['taken'] = 'mine'\n"
                              "def reserved():\n    REGISTRY['shipped'] = 1\n",
        "idle_plugin": "VALUE = 3\ndef register():\n    pass\n"})
    monkeypatch.syspath_prepend(str(site))
    import scratch_registry

    try:
        loaded = {p.name: p for p in plugins.load_plugins(GROUP, scratch_registry.REGISTRY, reserved={"shipped"})}
        assert scratch_registry.REGISTRY == {"taken": "the lab", "good-1": 1, "good-2": 2}   # nothing half-done
        assert loaded["good"].registered == ("good-1", "good-2") and not loaded["good"].broken
        assert loaded["good"].package == "good-plugin 1.0"
        assert plugins.source_of(GROUP, "good-2") == "good-plugin 1.0" and plugins.source_of(GROUP, "taken") is None
        errors = {name: p.error for name, p in loaded.items() if p.broken}
        assert set(errors) == {"half", "taker", "idle", "value", "missing", "reserved"}
        assert errors["half"] == "RuntimeError: boom"
        assert "'taken', already taken" in errors["taker"] and "'shipped', already taken" in errors["reserved"]
        assert "registered nothing" in errors["idle"] and "is a int, not a function" in errors["value"]
        assert errors["missing"].startswith("ModuleNotFoundError") and "no_such_module_39" in errors["missing"]
        assert "no_such_module_39:register (package bad-plugins 0.1): ModuleNotFoundError" in loaded["missing"].describe()
        # once per process: a second lookup calls nothing again
        assert [p.name for p in plugins.load_plugins(GROUP, scratch_registry.REGISTRY)] == list(loaded)
        assert scratch_registry.CALLS == ["good"]
        plugins.forget(GROUP, scratch_registry.REGISTRY)
        assert scratch_registry.REGISTRY == {"taken": "the lab"}
        monkeypatch.setenv(plugins.SWITCH, "0")
        assert plugins.load_plugins(GROUP, scratch_registry.REGISTRY) == [] and scratch_registry.CALLS == ["good"]
    finally:
        plugins.forget(GROUP, scratch_registry.REGISTRY)


def test_an_installed_method_plugin_reaches_the_lookups_the_explorer_and_langchain(tmp_path, monkeypatch, embedder):
    """In process: the example plugin installed on a temporary sys.path is what notebooks 10 and 11
    (``resolve_methods("all")``), the explorer and the LangChain face see; forgotten afterwards."""
    from rag_lab.compare.comparison import resolve_methods
    from rag_lab.core.types import Document
    from rag_lab.explore.explorer import Explorer

    site = tmp_path / "site"
    install(site, "rag-lab-mmr", "0.1.0", {plugins.METHODS: {"mmr": "rag_lab_mmr:register_methods"}},
            top_level="rag_lab_mmr")
    before = dict(retrievers.available_methods())     # with the example itself pip-installed, mmr is in it
    monkeypatch.syspath_prepend(str(EXAMPLE_SRC))
    monkeypatch.syspath_prepend(str(site))
    plugins.forget(plugins.METHODS, retrievers.REGISTRY)
    try:
        assert "mmr" in retrievers.available_methods() and "mmr" in resolve_methods("all")
        assert retrievers.method_source("mmr") == "rag-lab-mmr 0.1.0" and retrievers.method_source("naive") == "rag_lab"
        assert "mmr" in Explorer(datasets=["italian_cuisine"]).methods
        docs = [Document("pesto", "Pesto comes from Genoa. It pounds basil, garlic and pine nuts in a mortar."),
                Document("ragu", "Ragu alla bolognese simmers beef in tomato and milk for hours in Bologna.")]
        mmr = harness.build(retrievers.get_retriever("mmr", embedder=embedder, size=8, overlap=2), docs)
        found = as_langchain_retriever(mmr, k=2).invoke("Where is pesto from?")
        assert len(found) == 2 and found[0].metadata["doc_id"] == "pesto"
        from rag_lab.evaluation.provenance import method_record
        assert method_record(mmr)["package"] == "rag-lab-mmr 0.1.0"
    finally:
        monkeypatch.undo()                          # the plugin is no longer on the path...
        plugins.forget(plugins.METHODS, retrievers.REGISTRY)
    assert retrievers.available_methods() == before      # ...and the registry is as it was


def run_lab(site: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(EXAMPLE_SRC), str(site)]))
    return subprocess.run([sys.executable, "-m", "rag_lab", *args], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=600)


TINY_DATA = '''from rag_lab.core.types import Dataset, Document, Question
from rag_lab.datasets import register_loader

def register():
    @register_loader("tiny_plugin_data", "two documents and a question, from a plugin")
    def load(**kwargs):
        docs = [Document("pesto", "Pesto comes from Genoa in Liguria."), Document("ragu", "Ragu comes from Bologna.")]
        return Dataset("tiny_plugin_data", docs, [Question("q1", "Where does pesto come from?", gold_doc_ids=["pesto"])])
'''


def test_the_command_line_lists_plugins_runs_them_and_reports_broken_ones(tmp_path):
    site = tmp_path / "site"
    install(site, "rag-lab-mmr", "0.1.0", {plugins.METHODS: {"mmr": "rag_lab_mmr:register_methods"}},
            top_level="rag_lab_mmr")
    install(site, "broken-plugin", "0.0.1", {plugins.METHODS: {"broken": "no_such_module_39:register"},
                                             plugins.DATASETS: {"broken-data": "no_such_module_39:data"}})
    install(site, "tiny-data", "1.0", {plugins.DATASETS: {"tiny": "tiny_data:register"}}, {"tiny_data": TINY_DATA})

    listed = run_lab(site, "methods")
    assert listed.returncode == 0, listed.stderr
    lines = {line.split("\t")[0]: line.split("\t")[1:] for line in listed.stdout.strip().splitlines()}
    assert lines["naive"][0] == "rag_lab" and lines["bm25"][0] == "rag_lab"
    assert lines["mmr"][0] == "rag-lab-mmr 0.1.0" and lines["mmr"][1].startswith("MMR")
    assert lines["broken"][0] == "broken-plugin 0.0.1"
    assert lines["broken"][1].startswith("BROKEN plugin no_such_module_39:register: ModuleNotFoundError")
    assert list(lines).index("mmr") > list(lines).index("gralc-graph")     # the lab's own first

    data = run_lab(site, "datasets")
    assert data.returncode == 0 and re.search(r"^tiny_plugin_data +path given +two documents", data.stdout, re.M)
    assert "broken-data\tBROKEN plugin no_such_module_39:data (package broken-plugin 0.0.1)" in data.stdout

    # the "done when", on two questions; the broken plugin is installed all along
    out = tmp_path / "mmr.csv"
    ran = run_lab(site, "eval", "--data", "italian_cuisine", "--methods", "mmr,naive", "--baseline", "naive",
                  "--limit", "2", "--k", "1,3", "--out", str(out))
    assert ran.returncode == 0, ran.stderr
    rows = pd.read_csv(out)
    assert set(rows["method"]) == {"mmr", "naive"} and rows["question_id"].nunique() == 2
    record = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))["methods"]["mmr"]
    assert record["class"] == "rag_lab_mmr.method:MMRRetriever" and record["package"] == "rag-lab-mmr 0.1.0"
    assert record["nested_ranking"] is True and record["params"]["lambda_"] == 0.5
    differences = pd.read_csv(out.with_name("mmr.differences.csv"))
    assert set(differences["method"]) == {"mmr"} and set(differences["baseline"]) == {"naive"}

    sparse = run_lab(site, "eval", "--data", "tiny_plugin_data", "--methods", "bm25", "--k", "1")
    assert sparse.returncode == 0, sparse.stderr
    assert "tiny_plugin_data, 1 questions" in sparse.stdout

    refused = run_lab(site, "eval", "--data", "italian_cuisine", "--methods", "broken")
    assert refused.returncode == 2
    assert "unknown method 'broken'" in refused.stderr and "broken plugin broken = no_such_module_39:register" in refused.stderr


@pytest.mark.parametrize("value", ["0", "off"])
def test_plugins_can_be_switched_off(tmp_path, value):
    site = tmp_path / "site"
    install(site, "rag-lab-mmr", "0.1.0", {plugins.METHODS: {"mmr": "rag_lab_mmr:register_methods"}})
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(EXAMPLE_SRC), str(site)]),
               **{plugins.SWITCH: value})
    listed = subprocess.run([sys.executable, "-m", "rag_lab", "methods"], capture_output=True, text=True, env=env,
                            check=True).stdout
    assert "naive\t" in listed and "mmr" not in listed


def test_a_plugins_cached_indexes_are_keyed_by_its_own_code_too(tmp_path, monkeypatch):
    from rag_lab.caching import code_version
    from rag_lab.methods.baselines.lexical import BM25Retriever

    package = tmp_path / "fingerprinted_plugin_39"
    package.mkdir()
    (package / "__init__.py").write_text("class Method:\n    pass\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    from fingerprinted_plugin_39 import Method

    lab = code_version.code_fingerprint()
    assert code_version.class_code_fingerprint(BM25Retriever) == lab          # the lab's own keys as before
    before = code_version.class_code_fingerprint(Method)
    assert before.startswith(lab + "+") and len(before) == len(lab) + 17
    (package / "__init__.py").write_text("class Method:\n    knob = 2\n", encoding="utf-8")
    code_version._package_digest.cache_clear()                                # a new process, in effect
    assert code_version.class_code_fingerprint(Method) not in (before, lab)
    assert code_version.class_code_fingerprint(type("Made", (), {"__module__": "no_file_39"})) == lab   # a notebook's
