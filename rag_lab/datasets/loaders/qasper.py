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
answer, else "Yes"/"No"; "Unanswerable" when no annotation has an answer and one says so; None
when the annotations are all empty (all annotations are in ``meta["answers"]``, "" for an empty one). Gold contexts are the evidence paragraphs of all annotations that occur
verbatim in the text (figure and table captions, marked "FLOAT SELECTED", are not part of the
full text and are counted in ``meta["evidence_not_in_text"]``); gold sections are the
sections holding them. ``split``: "train", "dev" (alias "validation") or "test".

Root folder: ``path``, else ``$RAG_LAB_DATA_QASPER``, else ``<data cache>/qasper`` (where
``python -m rag_lab download qasper`` unpacks the release). ``path`` may also name the JSON file
itself, or a ``.parquet`` / ``.jsonl`` file of rows of the Hugging Face copy
``allenai/qasper`` (the one the SKETCH paper cites), whose ``full_text``, ``qas`` and ``answers``
are stored column-wise; they are turned into the release's layout first. ``max_documents`` keeps
the first papers of the file. Real files hold null section names and paragraphs, empty
entries and answers with every field empty; all of them are read (text cleaned of HTML
entities and inline markup).
"""
from __future__ import annotations

import os
from pathlib import Path

from ...core.generic_form import read_jsonl
from ...core.types import Dataset, Document, QUESTIONS_TARGET, Question, Section
from .. import register_loader
from ..cache import dataset_dir, download_hint
from ..text_blocks import TextBlocks
from ..text_clean import clean_text
from ..upstream_files import parquet_rows, read_json

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


def _clean(text) -> str:
    return clean_text(text) if text else ""


def _columns(table, where: str) -> list[dict]:
    """Hugging Face's column-wise records ({"a": [..], "b": [..]}) as a list of row dicts."""
    if isinstance(table, list):
        return table
    if not isinstance(table, dict):
        raise ValueError(f"{where}: expected a list of objects or a dict of columns, got {type(table).__name__}")
    n = max((len(v) for v in table.values() if isinstance(v, list)), default=0)
    return [{k: (v[i] if isinstance(v, list) and i < len(v) else None) for k, v in table.items()} for i in range(n)]


def hf_paper(row: dict, where: str = "QASPER row") -> tuple[str, dict]:
    """A row of the Hugging Face copy (``allenai/qasper``: full_text, qas and answers stored column-wise)
    in the layout of the v0.3 JSON release."""
    for key in ("id", "full_text"):
        if key not in row:
            raise ValueError(f"{where}: missing field {key!r} (expected an allenai/qasper row)")
    sections = [{"section_name": s.get("section_name"), "paragraphs": s.get("paragraphs")}
                for s in _columns(row["full_text"], f"{where}: full_text")]
    qas = []
    for qa in _columns(row.get("qas") or [], f"{where}: qas"):
        answers = qa.get("answers") or {}
        annotations = _columns(answers, f"{where}: answers") if isinstance(answers, dict) and "answer" in answers \
            and isinstance(answers["answer"], list) else (answers if isinstance(answers, list) else [answers])
        qas.append({**qa, "answers": [a if "answer" in a else {"answer": a} for a in annotations if a]})
    return str(row["id"]), {**row, "full_text": sections, "qas": qas}


def _read_rows(file: Path) -> dict:
    """Paper id -> paper from a parquet or JSON Lines file of Hugging Face rows."""
    rows = parquet_rows(file) if file.suffix == ".parquet" else [r for _, r in read_jsonl(file)]
    return dict(hf_paper(r, f"{file} row {n}") for n, r in enumerate(rows, 1))


def paper_document(paper_id: str, paper: dict) -> Document:
    """The paper's text with its sections and paragraphs as char-offset sections."""
    where = f"QASPER paper {paper_id!r}"
    if not isinstance(paper, dict) or not isinstance(paper.get("full_text", []), list):
        raise ValueError(f"{where}: expected an object with a 'full_text' list of sections")
    builder = TextBlocks()
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
        sec = sec if isinstance(sec, dict) else {}
        paragraphs = [_clean(p) for p in (sec.get("paragraphs") or []) if _clean(p)]
        if not paragraphs and not _clean(sec.get("section_name")):
            continue                                    # an empty entry (upstream has a few)
        name = _clean(sec.get("section_name")) or f"Section {i + 1}"
        level = name.count(NEST.strip()) + 1
        start, end = builder.add(name)
        for p in paragraphs:
            _, end = builder.add(p)
        sections.append(Section(f"s{i}", name, "section" if level == 1 else "subsection", start, end, level))
    return Document(paper_id, builder.text, title, sections, {"source": "qasper", QUESTIONS_TARGET: "document"})


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
        annotations = [a.get("answer") or {} for a in qa.get("answers") or [] if isinstance(a, dict)]
        texts = [answer_text(a) for a in annotations]
        flagged = [bool(a.get("unanswerable")) for a in annotations]   # an annotation may also be simply empty
        answer = next((t for t in texts if t), None) or ("Unanswerable" if any(flagged) else None)
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
                            meta={"answers": [t if t is not None else ("Unanswerable" if f else "")
                                              for t, f in zip(texts, flagged)],
                                  "unanswerable": bool(annotations) and all(flagged)}))
    return out, missing


@register_loader("qasper", "QASPER (Dasigi et al. 2021): questions on NLP papers with evidence paragraphs "
                           "(local copy of the v0.3 JSON release)")
def load_qasper(path: str | os.PathLike | None = None, split: str = "dev", max_documents: int | None = None) -> Dataset:
    file = _locate(path, split)
    papers = _read_rows(file) if file.suffix in (".parquet", ".jsonl") else read_json(file)
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
