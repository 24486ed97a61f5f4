"""The generic on-disk form of a dataset: ``documents.jsonl`` + ``questions.jsonl``.

Reading validates every line and says which file, which line, which field and
what was expected. A folder may instead hold plain ``*.txt`` files (one document
each: id = file stem, title = first line); ``questions.jsonl`` is optional.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable

from .atomic import write_text
from .types import SECTION_KINDS, Dataset, Document, Question, Section


class DataFormatError(ValueError):
    """A dataset file does not have the expected shape."""


def _where(path: Path, line_no: int | None) -> str:
    return f"{path}:{line_no}" if line_no else str(path)


def _read_utf8(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as e:
        raise DataFormatError(f"{path}: not UTF-8 text (byte {e.start}: {e.reason}); re-save the file as UTF-8") from None


def read_jsonl(path: Path) -> Iterable[tuple[int, dict]]:
    """(line number, object) for each non-blank line; errors name the file, line and problem."""
    for i, line in enumerate(_read_utf8(path).splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise DataFormatError(f"{_where(path, i)}: invalid JSON ({e.msg} at column {e.colno})") from None
        if not isinstance(obj, dict):
            raise DataFormatError(f"{_where(path, i)}: expected a JSON object, got {type(obj).__name__}")
        yield i, obj


def _field(obj: dict, name: str, kind, where: str, required: bool = True, default=None):
    if name not in obj or obj[name] is None:
        if required:
            raise DataFormatError(f"{where}: missing field {name!r}")
        return default
    value = obj[name]
    if kind is int and isinstance(value, bool) or not isinstance(value, kind):
        expected = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise DataFormatError(f"{where}: field {name!r} must be {expected}, got {type(value).__name__}")
    return value


def _str_list(obj: dict, name: str, where: str) -> list[str]:
    value = _field(obj, name, list, where, required=False, default=[])
    if not all(isinstance(v, str) for v in value):
        raise DataFormatError(f"{where}: field {name!r} must be a list of strings")
    return list(value)


def document_from_dict(obj: dict, where: str = "<dict>") -> Document:
    doc_id = _field(obj, "id", str, where)
    if not doc_id.strip():
        raise DataFormatError(f"{where}: field 'id' is empty")
    text = _field(obj, "text", str, where)
    if not text.strip():
        raise DataFormatError(f"{where}: document {doc_id!r} has no text (field 'text' is empty)")
    sections = []
    for j, s in enumerate(_field(obj, "sections", list, where, required=False, default=[])):
        sw = f"{where} sections[{j}]"
        if not isinstance(s, dict):
            raise DataFormatError(f"{sw}: expected an object")
        kind = _field(s, "kind", str, sw, required=False, default="section")
        if kind not in SECTION_KINDS:
            raise DataFormatError(f"{sw}: field 'kind' must be one of {SECTION_KINDS}, got {kind!r}")
        start, end = _field(s, "start", int, sw), _field(s, "end", int, sw)
        if not (0 <= start <= end <= len(text)):
            raise DataFormatError(f"{sw}: need 0 <= start <= end <= len(text)={len(text)}, got start={start} end={end}")
        sections.append(Section(id=_field(s, "id", str, sw), title=_field(s, "title", str, sw, required=False, default=""),
                                kind=kind, start=start, end=end, level=_field(s, "level", int, sw, required=False, default=1)))
    return Document(id=doc_id, text=text, title=_field(obj, "title", str, where, required=False, default=""),
                    sections=sections, meta=_field(obj, "meta", dict, where, required=False, default={}))


def question_from_dict(obj: dict, where: str = "<dict>") -> Question:
    return Question(
        id=_field(obj, "id", str, where),
        question=_field(obj, "question", str, where),
        answer=_field(obj, "answer", str, where, required=False),
        gold_doc_ids=_str_list(obj, "gold_doc_ids", where),
        gold_contexts=_str_list(obj, "gold_contexts", where),
        gold_section_ids=_str_list(obj, "gold_section_ids", where),
        meta=_field(obj, "meta", dict, where, required=False, default={}),
    )


def _unique(items, kind: str, path: Path):
    seen: dict[str, int] = {}
    for line_no, item in items:
        if item.id in seen:
            raise DataFormatError(f"{_where(path, line_no)}: duplicate {kind} id {item.id!r} (first on line {seen[item.id]})")
        seen[item.id] = line_no


def read_documents(path: str | Path) -> list[Document]:
    path = Path(path)
    docs = [(i, document_from_dict(o, _where(path, i))) for i, o in read_jsonl(path)]
    if not docs:
        raise DataFormatError(f"{path}: no documents (the file is empty)")
    _unique(docs, "document", path)
    return [d for _, d in docs]


def read_questions(path: str | Path, documents: list[Document] | None = None) -> list[Question]:
    path = Path(path)
    qs = [(i, question_from_dict(o, _where(path, i))) for i, o in read_jsonl(path)]
    _unique(qs, "question", path)
    if documents is not None:
        known = {d.id for d in documents}
        for i, q in qs:
            missing = [g for g in q.gold_doc_ids if g not in known]
            if missing:
                raise DataFormatError(f"{_where(path, i)}: question {q.id!r} names gold_doc_ids {missing} not in documents")
    return [q for _, q in qs]


def read_text_folder(folder: Path) -> list[Document]:
    docs = []
    for p in sorted(folder.glob("*.txt")):
        text = _read_utf8(p)
        if not text.strip():
            raise DataFormatError(f"{p}: document {p.stem!r} has no text (the file is empty)")
        docs.append(Document(id=p.stem, text=text, title=text.strip().splitlines()[0].strip()))
    return docs


def read_dataset(folder: str | Path, name: str | None = None) -> Dataset:
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"dataset folder {folder} does not exist")
    if (folder / "documents.jsonl").exists():
        documents = read_documents(folder / "documents.jsonl")
    else:
        documents = read_text_folder(folder)
        if not documents:
            raise DataFormatError(f"{folder}: expected documents.jsonl or *.txt files, found neither")
    qpath = folder / "questions.jsonl"
    questions = read_questions(qpath, documents) if qpath.exists() else []
    return Dataset(name or folder.name, documents, questions, {"path": str(folder)})


def document_to_dict(d: Document) -> dict[str, Any]:
    out: dict[str, Any] = {"id": d.id, "title": d.title, "text": d.text}
    if d.sections:
        out["sections"] = [{"id": s.id, "title": s.title, "kind": s.kind, "start": s.start, "end": s.end,
                            "level": s.level} for s in d.sections]
    if d.meta:
        out["meta"] = d.meta
    return out


def question_to_dict(q: Question) -> dict[str, Any]:
    out: dict[str, Any] = {"id": q.id, "question": q.question}
    for key in ("answer", "gold_doc_ids", "gold_contexts", "gold_section_ids", "meta"):
        value = getattr(q, key)
        if value:
            out[key] = value
    return out


def _jsonl(rows) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def write_dataset(dataset: Dataset, folder: str | Path) -> Path:
    """Write the generic form (each file atomically)."""
    folder = Path(folder)
    write_text(folder / "documents.jsonl", _jsonl(document_to_dict(d) for d in dataset.documents))
    write_text(folder / "questions.jsonl", _jsonl(question_to_dict(q) for q in dataset.questions))
    return folder
