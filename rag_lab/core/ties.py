"""Decisions on float scores at a stated precision: the same ranking on every machine.

Sentence vectors differ in their last bits from one CPU to another (ONNX Runtime and BLAS pick
different kernels for AVX2, AVX-512 and VNNI; measured here: ~1e-7 per component), so a cosine
can move by ~1e-7 and any decision made on its exact value — which of two scores is larger,
whether one passes a threshold — can flip where two scores are equal or almost equal. Many ties
here are exact by construction (two sentences are equally close to their own centroid; duplicated
passages), and those were decided by noise.

Every decision that ranks, cuts or thresholds a score therefore goes through this module:
- ``order``/``best``: scores within ``TIE_TOL`` of the first (highest) score of their group are
  *tied* and ordered by a stable key instead (the caller's row, document or id order). Under
  noise of size ``NOISE`` the outcome can only change where a gap lies within ``NOISE`` of
  ``TIE_TOL`` — a genuine near-tie;
- ``above``/``at_least``: a threshold test that notes a value within ``NOISE`` of the threshold;
- ``beats``: a stop test between two scores, at the same precision as ``order``.
Near-ties are *noted*, not hidden: each is recorded with the labels of the decision it belongs to
(``deciding(dataset=..., method=..., question=...)``; the harness sets the data set, question and
method, and ``step="build"`` with the build's scope ``questions``), kept in memory
(``recorded``) and, when the environment variable ``RAG_LAB_NEAR_TIES`` names a file and the note
is fully labelled (``labelled``), appended to it as JSON lines — the drift check
(``runs/reference.py``) and the tests match them to the rows that moved (``covers``).

Notes are taken only where a decision reaches a result: a retrieval sets how deep its result is read
(``reading(k)``), and a ranking notes near-ties only up to that cut and the first candidate past it,
never deep in a ranking no metric reads. A note covers only the rows it can move: one retrieval's
(data set, method, question); a build note the questions listed in its ``questions`` label — none
when the build cannot tell which questions its decision reaches, and then it excuses nothing.

Own code: ranking libraries (numpy, FAISS, pandas) compare floats exactly; no library states a
tolerance for ties and records the near ones. docs/reproducibility.md says what this guarantees.
"""
from __future__ import annotations

import contextvars
import json
import os
import threading
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import Callable, Iterator, Sequence

TIE_TOL = 1e-5      # scores closer than this (cosines, probabilities, fused scores) count as equal
NOISE = 5e-6        # how far machine noise (vectors moved by up to ~1e-6 a component) can move a score
NEAR_TIES_ENV = "RAG_LAB_NEAR_TIES"
_MAX_KEPT = 10_000

_LABELS: contextvars.ContextVar[tuple] = contextvars.ContextVar("rag_lab_decision_labels", default=())
_COLLECTORS: contextvars.ContextVar[tuple] = contextvars.ContextVar("rag_lab_near_tie_collectors", default=())
_READ_DEPTH: contextvars.ContextVar[int | None] = contextvars.ContextVar("rag_lab_read_depth", default=None)
BUILD_SCOPE = "questions"   # a build note's label: the question ids (comma-separated) its decision reaches; "" none
_LOCK = threading.Lock()
_KEPT: list["NearTie"] = []


@dataclass(frozen=True)
class NearTie:
    """One decision that machine noise could flip: ``first`` was put before ``second`` (or
    ``value`` was judged against a threshold) with ``gap`` between them, under these ``labels``."""

    what: str
    first: str
    second: str
    gap: float
    labels: dict

    def describe(self) -> str:
        where = ", ".join(f"{k} {v or 'none'}" for k, v in self.labels.items())
        return f"{self.what}: {self.first} vs {self.second}, gap {self.gap:.2e}" + (f" ({where})" if where else "")


@contextmanager
def deciding(**labels) -> Iterator[None]:
    """Label the near-ties noted inside the block (e.g. ``method="raptor", question="ic-q03"``);
    blocks nest, inner labels win."""
    outer = _LABELS.get()
    token = _LABELS.set(outer + tuple((k, str(v)) for k, v in labels.items() if v is not None))
    try:
        yield
    finally:
        _LABELS.reset(token)


def current_labels() -> dict:
    return dict(_LABELS.get())


@contextmanager
def reading(depth: int) -> Iterator[None]:
    """Inside the block a result reads only the first ``depth`` places of a ranking (a retrieval's k):
    ``order`` notes near-ties up to that cut and the first candidate past it, none deeper."""
    if depth < 0:
        raise ValueError(f"reading: depth must be non-negative, got {depth}")
    token = _READ_DEPTH.set(int(depth))
    try:
        yield
    finally:
        _READ_DEPTH.reset(token)


def build_scope(labels: dict) -> set[str] | None:
    """The questions a build note reaches (its ``questions`` label), or None for a note that is not a build's."""
    if labels.get("step") != "build":
        return None
    return {q for q in str(labels.get(BUILD_SCOPE, "")).split(",") if q}


def labelled(labels: dict) -> bool:
    """Whether a note says which rows it can move: data set, method, and a question or a build scope."""
    return ("dataset" in labels and "method" in labels
            and ("question" in labels or (labels.get("step") == "build" and BUILD_SCOPE in labels)))


def covered_questions(near_ties: Sequence["NearTie"], method: str, dataset: str | None) -> set[str]:
    """The questions of ``method`` on ``dataset`` whose rows these near-ties can move: a retrieval
    note's question, a build note's scope (none when it lists none). ``dataset`` None: any data set."""
    out: set[str] = set()
    for tie in near_ties:
        labels = tie.labels
        if labels.get("method") != method or (dataset is not None and labels.get("dataset") != dataset):
            continue
        scope = build_scope(labels)
        if scope is not None:
            out |= scope
        elif "question" in labels:
            out.add(labels["question"])
    return out


def covers(tie: "NearTie", method: str | None, dataset: str | None, question: str | None) -> bool:
    """Whether ``tie`` can explain a moved row of (``method``, ``dataset``, ``question``); None for a
    row without that label (a mean over questions, a build table): then a note of the method
    reaching any question, or any build note of it, can explain it."""
    labels = tie.labels
    if method is not None and labels.get("method") != method:
        return False
    if dataset is not None and labels.get("dataset", dataset) != dataset:
        return False
    scope = build_scope(labels)
    if question is None:
        return scope is not None or "question" in labels
    return question in scope if scope is not None else labels.get("question") == question


@contextmanager
def collecting() -> Iterator[list[NearTie]]:
    """The near-ties noted inside the block (in this thread or context), as a list filled as they come:
    a built index keeps its build's near-ties, so reusing it names them again (``replay``)."""
    found: list[NearTie] = []
    token = _COLLECTORS.set(_COLLECTORS.get() + (found,))
    try:
        yield found
    finally:
        _COLLECTORS.reset(token)


def replay(found: Sequence[NearTie]) -> None:
    """Note again near-ties kept from an earlier computation (a reused index's build), each under
    its own labels plus the current ones."""
    for tie in found:
        with deciding(**tie.labels):
            note(tie.what, tie.first, tie.second, tie.gap)


def note(what: str, first, second, gap: float) -> NearTie:
    """Record a near-tie (module docstring): in memory, and in ``$RAG_LAB_NEAR_TIES`` if set and the note
    is ``labelled`` (one that names no rows could excuse none; a build outside the harness is named
    again, with its data set, when the harness evaluates it)."""
    tie = NearTie(what, str(first), str(second), float(gap), current_labels())
    for found in _COLLECTORS.get():
        found.append(tie)
    path = os.environ.get(NEAR_TIES_ENV)
    with _LOCK:
        if len(_KEPT) < _MAX_KEPT:
            _KEPT.append(tie)
        if path and labelled(tie.labels):
            with open(path, "a", encoding="utf-8") as out:
                out.write(json.dumps(asdict(tie)) + "\n")
    return tie


def recorded() -> list[NearTie]:
    """The near-ties noted in this process so far (at most 10,000)."""
    with _LOCK:
        return list(_KEPT)


def forget() -> None:
    """Drop the in-memory record (tests)."""
    with _LOCK:
        _KEPT.clear()


def read_near_ties(path) -> list[NearTie]:
    """The near-ties a run appended to ``path`` (missing file: none), each once."""
    from pathlib import Path

    path = Path(path)
    return parse_near_ties(path.read_text(encoding="utf-8")) if path.exists() else []


def parse_near_ties(text: str) -> list[NearTie]:
    """Near-ties from JSON lines (``note``'s file, or the reference's committed copy), each once."""
    seen, out = set(), []
    for line in text.splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        key = (row["what"], row["first"], row["second"], json.dumps(row["labels"], sort_keys=True))
        if key not in seen:
            seen.add(key)
            out.append(NearTie(row["what"], row["first"], row["second"], row["gap"], row["labels"]))
    return out


def near_ties_text(near_ties: Sequence[NearTie]) -> str:
    """JSON lines of ``near_ties``, sorted, each once: the same notes give the same text."""
    rows = {json.dumps(asdict(t), sort_keys=True) for t in near_ties}
    return "".join(row + "\n" for row in sorted(rows))


def _is_near(gap: float) -> bool:
    return abs(gap - TIE_TOL) <= NOISE


def order(scores: Sequence[float], keys: Sequence | None = None, *, k: int | None = None, what: str = "rank",
          names: Sequence | Callable | None = None, tol: float = TIE_TOL, fetch: bool = False) -> list[int]:
    """Positions of ``scores``, best first. A score within ``tol`` of its group's first score is tied
    with it; tied scores are ordered by ``keys`` (default: position). With ``k``, only the first k
    places are returned and only near-ties that touch them are noted: the caller reads its k
    places. Without ``k``, or with ``fetch`` (a search fetching more than a later cut reads, e.g.
    a vector search for every node), notes stop at the depth a result reads (``reading``), with
    the first candidate past it. ``names`` label candidates
    in the notes (a sequence or a function of the position; default: the position)."""
    n = len(scores)
    keys = range(n) if keys is None else keys
    if len(keys) != n:
        raise ValueError(f"order: got {len(keys)} keys for {n} scores")
    values = [float(s) for s in scores]
    by_score = sorted(range(n), key=lambda i: (-values[i], keys[i]))
    out: list[int] = []
    start = 0
    limit = n if k is None else max(0, min(k, n))
    depth = _READ_DEPTH.get()
    noted_to = limit if depth is None or (k is not None and not fetch) else min(limit, depth)
    while start < n and len(out) < limit:
        lead = values[by_score[start]]
        end = start + 1
        while end < n and lead - values[by_score[end]] < tol:
            end += 1
        group = sorted(by_score[start:end], key=lambda i: keys[i])
        if what and start < noted_to:
            _note_group(values, by_score, start, end, lead, what, names)
        out += group
        start = end
    return out[:limit]


def _note_group(values, by_score, start, end, lead, what, names) -> None:
    """Near-ties of one tie group: a member almost outside it, or the next score almost inside."""
    def name(i):
        if names is None:
            return i
        return names(i) if callable(names) else names[i]

    first = by_score[start]
    for j in range(start + 1, min(end + 1, len(by_score))):
        gap = lead - values[by_score[j]]
        if _is_near(gap):
            note(what, name(first), name(by_score[j]), gap)


def best(scores: Sequence[float], keys: Sequence | None = None, *, what: str = "best",
         names: Sequence | Callable | None = None, tol: float = TIE_TOL) -> int:
    """Position of the best score (``order``'s first), ties by ``keys``."""
    if not len(scores):
        raise ValueError("best: no scores to choose from")
    return order(scores, keys, k=1, what=what, names=names, tol=tol)[0]


def _noted_against(value: float, threshold: float, what: str, name) -> float:
    """``value`` as a float, noting it when it lies within ``NOISE`` of ``threshold``."""
    value = float(value)
    if abs(value - threshold) <= NOISE:
        note(what, name, f"threshold {threshold:g}", value - threshold)
    return value


def above(value: float, threshold: float, *, what: str = "threshold", name="value") -> bool:
    """``value > threshold``, noting a value within ``NOISE`` of the threshold."""
    return _noted_against(value, threshold, what, name) > threshold


def at_least(value: float, threshold: float, *, what: str = "threshold", name="value") -> bool:
    """``value >= threshold``, noting a value within ``NOISE`` of the threshold."""
    return _noted_against(value, threshold, what, name) >= threshold


def beats(a: float, b: float, *, what: str = "comparison", name="a vs b", tol: float = TIE_TOL) -> bool:
    """Whether ``a`` is larger than ``b`` at the stated precision (scores within ``tol`` are tied, and a
    tie beats nothing): ``a - b >= tol``; a difference within ``NOISE`` of ``tol`` is noted. For a
    stop test that compares two scores (``ties.above`` compares a score with a fixed threshold)."""
    gap = float(a) - float(b)
    if what and _is_near(gap):
        note(what, name, "", gap)
    return gap >= tol


def top_k_rows(matrix, k: int, *, what: str = "") -> "np.ndarray":
    """Per row of ``matrix``, the column positions of its ``k`` best values by ``order`` (ties by
    column), -1 where a row has fewer finite values. Vectorised pre-selection, exact result: a row
    whose first k + 8 values may hide a tie past them is ordered over all its columns."""
    import numpy as np

    matrix = np.asarray(matrix, dtype=np.float64)
    rows, cols = matrix.shape
    k = min(k, cols)
    out = np.full((rows, k), -1, dtype=np.int64)
    if k <= 0:
        return out
    depth = min(cols, k + 8)
    first = np.argsort(-matrix, axis=1, kind="stable")[:, :depth]
    for r in range(rows):
        row = matrix[r]
        cand = first[r]
        if depth < cols and not row[cand[-1]] < row[cand[k - 1]] - TIE_TOL - NOISE:
            cand = np.arange(cols)
        cand = cand[np.isfinite(row[cand])]
        picked = order(row[cand], keys=cand.tolist(), k=k, what=what)
        out[r, :len(picked)] = cand[picked]
    return out
