"""FAISS inner-product index over normalised vectors (inner product = cosine), with save/load.

Small indexes are searched exactly (``IndexFlatIP``); past ``IndexSettings.flat_max`` vectors
the index turns approximate (any ``faiss.index_factory`` string, HNSW by default), because one
exact query reads every stored vector: about 5-8 ms per 100,000 vectors on this project's
2-core machine, so ~100 ms at a million (docs/performance.md has the measurements). The
approximate index is FAISS's own; only the switch between the two is written here.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from ..caching.atomic import atomic_path, write_text
from .ties import NOISE, TIE_TOL, order

TIE_SLACK = 8      # extra neighbours fetched so that scores tied with the k-th are seen

INDEX_KINDS = ("auto", "flat", "ann")


@dataclass(frozen=True)
class IndexSettings:
    """How a ``VectorIndex`` searches.

    ``kind``: "flat" always exact, "ann" always approximate, "auto" exact up to ``flat_max``
    vectors and approximate above. ``flat_max`` = 200,000: there one exact query costs
    ~10-15 ms here (still well inside the 50 ms query budget of benchmarks/run.py) and results
    stay identical to brute force for every shipped data set and any corpus of a few thousand
    documents; above it flat latency grows linearly (70-85 ms at 1M) while HNSW stays at a few ms.
    ``factory``/``build``/``search``: the approximate index as a ``faiss.index_factory``
    string and its ``faiss.ParameterSpace`` settings at build and at query time: HNSW with 32
    links a node, efConstruction 80, efSearch 1024, the smallest efSearch measured to give
    recall@10 >= 0.95 against flat at 1M synthetic windows (0.98 at ~5 ms a query; 256 gave
    0.89, 512 gave 0.95; docs/performance.md). An IVF factory ("IVF1024,Flat" with
    "nprobe=64") works too, trained on the vectors present when the index turns approximate,
    but reached only 0.90 there.
    """

    kind: str = "auto"
    flat_max: int = 200_000
    factory: str = "HNSW32"
    build: str = "efConstruction=80"
    search: str = "efSearch=1024"

    def __post_init__(self):
        if self.kind not in INDEX_KINDS:
            raise ValueError(f"IndexSettings.kind must be one of {INDEX_KINDS}, got {self.kind!r}")
        if not isinstance(self.flat_max, int) or self.flat_max < 0:
            raise ValueError(f"IndexSettings.flat_max must be an integer >= 0, got {self.flat_max!r}")

    def approximate_at(self, n: int) -> bool:
        """Whether an index of ``n`` vectors is approximate under these settings."""
        return self.kind == "ann" or (self.kind == "auto" and n > self.flat_max)


def approximate_index(vectors: np.ndarray, settings: IndexSettings):
    """A FAISS index built from ``settings.factory`` (inner product) holding ``vectors``."""
    import faiss

    index = faiss.index_factory(vectors.shape[1], settings.factory, faiss.METRIC_INNER_PRODUCT)
    space = faiss.ParameterSpace()
    if settings.build:
        space.set_index_parameters(index, settings.build)
    if not index.is_trained:
        index.train(vectors)
    index.add(vectors)
    if settings.search:
        space.set_index_parameters(index, settings.search)
    return index


def recall_at_k(found: np.ndarray, exact: np.ndarray) -> float:
    """Mean share of each row's exact neighbours (``exact``, rows x k) that ``found`` also holds
    (row numbers; -1 marks an empty slot and never counts)."""
    found, exact = np.atleast_2d(found), np.atleast_2d(exact)
    if found.shape[0] != exact.shape[0]:
        raise ValueError(f"found has {found.shape[0]} rows but exact has {exact.shape[0]}")
    hits = total = 0
    for f, e in zip(found, exact):
        e = set(int(x) for x in e if x >= 0)
        hits += len(e & set(int(x) for x in f if x >= 0))
        total += len(e)
    return hits / total if total else 1.0


class VectorIndex:
    """Cosine search; row ``i`` of the index belongs to ``ids[i]``. Exact until ``settings``
    say otherwise (see ``IndexSettings``); ``exact`` tells which it is now."""

    def __init__(self, dim: int, settings: IndexSettings | None = None):
        import faiss

        self.dim = dim
        self.settings = settings or IndexSettings()
        self.index = faiss.IndexFlatIP(dim)
        self.ids: list[str] = []

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def exact(self) -> bool:
        import faiss

        return isinstance(self.index, faiss.IndexFlat)

    def add(self, vectors: np.ndarray, ids: Sequence[str]) -> "VectorIndex":
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[1] != self.dim:
            raise ValueError(f"vectors must have shape (n, {self.dim}), got {vectors.shape}")
        if len(ids) != len(vectors):
            raise ValueError(f"got {len(vectors)} vectors but {len(ids)} ids")
        if self.exact and self.settings.approximate_at(len(self) + len(vectors)):
            held = self.index.reconstruct_n(0, self.index.ntotal) if len(self) else np.empty((0, self.dim), np.float32)
            self.index = approximate_index(np.concatenate([held, vectors]), self.settings)
        else:
            self.index.add(vectors)
        self.ids.extend(ids)
        return self

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Scores and row numbers, each (n_queries, k'), best first; k' = min(k, len) when exact.
        Scores within ``ties.TIE_TOL`` of each other count as equal and are ordered by row, so the
        same vectors give the same list on every CPU (near-ties are noted: core/ties.py).

        An approximate index can find fewer than k (faiss marks the empty slots with row -1):
        columns empty for every query are cut off, so a single query never sees -1; with several
        queries a row may still end in -1 slots where another row found more."""
        queries = np.ascontiguousarray(np.atleast_2d(queries), dtype=np.float32)
        k = min(k, len(self))
        if k <= 0:
            return np.zeros((len(queries), 0), np.float32), np.zeros((len(queries), 0), np.int64)
        fetch = min(len(self), k + TIE_SLACK)
        while True:
            scores, rows = self.index.search(queries, fetch)
            # fetch more until the last fetched score is clearly below every query's k-th: a score
            # tied with the k-th may sit beyond it in FAISS's order (ties.py: stated precision)
            kth = scores[:, k - 1]
            if fetch >= len(self) or bool(np.all((rows[:, -1] < 0) | (scores[:, -1] < kth - TIE_TOL - NOISE))):
                break
            fetch = min(len(self), fetch * 2)
        scores, rows = self._tie_ordered(scores, rows, k)
        if not self.exact:
            filled = int((rows >= 0).sum(axis=1).max())
            scores, rows = scores[:, :filled], rows[:, :filled]
        return scores, rows

    def _tie_ordered(self, scores: np.ndarray, rows: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Each query's first k, ordered by score at ``ties.TIE_TOL`` and then by row (insertion order)."""
        out_scores = np.full((len(scores), k), -np.inf, dtype=np.float32)
        out_rows = np.full((len(scores), k), -1, dtype=np.int64)
        for q, (s, r) in enumerate(zip(scores, rows)):
            found = r >= 0
            s, r = s[found], r[found]
            picked = order(s, keys=r.tolist(), k=k, what="vector search", names=lambda i, r=r: self.ids[r[i]],
                           fetch=True)        # notes stop at the depth the result reads (ties.reading)
            out_scores[q, :len(picked)], out_rows[q, :len(picked)] = s[picked], r[picked]
        return out_scores, out_rows

    def save(self, folder: str | Path) -> Path:
        """``index.faiss`` and ``ids.json``, each atomically; ``ids.json`` is removed first and written
        last, so an interrupted save never pairs new vectors with old ids."""
        import faiss

        folder = Path(folder)
        (folder / "ids.json").unlink(missing_ok=True)
        with atomic_path(folder / "index.faiss") as tmp:
            faiss.write_index(self.index, str(tmp))
        write_text(folder / "ids.json", json.dumps(self.ids))
        return folder

    @classmethod
    def load(cls, folder: str | Path, settings: IndexSettings | None = None) -> "VectorIndex":
        """The saved index as it was (flat or approximate, with its search parameters);
        ``settings`` govern what later ``add`` calls do."""
        import faiss

        folder = Path(folder)
        missing = [f for f in ("index.faiss", "ids.json") if not (folder / f).exists()]
        if missing:
            raise FileNotFoundError(f"{folder} is not a saved index: missing {', '.join(missing)} "
                                    "(write one with VectorIndex.save; an interrupted save leaves no ids.json)")
        index = faiss.read_index(str(folder / "index.faiss"))
        out = cls(index.d, settings)
        out.index = index
        out.ids = json.loads((folder / "ids.json").read_text(encoding="utf-8"))
        if len(out.ids) != index.ntotal:
            raise ValueError(f"{folder}: index holds {index.ntotal} vectors but ids.json lists {len(out.ids)}")
        return out
