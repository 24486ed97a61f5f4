"""QuALITY (Pang et al., 2022): multiple-choice questions over long articles.

Read from a local copy of the official release (v1.0.1), JSON Lines, one file per split::

    <root>/QuALITY.v1.0.1.htmlstripped.train   (…dev, …test; the HTML-stripped variant)

Each line is one article with one writer's question set: ``article_id``, ``set_unique_id``,
``title``, ``author``, ``article`` and ``questions`` (each ``question``, four ``options``,
``gold_label`` — 1-based, absent in the test split — ``writer_label``, ``question_unique_id``,
``difficult``). The same article appears on several lines (one per question set).

Mapping to rag_lab's model: one ``Document`` per distinct ``article_id`` (its first line's
text); every question of every line is a ``Question`` whose answer is the gold option's text
(None without a gold label), gold document = the article; the options, gold label and
difficulty stay in ``meta``. QuALITY marks no evidence passages, so there are no gold
contexts: retrieval is scored at document level only.

Root folder: ``path``, else ``$RAG_LAB_DATA_QUALITY``, else ``<data cache>/quality`` (where
``python -m rag_lab download quality`` unpacks the release); ``path`` may also name the split file
itself. ``split``: "train", "dev" (alias "validation") or "test".
``max_documents`` keeps the first distinct articles and their questions.
"""
from __future__ import annotations

import os
from pathlib import Path

from ...io import read_jsonl
from ...types import Dataset, Document, Question
from .. import register_loader
from ..cache import dataset_dir, download_hint

ENV_VAR = "RAG_LAB_DATA_QUALITY"
SPLITS = {"train": "train", "dev": "dev", "validation": "dev", "test": "test"}
DOWNLOAD = "https://github.com/nyu-mll/quality/raw/main/data/v1.0.1/QuALITY.v1.0.1.zip"


def _locate(path: str | os.PathLike | None, split: str) -> Path:
    if split not in SPLITS:
        raise ValueError(f"QuALITY split must be one of {sorted(SPLITS)}, got {split!r}")
    if path is not None and Path(path).is_file():
        return Path(path)
    root = Path(path) if path is not None else dataset_dir("quality", ENV_VAR)
    file = root / f"QuALITY.v1.0.1.htmlstripped.{SPLITS[split]}"
    if not file.is_file():
        raise FileNotFoundError(
            f"QuALITY {split} split not found: expected {file}. {download_hint('quality')}; or "
            f"download {DOWNLOAD}, unzip it and put "
            f"QuALITY.v1.0.1.htmlstripped.{SPLITS[split]} into {root}/ (or set {ENV_VAR} to that folder, "
            f"or pass path=...).")
    return file


def _lines(file: Path):
    for n, row in read_jsonl(file):
        for key in ("article_id", "article", "questions"):
            if key not in row:
                raise ValueError(f"{file}:{n}: missing field {key!r} (expected a QuALITY article line)")
        yield n, row


def _question(row: dict, i: int, q: dict, where: str) -> Question:
    options = q.get("options") or []
    gold = q.get("gold_label")
    if gold is not None and not (isinstance(gold, int) and 1 <= gold <= len(options)):
        raise ValueError(f"{where}: question {i}: gold_label must be 1..{len(options)}, got {gold!r}")
    qid = q.get("question_unique_id") or f"{row.get('set_unique_id', row['article_id'])}_{i}"
    return Question(id=str(qid), question=" ".join(str(q.get("question", "")).split()),
                    answer=options[gold - 1] if gold else None, gold_doc_ids=[str(row["article_id"])],
                    meta={"options": options, "gold_label": gold, "difficult": q.get("difficult"),
                          "set_unique_id": row.get("set_unique_id")})


@register_loader("quality", "QuALITY (Pang et al. 2022): multiple-choice questions on long articles "
                            "(local copy of the v1.0.1 JSON Lines release)")
def load_quality(path: str | os.PathLike | None = None, split: str = "dev", max_documents: int | None = None) -> Dataset:
    file = _locate(path, split)
    documents: dict[str, Document] = {}
    questions: list[Question] = []
    for n, row in _lines(file):
        doc_id = str(row["article_id"])
        if doc_id not in documents:
            if max_documents is not None and len(documents) >= max_documents:
                continue
            documents[doc_id] = Document(doc_id, row["article"], str(row.get("title", "")),
                                         meta={"author": row.get("author"), "source": "quality"})
        questions += [_question(row, i, q, f"{file}:{n}") for i, q in enumerate(row["questions"])]
    return Dataset(f"quality-{SPLITS[split]}", list(documents.values()), questions, {"source": str(file)})
