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

Real files: CSVs may start with a byte-order mark; stories come as UTF-8, Windows-1252 or
Latin-1 and the movie scripts as HTML pages (read as text with their line breaks); the markers
are found with any whitespace between their words. A story or summary with no text is left
out with its questions and listed in ``dataset.meta["documents_without_text"]``; so is a story whose
download failed (``python -m rag_lab download narrativeqa --stories SPLIT`` records it in
``tmp/stories.json``).

Root folder: ``path``, else ``$RAG_LAB_DATA_NARRATIVEQA``, else ``<data cache>/narrativeqa`` (where
``python -m rag_lab download narrativeqa`` puts the three CSV files, and ``--stories SPLIT`` the stories).
``max_documents`` keeps the first stories of the split and their questions.
"""
from __future__ import annotations

import csv
import logging
import os
import re
from pathlib import Path

from ...core.types import Dataset, Document, QUESTIONS_TARGET, Question
from .. import register_loader
from ..cache import dataset_dir, download_hint
from ..stories import failed_stories, story_path
from ..text_clean import clean_block, clean_text, html_page_text, looks_like_html, read_text_file

log = logging.getLogger(__name__)

ENV_VAR = "RAG_LAB_DATA_NARRATIVEQA"
SPLITS = {"train": "train", "valid": "valid", "validation": "valid", "dev": "valid", "test": "test"}
REPO = "https://github.com/google-deepmind/narrativeqa"
SOURCES = ("summaries", "stories")


def _read_csv(file: Path, required: tuple[str, ...], root: Path) -> list[dict]:
    if not file.is_file():
        raise FileNotFoundError(
            f"NarrativeQA not found: expected {file}. {download_hint('narrativeqa')}; or clone or "
            f"download {REPO} (the repository holds "
            f"documents.csv, qaps.csv and third_party/wikipedia/summaries.csv) into {root}/, or set {ENV_VAR} "
            f"to that folder, or pass path=...; for full stories also run its download_stories.sh there "
            f"(it writes tmp/<document_id>.content).")
    with file.open(encoding="utf-8-sig", newline="") as f:   # -sig: a byte-order mark is not part of the header
        reader = csv.DictReader(f)
        missing = [c for c in required if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"{file}: missing column(s) {missing}; expected the NarrativeQA CSV header")
        return list(reader)


def _find(text: str, marker: str, last: bool = False) -> tuple[int, int] | None:
    """Span of ``marker`` in ``text`` with any whitespace between its words (first, or last)."""
    words = marker.split()
    if not words:
        return None
    found = list(re.finditer(r"\s+".join(map(re.escape, words)), text))
    if not found:
        return None
    m = found[-1] if last else found[0]
    return m.start(), m.end()


def story_text(root: Path, row: dict) -> str:
    """A full story from tmp/<id>.content, cut to its start and end markers when both are present.

    Files are decoded as UTF-8 when they are, else as Windows-1252/Latin-1 (the download
    script saves what the server sent); a story that is an HTML page (the movie scripts) is
    turned into plain text first, keeping the script's line breaks."""
    file = root / "tmp" / f"{row['document_id']}.content"
    if not file.is_file():
        raise FileNotFoundError(f"NarrativeQA story {row['document_id']} not found: expected {file}. "
                                f"{download_hint('narrativeqa', '--stories ' + row.get('set', 'valid'))} (it fetches "
                                f"the stories from their URLs into {root / 'tmp'}), or run download_stories.sh from "
                                f"{REPO} inside {root}/, or use source='summaries'.")
    text, _ = read_text_file(file)
    if looks_like_html(text):
        text = html_page_text(text, keep_lines=True)
    start = _find(text, row.get("story_start") or "")
    end = _find(text, row.get("story_end") or "", last=True)
    if start and end and end[0] >= start[0]:
        text = text[start[0]:end[1]]
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
    root = Path(path) if path is not None else dataset_dir("narrativeqa", ENV_VAR)
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
    unavailable = failed_stories(root) if source == "stories" else {}
    documents, without_text = [], []
    for row in docs:
        doc_id = row["document_id"]
        if source == "stories" and doc_id in unavailable and not story_path(root, doc_id).is_file():
            without_text.append(doc_id)          # its download failed (recorded in tmp/stories.json)
            continue
        text = clean_block(summaries.get(doc_id)) if source == "summaries" else story_text(root, row)
        if not text:
            without_text.append(doc_id)
            continue
        documents.append(Document(doc_id, text, clean_text(row.get("wiki_title")),
                                  meta={"kind": row.get("kind"), "story_url": row.get("story_url"), "source": source,
                                        QUESTIONS_TARGET: "document"}))
    if without_text:
        log.warning("%s: %d %s with no text left out with their questions: %s", root, len(without_text),
                    "summaries" if source == "summaries" else "stories", without_text)
    keep -= set(without_text)
    questions, counts = [], {}
    for row in _read_csv(root / "qaps.csv", ("document_id", "set", "question", "answer1", "answer2"), root):
        doc_id = row["document_id"]
        if row["set"] != split or doc_id not in keep:
            continue
        n = counts[doc_id] = counts.get(doc_id, -1) + 1
        answers = [clean_text(row["answer1"]), clean_text(row["answer2"])]
        questions.append(Question(id=f"{doc_id}-q{n}", question=clean_text(row["question"]),
                                  answer=answers[0] or answers[1] or None, gold_doc_ids=[doc_id],
                                  meta={"answers": answers}))
    return Dataset(f"narrativeqa-{split}-{source}", documents, questions,
                   {"source": str(root), "documents_without_text": without_text})
