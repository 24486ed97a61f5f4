"""A worked example read for the reader: which gold *passages* (not just gold documents) each retrieved
chunk holds, marked in its text, and what the answer is against its reference and its context.

A chunk from a gold document may hold none of the gold passages; marking documents would show it as
gold. The passages are matched by the context-level rule of ``metrics`` (``span_overlap_match``), so
what is marked here is what ``ctx_recall`` counts. The answer is read with the project's own answer
scores (``answer_metrics.exact_match`` and ``token_f1``) and a plain word-for-word search of its
sentences in the contexts handed over: an extractive reasoner pastes context sentences, and an answer
spliced from two chunks reads as one when nothing says so.

This is the lab's one worked-example API: notebooks 00 and 01 (``worked_hits``, ``worked_answer``), 02 (the
voting rules, through ``methods.unweaver.views``), 03 (the seven traversals) and 04 (the six strategies)
mark gold passages with it (``worked_comparison``), so a passage is P1 in every notebook.
"""
from __future__ import annotations

import textwrap
from typing import Mapping, Sequence

import pandas as pd

from ..core.types import Chunk, Document, Question, Retrieval
from .answer_metrics import exact_match, normalize_answer, token_f1
from .metrics import GoldSpan, context_matches, locate_contexts, span_overlap_match
from .retrievers import answer_contexts, context_blocks

MARKS = ("⟦", "⟧")   # around a gold passage's characters in a printed chunk
NOT_ELECTED = "not elected"   # a gold passage no hit of a retrieval holds


def gold_segments(chunk: Chunk, golds: Sequence[GoldSpan], min_overlap: float = 0.5) -> list[tuple[str, bool]]:
    """``chunk.text`` cut into (piece, is_gold) runs. A span chunk marks the characters it shares
    with a gold span of its document; a derived chunk (a summary) marks verbatim copies of a gold
    context's text. Only golds that match the hit under the metrics' rule are marked."""
    text, ranges = chunk.text, []
    for g in golds:
        if g.doc_id is None or not span_overlap_match(chunk, g, min_overlap):
            continue
        if chunk.is_span and chunk.doc_id == g.doc_id:
            a, b = max(chunk.start, g.start) - chunk.start, min(chunk.end, g.end) - chunk.start
            if b > a:
                ranges.append((a, b))
        else:
            needle, i = g.text.strip(), text.find(g.text.strip())
            while needle and i >= 0:
                ranges.append((i, i + len(needle)))
                i = text.find(needle, i + 1)
    merged: list[list[int]] = []
    for a, b in sorted(ranges):
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    out, cursor = [], 0
    for a, b in merged:
        if a > cursor:
            out.append((text[cursor:a], False))
        out.append((text[a:b], True))
        cursor = b
    if cursor < len(text) or not out:
        out.append((text[cursor:], False))
    return out


def marked_text(chunk: Chunk, golds: Sequence[GoldSpan], min_overlap: float = 0.5) -> str:
    """The chunk's text with each gold passage's characters between ``MARKS``."""
    return "".join(f"{MARKS[0]}{piece}{MARKS[1]}" if gold else piece for piece, gold in gold_segments(chunk, golds, min_overlap))


def wrapped(text: str, width: int = 120) -> str:
    """``text`` with each of its lines folded at ``width`` characters (between words), so a chunk printed
    whole is read without scrolling sideways; its own line breaks are kept."""
    return "\n".join(textwrap.fill(line, width, break_long_words=False, break_on_hyphens=False) if line.strip() else line
                     for line in text.split("\n"))


def gold_passages_held(chunk: Chunk, golds: Sequence[GoldSpan], min_overlap: float = 0.5) -> list[int]:
    """1-based numbers of the gold passages the chunk matches (the rule ``ctx_recall`` counts)."""
    return [j + 1 for j, g in enumerate(golds) if g.doc_id is not None and span_overlap_match(chunk, g, min_overlap)]


def worked_hits(chunks: Sequence[Chunk], question: Question, documents: Mapping[str, Document] | Sequence[Document],
                min_overlap: float = 0.5) -> list[str]:
    """Printable lines: the question's gold passages numbered (with the ranks that hold each, or "not
    retrieved"), then each ranked chunk with the passages it holds and its text, gold marked."""
    if not question.gold_contexts:
        return ["This question lists no gold passages: nothing to mark."]
    docs = dict(documents) if isinstance(documents, Mapping) else {d.id: d for d in documents}
    golds = locate_contexts(question, docs)
    held = [gold_passages_held(c, golds, min_overlap) for c in chunks]
    lines = [f"Gold passages of this question, P1, P2 … as notebook 02 labels them ({MARKS[0]}…{MARKS[1]} in the chunks below):"]
    for j, g in enumerate(golds, start=1):
        ranks = [str(r) for r, h in enumerate(held, start=1) if j in h]
        where = f"in rank {', '.join(ranks)}" if ranks else f"NOT in the top {len(chunks)}"
        place = g.doc_id if g.doc_id is not None else "not found in any document"
        lines.append(f"  P{j} ({place}; {where}): {_short(g.text, 110)}")
    for r, (c, h) in enumerate(zip(chunks, held), start=1):
        tag = f"holds {', '.join(f'P{j}' for j in h)}" if h else "no gold passage" + (
            " (a gold document, other passages)" if c.doc_id in question.gold_doc_ids else "")
        lines.append(f"\n#{r} {c.id} — {tag}:\n{wrapped(marked_text(c, golds, min_overlap))}")
    return lines


def answer_pieces(answer: str, contexts: Sequence[str]) -> list[tuple[str, tuple[int, ...]]]:
    """The answer's sentences, each with the 0-based indexes of the contexts it was copied from word for
    word: one index when a context holds the whole sentence; two when it is the end of one context and
    the start of another joined at a space (two separate contexts, e.g. the halves of sentences a chunk
    boundary cut, read as one sentence); () when neither."""
    from ..core.chunking import sentence_spans

    def first(piece: str, where=lambda piece, c: piece in c) -> int | None:
        return next((i for i, c in enumerate(contexts) if where(piece, c)), None)

    def ends(piece: str, c: str) -> bool:
        return c.rstrip().endswith(piece)

    def starts(piece: str, c: str) -> bool:
        return c.lstrip().startswith(piece)

    out = []
    for s, e in sentence_spans(answer):
        sentence = answer[s:e]
        whole = first(sentence)
        if whole is not None:
            out.append((sentence, (whole,)))
            continue
        joined: tuple[int, ...] = ()
        for cut in (i for i, ch in enumerate(sentence) if ch == " "):
            left, right = first(sentence[:cut], ends), first(sentence[cut + 1:], starts)
            if left is not None and right is not None:
                joined = (left, right)
                break
        out.append((sentence, joined))
    return out


def answer_reading(answer: str, reference: str | None, contexts: Sequence[str],
                   context_names: Sequence[str] | None = None) -> str:
    """One sentence on the worked answer: does it match the reference (exact match after SQuAD's
    normalisation, with its token F1), and is it pasted word for word from the context (from which
    contexts, spliced when from several)."""
    names = list(context_names) if context_names is not None else [f"context {i + 1}" for i in range(len(contexts))]
    if len(names) != len(contexts):
        raise ValueError(f"context_names: expected one per context ({len(contexts)}), got {len(names)}")
    if not answer.strip():
        return "No answer was given, so there is nothing to compare with the reference."
    if not reference:
        verdict = "There is no reference answer to compare it with"
    elif exact_match(answer, reference):
        verdict = "The answer matches the reference (exact match 1 after normalisation)"
    elif reference_in_answer(answer, reference):
        verdict = (f"The answer holds the reference's words in order but adds more (exact match 0; token F1 "
                   f"against it {token_f1(answer, reference):.2f})")
    else:
        verdict = (f"The answer does not match the reference (exact match 0; token F1 against it "
                   f"{token_f1(answer, reference):.2f})")
    whole = next((names[i] for i, c in enumerate(contexts) if answer.strip() in c), None)
    pieces = answer_pieces(answer, contexts)
    sources = list(dict.fromkeys(names[i] for _, found in pieces for i in found))
    copied = sum(bool(found) for _, found in pieces)
    joined = [found for _, found in pieces if len(found) == 2]
    if whole is not None:
        paste = f"it is pasted word for word from {whole}"
    elif pieces and copied == len(pieces) and len(sources) > 1:
        paste = (f"it is pasted word for word: its {len(pieces)} sentences are copied from {_and(sources)} "
                 f"and spliced together")
    elif copied:
        paste = f"{copied} of its {len(pieces)} sentences are copied word for word from {_and(sources)}"
    else:
        paste = "none of its sentences appears word for word in the context"
    if joined:
        paste += "; " + "; ".join(f"one sentence joins the end of {names[a]} to the start of {names[b]}: two "
                                  "separate contexts read as one sentence" for a, b in joined)
    return f"{verdict};\n{paste}."


def gold_passages(question: Question, documents: list[Document]) -> list[GoldSpan]:
    """The question's gold passages found in the corpus, exactly as the context-level metrics find them."""
    return locate_contexts(question, {d.id: d for d in documents})


def passage_label(j: int) -> str:
    """P1, P2 …: a gold passage's label, in the order the question lists them."""
    return f"P{j + 1}"


def _passages_held(retrieval: Retrieval, golds: list[GoldSpan]) -> list[set[int]]:
    """Per elected chunk, the gold passages it holds by the context metrics' overlap rule (ctx_recall's)."""
    return context_matches([h.chunk for h in retrieval.hits], golds)


def chunks_holding(chunks, golds: list[GoldSpan]) -> set[str]:
    """Ids of the chunks that hold some gold passage (the overlap rule of ctx_recall)."""
    chunks = list(chunks)
    return {c.id for c, held in zip(chunks, context_matches(chunks, list(golds))) if held}


def rule_comparison(retrievals: dict[str, Retrieval], golds: list[GoldSpan] = ()) -> pd.DataFrame:
    """Ranked hits side by side, one column per retrieval (a voting rule, a method, a strategy); a chunk that
    holds a gold passage (``gold_passages``; the overlap rule of ctx_recall) is marked with a check and the
    passage's label."""
    golds = list(golds)
    width = max(len(r.hits) for r in retrievals.values())
    columns = {}
    for name, r in retrievals.items():
        marks = [h.chunk.id + (" ✓ " + ", ".join(passage_label(j) for j in sorted(held)) if held else "")
                 for h, held in zip(r.hits, _passages_held(r, golds))]
        columns[name] = padded(marks, width)
    return pd.DataFrame(columns, index=pd.RangeIndex(1, width + 1, name="rank"))


def gold_passage_table(retrievals: dict[str, Retrieval], golds: list[GoldSpan], width: int = 90) -> pd.DataFrame:
    """One row per gold passage (its label, document and opening words), one column per retrieval: the rank
    of the first hit that holds it, or "not elected"."""
    rows = []
    held = {name: _passages_held(r, list(golds)) for name, r in retrievals.items()}
    for j, g in enumerate(golds):
        text = g.text if len(g.text) <= width else g.text[:width - 1] + "…"
        row = {"passage": passage_label(j), "document": g.doc_id or "not found in the corpus", "text": text}
        for name, per_hit in held.items():
            ranks = [i + 1 for i, s in enumerate(per_hit) if j in s]
            row[name] = f"rank {ranks[0]}" if ranks else NOT_ELECTED
        rows.append(row)
    return pd.DataFrame(rows, columns=["passage", "document", "text", *retrievals]).set_index("passage")


def worked_comparison(retrievals: Mapping[str, Retrieval], question: Question,
                      documents: Mapping[str, Document] | Sequence[Document]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One question's retrievals side by side (methods, strategies, algorithms or voting rules), read for the
    reader: (``gold_passage_table``: per gold passage P1, P2 … the rank at which each retrieval holds it;
    ``rule_comparison``: the ranked hits, ✓ Pn where a hit holds passage n). Passages are located and matched
    as ``ctx_recall`` does."""
    docs = list(documents.values()) if isinstance(documents, Mapping) else list(documents)
    golds = gold_passages(question, docs)
    return gold_passage_table(dict(retrievals), golds), rule_comparison(dict(retrievals), golds)


def padded(items: list, n: int) -> list:
    """``items`` followed by empty cells up to ``n`` (a column of a side-by-side table)."""
    return list(items) + [""] * (n - len(items))


def worked_answer(retriever, reasoner, question: Question, retrieval) -> tuple[str, str]:
    """The reasoner's answer from what ``retriever`` hands over for ``retrieval`` (its context blocks, then
    its hits), and ``answer_reading`` of it with each context named (a block by its kind, a hit by its id)."""
    contexts = answer_contexts(retriever, retrieval)
    names = [f"the {kind} block" for kind, _ in context_blocks(retriever, retrieval)] + [h.chunk.id for h in retrieval.hits]
    answer = reasoner.answer(question.question, contexts)
    return answer, answer_reading(answer, question.answer, contexts, names)


def answer_prompt(retriever, question: Question, retrieval, context_chars: int | None = 300) -> str:
    """What an answering LLM would be asked for ``retrieval``: the answer job's user message
    (``reasoning.prompts.ANSWER``) over exactly the contexts ``retriever`` hands over (its context blocks,
    then its hits), each context shown to ``context_chars`` characters (None: whole) so a reader sees the
    prompt's shape and order, not every word."""
    from ..reasoning.prompts import ANSWER

    contexts = answer_contexts(retriever, retrieval)
    if context_chars is not None:
        contexts = [_short(c, context_chars) for c in contexts]
    return ANSWER.messages(question=question.question, contexts=contexts)[1]["content"]


def reference_in_answer(answer: str, reference: str) -> bool:
    """Whether the normalised reference appears inside the normalised answer (a long answer that holds it)."""
    ref = normalize_answer(reference)
    return bool(ref) and f" {ref} " in f" {normalize_answer(answer)} "


def _and(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _short(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"
