"""The generic on-disk form of a dataset: ``documents.jsonl`` + ``questions.jsonl``.

Reading validates every line and says which file, which line, which field and
what was expected. A folder may instead hold plain ``*.txt`` files (one document
each: id = file stem, title = first line); ``questions.jsonl`` is optional.

A field the format does not know (``gold_doc_id`` for ``gold_doc_ids``) is not silently dropped: one
warning per unknown field names its first line, how many lines hold it and the closest known field;
``strict=True`` (``eval --strict``) refuses it instead. Warning by default, because a file that carries
fields of its own (a source, a licence) is common and harmless, while the misspelling is caught either way.

``gold_context_offsets`` (optional, parallel to ``gold_contexts``) places a context that occurs more than
once in its document; each offset is checked against the text. Without one the first occurrence is
taken, and the reader says how many contexts that leaves ambiguous (docs/metrics.md).
"""
from __future__ import annotations

import codecs
import difflib
import json
import logging
import re
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

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


DOCUMENT_FIELDS = ("id", "text", "title", "sections", "meta")
SECTION_FIELDS = ("id", "title", "kind", "start", "end", "level")
QUESTION_FIELDS = ("id", "question", "answer", "gold_doc_ids", "gold_contexts", "gold_context_offsets",
                   "gold_section_ids", "meta")


class UnknownFields:
    """The fields of a file's lines that the format does not know: the first line of each and how many
    lines hold it. ``strict``: the first one is an error."""

    def __init__(self, path: Path, strict: bool = False):
        self.path, self.strict = path, strict
        self.seen: dict[str, list] = {}        # field -> [first line, lines]

    def check(self, obj: dict, known: Sequence[str], line_no: int, prefix: str = "") -> None:
        for name in obj:
            if name in known:
                continue
            label = prefix + name
            if self.strict:
                raise DataFormatError(f"{_where(self.path, line_no)}: unknown field {label!r}{_nearest(name, known)}; "
                                      f"the fields it may have: {', '.join(known)}")
            entry = self.seen.setdefault(label, [line_no, 0, known])
            entry[1] += 1

    def warn(self) -> None:
        for label, (line_no, count, known) in self.seen.items():
            name = label.rsplit(".", 1)[-1]
            log.warning("%s: unknown field %r%s on %d line(s), first line %d: ignored (the fields it may have: %s; "
                        "--strict refuses it)", self.path, label, _nearest(name, known), count, line_no,
                        ", ".join(known))


def _nearest(name: str, known: Sequence[str]) -> str:
    near = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return f" (did you mean {near[0]!r}?)" if near else ""


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
    contexts = _str_list(obj, "gold_contexts", where)
    return Question(
        id=_field(obj, "id", str, where),
        question=_field(obj, "question", str, where),
        answer=_field(obj, "answer", str, where, required=False),
        gold_doc_ids=_str_list(obj, "gold_doc_ids", where),
        gold_contexts=contexts,
        gold_section_ids=_str_list(obj, "gold_section_ids", where),
        meta=_field(obj, "meta", dict, where, required=False, default={}),
        gold_context_offsets=_offsets(obj, len(contexts), where),
    )


def _offsets(obj: dict, n_contexts: int, where: str) -> list[int | None]:
    """``gold_context_offsets``: a list as long as ``gold_contexts`` of non-negative integers or nulls."""
    value = _field(obj, "gold_context_offsets", list, where, required=False, default=[])
    if value and len(value) != n_contexts:
        raise DataFormatError(f"{where}: field 'gold_context_offsets' has {len(value)} entries for {n_contexts} "
                              "gold_contexts (expected one offset, or null, per context)")
    for j, v in enumerate(value):
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 0):
            raise DataFormatError(f"{where}: gold_context_offsets[{j}] must be a non-negative integer or null, "
                                  f"got {v!r}")
    return list(value)


def _unique(items, kind: str, path: Path):
    seen: dict[str, int] = {}
    for line_no, item in items:
        if item.id in seen:
            raise DataFormatError(f"{_where(path, line_no)}: duplicate {kind} id {item.id!r} (first on line {seen[item.id]})")
        seen[item.id] = line_no


def read_documents(path: str | Path, strict: bool = False) -> list[Document]:
    path = Path(path)
    unknown = UnknownFields(path, strict)
    docs = []
    for i, o in read_jsonl(path):
        unknown.check(o, DOCUMENT_FIELDS, i)
        for s in o.get("sections") or []:
            if isinstance(s, dict):
                unknown.check(s, SECTION_FIELDS, i, "sections[].")
        docs.append((i, document_from_dict(o, _where(path, i))))
    unknown.warn()
    if not docs:
        raise DataFormatError(f"{path}: no documents (the file is empty or holds only blank lines)")
    _unique(docs, "document", path)
    return [d for _, d in docs]


def read_questions(path: str | Path, documents: list[Document] | None = None, strict: bool = False
                   ) -> list[Question]:
    """Questions, checked against ``documents`` when given: gold ids must exist, every gold context must
    be an exact substring of some document (of its gold documents, or any other) and every given offset
    must point at its context; contexts left ambiguous (several occurrences, no offset) are counted."""
    path = Path(path)
    unknown = UnknownFields(path, strict)
    qs = []
    for i, o in read_jsonl(path):
        unknown.check(o, QUESTION_FIELDS, i)
        qs.append((i, question_from_dict(o, _where(path, i))))
    unknown.warn()
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
            _check_offsets(q, by_id, _where(path, i))
        _say_ambiguous([q for _, q in qs], by_id, path)
    return [q for _, q in qs]


def _check_offsets(q: Question, by_id: dict[str, Document], where: str) -> None:
    from .gold import search_order

    for j, (ctx, offset) in enumerate(zip(q.gold_contexts, q.gold_context_offsets)):
        if offset is None or any(d.text.startswith(ctx, offset) for d in search_order(q, by_id)):
            continue
        first = next((f"{d.id!r} at {d.text.find(ctx)}" for d in search_order(q, by_id) if ctx in d.text), "")
        raise DataFormatError(f"{where}: question {q.id!r}: gold_context_offsets[{j}] = {offset} does not point at "
                              f"gold_contexts[{j}] in any of its documents (it occurs first in {first}); expected "
                              "the 0-based character offset of the context in its document's text")


def _say_ambiguous(questions: list[Question], by_id: dict[str, Document], path: Path) -> None:
    from .gold import ambiguous_contexts

    ambiguous, total = ambiguous_contexts(questions, by_id)
    if ambiguous:
        log.warning("%s: %d of %d gold contexts occur more than once in their document and have no offset: the "
                    "first occurrence is taken (give gold_context_offsets to place them; docs/metrics.md)",
                    path, len(ambiguous), total)


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


def read_dataset(folder: str | Path, name: str | None = None, strict: bool = False) -> Dataset:
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"dataset folder {folder} does not exist")
    if (folder / "documents.jsonl").exists():
        documents = read_documents(folder / "documents.jsonl", strict)
    else:
        documents = read_text_folder(folder)
        if not documents:
            raise DataFormatError(f"{folder}: expected documents.jsonl or *.txt files, found neither")
    qpath = folder / "questions.jsonl"
    questions = read_questions(qpath, documents, strict) if qpath.exists() else []
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
    for key in ("answer", "gold_doc_ids", "gold_contexts", "gold_context_offsets", "gold_section_ids", "meta"):
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
