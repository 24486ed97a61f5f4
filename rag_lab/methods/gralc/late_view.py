"""The picture that teaches late chunking, as data: one document's sentences embedded *alone*
(each read by the encoder on its own, as chunk-then-embed does) and *late* (the mean of the whole
document's contextual token vectors over the sentence's tokens, as late chunking pools a chunk),
their cosines to a query, and what the nearest neighbours of one sentence become.

The whole-document token vectors come from ``encoding.encode_document`` (sliding windows past the
encoder's limit, so each token sees the words around it within one window), the same encoding the
late-chunking strategies pool.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ...core import ties
import pandas as pd

from ...core.types import Document

PREVIEW = 70    # characters of a sentence shown in the neighbour table


def normalised(v: np.ndarray) -> np.ndarray:
    v = np.asarray(v, dtype=np.float64)
    return v / np.maximum(np.linalg.norm(v, axis=-1, keepdims=True), 1e-12)


def pooled_spans(token_vectors: np.ndarray, offsets: np.ndarray, spans: Sequence[tuple[int, int]]) -> np.ndarray:
    """Late chunking's pooling: each character span's vector is the mean of the token vectors that
    overlap it, unit length. A span that holds no token is an error."""
    from .encoding import char_span_to_tokens

    out = []
    for s, e in spans:
        a, b = char_span_to_tokens(offsets, s, e)
        if b <= a:
            raise ValueError(f"span ({s}, {e}) holds no token")
        out.append(token_vectors[a:b].mean(axis=0))
    return normalised(np.stack(out))


def ranks(scores: np.ndarray) -> np.ndarray:
    """1 for the highest score, ties broken by position."""
    order = ties.order(scores, what="")
    out = np.empty(len(scores), dtype=int)
    out[order] = np.arange(1, len(scores) + 1)
    return out


def neighbours(vectors: np.ndarray, focus: int, k: int) -> list[tuple[int, float]]:
    """The ``k`` spans most similar to span ``focus`` (itself left out), best first, with their cosines."""
    cos = vectors @ vectors[focus]
    order = [i for i in ties.order(cos, what="") if i != focus][:k]
    return [(i, float(cos[i])) for i in order]


@dataclass
class LateView:
    """``spans``: one row per span (start, end, text, cosine to the query alone/late and its rank,
    cosine to the focus span alone/late); ``focus``: the span whose neighbours are listed;
    ``neighbours``: its top k under each embedding; ``pairwise_median``: the median cosine between two
    different spans of the document, alone and late."""

    doc_id: str
    query: str
    focus: int
    spans: pd.DataFrame
    neighbours: pd.DataFrame
    pairwise_median: dict[str, float]

    @property
    def sentence(self) -> str:
        """What the figure shows, in words, from the view's numbers."""
        t, f = self.spans, self.focus
        n = len(t)
        alone = [int(i) for i in self.neighbours["alone: span"]]
        late = [int(i) for i in self.neighbours["late: span"]]
        near = sum(abs(i - f) <= len(late) for i in late)
        spread = (f"two sentences of this document have a median cosine of {self.pairwise_median['alone']:.2f} alone "
                  f"and {self.pairwise_median['late']:.2f} late")
        return (f"Sentence {f} of {self.doc_id} ranks {t.loc[f, 'rank_alone']} of {n} for the query embedded alone "
                f"(cosine {t.loc[f, 'cos_query_alone']:.2f}) and {t.loc[f, 'rank_late']} pooled late "
                f"({t.loc[f, 'cos_query_late']:.2f}). Its {len(late)} nearest sentences alone: {alone}; late: {late} "
                f"({len(set(alone) & set(late))} shared; {near} of the late ones within {len(late)} sentences of it). "
                f"Late pooling mixes each sentence's context into its vector: {spread}"
                + (" (context draws them together)." if self.pairwise_median["late"] > self.pairwise_median["alone"]
                   else " (here context did not draw them together)."))


def choose_focus(rank_alone: np.ndarray, rank_late: np.ndarray) -> int:
    """The span whose rank for the query moves most between the two embeddings (ties: the better late
    rank, then the earlier span)."""
    move = np.abs(rank_alone - rank_late)
    return int(min(range(len(move)), key=lambda i: (-move[i], rank_late[i], i)))


def late_view(doc: Document, query: str, embedder, spans: Sequence[tuple[int, int]] | None = None,
              focus: int | None = None, k: int = 3, overlap: int | None = None, min_words: int = 6) -> LateView:
    """Alone vs late for the spans of ``doc`` (default: its sentences of at least ``min_words`` words, so
    caption stubs such as "Table 2." stay out). ``focus`` (default ``choose_focus``) is the span whose
    ``k`` nearest neighbours among the others are listed."""
    from ...core.chunking import sentence_spans
    from .config import LateChunksConfig
    from .encoding import encode_document

    if spans is None:
        spans = [(s, e) for s, e in sentence_spans(doc.text) if len(doc.text[s:e].split()) >= min_words]
    spans = [(int(s), int(e)) for s, e in spans]
    if len(spans) < k + 1:
        raise ValueError(f"late_view needs more than k = {k} spans, {doc.id!r} has {len(spans)}")
    texts = [doc.text[s:e] for s, e in spans]
    alone = normalised(embedder.encode(texts))
    enc = encode_document(doc.text, embedder, LateChunksConfig().window_overlap if overlap is None else overlap)
    late = pooled_spans(enc.embeddings, enc.offsets, spans)
    q = normalised(embedder.encode([query]))[0]
    table = pd.DataFrame({"start": [s for s, _ in spans], "end": [e for _, e in spans], "text": texts,
                          "cos_query_alone": alone @ q, "cos_query_late": late @ q})
    table["rank_alone"], table["rank_late"] = ranks(table["cos_query_alone"].to_numpy()), ranks(table["cos_query_late"].to_numpy())
    focus = choose_focus(table["rank_alone"].to_numpy(), table["rank_late"].to_numpy()) if focus is None else int(focus)
    if not 0 <= focus < len(spans):
        raise ValueError(f"focus must be a span number in 0..{len(spans) - 1}, got {focus}")
    table["cos_focus_alone"], table["cos_focus_late"] = alone @ alone[focus], late @ late[focus]
    table.index.name = "span"
    rows = []
    for rank, ((ia, ca), (il, cl)) in enumerate(zip(neighbours(alone, focus, k), neighbours(late, focus, k)), 1):
        rows.append({"rank": rank, "alone: span": ia, "alone: cosine": ca, "alone: text": _preview(texts[ia]),
                     "late: span": il, "late: cosine": cl, "late: text": _preview(texts[il])})
    pairs = np.triu_indices(len(spans), 1)
    medians = {name: float(np.median((v @ v.T)[pairs])) for name, v in (("alone", alone), ("late", late))}
    return LateView(doc.id, query, focus, table, pd.DataFrame(rows).set_index("rank"), medians)


def _preview(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= PREVIEW else text[:PREVIEW - 1] + "…"
