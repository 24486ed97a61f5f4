"""ONNX Runtime as the sentence encoder: the shipped model exported once, run in fp32 or int8.

Why own code and not sentence-transformers' ``backend="onnx"``: that path exports through
``optimum-onnx``, and every release of it requires ``transformers<4.58`` while rag_lab pins
transformers 5.23 (pip reports the conflict). So the transformer of the model folder is exported
here with ``torch.onnx.export`` (TorchScript exporter, opset 17, batch and sequence axes dynamic,
output ``last_hidden_state``) and quantised with ONNX Runtime's ``quantize_dynamic`` (int8
weights in a 7-bit range so every CPU computes the same integers, activations quantised on the
fly). Tokenisation is the model's own tokenizer with its ``max_seq_length``; pooling and normalisation follow the folder's ``modules.json`` (only the
Transformer -> mean Pooling -> Normalize pipeline of MiniLM-style models is supported, anything
else is refused by name), so the vectors are the sentence-transformers ones up to float rounding.

The export is made on first use and kept under ``<cache>/onnx/<model fingerprint>/``
(``model.onnx``, ``model.int8.onnx``), each written atomically with a JSON record of its size and
sha256 beside it. A file that does not match its record (truncated, overwritten, record
missing) is exported again with a warning. Two processes exporting at once take turns
on a lock file in that folder.
"""
from __future__ import annotations

import json
import logging
import os
import warnings
from pathlib import Path
from typing import Sequence

import numpy as np

from ..caching.atomic import atomic_path, sha256_file, write_text
from ..caching.locked_json import locked
from .environment import env_number

log = logging.getLogger(__name__)

BACKENDS = ("torch", "onnx", "onnx-int8")
BACKEND_ENV = "RAG_LAB_EMBED_BACKEND"
# The default is the fastest backend whose MRR stays within 0.005 of torch fp32 on every shipped
# data set (measured by benchmarks/encoder_backends.py; numbers in docs/performance.md, "Encoder").
# That run picks "onnx" (identical MRR and Recall@5 to torch on every method and shipped data set).
DEFAULT_BACKEND = "onnx"
# Threads ONNX Runtime may use per process; unset: its default (one per core). Several processes
# sharing the cores (the test suite on two workers) set 1, so no two thread pools spin against
# each other. Vectors do not depend on it beyond the last bits the ties rule absorbs (issue 34).
THREADS_ENV = "RAG_LAB_THREADS"
OPSET = 17
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
FILES = {"onnx": "model.onnx", "onnx-int8": "model.int8.onnx"}
PER_CHANNEL = True  # one int8 scale per output channel of each weight matrix: closer to fp32 than one per tensor
# 7-bit weights: CPUs without VNNI (AVX2 only) multiply uint8 activations by int8 weights with an instruction
# that saturates on full 8-bit ranges, so their vectors drifted from fp32 (cosine 0.948 on one test sentence on
# an AVX2 EPYC, > 0.99 on AVX-512 VNNI). ONNX Runtime's reduce_range avoids the overflow: every CPU computes
# the same integers, so int8 vectors no longer depend on the machine.
REDUCE_RANGE = True
QUANTISATION = {"per_channel": PER_CHANNEL, "reduce_range": REDUCE_RANGE}
# What cached vectors of a backend are keyed by (Embedder.model_key): int8 vectors made before reduce_range
# (8-bit, machine-dependent) never mix with the 7-bit ones.
KEY_SUFFIX = {"onnx": "+onnx", "onnx-int8": "+onnx-int8.r7"}


def resolve_backend(backend: str | None = None) -> str:
    """The backend asked for, else ``$RAG_LAB_EMBED_BACKEND``, else the default; an unknown name
    is an error that lists the known ones."""
    name = backend if backend is not None else (os.environ.get(BACKEND_ENV) or DEFAULT_BACKEND)
    source = "backend" if backend is not None else (f"${BACKEND_ENV}" if os.environ.get(BACKEND_ENV) else "default")
    name = str(name).strip().lower()
    if name not in BACKENDS:
        raise ValueError(f"unknown embedding backend {name!r} (from {source}); known backends: {', '.join(BACKENDS)}")
    return name


# -- what the model folder says about pooling -------------------------------------------------------

def pooling_plan(folder: str | os.PathLike) -> dict:
    """Max sequence length and normalisation of a sentence-transformers folder whose modules are
    Transformer -> Pooling (mean tokens) [-> Normalize]; any other pipeline raises ValueError."""
    folder = Path(folder)
    modules_file = folder / "modules.json"
    if not modules_file.exists():
        raise ValueError(f"{folder}: no modules.json; the ONNX backend needs a sentence-transformers model folder")
    modules = [m.get("type", "").rsplit(".", 1)[-1] for m in json.loads(modules_file.read_text(encoding="utf-8"))]
    if modules not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]):
        raise ValueError(f"{modules_file}: modules {modules}; the ONNX backend supports Transformer -> Pooling "
                         "(mean) [-> Normalize] only")
    pooling_path = json.loads(modules_file.read_text(encoding="utf-8"))[1].get("path", "1_Pooling")
    pooling = json.loads((folder / pooling_path / "config.json").read_text(encoding="utf-8"))
    modes = sorted(k for k, v in pooling.items() if k.startswith("pooling_mode") and v is True)
    if modes != ["pooling_mode_mean_tokens"]:
        raise ValueError(f"{folder / pooling_path}: pooling {modes}; the ONNX backend implements mean pooling only")
    bert_config = folder / "sentence_bert_config.json"
    config = json.loads(bert_config.read_text(encoding="utf-8")) if bert_config.exists() else {}
    return {"max_seq_length": config.get("max_seq_length"), "normalize": modules[-1] == "Normalize",
            "dim": int(pooling["word_embedding_dimension"])}


# -- the export, made once and checked on every load ------------------------------------------------

def export_path(cache_dir: str | os.PathLike, fingerprint: str, backend: str) -> Path:
    """Where the export of the model with this fingerprint (``embedding.model_fingerprint``) lives."""
    return Path(cache_dir) / "onnx" / fingerprint[:16] / FILES[backend]


def ensure_export(folder: str | os.PathLike, cache_dir: str | os.PathLike, backend: str, fingerprint: str) -> Path:
    """The ONNX file of ``backend`` for the model in ``folder``, exported (and quantised) on first
    use; a file that does not match the record written beside it is made again. Two processes exporting
    at once take turns on ``.export.lock`` in the export's folder."""
    path = export_path(cache_dir, fingerprint, backend)
    with locked(path.parent / ".export"):
        if _usable(path, QUANTISATION if backend == "onnx-int8" else {}):
            return path
        if backend == "onnx-int8":
            fp32 = path.with_name(FILES["onnx"])
            if not _usable(fp32):
                _export(Path(folder), fp32)
            _quantise(fp32, path)
        else:
            _export(Path(folder), path)
        problem = _check(path)
        if problem is not None:  # pragma: no cover - a fresh export that fails its own check
            raise RuntimeError(f"ONNX export {path} failed its check right after export: {problem}")
        return path


def _record_path(path: Path) -> Path:
    return path.with_name(path.name + ".json")


def _usable(path: Path, settings: dict | None = None) -> bool:
    """Whether ``path`` passes ``_check``; an export that exists but fails it is logged (it is made again)."""
    problem = _check(path, settings)
    if problem not in (None, "missing"):
        log.warning("ONNX export %s is unusable (%s); exporting it again", path, problem)
    return problem is None


def _check(path: Path, settings: dict | None = None) -> str | None:
    """None when ``path`` matches the record written after its export (and was made with ``settings``),
    else what is wrong."""
    if not path.exists():
        return "missing"
    try:
        record = json.loads(_record_path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        return f"no readable record beside it ({type(e).__name__})"
    size = path.stat().st_size
    if size != record.get("bytes"):
        return f"{size} bytes, its record says {record.get('bytes')}"
    if sha256_file(path) != record.get("sha256"):
        return "content differs from its record (sha256)"
    changed = {k: record.get(k) for k, v in (settings or {}).items() if record.get(k) != v}
    if changed:
        return f"made with other settings ({changed}; now {settings})"
    return None


def _write_record(path: Path, **extra) -> None:
    record = {"bytes": path.stat().st_size, "sha256": sha256_file(path), "opset": OPSET, **extra}
    write_text(_record_path(path), json.dumps(record, indent=1) + "\n")


def _export(folder: Path, path: Path) -> None:
    import torch
    from transformers import AutoModel, AutoTokenizer

    log.info("exporting %s to ONNX (once per model): %s", folder, path)
    _record_path(path).unlink(missing_ok=True)
    model = AutoModel.from_pretrained(str(folder)).eval()
    sample = AutoTokenizer.from_pretrained(str(folder))(["an export sample", "a second, longer sample text"],
                                                         padding=True, return_tensors="pt")
    with atomic_path(path) as tmp, torch.inference_mode(), warnings.catch_warnings():
        # the tracer's notes on this model are expected and harmless here: shapes are dynamic axes, and the
        # export is checked against its record before use; the reader of a notebook has nothing to do
        warnings.filterwarnings("ignore", category=torch.jit.TracerWarning)
        warnings.filterwarnings("ignore", message="Exporting aten::index operator", category=UserWarning)
        warnings.filterwarnings("ignore", message="You are using the legacy TorchScript-based ONNX export",
                                category=DeprecationWarning)   # the legacy exporter is chosen (module docstring)
        torch.onnx.export(_hidden_states(model), tuple(sample[n] for n in INPUTS), str(tmp), input_names=list(INPUTS),
                          output_names=["last_hidden_state"], opset_version=OPSET, dynamo=False,
                          dynamic_axes={n: {0: "batch", 1: "sequence"} for n in (*INPUTS, "last_hidden_state")})
    _write_record(path, source=str(folder), torch=torch.__version__)


def _quantise(fp32: Path, path: Path) -> None:
    import onnxruntime
    from onnxruntime.quantization import QuantType, quantize_dynamic

    log.info("quantising %s to int8 (once per model): %s", fp32, path)
    _record_path(path).unlink(missing_ok=True)
    with atomic_path(path) as tmp:
        quantize_dynamic(str(fp32), str(tmp), weight_type=QuantType.QInt8, **QUANTISATION)
    _write_record(path, source=fp32.name, onnxruntime=onnxruntime.__version__, **QUANTISATION)


def _hidden_states(model):
    import torch

    class HiddenStates(torch.nn.Module):
        """Calls the transformer with keyword arguments (positional calls fail on transformers 5)."""

        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.inner(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state

    return HiddenStates(model)


# -- the encoder ------------------------------------------------------------------------------------

def _threads_from_env() -> int | None:
    """``$RAG_LAB_THREADS`` as a positive count of threads, None when unset or empty."""
    return env_number(THREADS_ENV, int, "a whole number of threads, 1 or more (or unset)")


class OnnxEncoder:
    """What ``Embedder`` calls on a SentenceTransformer (``encode``, ``tokenizer``,
    ``max_seq_length``, ``get_embedding_dimension``), plus ``token_embeddings`` for late chunking."""

    def __init__(self, folder: str | os.PathLike, onnx_path: str | os.PathLike, threads: int | None = None):
        import onnxruntime as ort
        from transformers import AutoTokenizer

        threads = threads or _threads_from_env()

        self.folder, self.onnx_path = Path(folder), Path(onnx_path)
        plan = pooling_plan(self.folder)
        self.tokenizer = AutoTokenizer.from_pretrained(str(self.folder))
        self.max_seq_length = int(plan["max_seq_length"] or self.tokenizer.model_max_length)
        self.normalize, self.dim = plan["normalize"], plan["dim"]
        options = ort.SessionOptions()
        if threads:
            options.intra_op_num_threads = int(threads)
        options.inter_op_num_threads = 1
        self.session = ort.InferenceSession(str(self.onnx_path), options, providers=["CPUExecutionProvider"])

    def get_embedding_dimension(self) -> int:
        return self.dim

    def _hidden(self, enc: dict) -> np.ndarray:
        feed = {n: np.asarray(enc[n], dtype=np.int64) for n in INPUTS}
        return self.session.run(["last_hidden_state"], feed)[0]

    def encode(self, texts: Sequence[str], batch_size: int = 32, convert_to_numpy: bool = True,
               normalize_embeddings: bool = True, show_progress_bar: bool = False) -> np.ndarray:
        """Mean-pooled (over the attention mask) sentence vectors, L2-normalised when the model's
        modules or ``normalize_embeddings`` say so. Texts are batched longest first, as
        sentence-transformers does, so a batch carries little padding."""
        texts = list(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        order = np.argsort([-len(t) for t in texts], kind="stable")
        for start in range(0, len(texts), batch_size):
            rows = order[start:start + batch_size]
            enc = self.tokenizer([texts[i] for i in rows], padding=True, truncation=True,
                                 max_length=self.max_seq_length, return_tensors="np", return_token_type_ids=True)
            hidden = self._hidden(enc)
            mask = enc["attention_mask"][..., None].astype(np.float32)
            pooled = (hidden * mask).sum(axis=1) / np.clip(mask.sum(axis=1), 1e-9, None)
            if self.normalize or normalize_embeddings:
                pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
            out[rows] = pooled
        return out

    def token_embeddings(self, input_ids: Sequence[int]) -> np.ndarray:
        """Last hidden states of one sequence of ids (special tokens included by the caller), (n, d)."""
        ids = np.asarray([list(input_ids)], dtype=np.int64)
        return self._hidden({"input_ids": ids, "attention_mask": np.ones_like(ids),
                             "token_type_ids": np.zeros_like(ids)})[0].astype(np.float32)
