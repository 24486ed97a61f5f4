"""A stand-in sentence-transformers model and the cache writers the two-process test starts.

The fake model needs no weights: a text's vector is a unit vector drawn from a generator seeded
by sha256(salt, text), so a test knows every right vector and two "models" (salts) disagree.
Kept apart from the test module so a spawned process imports only this.
"""
from __future__ import annotations

import hashlib
import random
from pathlib import Path

import numpy as np

DIM = 8


def fake_vector(salt: str, text: str, dim: int = DIM) -> np.ndarray:
    seed = int.from_bytes(hashlib.sha256(f"{salt}\0{text}".encode()).digest()[:8], "little")
    v = np.random.default_rng(seed).standard_normal(dim).astype(np.float32)
    return v / np.linalg.norm(v)


class FakeModel:
    """Just what ``Embedder`` calls on a SentenceTransformer. ``interrupt_after``: raise
    KeyboardInterrupt on that call (Ctrl-C in the middle of an encoding run)."""

    def __init__(self, salt: str = "v1", dim: int = DIM, interrupt_after: int | None = None):
        self.salt, self.dim, self.interrupt_after = salt, dim, interrupt_after
        self.calls = 0
        self.texts = 0

    def encode(self, texts, batch_size=32, convert_to_numpy=True, normalize_embeddings=True, show_progress_bar=False):
        self.calls += 1
        if self.interrupt_after is not None and self.calls > self.interrupt_after:
            raise KeyboardInterrupt
        self.texts += len(texts)
        return np.stack([fake_vector(self.salt, t, self.dim) for t in texts])

    def get_embedding_dimension(self) -> int:
        return self.dim


def make_model_folder(folder: Path, weights: bytes = b"weights-1" * 1000) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text('{"hidden_size": 8}', encoding="utf-8")
    (folder / "model.safetensors").write_bytes(weights)
    return folder


def fake_embedder(model_folder: Path, cache_dir: Path, salt: str = "v1", **model_kw):
    from rag_lab.core.embedding import Embedder

    embedder = Embedder(model=str(model_folder), cache_dir=cache_dir)
    embedder._model = FakeModel(salt, **model_kw)
    return embedder


# -- the two-process writers -------------------------------------------------------------------------

def texts_for(worker: int, n: int = 200) -> list[str]:
    """``n`` texts both workers write and ``n`` of this worker's own."""
    return [f"shared text {i}" for i in range(n)] + [f"worker {worker} text {i}" for i in range(n)]


def llm_rows_for(worker: int, n: int = 200) -> list[tuple[str, str]]:
    return [(f"shared-{i}", f"reply to shared {i}") for i in range(n)] + \
           [(f"w{worker}-{i}", f"reply {worker} {i}") for i in range(n)]


CREATION_RACES = 5


def write_caches(worker: int, model_folder: str, cache_dir: str, barrier) -> None:
    """Both workers create fresh caches at the same moment (``CREATION_RACES`` times, one row
    each), then make many small writes to one embedding cache and one LLM cache, with reads."""
    from rag_lab.reasoning.llm_cache import CachedReply, LLMCache

    for race in range(CREATION_RACES):
        barrier.wait(timeout=60)
        folder = Path(cache_dir) / f"race{race}"
        fake_embedder(Path(model_folder), folder).encode([f"race text {worker}"])
        LLMCache(folder).put(f"race-{worker}", "fake-model", CachedReply("r", 1, 1))
    rng = random.Random(worker)
    texts, rows = texts_for(worker), llm_rows_for(worker)
    rng.shuffle(texts)
    rng.shuffle(rows)
    barrier.wait(timeout=60)
    embedder = fake_embedder(Path(model_folder), Path(cache_dir))
    llm = LLMCache(cache_dir)
    for start in range(0, len(texts), 20):
        embedder.encode(texts[start:start + 20])
        for key, reply in rows[start:start + 20]:
            llm.put(key, "fake-model", CachedReply(reply, 3, 4))
            llm.get(rows[rng.randrange(len(rows))][0])
    llm.close()
    embedder.cache.close()
