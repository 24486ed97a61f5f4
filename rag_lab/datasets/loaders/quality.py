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
itself — also the raw release (``QuALITY.v1.0.1.dev``, whose articles are
HTML: turned into paragraphs of plain text) or a ``.jsonl`` / ``.parquet`` file of the flattened
Hugging Face copy ``tasksource/QuALITY`` (one question per row). Titles, questions and options
are cleaned of HTML entities and markup; ``gold_label`` may be a digit string; an article with
no text is left out with its questions and listed in ``dataset.meta``. ``split``: "train", "dev" (alias "validation") or "test".
``max_documents`` keeps the first distinct articles and their questions.
"""
from __future__ import annotations

import logging
import os
from pathlib import Path

from ...core.generic_form import read_jsonl
from ...core.types import Dataset, Document, QUESTIONS_TARGET, Question
from .. import register_loader
from ..cache import dataset_dir, download_hint
from ..text_clean import clean_block, clean_text, html_page_text, looks_like_html
from ..upstream_files import parquet_rows

log = logging.getLogger(__name__)

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


def _rows(file: Path):
    """(line number, row) from JSON Lines, or from parquet (row number) for a Hugging Face copy."""
    if file.suffix == ".parquet":
        yield from enumerate(parquet_rows(file), 1)
    else:
        yield from read_jsonl(file)


def _lines(file: Path):
    """Article lines; a row holding one ``question`` (the flattened Hugging Face copy
    ``tasksource/QuALITY``) is read as a line with that one question."""
    for n, row in _rows(file):
        if "questions" not in row and isinstance(row.get("question"), str):
            row = {**row, "questions": [{k: row.get(k) for k in ("question", "options", "gold_label", "writer_label",
                                                                  "question_unique_id", "difficult")}]}
        for key in ("article_id", "article", "questions"):
            if key not in row:
                raise ValueError(f"{file}:{n}: missing field {key!r} (expected a QuALITY article line)")
        yield n, row


def article_text(article) -> str:
    """The article as paragraphs: the raw release holds HTML, the HTML-stripped one plain text."""
    text = "" if article is None else str(article)
    return html_page_text(text) if looks_like_html(text) else clean_block(text)


def _gold(value, n_options: int, where: str, i: int) -> int | None:
    if value is None or value == "" or (isinstance(value, float) and value != value):
        return None
    try:
        gold = int(value)
    except (TypeError, ValueError):
        gold = None
    if gold is None or isinstance(value, bool) or not 1 <= gold <= n_options or float(value) != gold:
        raise ValueError(f"{where}: question {i}: gold_label must be 1..{n_options}, got {value!r}")
    return gold


def _question(row: dict, i: int, q: dict, where: str) -> Question:
    options = [clean_text(o) for o in q.get("options") or []]
    gold = _gold(q.get("gold_label"), len(options), where, i)
    qid = q.get("question_unique_id") or f"{row.get('set_unique_id', row['article_id'])}_{i}"
    return Question(id=str(qid), question=clean_text(q.get("question")),
                    answer=options[gold - 1] if gold else None, gold_doc_ids=[str(row["article_id"])],
                    meta={"options": options, "gold_label": gold, "difficult": q.get("difficult"),
                          "set_unique_id": row.get("set_unique_id")})


@register_loader("quality", "QuALITY (Pang et al. 2022): multiple-choice questions on long articles "
                            "(local copy of the v1.0.1 JSON Lines release)")
def load_quality(path: str | os.PathLike | None = None, split: str = "dev", max_documents: int | None = None) -> Dataset:
    file = _locate(path, split)
    documents: dict[str, Document] = {}
    questions: list[Question] = []
    empty: list[str] = []
    for n, row in _lines(file):
        doc_id = str(row["article_id"])
        if doc_id in empty:
            continue
        if doc_id not in documents:
            if max_documents is not None and len(documents) >= max_documents:
                continue
            text = article_text(row["article"])
            if not text:
                empty.append(doc_id)
                continue
            documents[doc_id] = Document(doc_id, text, clean_text(row.get("title")),
                                         meta={"author": clean_text(row.get("author")) or None, "source": "quality",
                                               QUESTIONS_TARGET: "document"})
        questions += [_question(row, i, q, f"{file}:{n}") for i, q in enumerate(row["questions"] or [])]
    if empty:
        log.warning("%s: %d article(s) with no text left out with their questions: %s", file, len(empty), empty)
    return Dataset(f"quality-{SPLITS[split]}", list(documents.values()), questions,
                   {"source": str(file), "articles_without_text": empty})
