"""SQuAD-format question sets (SQuAD v1.1 and v2.0, and the many sets that ship in that form,
such as COVID-QA), read from one JSON file.

Layout: ``{"version", "data": [{"title", "paragraphs": [{"context", "qas": [{"id", "question",
"answers": [{"text", "answer_start"}], "is_impossible", "plausible_answers"}]}]}]}``;
``is_impossible`` and ``plausible_answers`` exist in v2.0 only, and COVID-QA adds a
``document_id`` to each paragraph and may leave out ``title``.

Mapping to rag_lab's model: one ``Document`` per article, its paragraphs joined by blank lines,
each paragraph a ``Section`` (kind "paragraph"); the text is kept verbatim so the answer offsets
stay valid. Each question: answer = its first answer's text; gold document and gold section = the
paragraph its answer spans lie in; gold contexts = the sentence around each answer span
(``core.chunking.sentence_spans``; the sentences it crosses when it crosses one), placed by offset.
Why the sentence and not the paragraph: COVID-QA's one paragraph is the whole paper (tens of
thousands of characters), so any hit from the right paper would "match" (context recall = document
recall); why not the bare answer string: a text-only hit (a RAPTOR summary) matches by containment,
and a two-word answer ("14 days") is contained in text that has nothing to do with the question
(docs/metrics.md). A span whose ``answer_start`` does not point at its text is misplaced: it is
relocated to the occurrence of its text nearest to ``answer_start`` or, absent from its paragraph,
not found (no gold context from it); repeated spans count once. ``dataset.meta["answer_spans"]``
holds the counts (a warning says them); ``meta["misplaced_spans"]`` = misplaced, relocated or not.
Unanswerable questions (v2.0 ``is_impossible``, or no answers) keep no gold and no answer, so
retrieval metrics skip them; their plausible answers stay in ``meta``.

``load_dataset("squad", path=FILE)`` reads any such file (default: the SQuAD v2.0 dev set in
``<data cache>/squad``); ``load_dataset("covidqa")`` reads ``<data cache>/covidqa/COVID-QA.json``.
Both come from ``python -m rag_lab download squad|covidqa``.
"""
from __future__ import annotations

import logging
import os
import re
from collections import Counter
from pathlib import Path

from ...core.chunking import sentence_spans
from ...core.types import Dataset, Document, Question, Section
from .. import register_loader
from ..cache import dataset_dir, download_hint
from ..text_blocks import TextBlocks
from ..upstream_files import read_json

log = logging.getLogger(__name__)


def _where(path, name: str, default_file: str) -> Path:
    file = Path(path) if path is not None else dataset_dir(name) / default_file
    if file.is_dir():
        file = file / default_file
    if not file.is_file():
        raise FileNotFoundError(f"{name}: SQuAD-format file not found at {file}. {download_hint(name)}; or pass "
                                "path=FILE (any SQuAD v1.1/v2.0 JSON file)")
    return file


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.casefold()).strip("-")


def _article_id(article: dict, index: int, taken: set[str]) -> str:
    paragraphs = article.get("paragraphs") or []
    first = paragraphs[0] if paragraphs and isinstance(paragraphs[0], dict) else {}
    base = str(first.get("document_id") or _slug(str(article.get("title") or "")) or f"article-{index}")
    out, n = base, 1
    while out in taken:
        n += 1
        out = f"{base}-{n}"
    taken.add(out)
    return out


def squad_dataset(data: dict, name: str, where: str, max_documents: int | None = None) -> Dataset:
    """The Dataset of a parsed SQuAD-format JSON object (see the module docstring for the mapping)."""
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        raise ValueError(f"{where}: expected a JSON object with a 'data' list of articles (SQuAD format)")
    articles = data["data"][:max_documents] if max_documents is not None else data["data"]
    documents, questions, taken, spans = [], [], set(), Counter()
    for a, article in enumerate(articles):
        if not isinstance(article, dict) or not isinstance(article.get("paragraphs"), list):
            raise ValueError(f"{where}: data[{a}] has no 'paragraphs' list")
        doc_id = _article_id(article, a, taken)
        blocks, sections = TextBlocks(), []
        for p, para in enumerate(article["paragraphs"]):
            context = para.get("context") if isinstance(para, dict) else None
            if not isinstance(context, str):
                raise ValueError(f"{where}: data[{a}].paragraphs[{p}] has no 'context' string")
            start, end = blocks.add(context)
            section = Section(f"{doc_id}:p{p}", f"Paragraph {p + 1}", "paragraph", start, end, 1)
            sections.append(section)
            sentences: list = []          # the paragraph's sentences, split once when a question needs them
            for qa in para.get("qas") or []:
                questions.append(_question(qa, doc_id, section, context, sentences, spans,
                                           f"{where}: data[{a}].paragraphs[{p}]"))
        title = str(article.get("title") or doc_id)
        documents.append(Document(doc_id, blocks.text, title, sections, {"source": name}))
    if not documents:
        raise ValueError(f"{where}: no articles")
    counts = {key: spans[key] for key in ("placed", "relocated", "not_found", "duplicates")}
    if counts["relocated"] or counts["not_found"] or counts["duplicates"]:
        log.warning("%s: answer spans: %d at their answer_start, %d misplaced and relocated to the nearest occurrence "
                    "of their text, %d not found in their paragraph (no gold context), %d duplicates (counted once)",
                    where, counts["placed"], counts["relocated"], counts["not_found"], counts["duplicates"])
    return Dataset(name, documents, questions, {"source": where, "version": data.get("version"), "answer_spans": counts,
                                                "misplaced_spans": counts["relocated"] + counts["not_found"]})


def _question(qa: dict, doc_id: str, section: Section, context: str, sentences: list, spans: Counter,
              where: str) -> Question:
    if not isinstance(qa, dict) or "question" not in qa:
        raise ValueError(f"{where}: a qas entry has no 'question'")
    answers = [x for x in qa.get("answers") or [] if isinstance(x, dict) and str(x.get("text", "")).strip()]
    impossible = bool(qa.get("is_impossible")) or not answers
    meta = {"answers": [x["text"] for x in answers], "is_impossible": impossible,
            "spans": [[x.get("answer_start"), len(x["text"])] for x in answers]}
    if qa.get("plausible_answers"):
        meta["plausible_answers"] = [x.get("text") for x in qa["plausible_answers"] if isinstance(x, dict)]
    qid = str(qa.get("id") or f"{section.id}-q")
    if impossible:
        return Question(qid, str(qa["question"]).strip(), None, meta=meta)
    golds = {}                                         # (start, end) in the paragraph -> its text, in answer order
    for answer in dict.fromkeys((x.get("answer_start"), x["text"]) for x in answers):
        start = _locate(*answer, context, spans)
        if start is not None:
            if not sentences:
                sentences.extend(sentence_spans(context) or [(0, len(context))])
            s, e = _sentences_around(start, start + len(answer[1]), sentences)
            golds.setdefault((s, e), context[s:e])
    spans["duplicates"] += len(answers) - len(dict.fromkeys((x.get("answer_start"), x["text"]) for x in answers))
    return Question(qid, str(qa["question"]).strip(), answers[0]["text"], [doc_id], list(golds.values()),
                    [section.id], meta, gold_context_offsets=[section.start + s for s, _ in golds])


def _locate(start, text: str, context: str, spans: Counter) -> int | None:
    """The answer's start in its paragraph: ``answer_start`` when it points at the text, else the text's
    occurrence nearest to it (misplaced, relocated), else None (not found); counted in ``spans``."""
    if isinstance(start, int) and context.startswith(text, start):
        spans["placed"] += 1
        return start
    found = [m.start() for m in re.finditer(re.escape(text), context)]
    if not found:
        spans["not_found"] += 1
        return None
    spans["relocated"] += 1
    return min(found, key=lambda i: abs(i - start) if isinstance(start, int) else i)


def _sentences_around(start: int, end: int, sentences: list) -> tuple[int, int]:
    """From the start of the sentence holding ``start`` to the end of the one holding ``end``."""
    inside = [(s, e) for s, e in sentences if s < end and e > start] or \
        [min(sentences, key=lambda se: abs(se[0] - start))]
    return inside[0][0], inside[-1][1]


@register_loader("squad", "SQuAD v1.1/v2.0-format JSON (path=FILE; default: the downloaded SQuAD v2.0 dev set): "
                          "articles with paragraph sections, gold = the sentence around each answer span")
def load_squad(path: str | os.PathLike | None = None, max_documents: int | None = None) -> Dataset:
    file = _where(path, "squad", "dev-v2.0.json")
    return squad_dataset(read_json(file), "squad" if path is None else f"squad-{file.stem}", str(file), max_documents)


@register_loader("covidqa", "COVID-QA (Möller et al. 2020): SQuAD-format questions on CORD-19 articles "
                            "(downloaded COVID-QA.json)")
def load_covidqa(path: str | os.PathLike | None = None, max_documents: int | None = None) -> Dataset:
    file = _where(path, "covidqa", "COVID-QA.json")
    return squad_dataset(read_json(file), "covidqa", str(file), max_documents)
