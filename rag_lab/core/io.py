"""The generic on-disk form of a dataset: ``documents.jsonl`` + ``questions.jsonl``.

Reading validates every line and says which file, which line, which field and
what was expected. A folder may instead hold plain ``*.txt`` files (one document
each: id = file stem, title = first line); ``questions.jsonl`` is optional.
"""
from __future__ import annotations

import codecs
import json
import logging
import re
from pathlib import Path
from typing import Any, Iterable, Iterator

from ..caching.atomic import write_text
from .types import SECTION_KINDS, Dataset, Document, Question, Section


log = logging.getLogger(__name__)


class DataFormatError(ValueError):
    """A dataset file does not have the expected shape."""


def _where(path: Path, line_no: int | None) -> str:
    return f"{path}:{line_no}" if line_no else str(path)


def _not_utf8(path: Path, line_no: int, e: UnicodeDecodeError, column_base: int = 0) -> DataFormatError:
    return DataFormatError(f"{path}:{line_no}: not UTF-8 text (byte {e.start - column_base + 1} of the line: "
                           f"{e.reason}); expected UTF-8, re-save the file as UTF-8")


def _read_utf8(path: Path) -> str:
    """A whole text file as UTF-8 (a byte-order mark at the start is dropped); errors name the line."""
    data = path.read_bytes()
    start = 3 if data.startswith(codecs.BOM_UTF8) else 0
    try:
        return str(memoryview(data)[start:], "utf-8")
    except UnicodeDecodeError as e:
        at = start + e.start
        raise _not_utf8(path, data.count(b"\n", 0, at) + 1, e, data.rfind(b"\n", 0, at) + 1 - start) from None


def jsonl_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, text) of each line, read one at a time.

    Lines end at "\n" only (a trailing "\r" is dropped): U+2028, U+2029, U+0085 and form feeds are
    legal inside a JSON string, so ``str.splitlines`` would cut a document in two. A UTF-8
    byte-order mark at the start of the file is skipped."""
    with open(path, "rb") as fh:
        line_no = 0  # counted by hand: enumerate() would keep the previous line's bytes alive
        while raw := fh.readline():  # a binary file splits on b"\n" only
            line_no += 1
            start = 3 if line_no == 1 and raw.startswith(codecs.BOM_UTF8) else 0
            end = len(raw) - raw.endswith(b"\n")
            end -= end > start and raw[end - 1:end] == b"\r"
            try:
                line = str(memoryview(raw)[start:end], "utf-8")  # no copy of the bytes
            except UnicodeDecodeError as e:
                raise _not_utf8(path, line_no, e, -start) from None
            del raw  # a 20 MB line is held once as text, not also as bytes, while it is parsed
            yield line_no, line


def read_jsonl(path: Path) -> Iterable[tuple[int, dict]]:
    """(line number, object) for each non-blank line; errors name the file, line and problem."""
    for i, line in jsonl_lines(path):
        if not line or line.isspace():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise DataFormatError(f"{_where(path, i)}: invalid JSON ({e.msg} at column {e.colno})") from None
        del line
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
    if not text or text.isspace():
        raise DataFormatError(f"{where}: document {doc_id!r} has no text (field 'text' is empty or whitespace only)")
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
        raise DataFormatError(f"{path}: no documents (the file is empty or holds only blank lines)")
    _unique(docs, "document", path)
    return [d for _, d in docs]


def read_questions(path: str | Path, documents: list[Document] | None = None) -> list[Question]:
    """Questions, checked against ``documents`` when given: gold ids must exist and every gold
    context must be an exact substring of some document (of its gold documents, or any other)."""
    path = Path(path)
    qs = [(i, question_from_dict(o, _where(path, i))) for i, o in read_jsonl(path)]
    if not qs:
        log.warning("%s: no questions (the file is empty); the dataset has documents only", path)
    _unique(qs, "question", path)
    if documents is not None:
        by_id = {d.id: d for d in documents}
        for i, q in qs:
            missing = [g for g in q.gold_doc_ids if g not in by_id]
            if missing:
                raise DataFormatError(f"{_where(path, i)}: question {q.id!r} names gold_doc_ids {missing} not in documents")
            for j, ctx in enumerate(q.gold_contexts):
                if not _found(ctx, q.gold_doc_ids, by_id):
                    shown = ctx if len(ctx) <= 60 else ctx[:57] + "..."
                    raise DataFormatError(f"{_where(path, i)}: question {q.id!r}: gold_contexts[{j}] {shown!r} is "
                                          "found in no document (expected an exact substring of a document's text)")
    return [q for _, q in qs]


def _found(context: str, gold_doc_ids: list[str], documents: dict[str, Document]) -> bool:
    first = [documents[g] for g in gold_doc_ids]
    return any(context in d.text for d in first) or any(context in d.text for d in documents.values())


def read_text_folder(folder: Path) -> list[Document]:
    docs = []
    for p in sorted(folder.glob("*.txt")):
        text = _read_utf8(p)
        if not text or text.isspace():
            raise DataFormatError(f"{p}: document {p.stem!r} has no text (the file is empty or whitespace only)")
        docs.append(Document(id=p.stem, text=text, title=_FIRST_LINE.search(text).group().strip()))
    return docs


_FIRST_LINE = re.compile(r"\S[^\n]*")  # the first non-blank line, found without splitting the whole text


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
