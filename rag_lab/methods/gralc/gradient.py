"""The document-length gradient of the GraLC-RAG paper: the same articles cut to four
conditions of growing length.

- ``abstract``: the abstract alone (the short-text condition of the paper's PubMedQA runs)
- ``introduction``: the Introduction alone
- ``partial``: Introduction through Methods
- ``full``: the whole parsed article (abstract + body)

Each condition is a contiguous char range of the article, so the shortened Document keeps
its id and its sections with offsets shifted; citations and cross-references in range are
kept too. Questions keep their gold document; gold contexts that the shorter text no longer
contains are dropped (the paper scores this gradient at document level).

A document that is an abstract itself (``meta["kind"] == "abstract"``, as the PubMedQA loader
marks its documents) is the ``abstract`` condition as a whole — every context section of it,
its BACKGROUND included — and has none of the other three: its BACKGROUND is not an article's
Introduction, and there is no full text to cut.
"""
from __future__ import annotations

from ...core.types import Dataset, Document, Question, Section
from ...datasets.structure import sections_by_role

CONDITIONS = ("abstract", "introduction", "partial", "full")


def is_abstract(doc: Document) -> bool:
    """True for a document that is an abstract and nothing more (PubMedQA's)."""
    return isinstance(doc.meta, dict) and doc.meta.get("kind") == "abstract"


def condition_span(doc: Document, condition: str) -> tuple[int, int] | None:
    """Char range of the condition in ``doc``, or None when the article lacks the sections."""
    if condition not in CONDITIONS:
        raise ValueError(f"condition must be one of {CONDITIONS}, got {condition!r}")
    if is_abstract(doc):
        return (0, len(doc.text)) if condition == "abstract" else None
    if condition == "full":
        return 0, len(doc.text)
    roles = sections_by_role(doc)
    if condition == "abstract":
        return (roles["abstract"][0].start, roles["abstract"][0].end) if "abstract" in roles else None
    if "intro" not in roles:
        return None
    intro = roles["intro"][0]
    if condition == "introduction":
        return intro.start, intro.end
    methods = [u for u in roles.get("methods", []) if u.start >= intro.end]
    return (intro.start, methods[0].end) if methods else None


def _shift_spans(items: list[dict], start: int, end: int) -> list[dict]:
    return [{**x, "start": x["start"] - start, "end": x["end"] - start}
            for x in items if start <= x["start"] and x["end"] <= end]


def condition_document(doc: Document, condition: str) -> Document | None:
    span = condition_span(doc, condition)
    if span is None:
        return None
    start, end = span
    if (start, end) == (0, len(doc.text)):
        return doc
    sections = [Section(s.id, s.title, s.kind, s.start - start, s.end - start, s.level)
                for s in doc.sections if start <= s.start and s.end <= end]
    meta = dict(doc.meta) if isinstance(doc.meta, dict) else {}
    for key in ("citations", "xrefs"):
        if key in meta:
            meta[key] = _shift_spans(meta[key], start, end)
    meta["condition"] = condition
    return Document(doc.id, doc.text[start:end], doc.title, sections, meta)


def condition_dataset(dataset: Dataset, condition: str) -> Dataset:
    """Articles that have the condition, cut to it, with the questions about those articles."""
    docs = [d for d in (condition_document(doc, condition) for doc in dataset.documents) if d is not None]
    by_id = {d.id: d for d in docs}
    questions = []
    for q in dataset.questions:
        if not q.gold_doc_ids or not all(g in by_id for g in q.gold_doc_ids):
            continue
        kept = [c for c in q.gold_contexts if any(c in by_id[g].text for g in q.gold_doc_ids)]
        questions.append(Question(q.id, q.question, q.answer, list(q.gold_doc_ids), kept,
                                  list(q.gold_section_ids), {**q.meta, "condition": condition}))
    return Dataset(f"{dataset.name}[{condition}]", docs, questions, {**dataset.meta, "condition": condition})


def condition_sizes(dataset: Dataset, embedder=None) -> "object":
    """Per condition: articles, mean words (and MiniLM tokens when an embedder is given)."""
    import pandas as pd

    rows = []
    for c in CONDITIONS:
        sub = condition_dataset(dataset, c)
        words = [len(d.text.split()) for d in sub.documents]
        row = {"condition": c, "articles": len(sub.documents), "questions": len(sub.questions),
               "mean_words": sum(words) / len(words) if words else 0.0}
        if embedder is not None:
            toks = [len(embedder.tokenize_with_offsets(d.text)[0]) for d in sub.documents]
            row["mean_tokens"] = sum(toks) / len(toks) if toks else 0.0
        rows.append(row)
    return pd.DataFrame(rows).set_index("condition")
