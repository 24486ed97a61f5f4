"""Rankings in the field's own format: TREC run files and qrels out, outside TREC runs in.

Why: pyserini/Anserini, PyTerrier, ranx, ir_measures and trec_eval all read and write
``qid Q0 docno rank score tag`` runs and ``qid 0 docno relevance`` qrels, so a researcher can take
our rankings into those tools, check our numbers against them, and put a run of their own system
beside our methods (``eval --run NAME=FILE``). Reading and writing are our own few lines (the format
is six columns); scoring the files is ir_measures' (``trusted_scores``). docs/interop.md lists the files
``write_trec`` writes and why there is no shared passage qrels (methods cut documents into different chunks).

Ties: trec_eval sorts by score, ties by docno descending, ir_measures' RR@k ascending, so the written
scores are made strictly decreasing in our rank order at single precision (trec_eval keeps a C
``float``; ``decreasing_scores``) and every tool reads our order back. An outside run is read the way
trec_eval reads it (``trec_order``).

Our doc_* metrics score the k *chunks* a method hands over (the reader's budget), ir_measures the
*documents* of a run file; on one ranking of documents they are the same to 1e-9, on chunks they differ
only where a document has two chunks in the top k (a choice of unit, not an error:
``tests/test_trec_ir_measures.py``, docs/interop.md).
"""
from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from ..caching.atomic import write_text
from ..core.types import Dataset, Retrieval
from .metric_specs import named_by
from .metrics import ChunkPool, document_metrics, reference_chunk_ids
from .provenance import NONE, method_params

log = logging.getLogger(__name__)
TREC_DIR_ENV = "RAG_LAB_TREC_DIR"   # set by the runner: every evaluate() in a kernel writes its runs there
DOCUMENT_METRICS = named_by("ir_measures", "doc")     # ours -> ir_measures' name (the doc_ metrics)
PASSAGE_METRICS = named_by("ir_measures", "ctx")      # the passage metrics that mean the same in TREC
OUTSIDE_LEVEL = "document"
ROW_COLUMNS = ("method", "question_id", "metric", "k", "value")   # harness.COLUMNS (harness imports this module)
_UNSAFE = re.compile(r"[\s/\\]+")


# ---- names --------------------------------------------------------------------------------------

def file_part(name: str) -> str:
    """A data set's or method's name as one part of a file name (no spaces, no slashes)."""
    return _UNSAFE.sub("_", str(name).strip()) or "_"


def config_hash(retriever) -> str:
    """The method's ``Config.config_id``; a retriever with no Config: the same length of sha256 over its
    parameters as the provenance records them."""
    config = getattr(retriever, "config", None)
    if config is not None and hasattr(config, "config_id"):
        return config.config_id
    text = json.dumps(method_params(retriever), sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(f"{type(retriever).__name__}:{text}".encode()).hexdigest()[:10]


def run_tag(name: str, retriever) -> str:
    """The run's tag: the method's name and its config hash."""
    return file_part(f"{name}@{config_hash(retriever)}")


# ---- ranking and scores -------------------------------------------------------------------------

def document_ranking(retrieval: Retrieval) -> list[tuple[str, float]]:
    """(document id, score) in rank order: each document once, at its first chunk, with that chunk's score."""
    out: dict[str, float] = {}
    for hit in retrieval.hits:
        out.setdefault(hit.chunk.doc_id, float(hit.score))
    return list(out.items())


def chunk_ranking(retrieval: Retrieval) -> list[tuple[str, float]]:
    """(chunk id, score) in rank order, each chunk once."""
    out: dict[str, float] = {}
    for hit in retrieval.hits:
        out.setdefault(hit.chunk.id, float(hit.score))
    return list(out.items())


def decreasing_scores(scores: Sequence[float]) -> list[float]:
    """The scores to write for a ranking in our order, at single precision (trec_eval keeps a score as a
    C ``float``: two scores that differ only beyond it are a tie there): each score as it is when it falls
    below the one written before it, else one single-precision step below that one (ties and near-ties
    our ranking ordered by its key; a score that is not a finite number counts as not falling). Every
    TREC tool re-sorts them into our order."""
    out: list[np.float32] = []
    down = np.float32(-np.inf)
    for s in scores:
        with np.errstate(over="ignore", invalid="ignore"):
            s = np.float32(s)
        if not out:
            out.append(s if np.isfinite(s) else np.float32(0.0))
        elif np.isfinite(s) and s < out[-1]:
            out.append(s)
        else:
            out.append(np.nextafter(out[-1], down))
    return [float(x) for x in out]


def score_text(score: float) -> str:
    """The shortest text that reads back as the same single-precision score (and keeps the order of
    distinct single-precision scores for a reader in double precision)."""
    return np.format_float_positional(np.float32(score), unique=True, trim="-") if abs(score) >= 1e-4 or score == 0 \
        else np.format_float_scientific(np.float32(score), unique=True, trim="-")


def trec_order(pairs: Iterable[tuple[str, float]]) -> list[tuple[str, float]]:
    """(docno, score) as trec_eval ranks them: score descending, ties by docno descending."""
    return sorted(pairs, key=lambda p: (p[1], p[0]), reverse=True)


# ---- writing ------------------------------------------------------------------------------------

def run_text(rankings: Mapping[str, Sequence[tuple[str, float]]], tag: str) -> str:
    """TREC run lines ``qid Q0 docno rank score tag`` for qid -> ranking in our order (scores made
    strictly decreasing at single precision, ``decreasing_scores``)."""
    if not tag or _UNSAFE.search(tag):
        raise ValueError(f"a run tag must be one word with no slash, got {tag!r}")
    lines = []
    for qid, ranking in rankings.items():
        for rank, ((docno, _), score) in enumerate(zip(ranking, decreasing_scores([s for _, s in ranking])), 1):
            lines.append(f"{_word(qid, 'question id')} Q0 {_word(docno, 'docno')} {rank} {score_text(score)} {tag}")
    return "\n".join(lines) + ("\n" if lines else "")


def qrels_text(judgements: Mapping[str, Iterable[str]], relevance: int = 1) -> str:
    """TREC qrels lines ``qid 0 docno relevance`` for qid -> relevant docnos."""
    return "".join(f"{_word(qid, 'question id')} 0 {_word(d, 'docno')} {relevance}\n"
                   for qid, docs in judgements.items() for d in dict.fromkeys(docs))


def _word(value: str, what: str) -> str:
    value = str(value)
    if not value or any(ch.isspace() for ch in value):
        raise ValueError(f"a TREC {what} must be one word with no whitespace, got {value!r}")
    return value


def document_qrels(dataset: Dataset) -> dict[str, list[str]]:
    """question id -> its gold documents (questions without any are left out)."""
    return {q.id: list(dict.fromkeys(q.gold_doc_ids)) for q in dataset.questions if q.gold_doc_ids}


def passage_qrels(retriever, dataset: Dataset, min_overlap: float = 0.5) -> dict[str, list[str]]:
    """question id -> the method's chunks that match a gold context by the ctx_* rule."""
    docs = {d.id: d for d in dataset.documents}
    pool = ChunkPool(getattr(retriever, "chunks", []))   # a method keeping no chunks: no passage qrels
    out = {q.id: reference_chunk_ids(pool, q, docs, min_overlap) for q in dataset.questions if q.gold_contexts}
    return {q: ids for q, ids in out.items() if ids}


def write_trec(folder: str | Path, dataset: Dataset, retrievers: Mapping[str, object],
               retrievals: Mapping[str, Mapping[str, Retrieval]], min_overlap: float = 0.5) -> list[Path]:
    """Write the data set's qrels and, per method, its document run (and passage run and qrels where
    questions carry gold passages) into ``folder`` (module docstring); each file whole or not at all.
    ``retrievals``: method -> question id -> the method's retrieval (the deepest k). Returns the paths."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    base = file_part(dataset.name)
    written = [write_text(folder / f"{base}.qrels", qrels_text(document_qrels(dataset)))]
    with_passages = any(q.gold_contexts for q in dataset.questions)
    for name, retriever in retrievers.items():
        by_q = retrievals[name]
        missing = [q.id for q in dataset.questions if q.id not in by_q]
        if missing:
            raise ValueError(f"{name}: no retrieval for {len(missing)} question(s), e.g. {', '.join(missing[:3])}")
        tag, stem = run_tag(name, retriever), f"{base}.{file_part(name)}"
        written.append(write_text(folder / f"{stem}.run", run_text(
            {q.id: document_ranking(by_q[q.id]) for q in dataset.questions}, tag)))
        if with_passages:
            written.append(write_text(folder / f"{stem}.passage.run", run_text(
                {q.id: chunk_ranking(by_q[q.id]) for q in dataset.questions}, tag)))
            written.append(write_text(folder / f"{stem}.passage.qrels",
                                      qrels_text(passage_qrels(retriever, dataset, min_overlap))))
    return written


def write_from_environment(dataset: Dataset, retrievers: Mapping[str, object],
                           retrievals: Mapping[str, Mapping[str, Retrieval]], min_overlap: float = 0.5
                           ) -> list[Path]:
    """``write_trec`` into ``$RAG_LAB_TREC_DIR`` when it is set (the runner sets it for each notebook's
    kernel, so every ``rag_lab run`` keeps its rankings), else nothing. A ranking the format cannot
    hold (an id with a space, from a plugin's method) is named in a warning and not written: the
    notebook's own results do not depend on these files."""
    folder = os.environ.get(TREC_DIR_ENV)
    if not folder:
        return []
    try:
        return write_trec(folder, dataset, retrievers, retrievals, min_overlap)
    except ValueError as e:
        log.warning("TREC files for %s not written to %s: %s", dataset.name, folder, e)
        return []


# ---- reading ------------------------------------------------------------------------------------

def read_run(path: str | Path) -> dict[str, list[tuple[str, float]]]:
    """A TREC run file: qid -> (docno, score) in trec_eval's order (``trec_order``). Lines need six
    columns (``qid Q0 docno rank score tag``; further ones are ignored, as trec_eval does); a score
    that is not a finite number, or a document listed twice for one question, is refused by line."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no TREC run file at {path}")
    out: dict[str, dict[str, float]] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) < 6:
            raise ValueError(f"{path}:{number}: a TREC run line has six columns (qid Q0 docno rank score tag), "
                             f"got {len(fields)}: {line.strip()!r}")
        qid, docno, score = fields[0], fields[2], fields[4]
        try:
            value = float(score)
        except ValueError:
            raise ValueError(f"{path}:{number}: the score (5th column) must be a number, got {score!r}") from None
        if not math.isfinite(value):
            raise ValueError(f"{path}:{number}: the score (5th column) must be finite, got {score!r}")
        ranking = out.setdefault(qid, {})
        if docno in ranking:
            raise ValueError(f"{path}:{number}: document {docno!r} is listed twice for question {qid!r}")
        ranking[docno] = value
    if not out:
        raise ValueError(f"{path}: the TREC run file holds no lines")
    return {qid: trec_order(r.items()) for qid, r in out.items()}


def _examples(items: Sequence[str]) -> str:
    return ", ".join(repr(x) for x in items[:3])


@dataclass
class OutsideRun:
    """An outside TREC run checked against a data set: its rankings of the questions it covers."""

    name: str
    path: Path
    rankings: dict[str, list[tuple[str, float]]]
    questions: int                    # questions of the data set that can be scored at document level
    dropped: list[str] = field(default_factory=list)   # qids of the data set left out of this evaluation

    @property
    def covered(self) -> int:
        return len(self.rankings)

    def describe(self) -> str:
        left = f"; {len(self.dropped)} of its questions are not in this evaluation (--limit)" if self.dropped else ""
        return (f"{self.name}: outside TREC run {self.path} ({OUTSIDE_LEVEL}-level metrics only: a run names "
                f"documents, not passages); scored on the {self.covered} of {self.questions} questions it "
                f"ranks{left}")


def parse_run_option(text: str) -> tuple[str, Path]:
    """``NAME=FILE`` of ``--run``."""
    name, sep, file = text.partition("=")
    if not sep or not name.strip() or not file.strip():
        raise ValueError(f"--run takes NAME=FILE (a name for the run, then its TREC run file), got {text!r}")
    return name.strip(), Path(file.strip())


def load_outside_run(name: str, path: str | Path, dataset: Dataset, known_question_ids: Iterable[str] | None = None
                     ) -> OutsideRun:
    """Read ``path`` and check it names the data set's questions and documents: unknown question ids or
    docnos are refused with their counts and three examples. ``known_question_ids``: every question id
    of the data set when ``dataset`` is a subset (``--limit``): those are dropped, not refused."""
    rankings = read_run(path)
    here = {q.id for q in dataset.questions}
    known = here | set(known_question_ids or ())
    unknown_q = [q for q in rankings if q not in known]
    if unknown_q:
        raise ValueError(f"--run {name}: {len(unknown_q)} of the {len(rankings)} question ids in {path} are not "
                         f"questions of {dataset.name!r}, e.g. {_examples(unknown_q)}")
    docs = {d.id for d in dataset.documents}
    unknown_d = list(dict.fromkeys(d for r in rankings.values() for d, _ in r if d not in docs))
    if unknown_d:
        raise ValueError(f"--run {name}: {len(unknown_d)} docnos in {path} are not documents of {dataset.name!r}, "
                         f"e.g. {_examples(unknown_d)}")
    dropped = [q for q in rankings if q not in here]
    scorable = [q.id for q in dataset.questions if q.gold_doc_ids]
    if not any(q in rankings for q in scorable):
        raise ValueError(f"--run {name}: {path} ranks none of the {len(scorable)} questions of {dataset.name!r} "
                         "with gold documents")
    return OutsideRun(name, Path(path), {q: rankings[q] for q in scorable if q in rankings}, len(scorable), dropped)


def load_outside_runs(options: Sequence[tuple[str, Path]], dataset: Dataset,
                      known_question_ids: Iterable[str] | None = None) -> list[OutsideRun]:
    """``load_outside_run`` for each ``(name, file)`` of ``--run`` (``known_question_ids``: as there)."""
    known = list(known_question_ids or ())
    return [load_outside_run(name, path, dataset, known) for name, path in options]


def outside_rows(run: OutsideRun, dataset: Dataset, ks: Sequence[int]) -> pd.DataFrame:
    """The run's per-question rows (``method, question_id, metric, k, value`` and the reasoner columns):
    document-level metrics at every k of the top k documents, for the questions it ranks."""
    rows = [(run.name, q.id, metric, k, value)
            for q in dataset.questions if q.id in run.rankings
            for metric, k, value in document_metrics([d for d, _ in run.rankings[q.id]], q.gold_doc_ids, ks)]
    df = pd.DataFrame(rows, columns=list(ROW_COLUMNS))
    return df.assign(index_reasoner=NONE, answer_reasoner=NONE)


def outside_record(run: OutsideRun) -> dict:
    """The run's provenance entry (``attrs["methods"]``), shaped like ``provenance.method_record``'s."""
    return {"class": "outside TREC run", "package": "outside", "level": OUTSIDE_LEVEL,
            "params": {"file": str(run.path), "questions_ranked": run.covered, "questions": run.questions,
                       "left_out_by_limit": len(run.dropped)},
            "index_reasoner": NONE, "answer_reasoner": NONE, "nested_ranking": True,
            "embedder": NONE, "embedding_backend": NONE}


def join_outside_runs(df: pd.DataFrame, runs: Sequence[OutsideRun], dataset: Dataset, ks: Sequence[int]
                      ) -> pd.DataFrame:
    """``df`` (from ``evaluate``) with each outside run joined as a method: its rows and its provenance."""
    clash = [r.name for r in runs if r.name in set(df["method"])]
    names = [r.name for r in runs]
    if clash or len(set(names)) < len(names):
        raise ValueError(f"--run names must differ from each other and from --methods; repeated: "
                         f"{sorted(set(clash) | {n for n in names if names.count(n) > 1})}")
    out = pd.concat([df, *(outside_rows(r, dataset, ks) for r in runs)], ignore_index=True)
    out.attrs = {**df.attrs, "methods": {**df.attrs.get("methods", {}), **{r.name: outside_record(r) for r in runs}}}
    return out


# ---- scoring with ir_measures ---------------------------------------------------------------------

def trusted_scores(run_path: str | Path, qrels_path: str | Path, ks: Sequence[int],
                   metrics: Mapping[str, str] = DOCUMENT_METRICS) -> pd.DataFrame:
    """ir_measures' per-question values of a run file against a qrels file, under our metric names
    (``question_id, metric, k, value``): the trusted implementations ours are checked against.
    A question the run ranks but the qrels do not judge gets no row (trec_eval's rule)."""
    import ir_measures

    names = {f"{measure}@{k}": (ours, k) for ours, measure in metrics.items() for k in ks}
    measures = [ir_measures.parse_measure(n) for n in names]
    qrels = list(ir_measures.read_trec_qrels(str(qrels_path)))
    run = list(ir_measures.read_trec_run(str(run_path)))
    rows = [(m.query_id, *names[str(m.measure)], float(m.value)) for m in ir_measures.iter_calc(measures, qrels, run)]
    return pd.DataFrame(rows, columns=["question_id", "metric", "k", "value"])
