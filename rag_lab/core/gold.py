"""Where a gold context is in the corpus: the span the context-level metrics match retrieved chunks
against (``evaluation.metrics.locate_contexts``) and the readers check (``core.generic_form``).

A context is looked for in the question's gold documents first, then in every other document; the
first document holding it is its document. Within it, a given offset (``gold_context_offsets``) places
it; without one, its first occurrence is taken. Why the first and not every occurrence: a short
context ("HCoV") can recur dozens of times, and counting any chunk that holds one of them as a hit
would credit retrieval of passages unrelated to the answer; the first occurrence keeps published
numbers unchanged, and the readers count how many contexts are left ambiguous so a data set can add
the offsets its source has (SQuAD's ``answer_start``).
"""
from __future__ import annotations

from typing import Mapping, Sequence

from .types import Document, Question


def search_order(question: Question, documents: Mapping[str, Document]) -> list[Document]:
    """The question's gold documents (in its order), then every other document."""
    gold = [documents[d] for d in question.gold_doc_ids if d in documents]
    return gold + [d for d in documents.values() if d.id not in set(question.gold_doc_ids)]


def offsets_of(question: Question) -> list[int | None]:
    """One offset (or None) per gold context, whatever the question carries."""
    given = list(question.gold_context_offsets or [])
    return (given + [None] * len(question.gold_contexts))[:len(question.gold_contexts)]


def place(context: str, offset: int | None, order: Sequence[Document]) -> tuple[str | None, int]:
    """(document id, start) of ``context``: at ``offset`` in the first document of ``order`` where it is
    there, else (no offset) its first occurrence in the first document holding it; (None, -1) if nowhere."""
    for doc in order:
        if offset is not None:
            if doc.text.startswith(context, offset):
                return doc.id, offset
            continue
        i = doc.text.find(context)
        if i >= 0:
            return doc.id, i
    return None, -1


def ambiguous_contexts(questions: Sequence[Question], documents: Mapping[str, Document]
                       ) -> tuple[list[str], int]:
    """The gold contexts (``question_id[j]``) placed without an offset that occur more than once in their
    document, and the number of gold contexts in all."""
    out, total = [], 0
    for q in questions:
        order = None
        for j, (ctx, offset) in enumerate(zip(q.gold_contexts, offsets_of(q))):
            total += 1
            if offset is not None or not ctx:
                continue
            order = order or search_order(q, documents)
            doc_id, start = place(ctx, None, order)
            if doc_id is not None and documents[doc_id].text.find(ctx, start + 1) >= 0:
                out.append(f"{q.id}[{j}]")
    return out, total
