"""The data model every part of rag_lab shares.

Documents carry their text and optional sections (char offsets into the text);
chunks always point back to an exact span of one document; questions carry
whatever gold the dataset has; a retriever answers with a ``Retrieval`` (ranked
hits, a trace of what it did, and what it cost).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

SECTION_KINDS = ("section", "subsection", "paragraph")
# Document.meta key a loader sets to "document" when each of the data set's questions targets one
# document (QASPER, NarrativeQA, QuALITY): methods that build per-document structure read it
QUESTIONS_TARGET = "questions_target"


def questions_target_one_document(documents) -> bool:
    """True when the loader marked every document as the sole target of its questions."""
    documents = list(documents)
    return bool(documents) and all(d.meta.get(QUESTIONS_TARGET) == "document" for d in documents)


@dataclass(frozen=True)
class Section:
    """A structural unit of a document, as char offsets ``[start, end)`` into its text."""

    id: str
    title: str
    kind: str = "section"
    start: int = 0
    end: int = 0
    level: int = 1

    def __post_init__(self):
        if self.kind not in SECTION_KINDS:
            raise ValueError(f"section {self.id!r}: kind must be one of {SECTION_KINDS}, got {self.kind!r}")
        if not (0 <= self.start <= self.end):
            raise ValueError(f"section {self.id!r}: need 0 <= start <= end, got start={self.start} end={self.end}")


@dataclass
class Document:
    id: str
    text: str
    title: str = ""
    sections: list[Section] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        for s in self.sections:
            if s.end > len(self.text):
                raise ValueError(f"document {self.id!r}: section {s.id!r} spans [{s.start}, {s.end}), past the end "
                                 f"of its text ({len(self.text)} characters); expected offsets into the text")

    def section_at(self, start: int, end: int | None = None) -> Section | None:
        """The innermost section that contains ``start`` (deepest, i.e. shortest)."""
        best = None
        for s in self.sections:
            if s.start <= start < s.end and (best is None or s.end - s.start < best.end - best.start):
                best = s
        return best


@dataclass
class Chunk:
    """A retrievable unit. ``text == document.text[start:end]`` for span chunks.

    Derived units (a RAPTOR summary, a graph fact) set ``start == end == -1``
    and list their sources in ``meta["source_chunk_ids"]``.
    """

    id: str
    doc_id: str
    text: str
    start: int
    end: int
    section_id: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def is_span(self) -> bool:
        return self.start >= 0 and self.end >= self.start


@dataclass
class Question:
    id: str
    question: str
    answer: str | None = None
    gold_doc_ids: list[str] = field(default_factory=list)
    gold_contexts: list[str] = field(default_factory=list)
    gold_section_ids: list[str] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    # parallel to gold_contexts: the character offset of each context in its document (None or absent: not
    # given, the first occurrence is taken; docs/metrics.md "Where a gold context is")
    gold_context_offsets: list[int | None] = field(default_factory=list)


@dataclass
class Dataset:
    name: str
    documents: list[Document]
    questions: list[Question] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)

    def document(self, doc_id: str) -> Document:
        for d in self.documents:
            if d.id == doc_id:
                return d
        raise KeyError(f"dataset {self.name!r} has no document {doc_id!r}")

    def limit(self, n_questions: int | None = None, n_documents: int | None = None) -> "Dataset":
        """A smaller copy: the first questions and documents (gold documents of kept questions are kept)."""
        questions = self.questions if n_questions is None else self.questions[:n_questions]
        docs = self.documents
        if n_documents is not None:
            needed = {g for q in questions for g in q.gold_doc_ids}
            head = {d.id for d in docs[:n_documents]}
            docs = [d for d in docs if d.id in head or d.id in needed]
        return Dataset(self.name, docs, questions, dict(self.meta))

    def first_documents(self, n: int) -> "Dataset":
        """The first ``n`` documents and only the questions they answer (every gold document among them): a subset
        that is smaller to build, unlike ``limit``, which cuts questions and keeps every document."""
        if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
            raise ValueError(f"documents: expected a positive whole number of documents to keep, got {n!r}")
        docs = self.documents[:n]
        kept = {d.id for d in docs}
        questions = [q for q in self.questions if q.gold_doc_ids and set(q.gold_doc_ids) <= kept]
        return Dataset(self.name, docs, questions, {**self.meta, "documents_kept": n})


@dataclass
class Cost:
    """What a build or a query cost. Tokens are counted, never estimated after the fact."""

    embedding_tokens: int = 0
    llm_prompt_tokens: int = 0
    llm_completion_tokens: int = 0
    llm_calls: int = 0
    llm_fallbacks: int = 0
    seconds: float = 0.0

    def __add__(self, other: "Cost") -> "Cost":
        return Cost(*(getattr(self, f) + getattr(other, f) for f in self.__dataclass_fields__))

    def as_dict(self) -> dict[str, float]:
        return {f: getattr(self, f) for f in self.__dataclass_fields__}


@dataclass
class Hit:
    chunk: Chunk
    score: float
    via: str = "vector"


@dataclass
class Retrieval:
    query: str
    hits: list[Hit]
    trace: dict[str, Any] = field(default_factory=dict)
    cost: Cost = field(default_factory=Cost)

    @property
    def contexts(self) -> list[str]:
        return [h.chunk.text for h in self.hits]
