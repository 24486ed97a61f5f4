"""QASPER (Dasigi et al., 2021): questions over NLP papers, answered with evidence paragraphs.

Read from a local copy of the official JSON release (v0.3), one file per split::

    <root>/qasper-train-v0.3.json   <root>/qasper-dev-v0.3.json   <root>/qasper-test-v0.3.json

Each file maps a paper id to ``{title, abstract, full_text: [{section_name, paragraphs: [...]}],
qas: [{question, question_id, answers: [{answer: {unanswerable, extractive_spans, yes_no,
free_form_answer, evidence, highlighted_evidence}, annotation_id, worker_id}], ...}], ...}``.

Mapping to rag_lab's model: a paper is a ``Document`` whose text is the title, "Abstract" and
the abstract, then each section's name and paragraphs, separated by blank lines; every
section is a ``Section`` from its name to its last paragraph (kind "section", or "subsection"
when its name has QASPER's " ::: " nesting; the abstract is section "abstract"). A question's answer is the first
annotation that is not unanswerable: its extractive spans joined by "; ", else its free-form
answer, else "Yes"/"No"; "Unanswerable" when every annotation says so (all annotations are in
``meta["answers"]``). Gold contexts are the evidence paragraphs of all annotations that occur
verbatim in the text (figure and table captions, marked "FLOAT SELECTED", are not part of the
full text and are counted in ``meta["evidence_not_in_text"]``); gold sections are the
sections holding them. ``split``: "train", "dev" (alias "validation") or "test".

Root folder: ``path``, else ``$RAG_LAB_DATA_QASPER``, else ``<data cache>/qasper`` (where
``python -m rag_lab download qasper`` unpacks the release). ``path`` may also name the JSON file
itself. ``max_documents`` keeps the first papers of the file.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from ...types import Dataset, Document, Question, Section
from .. import register_loader
from ..cache import dataset_dir, download_hint

ENV_VAR = "RAG_LAB_DATA_QASPER"
SPLITS = {"train": "train", "dev": "dev", "validation": "dev", "test": "test"}
DOWNLOAD = ("https://qasper-dataset.s3.us-west-2.amazonaws.com/qasper-train-dev-v0.3.tgz (train and dev) or "
            "https://qasper-dataset.s3.us-west-2.amazonaws.com/qasper-test-and-evaluator-v0.3.tgz (test)")
NEST = " ::: "


def split_file(root: Path, split: str) -> Path:
    if split not in SPLITS:
        raise ValueError(f"QASPER split must be one of {sorted(SPLITS)}, got {split!r}")
    return root / f"qasper-{SPLITS[split]}-v0.3.json"


def _locate(path: str | os.PathLike | None, split: str) -> Path:
    if path is not None and Path(path).is_file():
        return Path(path)
    root = Path(path) if path is not None else dataset_dir("qasper", ENV_VAR)
    file = split_file(root, split)
    if not file.is_file():
        raise FileNotFoundError(
            f"QASPER {split} split not found: expected {file}. {download_hint('qasper')}; or download "
            f"{DOWNLOAD}, unpack the .json files into {root}/ (or set {ENV_VAR} to the folder holding them, or "
            f"pass path=...).")
    return file


class _TextBuilder:
    """Appends blocks separated by blank lines and remembers where each block starts and ends."""

    def __init__(self):
        self.parts: list[str] = []
        self.length = 0

    def add(self, block: str) -> tuple[int, int]:
        if self.parts:
            self.parts.append("\n\n")
            self.length += 2
        start = self.length
        self.parts.append(block)
        self.length += len(block)
        return start, self.length

    @property
    def text(self) -> str:
        return "".join(self.parts)


def _clean(text) -> str:
    return " ".join(str(text).split()) if text else ""


def paper_document(paper_id: str, paper: dict) -> Document:
    """The paper's text with its sections and paragraphs as char-offset sections."""
    where = f"QASPER paper {paper_id!r}"
    if not isinstance(paper, dict) or not isinstance(paper.get("full_text", []), list):
        raise ValueError(f"{where}: expected an object with a 'full_text' list of sections")
    builder = _TextBuilder()
    title = _clean(paper.get("title"))
    if title:
        builder.add(title)
    sections: list[Section] = []
    abstract = _clean(paper.get("abstract"))
    if abstract:
        start, _ = builder.add("Abstract")
        _, end = builder.add(abstract)
        sections.append(Section("abstract", "Abstract", "section", start, end, 1))
    for i, sec in enumerate(paper.get("full_text") or []):
        paragraphs = [_clean(p) for p in (sec.get("paragraphs") or []) if _clean(p)]
        if not paragraphs and not _clean(sec.get("section_name")):
            continue                                    # an empty entry (upstream has a few)
        name = _clean(sec.get("section_name")) or f"Section {i + 1}"
        level = name.count(NEST.strip()) + 1
        start, end = builder.add(name)
        for p in paragraphs:
            _, end = builder.add(p)
        sections.append(Section(f"s{i}", name, "section" if level == 1 else "subsection", start, end, level))
    return Document(paper_id, builder.text, title, sections, {"source": "qasper"})


def answer_text(answer: dict) -> str | None:
    """One annotation's answer as text; None when the annotator marked it unanswerable."""
    if answer.get("unanswerable"):
        return None
    spans = [_clean(s) for s in answer.get("extractive_spans") or [] if _clean(s)]
    if spans:
        return "; ".join(spans)
    if _clean(answer.get("free_form_answer")):
        return _clean(answer["free_form_answer"])
    if answer.get("yes_no") is not None:
        return "Yes" if answer["yes_no"] else "No"
    return None


def paper_questions(doc: Document, paper: dict) -> tuple[list[Question], int]:
    """The paper's questions, and how many evidence strings were not found in its text."""
    holders = doc.sections  # flat: QASPER lists subsections as entries of their own, so spans never nest
    out, missing = [], 0
    for n, qa in enumerate(paper.get("qas") or []):
        annotations = [a.get("answer", {}) for a in qa.get("answers") or []]
        texts = [answer_text(a) for a in annotations]
        answer = next((t for t in texts if t), None) or ("Unanswerable" if annotations else None)
        contexts = []
        for a in annotations:
            for ev in a.get("evidence") or []:
                ev = _clean(ev)
                if not ev or ev in contexts:
                    continue
                if ev in doc.text:
                    contexts.append(ev)
                else:
                    missing += 1
        section_ids = []
        for ev in contexts:
            at = doc.text.index(ev)
            holder = next((s.id for s in holders if s.start <= at < s.end), None)
            if holder and holder not in section_ids:
                section_ids.append(holder)
        out.append(Question(id=str(qa.get("question_id") or f"{doc.id}-q{n}"), question=_clean(qa.get("question")),
                            answer=answer, gold_doc_ids=[doc.id], gold_contexts=contexts,
                            gold_section_ids=section_ids,
                            meta={"answers": [t if t is not None else "Unanswerable" for t in texts],
                                  "unanswerable": bool(annotations) and all(t is None for t in texts)}))
    return out, missing


@register_loader("qasper", "QASPER (Dasigi et al. 2021): questions on NLP papers with evidence paragraphs "
                           "(local copy of the v0.3 JSON release)")
def load_qasper(path: str | os.PathLike | None = None, split: str = "dev", max_documents: int | None = None) -> Dataset:
    file = _locate(path, split)
    try:
        papers = json.loads(file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise ValueError(f"{file}: not valid JSON ({e.msg} at line {e.lineno})") from None
    if not isinstance(papers, dict):
        raise ValueError(f"{file}: expected a JSON object mapping paper ids to papers, got {type(papers).__name__}")
    items = list(papers.items())[:max_documents] if max_documents is not None else list(papers.items())
    documents, questions, missing = [], [], 0
    for paper_id, paper in items:
        doc = paper_document(paper_id, paper)
        qs, miss = paper_questions(doc, paper)
        documents.append(doc)
        questions += [q for q in qs if q.question]
        missing += miss
    return Dataset(f"qasper-{SPLITS[split]}", documents, questions,
                   {"source": str(file), "evidence_not_in_text": missing})
