"""NarrativeQA (Kočiský et al., 2018): free-form questions about books and movie scripts.

Read from a local clone of the official repository (github.com/google-deepmind/narrativeqa)::

    <root>/documents.csv                      document_id, set, kind, story_url, story_file_size,
                                              wiki_url, wiki_title, story_word_count, story_start, story_end
    <root>/qaps.csv                           document_id, set, question, answer1, answer2, (…_tokenized)
    <root>/third_party/wikipedia/summaries.csv  document_id, set, summary, summary_tokenized
    <root>/tmp/<document_id>.content          full stories, written by the repository's download_stories.sh

``source="summaries"`` (default) indexes each story's Wikipedia summary — the files in the
repository itself; ``source="stories"`` indexes the full stories, cut between the
``story_start`` and ``story_end`` markers when both are found (read as Latin-1, as the
download script saves them). ``split``: "train", "valid" (alias "validation", "dev") or "test".

Mapping to rag_lab's model: one ``Document`` per story of the split (title = the Wikipedia
title; kind and URL in ``meta``); each question-answer pair is a ``Question`` with answer =
``answer1`` (both answers in ``meta["answers"]``) and gold document = its story. NarrativeQA
marks no evidence passages, so retrieval is scored at document level only.

Root folder: ``path``, else ``$RAG_LAB_DATA_NARRATIVEQA``, else ``<data cache>/narrativeqa`` (where
``python -m rag_lab download narrativeqa`` puts the three CSV files).
``max_documents`` keeps the first stories of the split and their questions.
"""
from __future__ import annotations

import csv
import os
from pathlib import Path

from ...types import Dataset, Document, Question
from .. import register_loader
from ..cache import dataset_dir, download_hint

ENV_VAR = "RAG_LAB_DATA_NARRATIVEQA"
SPLITS = {"train": "train", "valid": "valid", "validation": "valid", "dev": "valid", "test": "test"}
REPO = "https://github.com/google-deepmind/narrativeqa"
SOURCES = ("summaries", "stories")


def _root(path) -> Path:
    return Path(path) if path is not None else dataset_dir("narrativeqa", ENV_VAR)


def _read_csv(file: Path, required: tuple[str, ...], root: Path) -> list[dict]:
    if not file.is_file():
        raise FileNotFoundError(
            f"NarrativeQA not found: expected {file}. {download_hint('narrativeqa')}; or clone or "
            f"download {REPO} (the repository holds "
            f"documents.csv, qaps.csv and third_party/wikipedia/summaries.csv) into {root}/, or set {ENV_VAR} "
            f"to that folder, or pass path=...; for full stories also run its download_stories.sh there "
            f"(it writes tmp/<document_id>.content).")
    with file.open(encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        missing = [c for c in required if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"{file}: missing column(s) {missing}; expected the NarrativeQA CSV header")
        return list(reader)


def story_text(root: Path, row: dict) -> str:
    """A full story from tmp/<id>.content, cut to its start and end markers when both are present."""
    file = root / "tmp" / f"{row['document_id']}.content"
    if not file.is_file():
        raise FileNotFoundError(f"NarrativeQA story {row['document_id']} not found: expected {file}. Run "
                                f"download_stories.sh from {REPO} inside {root}/ (it fills tmp/), or use "
                                f"source='summaries'.")
    text = file.read_text(encoding="latin-1")
    start_marker, end_marker = (row.get("story_start") or "").strip(), (row.get("story_end") or "").strip()
    start = text.find(start_marker) if start_marker else -1
    end = text.rfind(end_marker) if end_marker else -1
    if start >= 0 and end >= start:
        text = text[start:end + len(end_marker)]
    return text.strip()


@register_loader("narrativeqa", "NarrativeQA (Kočiský et al. 2018): questions on stories, over their Wikipedia "
                                "summaries or full texts (local clone of the official repository)")
def load_narrativeqa(path: str | os.PathLike | None = None, split: str = "valid", source: str = "summaries",
                     max_documents: int | None = None) -> Dataset:
    if split not in SPLITS:
        raise ValueError(f"NarrativeQA split must be one of {sorted(SPLITS)}, got {split!r}")
    if source not in SOURCES:
        raise ValueError(f"NarrativeQA source must be one of {SOURCES}, got {source!r}")
    split = SPLITS[split]
    root = _root(path)
    docs = [r for r in _read_csv(root / "documents.csv", ("document_id", "set", "kind", "wiki_title"), root)
            if r["set"] == split]
    if max_documents is not None:
        docs = docs[:max_documents]
    keep = {r["document_id"] for r in docs}
    summaries = {}
    if source == "summaries":
        summaries = {r["document_id"]: r["summary"] for r in
                     _read_csv(root / "third_party" / "wikipedia" / "summaries.csv", ("document_id", "set", "summary"),
                               root) if r["document_id"] in keep}
    documents = []
    for row in docs:
        doc_id = row["document_id"]
        if source == "summaries":
            if doc_id not in summaries:
                raise ValueError(f"{root / 'third_party/wikipedia/summaries.csv'}: no summary for document {doc_id}")
            text = summaries[doc_id].strip()
        else:
            text = story_text(root, row)
        documents.append(Document(doc_id, text, row["wiki_title"],
                                  meta={"kind": row["kind"], "story_url": row.get("story_url"), "source": source}))
    questions, counts = [], {}
    for row in _read_csv(root / "qaps.csv", ("document_id", "set", "question", "answer1", "answer2"), root):
        doc_id = row["document_id"]
        if row["set"] != split or doc_id not in keep:
            continue
        n = counts[doc_id] = counts.get(doc_id, -1) + 1
        questions.append(Question(id=f"{doc_id}-q{n}", question=row["question"].strip(), answer=row["answer1"].strip(),
                                  gold_doc_ids=[doc_id], meta={"answers": [row["answer1"].strip(),
                                                                            row["answer2"].strip()]}))
    return Dataset(f"narrativeqa-{split}-{source}", documents, questions, {"source": str(root)})
