"""FAISS flat inner-product index over normalised vectors (inner product = cosine), with save/load."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

import numpy as np

from .atomic import atomic_path, write_text


class VectorIndex:
    """Exact cosine search; row ``i`` of the index belongs to ``ids[i]``."""

    def __init__(self, dim: int):
        import faiss

        self.dim = dim
        self.index = faiss.IndexFlatIP(dim)
        self.ids: list[str] = []

    def __len__(self) -> int:
        return len(self.ids)

    def add(self, vectors: np.ndarray, ids: Sequence[str]) -> "VectorIndex":
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[1] != self.dim:
            raise ValueError(f"vectors must have shape (n, {self.dim}), got {vectors.shape}")
        if len(ids) != len(vectors):
            raise ValueError(f"got {len(vectors)} vectors but {len(ids)} ids")
        self.index.add(vectors)
        self.ids.extend(ids)
        return self

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Scores and row numbers, each (n_queries, k'), k' = min(k, len); best first."""
        queries = np.ascontiguousarray(np.atleast_2d(queries), dtype=np.float32)
        k = min(k, len(self))
        if k <= 0:
            return np.zeros((len(queries), 0), np.float32), np.zeros((len(queries), 0), np.int64)
        return self.index.search(queries, k)

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
    def load(cls, folder: str | Path) -> "VectorIndex":
        import faiss

        folder = Path(folder)
        missing = [f for f in ("index.faiss", "ids.json") if not (folder / f).exists()]
        if missing:
            raise FileNotFoundError(f"{folder} is not a saved index: missing {', '.join(missing)} "
                                    "(write one with VectorIndex.save; an interrupted save leaves no ids.json)")
        index = faiss.read_index(str(folder / "index.faiss"))
        out = cls(index.d)
        out.index = index
        out.ids = json.loads((folder / "ids.json").read_text(encoding="utf-8"))
        if len(out.ids) != index.ntotal:
            raise ValueError(f"{folder}: index holds {index.ntotal} vectors but ids.json lists {len(out.ids)}")
        return out
