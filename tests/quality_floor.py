"""The quality floor: retrieval quality of every shipped data set at the notebook tests' small
parameters, pinned in ``tests/reference/quality_floor.json`` (read by tests/test_quality_floor.py).

The notebook tests run these methods on these data sets but only check that values are rates;
a change that halved every method's recall would pass them. Here each (data set, method) keeps
its doc_recall@5, ctx_recall@5 and doc_mrr@5 (MRR over the top 5) within ``TOLERANCE`` of the
reference, and each data set keeps its document and question counts (also at full size).

Refreshing is deliberate (tests/reference/README.md): run ``python tests/quality_floor.py`` under
the shared lock, from the repository root with it on PYTHONPATH, look at what moved (it prints
old -> new), and commit the file with the reason in the commit message. It runs in a fresh cache
(the tests in the session's new store), so nothing computed by an older code version is reused;
index reuse is on inside it, so methods that share an index (SSG's seven traversals share one
graph) build it once, as ``rag_lab eval`` does (tests/test_determinism.py checks that a reused
index gives what a fresh build gives).
"""
from __future__ import annotations

import json
import math
import os
import sys
import tempfile
from pathlib import Path

REFERENCE = Path(__file__).resolve().parent / "reference" / "quality_floor.json"
METRICS = ("doc_recall@5", "ctx_recall@5", "doc_mrr@5")
# Absolute. With 3 questions the smallest change a moved hit makes is 1/15 (MRR: one rank at 5 vs 4
# on one question) or 1/(3 x the gold passages of a question); 0.01 is far below that and far
# above float noise in a mean.
TOLERANCE = 0.01
GRALC = ("gralc-naive", "gralc-semantic", "gralc-late", "gralc-structure", "gralc-kg", "gralc-graph")
SSG = ("ssg-basic-retrieval", "ssg-query-traversal", "ssg-ssg-traversal", "ssg-triangulation-average",
       "ssg-triangulation-geometric-3d", "ssg-triangulation-fulldim", "ssg-llm-guided-traversal")
# data set -> how it is loaded (the notebook tests' sizes) and method -> knobs (as those tests set them):
# 01_sketch and 02_unweaver on italian_cuisine, 03_ssg_traversal on ml_encyclopedia, 04_gralc_rag
# on biomed_articles (two articles), 10_compare_retrieval's fenwold_gazetteer (12 entries).
CASES: dict[str, dict] = {
    "italian_cuisine": {"load": {"limit": 3},
                        "methods": {"naive": {}, "semantic": {}, "sketch": {}, "kg": {}, "raptor": {"levels": 2},
                                    "unweaver": {"description_cap": 60}}},
    "ml_encyclopedia": {"load": {"limit": 3}, "methods": {m: {} for m in SSG}},
    "biomed_articles": {"load": {"articles": 2}, "methods": {m: {} for m in GRALC}},
    # notebook 10's data set: its first 12 entries and the questions they answer; the baselines and one
    # section-aware strategy (the other methods are floored on their own papers' data sets above)
    "fenwold_gazetteer": {"load": {"documents": 12},
                          "methods": {"naive": {}, "bm25": {}, "semantic": {}, "gralc-structure": {}}},
}


def measure(name: str, case: dict, per_question: dict | None = None, near_ties: list | None = None) -> dict:
    """Counts and the pinned metrics of one case, through ``load_dataset`` and ``evaluate``.
    ``per_question`` receives (method, question id, metric) -> value, ``near_ties`` the near-ties
    the run noted (rag_lab/core/ties.py)."""
    from rag_lab.core import ties
    from rag_lab.datasets import load_dataset
    from rag_lab.evaluation.harness import evaluate
    from rag_lab.methods import get_retriever

    data = load_dataset(name, **case["load"])
    full = load_dataset(name)
    retrievers = {m: get_retriever(m, **knobs) for m, knobs in case["methods"].items()}
    with ties.collecting() as found:
        raw = evaluate(retrievers, data, ks=(5,), progress=False)
    if per_question is not None:
        for row in raw[raw["metric"].isin([m.split("@")[0] for m in METRICS])].itertuples():
            per_question[(row.method, row.question_id, f"{row.metric}@{row.k}")] = row.value
    if near_ties is not None:
        near_ties.extend(found)
    values = floor_values(raw, case["methods"])
    return {"load": case["load"], "documents": len(data.documents), "questions": len(data.questions),
            "full_documents": len(full.documents), "full_questions": len(full.questions), "methods": values}


_MEASURED: dict = {}


def reusing(folder: Path | None = None):
    """Index reuse on, in ``folder`` (default: the current cache; under pytest the session's store, which
    starts empty): an index is built once and read back by every test of the group that builds these
    cases (conftest's ``INDEXES``: the quality floor, reproducibility, TREC equality, evaluation at k;
    ``Dataset.limit`` keeps every document, so their limits share keys), by the planted RAPTOR regression,
    by the notebook kernels in the session store, and by SSG's traversals, which share one graph. A reused index gives what a fresh build gives (tests/test_determinism.py)."""
    from rag_lab.core.environment import environment

    return environment({"RAG_LAB_REUSE": "1", **({"RAG_LAB_CACHE": str(folder)} if folder else {})})


def fresh_cache() -> Path:
    """An empty cache folder sharing the current cache's ONNX export (the model, not what is compared)."""
    from rag_lab.caching.sqlite_cache import default_cache_dir

    folder = Path(tempfile.mkdtemp(prefix="rag_lab_quality_floor_"))
    if (default_cache_dir() / "onnx").is_dir():
        (folder / "onnx").symlink_to(default_cache_dir() / "onnx")
    return folder


def measured(name: str) -> tuple[dict, dict, list]:
    """``measure`` of case ``name`` (values, per-question scores, near-ties), once per process and
    vector perturbation (``$RAG_LAB_PERTURB_VECTORS``): the quality floor and the reproducibility
    test read the same unperturbed run when they share a worker (their ``xdist_group``)."""
    from rag_lab.core.embedding import perturbation_sigma

    key = (name, perturbation_sigma())
    if key not in _MEASURED:
        per_question, near = {}, []
        with reusing():
            _MEASURED[key] = (measure(name, CASES[name], per_question, near), per_question, near)
    return _MEASURED[key]


def near_tie_allowance(near_ties, method: str, dataset: str, questions: int) -> tuple[float, list[str]]:
    """How far machine noise may move a mean over ``questions`` questions of ``method`` on ``dataset``:
    1/n for each question a near-tie covers (a mean of [0, 1] scores moves at most that much when one
    question's result flips) — a retrieval note its question, a build note the questions in its scope
    (none when it lists none: rag_lab/core/ties.py); and the near-ties that count."""
    from rag_lab.core import ties

    covered = ties.covered_questions(near_ties, method, dataset)
    named = [t.describe() for t in near_ties if t.labels.get("method") == method
             and t.labels.get("dataset") == dataset and any(ties.covers(t, method, dataset, q) for q in covered)]
    return len(covered) / max(1, questions), named


def floor_failures(name: str, got: dict, near_ties, pinned: dict, tolerance: float) -> list[str]:
    """The pinned means of case ``name`` that ``got`` moved beyond ``tolerance`` plus what the near-ties can
    move (``near_tie_allowance``), one line each; empty when the floor holds."""
    moved = []
    for method, values in pinned["methods"].items():
        allowance, named = near_tie_allowance(near_ties, method, name, got["questions"])
        for metric, want in values.items():
            have = got["methods"][method][metric]
            if (want is None) != (have is None) or (want is not None and abs(have - want) > tolerance + allowance):
                moved.append(f"{method} {metric}: {have} (reference {want} ± {tolerance}"
                             + (f" + {allowance:.3f} for near-ties: {'; '.join(named[:5])}" if named else "") + ")")
    return moved


def floor_values(raw, methods) -> dict:
    """method -> the pinned metrics' means (``evaluate``'s rows, ``summarize``d), as the reference keeps them."""
    from rag_lab.evaluation.harness import summarize

    table = summarize(raw)
    return {m: {metric: _value(table, m, metric) for metric in METRICS} for m in methods}


def _value(table, method: str, column: str) -> float | None:
    """The mean, rounded to 4 places; None when the data set has no gold for it (e.g. no gold passages)."""
    if column not in table.columns or math.isnan(float(table.loc[method, column])):
        return None
    return round(float(table.loc[method, column]), 4)


def environment() -> dict:
    """What the values depend on besides the code: the encoder and its backend."""
    from rag_lab.core.embedding import shared_embedder

    embedder = shared_embedder()
    return {"model_key": embedder.model_key, "backend": embedder.backend}


def read_reference() -> dict:
    return json.loads(REFERENCE.read_text(encoding="utf-8"))


def refresh() -> dict:
    """Measure every case in a fresh cache and write the reference atomically."""
    os.environ.pop("RAG_LAB_DATA", None)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
    from rag_lab.caching.atomic import write_text

    old = read_reference() if REFERENCE.exists() else {"cases": {}}
    with reusing(fresh_cache()):                     # nothing from an older code version; reuse within the run
        cases = {name: measure(name, case) for name, case in CASES.items()}
    ref = {"about": "tests/quality_floor.py: what this pins and how to refresh it on purpose",
           "tolerance": TOLERANCE, "metrics": list(METRICS), "ks": [5], "environment": environment(), "cases": cases}
    REFERENCE.parent.mkdir(parents=True, exist_ok=True)
    write_text(REFERENCE, json.dumps(ref, indent=1, sort_keys=True) + "\n")
    for name, case in cases.items():
        for method, values in case["methods"].items():
            before = old["cases"].get(name, {}).get("methods", {}).get(method, {})
            moved = {m: f"{before.get(m)} -> {v}" for m, v in values.items() if before.get(m) != v}
            print(f"{name} {method}: {moved or 'unchanged'}")
    return ref


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    refresh()
    print(f"wrote {REFERENCE}")
