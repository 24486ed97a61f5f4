"""The bad-input table: every odd or broken input rag_lab may be handed, tried for real.

Each case builds its input in a temporary folder, runs the public entry point on it and returns
what a user sees: the exception's message, the warnings logged, or a summary of what loaded.
``tests/test_bad_inputs.py`` checks each against what must be in it (the file, the line or
element, what was expected); ``docs/bad_inputs.md`` is rendered from the observed output, never
written by hand:

    PYTHONPATH=. python tests/bad_inputs.py --write     # regenerate docs/bad_inputs.md
"""
from __future__ import annotations

import json
import logging
import re
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from rag_lab.evaluation.retrievers import Method
from rag_lab.core.types import Chunk, Hit, Retrieval

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "bad_inputs.md"


@dataclass
class Case:
    id: str
    input: str                      # the bad input, in words
    handling: str  # "error" (raises), "handled" (loads or runs, logged and counted), or who owns the row
    run: Callable[[Path], object] | None  # builds the input under the folder and runs rag_lab on it
    expect: list[str] = field(default_factory=list)  # what the observed message must contain


def _jsonl(path: Path, rows) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


def _read(folder: Path):
    from rag_lab.core.generic_form import read_dataset
    return read_dataset(folder)


DOCS = [{"id": "a", "title": "A", "text": "Pesto comes from Genoa."}, {"id": "b", "title": "B", "text": "Risotto is rice."}]


# --- the cases: each builds its input and calls the entry point a user would ------------------

def empty_documents(folder):
    (folder / "documents.jsonl").write_text("", encoding="utf-8")
    return _read(folder)


def blank_documents(folder):
    (folder / "documents.jsonl").write_text("\n  \n\n", encoding="utf-8")
    return _read(folder)


def empty_questions(folder):
    _jsonl(folder / "documents.jsonl", DOCS)
    (folder / "questions.jsonl").write_text("", encoding="utf-8")
    ds = _read(folder)
    return f"loads: {len(ds.documents)} documents, {len(ds.questions)} questions"


def empty_txt(folder):
    (folder / "one.txt").write_text("Title\n\nBody.", encoding="utf-8")
    (folder / "empty.txt").write_text("  \n", encoding="utf-8")
    return _read(folder)


def empty_text(folder):
    _jsonl(folder / "documents.jsonl", [DOCS[0], {"id": "b", "text": ""}])
    return _read(folder)


def whitespace_text(folder):
    _jsonl(folder / "documents.jsonl", [DOCS[0], {"id": "b", "text": " \n\t "}])
    return _read(folder)


def duplicate_documents(folder):
    _jsonl(folder / "documents.jsonl", [DOCS[0], DOCS[1], {"id": "a", "text": "Again."}])
    return _read(folder)


def duplicate_questions(folder):
    _jsonl(folder / "documents.jsonl", DOCS)
    _jsonl(folder / "questions.jsonl", [{"id": "q1", "question": "Where?", "gold_doc_ids": ["a"]},
                                        {"id": "q1", "question": "What?", "gold_doc_ids": ["b"]}])
    return _read(folder)


def gold_context_nowhere(folder):
    _jsonl(folder / "documents.jsonl", DOCS)
    _jsonl(folder / "questions.jsonl", [{"id": "q1", "question": "Where?", "gold_doc_ids": ["a"],
                                         "gold_contexts": ["Pesto comes from Genoa.", "Pesto comes from Rome."]}])
    return _read(folder)


def gold_context_nowhere_in_code(folder):
    from rag_lab.core.types import Dataset, Document, Question
    ds = Dataset("t", [Document(d["id"], d["text"], d["title"]) for d in DOCS],
                 [Question("q1", "Where?", gold_contexts=["Pesto comes from Rome."]),
                  Question("q2", "What?", gold_contexts=["Risotto is rice."])])
    df = _evaluate(ds, [1])
    return f"scored: {df.question_id.nunique()} questions"


def gold_doc_unknown(folder):
    _jsonl(folder / "documents.jsonl", DOCS)
    _jsonl(folder / "questions.jsonl", [{"id": "q1", "question": "Where?", "gold_doc_ids": ["zz"]}])
    return _read(folder)


def question_without_gold(folder):
    from rag_lab.core.types import Dataset, Document, Question
    ds = Dataset("t", [Document(d["id"], d["text"], d["title"]) for d in DOCS],
                 [Question("q1", "Where?", gold_doc_ids=["a"]), Question("q2", "Why?")])
    df = _evaluate(ds, [1])
    return f"scored: {sorted(df[df.metric == 'doc_recall'].question_id.unique())}"


def non_utf8_jsonl(folder):
    (folder / "documents.jsonl").write_bytes(b'{"id": "a", "text": "ok"}\n{"id": "b", "text": "caf\xe9"}\n')
    return _read(folder)


def non_utf8_txt(folder):
    (folder / "menu.txt").write_bytes(b"Menu\n\nPesto\nCaf\xe9 latte\n")
    return _read(folder)


def invalid_json(folder):
    _jsonl(folder / "documents.jsonl", [DOCS[0], '{"id": "b", "text": "x"'])
    return _read(folder)


def missing_field(folder):
    _jsonl(folder / "documents.jsonl", [DOCS[0], {"id": "b", "title": "B"}])
    return _read(folder)


def wrong_type(folder):
    _jsonl(folder / "documents.jsonl", [{"id": "a", "text": 5}])
    return _read(folder)


def section_outside_file(folder):
    _jsonl(folder / "documents.jsonl", [{"id": "a", "text": "Short.", "sections": [
        {"id": "a-s1", "title": "Intro", "start": 0, "end": 40}]}])
    return _read(folder)


def section_outside_code(folder):
    from rag_lab.core.types import Document, Section
    return Document("a", "Short.", sections=[Section("a-s1", "Intro", "section", 0, 40)])


def line_separators(folder):
    text = "One\u2028two\u2029three\x85four\x0cfive\x1cend."
    (folder / "documents.jsonl").write_text(
        json.dumps({"id": "a", "text": text}, ensure_ascii=False) + "\n" + json.dumps(DOCS[1]) + "\n", encoding="utf-8")
    ds = _read(folder)
    kept = ds.documents[0].text == text
    return f"loads: {len(ds.documents)} documents, separators inside the text kept: {kept}"


def crlf_lines(folder):
    (folder / "documents.jsonl").write_bytes(b'{"id": "a", "text": "x"}\r\n{"id": "b", "text": "y"}\r\n')
    ds = _read(folder)
    return f"loads: {len(ds.documents)} documents"


def bom_jsonl(folder):
    (folder / "documents.jsonl").write_bytes(b"\xef\xbb\xbf" + json.dumps(DOCS[0]).encode() + b"\n")
    (folder / "questions.jsonl").write_bytes(b"\xef\xbb\xbf" + b'{"id": "q1", "question": "Where?"}\n')
    ds = _read(folder)
    return f"loads: {len(ds.documents)} documents, {len(ds.questions)} questions"


def bom_txt(folder):
    (folder / "pesto.txt").write_bytes(b"\xef\xbb\xbfPesto\n\nBasil and pine nuts.")
    ds = _read(folder)
    return f"loads: title {ds.documents[0].title!r}, text starts {ds.documents[0].text[:5]!r}"


def k_over_chunks(folder):
    from rag_lab.core.types import Dataset, Document, Question
    ds = Dataset("t", [Document(d["id"], d["text"], d["title"]) for d in DOCS],
                 [Question("q1", "Where?", gold_doc_ids=["a"]), Question("q2", "What?", gold_doc_ids=["b"])])
    df = _evaluate(ds, [1, 5])
    return f"scored at k = {sorted(int(k) for k in df.k.dropna().unique())}"


def unknown_method(folder):
    from rag_lab.methods import get_retriever
    return get_retriever("bm25-magic")


def unknown_dataset(folder):
    import contextlib

    from rag_lab.datasets import load_dataset
    with contextlib.chdir(folder):         # the message shows the absolute folder it tried: this one
        return load_dataset("no-such-dataset")


def unknown_question_field(folder):
    _jsonl(folder / "documents.jsonl", DOCS)
    _jsonl(folder / "questions.jsonl", [{"id": "q1", "question": "Where?", "gold_doc_ids": ["a"]},
                                        {"id": "q2", "question": "What?", "gold_doc_id": ["b"]},
                                        {"id": "q3", "question": "Which?", "gold_doc_id": ["a"]}])
    d = _read(folder)
    return f"loads: {len(d.questions)} questions, gold of q2: {d.questions[1].gold_doc_ids}"


def unknown_field_strict(folder):
    from rag_lab.core.generic_form import read_dataset
    _jsonl(folder / "documents.jsonl", DOCS)
    _jsonl(folder / "questions.jsonl", [{"id": "q1", "question": "Where?", "gold_doc_id": ["a"]}])
    return read_dataset(folder, strict=True)


def gold_offset_wrong(folder):
    _jsonl(folder / "documents.jsonl", [{"id": "a", "text": "HCoV is a virus. HCoV spreads."}])
    _jsonl(folder / "questions.jsonl", [{"id": "q1", "question": "What spreads?", "gold_doc_ids": ["a"],
                                         "gold_contexts": ["HCoV spreads"], "gold_context_offsets": [3]}])
    return _read(folder)


def gold_context_ambiguous(folder):
    _jsonl(folder / "documents.jsonl", [{"id": "a", "text": "HCoV is a virus. HCoV spreads."}])
    _jsonl(folder / "questions.jsonl", [{"id": "q1", "question": "What?", "gold_doc_ids": ["a"],
                                         "gold_contexts": ["HCoV", "HCoV", "virus"], "gold_context_offsets": [None, 17, None]}])
    d = _read(folder)
    return f"loads: offsets {d.questions[0].gold_context_offsets}"


def _two_copies(folder: Path) -> Path:
    article = ("<article><front><article-meta><article-id pub-id-type=\"pmc\">PMC7</article-id>"
               "<title-group><article-title>T</article-title></title-group></article-meta></front>"
               "<body><sec><title>Intro</title><p>Text.</p></sec></body></article>")
    for name in ("a.nxml", "b.nxml", "c.nxml"):
        (folder / name).write_text(article.replace("PMC7", "PMC8") if name == "c.nxml" else article, encoding="utf-8")
    return folder


def jats_duplicate_id(folder):
    from rag_lab.datasets.jats import iter_jats_folder
    return f"loads: {[d.id for d in iter_jats_folder(_two_copies(folder))]}"


def jats_duplicate_refused(folder):
    from rag_lab.datasets.jats import iter_jats_folder
    return list(iter_jats_folder(_two_copies(folder), duplicates="refuse"))


def _evaluate(dataset, ks):
    from rag_lab.evaluation.harness import evaluate_retrieval
    return evaluate_retrieval({"one-chunk-per-doc": WholeDocuments()}, dataset, ks, progress=False)


class WholeDocuments(Method):
    """One chunk per document, ranked by words shared with the query (no model: keeps the table fast)."""

    name = "one-chunk-per-doc"

    def build(self, documents):
        self.chunks = [Chunk(f"{d.id}-0", d.id, d.text, 0, len(d.text)) for d in documents]
        return self

    def retrieve(self, query, k):
        words = set(query.lower().split())
        ranked = sorted(self.chunks, key=lambda c: -len(words & set(c.text.lower().split())))
        return Retrieval(query, [Hit(c, 1.0) for c in ranked[:k]])




def _jats(folder: Path, name: str, text: str):
    from rag_lab.datasets.jats import parse_jats
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return parse_jats(path)


def jats_unclosed(folder):
    return _jats(folder, "unclosed.nxml", "<article>\n<body>\n<sec><title>T</title>\n<p>never closed\n</sec>\n"
                                          "</body></article>\n")


def jats_no_body(folder):
    doc = _jats(folder, "PMC1.nxml", "<article><front><article-meta><abstract><p>Only an abstract.</p></abstract>"
                                     "</article-meta></front></article>")
    return f"loads: {doc.id}, text {doc.text!r}, has_body {doc.meta['has_body']}"


def jats_untitled(folder):
    doc = _jats(folder, "PMC2.nxml", "<article><body><sec><p>First untitled.</p></sec>"
                                     "<sec><title>Methods</title><p>Second.</p></sec></body></article>")
    return f"loads: section titles {[s.title for s in doc.sections if s.kind != 'paragraph']}"


def jats_deep(folder):
    inner = "<p>Deepest paragraph.</p>"
    for level in range(10, 0, -1):
        inner = f"<sec><title>Level {level}</title>{inner}</sec>"
    doc = _jats(folder, "PMC3.nxml", f"<article><body>{inner}</body></article>")
    levels = [s.level for s in doc.sections if s.kind != "paragraph"]
    return f"loads: {len(levels)} nested sections, levels {levels[0]}..{levels[-1]}"


CASES = [
    Case("empty-documents", "empty `documents.jsonl`", "error", empty_documents,
         ["documents.jsonl", "no documents", "empty"]),
    Case("blank-documents", "`documents.jsonl` of blank lines only", "error", blank_documents,
         ["documents.jsonl", "no documents"]),
    Case("empty-questions", "empty `questions.jsonl`", "handled", empty_questions,
         ["questions.jsonl", "no questions", "loads: 2 documents, 0 questions"]),
    Case("empty-txt", "empty `.txt` document", "error", empty_txt, ["empty.txt", "'empty'", "no text"]),
    Case("empty-text", "document with empty text", "error", empty_text,
         ["documents.jsonl:2", "'b'", "no text", "'text'"]),
    Case("whitespace-text", "document with whitespace-only text", "error", whitespace_text,
         ["documents.jsonl:2", "'b'", "no text", "whitespace"]),
    Case("duplicate-documents", "duplicate document ids", "error", duplicate_documents,
         ["documents.jsonl:3", "duplicate document id 'a'", "line 1"]),
    Case("duplicate-questions", "duplicate question ids", "error", duplicate_questions,
         ["questions.jsonl:2", "duplicate question id 'q1'", "line 1"]),
    Case("gold-context-nowhere", "a gold context found in no document (`questions.jsonl`)", "error",
         gold_context_nowhere, ["questions.jsonl:1", "'q1'", "gold_contexts[1]", "no document", "exact substring"]),
    Case("gold-context-nowhere-code", "a gold context found in no document (a dataset built in code, at evaluation)",
         "handled", gold_context_nowhere_in_code, ["1 gold context", "q1", "no document", "scored: 2 questions"]),
    Case("gold-doc-unknown", "a gold document id that is not in `documents.jsonl`", "error", gold_doc_unknown,
         ["questions.jsonl:1", "'q1'", "['zz']", "not in documents"]),
    Case("no-gold", "a question with no gold", "handled", question_without_gold,
         ["skipping 1 question", "q2", "scored: ['q1']"]),
    Case("non-utf8-jsonl", "non-UTF-8 bytes in `documents.jsonl`", "error", non_utf8_jsonl,
         ["documents.jsonl:2", "not UTF-8", "byte 25"]),  # 24 ASCII bytes precede the \xe9
    Case("non-utf8-txt", "non-UTF-8 bytes in a `.txt` document", "error", non_utf8_txt,
         ["menu.txt:4", "not UTF-8"]),
    Case("invalid-json", "a line that is not JSON", "error", invalid_json, ["documents.jsonl:2", "invalid JSON"]),
    Case("missing-field", "a document without `text`", "error", missing_field,
         ["documents.jsonl:2", "missing field 'text'"]),
    Case("wrong-type", "a field of the wrong type", "error", wrong_type,
         ["documents.jsonl:1", "'text' must be str, got int"]),
    Case("section-outside-file", "a section offset outside the text (`documents.jsonl`)", "error",
         section_outside_file, ["documents.jsonl:1", "sections[0]", "end <= len(text)=6", "end=40"]),
    Case("section-outside-code", "a section offset outside the text (a `Document` built in code)", "error",
         section_outside_code, ["document 'a'", "section 'a-s1'", "40", "6 characters"]),
    Case("line-separators", "U+2028, U+2029, U+0085, form feed inside a JSON string", "handled", line_separators,
         ["loads: 2 documents", "kept: True"]),
    Case("crlf", "Windows line ends (`\\r\\n`)", "handled", crlf_lines, ["loads: 2 documents"]),
    Case("bom-jsonl", "a UTF-8 byte-order mark at the start of a JSONL file", "handled", bom_jsonl,
         ["loads: 1 documents, 1 questions"]),
    Case("bom-txt", "a UTF-8 byte-order mark at the start of a `.txt` file", "handled", bom_txt,
         ["title 'Pesto'", "starts 'Pesto'"]),
    Case("big-document", "a 20 MB single document", "handled", None,
         ["loads; tests/test_bad_inputs.py::test_a_20_mb_document_loads_in_bounded_memory"]),
    Case("k-over-chunks", "k larger than the number of chunks", "handled", k_over_chunks,
         ["one-chunk-per-doc", "2 chunks", "k=5", "2 of 2 queries", "scored at k = [1, 5]"]),
    Case("unknown-method", "an unknown method name", "error", unknown_method,
         ["unknown method 'bm25-magic'", "naive", "semantic"]),
    Case("unknown-dataset", "an unknown dataset name", "error", unknown_dataset,
         ["unknown dataset 'no-such-dataset'", "no folder at <folder>/no-such-dataset", "not one of: biomed_articles"]),
    Case("jats-unclosed", "malformed JATS: an unclosed tag", "error", jats_unclosed,
         ["unclosed.nxml", "line 5", "<p> opened at line 4 is not closed: expected </p>"]),
    Case("jats-no-body", "malformed JATS: no `<body>`", "handled", jats_no_body,
         ["loads: PMC1", "has_body False"]),
    Case("jats-untitled", "malformed JATS: sections without titles", "handled", jats_untitled,
         ["loads: section titles", "'Methods'"]),
    Case("jats-deep", "malformed JATS: `<sec>` nested ten deep", "handled", jats_deep,
         ["loads: 10 nested sections, levels 1..10"]),
    Case("unknown-field", "a field the format does not know (`gold_doc_id` for `gold_doc_ids`)", "handled",
         unknown_question_field, ["questions.jsonl", "unknown field 'gold_doc_id'", "did you mean 'gold_doc_ids'",
                                  "on 2 line(s), first line 2", "--strict", "gold of q2: []"]),
    Case("unknown-field-strict", "a field the format does not know, read with `strict=True` (`eval --strict`)",
         "error", unknown_field_strict, ["questions.jsonl:1", "unknown field 'gold_doc_id'", "gold_doc_ids"]),
    Case("gold-offset-wrong", "a gold context offset that does not point at its context", "error", gold_offset_wrong,
         ["questions.jsonl:1", "gold_context_offsets[0] = 3", "'a' at 17", "0-based character offset"]),
    Case("gold-context-ambiguous", "gold contexts that occur more than once in their document, without offset",
         "handled", gold_context_ambiguous, ["1 of 3 gold contexts occur more than once", "first occurrence",
                                             "gold_context_offsets", "offsets [None, 17, None]"]),
    Case("jats-duplicate-id", "two JATS files holding the same article id", "handled", jats_duplicate_id,
         ["b.nxml", "document id 'PMC7' already used by", "a.nxml", "skipped", "loads: ['PMC7', 'PMC8']"]),
    Case("jats-duplicate-refused", "two JATS files holding the same article id, `duplicates=\"refuse\"`", "error",
         jats_duplicate_refused, ["b.nxml", "'PMC7' already used by", "a.nxml"]),
]
from bad_inputs_cli import CLI_CASES  # noqa: E402  (rows about the machine: caches, permissions, disks, secrets)

CASES += [Case(*row) for row in CLI_CASES]
STATIC = {"big-document": "loads; peak traced memory stays under 2.5x the file's size "
                          "(tests/test_bad_inputs.py::test_a_20_mb_document_loads_in_bounded_memory)"}


class _Collect(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record):
        self.lines.append(f"WARNING {record.name}: {record.getMessage()}")


def observe(case: Case, folder: Path) -> str:
    """What a user sees: ``Type: message`` of the error, else the warnings logged and the result."""
    if case.run is None:
        return STATIC[case.id]
    handler = _Collect()
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        result = case.run(folder)
        seen = handler.lines + ([result] if isinstance(result, str) else [f"returned {type(result).__name__}"])
    except Exception as e:  # the message is the observation
        seen = handler.lines + [f"{type(e).__name__}: {e}"]
    finally:
        root.removeHandler(handler)
    return _tidy("\n".join(seen), folder)


def _tidy(text: str, folder: Path) -> str:
    """Stable across machines: the temporary folder becomes <folder>; long name lists are cut."""
    text = re.sub(r"http://127\.0\.0\.1:\d+", "<mirror>", text.replace(str(folder), "<folder>"))
    return re.sub(r"((?:registered|one of): )([^;\n]+)", lambda m: m.group(1) + _first_names(m.group(2)), text)


def _first_names(names: str) -> str:
    parts = [p.strip() for p in names.split(",")]
    return ", ".join(parts[:3]) + (", …" if len(parts) > 3 else "")


def render(observed: dict[str, str]) -> str:
    lines = ["| input | handling | message (observed) |", "|---|---|---|"]
    for case in CASES:
        message = "<br>".join(f"`{part}`" for part in observed[case.id].replace("|", "\\|").split("\n"))
        lines.append(f"| {case.input} | {case.handling} | {message} |")
    return "\n".join(lines) + "\n"


HEADER = """# Bad inputs and what rag_lab says

Every row was tried by `tests/test_bad_inputs.py`; the messages are the observed output, written
by `PYTHONPATH=. python tests/bad_inputs.py --write` (temporary folders shown as `<folder>`, long
lists of known names cut after three). "error" stops with the message; "handled" loads or runs and
says what it did in the log (`WARNING logger: message`), then the result the test saw.

The JSONL reader splits lines on "\\n" only (a trailing "\\r" is dropped), so U+2028, U+2029,
U+0085 and form feeds inside a JSON string stay in the text; a UTF-8 byte-order mark at the start
of a JSONL or `.txt` file is skipped. Files are read one line at a time.

The rows from "`RAG_LAB_CACHE` a folder every user can write" on are about the machine rather than the
data (`tests/bad_inputs_cli.py`): they run the command line, and "exit 2, error: ..." is what it prints
(one line naming the file and the fix, never a traceback). A folder you cannot write is tried in a child
process bound by file permissions (as root: `setpriv` with every capability dropped); downloads go to
the tests' local mirror (`<mirror>`). See also docs/data.md (downloads) and the README's Caches section.

"""
TABLE_START = "<!-- table: generated by tests/bad_inputs.py -->\n"


def observe_all() -> dict[str, str]:
    out = {}
    for case in CASES:
        with tempfile.TemporaryDirectory(prefix="rag_lab_bad_input_") as tmp:
            out[case.id] = observe(case, Path(tmp))
    return out


def document_text(observed: dict[str, str]) -> str:
    return HEADER + TABLE_START + render(observed)


if __name__ == "__main__":
    text = document_text(observe_all())
    if "--write" in sys.argv:
        DOC.write_text(text, encoding="utf-8")
        print(f"wrote {DOC}")
    else:
        print(text)
