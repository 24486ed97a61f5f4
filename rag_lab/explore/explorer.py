"""The teaching explorer: one question, one method, its top-k hits and what the method did.

``Explorer.view(dataset, method, question | text, k, knob)`` returns an ``ExplorerView``: the hits
with their text (the parts that overlap a gold context marked), score, source and gold flags, and
the method's trace in words (graph facts for SKETCH, the voting classes for UnWeaver, the path for
SSG, the chunk boundaries for GraLC-RAG, the tree level for RAPTOR). ``ExplorerView.to_html()`` is
what the notebook widget (``explore_widget.explorer_widget``) shows; both are plain data, tested
without a browser.

Each method has one *main knob* (``MAIN_KNOBS``). Query-time knobs (SKETCH's hops, UnWeaver's
voting classes, SSG's sentence budget, GraLC's β) reuse the built index: the explorer keeps one
built retriever per (method, index config, dataset) and answers with a shallow copy whose config
has the knob changed. An index-time knob (a chunk size, a threshold) builds once per value and is
kept too, so moving a slider back costs nothing.
"""
from __future__ import annotations

import copy
import html
import time
from dataclasses import dataclass, field
from typing import Any, Sequence

from ..datasets import load_dataset, shipped_datasets
from ..evaluation.metrics import locate_contexts, span_overlap_match
from ..evaluation.worked import gold_segments  # noqa: F401  (re-exported: the explorer marks gold with it)
from ..methods import available_methods, get_retriever
from ..evaluation.harness import build, retrieve
from ..evaluation.retrievers import Retriever, registered_config
from ..core.types import Chunk, Dataset, Question


@dataclass(frozen=True)
class Knob:
    """A method's main knob: a config field, its slider range, and whether it is read at query time."""

    name: str
    label: str
    minimum: float
    maximum: float
    step: float
    query_time: bool


_SSG_KNOB = Knob("max_sentences", "sentences gathered", 3, 30, 1, True)
MAIN_KNOBS: dict[str, Knob] = {
    "naive": Knob("size", "window (tokens)", 32, 512, 16, False),
    "bm25": Knob("k1", "BM25 k1 (term saturation)", 0.0, 3.0, 0.1, False),
    "hybrid": Knob("rrf_k", "fusion k", 0, 200, 5, True),
    "semantic": Knob("threshold", "breakpoint percentile", 50, 99, 1, False),
    "sketch": Knob("hops", "graph hops", 1, 3, 1, True),
    "kg": Knob("hops", "graph hops", 1, 3, 1, True),
    "raptor": Knob("levels", "tree levels", 0, 5, 1, False),
    "unweaver": Knob("top_n", "voting classes", 1, 30, 1, True),
    "gralc-naive": Knob("size", "chunk (tokens)", 64, 512, 32, False),
    "gralc-semantic": Knob("threshold", "merge cosine", 0.5, 0.95, 0.05, False),
    "gralc-late": Knob("max_tokens", "max chunk (tokens)", 256, 1024, 64, False),
    "gralc-structure": Knob("tau", "boundary peak τ", 0.05, 0.9, 0.05, False),
    "gralc-kg": Knob("lam", "KG fusion λ", 0.0, 2.0, 0.1, False),
    "gralc-graph": Knob("beta", "cosine weight β", 0.0, 1.0, 0.05, True),
}


def main_knob(method: str) -> Knob | None:
    """The main knob of a registered method (SSG algorithms share one); None if it has none."""
    return _SSG_KNOB if method.startswith("ssg-") else MAIN_KNOBS.get(method)


@dataclass
class HitView:
    rank: int
    chunk_id: str
    doc_id: str
    title: str
    score: float
    via: str
    segments: list[tuple[str, bool]]   # the hit's text in pieces, True where it overlaps a gold context
    gold_doc: bool
    gold_context: bool
    note: str = ""                     # method-specific: votes, tree level, position in the document

    @property
    def text(self) -> str:
        return "".join(t for t, _ in self.segments)


@dataclass
class ExplorerView:
    dataset: str
    method: str
    config: dict[str, Any]
    knob: tuple[str, Any] | None
    k: int
    query: str
    question_id: str | None
    answer: str | None
    gold_doc_ids: list[str]
    hits: list[HitView]
    trace: list[tuple[str, str]]       # (what, in words), the method's own account of the query
    build_seconds: float
    query_seconds: float
    reused_index: bool
    error: str = ""
    meta: dict[str, Any] = field(default_factory=dict)

    def to_html(self) -> str:
        return view_html(self)

    @classmethod
    def failed(cls, dataset: str, method: str, k: int, query: str, error: str) -> "ExplorerView":
        """A view with no hits that says why (shown by the widget instead of raising)."""
        return cls(dataset, method, {}, None, k, query or "", None, None, [], [], [], 0.0, 0.0, False, error)


def _short(items: Sequence[Any], n: int = 8) -> str:
    items = [str(i) for i in items]
    return ", ".join(items[:n]) + (f" … (+{len(items) - n})" if len(items) > n else "") if items else "none"


def trace_lines(method: str, retriever: Retriever, trace: dict[str, Any], hits: list[HitView]) -> list[tuple[str, str]]:
    """The method's trace of one query in words; notes on ``hits`` are filled in where per hit."""
    if method in ("sketch", "kg"):
        matched = [f"{m['entity']} → {m['node']} ({m['how']}, {m['similarity']:.2f})" for m in trace.get("matches", [])]
        out = [("query entities", _short(trace.get("query_entities", []))), ("matched graph nodes", _short(matched)),
               (f"graph facts ({trace.get('hops')} hop(s))", "\n".join(trace.get("facts", [])[:12]) or "none")]
        if "merge" in trace:
            out.append(("merge", _short([f"{m['chunk_id']} ({m['source']})" for m in trace["merge"]], 12)))
        return out
    if method == "unweaver":
        approvals = trace.get("approvals", {})
        for h in hits:
            h.note = f"{approvals.get(h.chunk_id, 0)} vote(s)"
        classes = [f"{c['name']} ({c['similarity']:.2f})" for c in trace.get("classes", [])]
        return [("voting classes (similarity)", _short(classes, 12)),
                ("rule", f"{trace.get('rule')} ({trace.get('select')}), {trace.get('voters_used')} voters")]
    if method.startswith("ssg-"):
        return [("anchor window", str(trace.get("anchor"))), ("path", " → ".join(map(str, trace.get("path", []))) or "none"),
                ("stop", f"{trace.get('stop_reason')} after {trace.get('sentences_gathered')} sentences")]
    if method.startswith("gralc-"):
        return _gralc_lines(retriever, trace, hits)
    if method == "raptor":
        for h, level in zip(hits, trace.get("levels", [])):
            h.note = f"summary, level {level}" if level else "leaf"
        return [("tree (nodes per level, leaves first)", _short(trace.get("tree_levels", [])))]
    if method == "hybrid":
        for h, v, b in zip(hits, trace.get("vector_ranks", []), trace.get("bm25_ranks", [])):
            h.note = f"rank {v or '-'} by cosine, {b or '-'} by BM25"
    ranking = {"naive": "cosine of the query to each", "semantic": "cosine of the query to each",
               "bm25": "BM25 of the query's words in each",
               "hybrid": "reciprocal rank fusion (cosine and BM25) over each"}.get(method, f"{method}'s score of each")
    return [("ranking", f"{ranking} of {len(retriever.chunks)} chunks")] + \
        [(str(key), _short(value if isinstance(value, list) else [value])) for key, value in trace.items()]


def _gralc_lines(retriever: Retriever, trace: dict[str, Any], hits: list[HitView]) -> list[tuple[str, str]]:
    """GraLC-RAG: where each hit sits among its document's chunks (the chosen boundaries), and for the
    structure-aware strategies the boundary score at each cut."""
    by_doc: dict[str, list[Chunk]] = {}
    for c in retriever.chunks:
        by_doc.setdefault(c.doc_id, []).append(c)
    out = []
    for h in hits:
        chunks = by_doc.get(h.doc_id, [])
        index = next((i for i, c in enumerate(chunks) if c.id == h.chunk_id), None)
        if index is not None:
            h.note = f"chunk {index + 1} of {len(chunks)}, chars {chunks[index].start}–{chunks[index].end}"
    traces = getattr(retriever, "traces", {})
    for doc_id in dict.fromkeys(h.doc_id for h in hits):
        cuts = [c.start for c in by_doc.get(doc_id, [])][1:]
        line = f"{len(cuts)} cuts at chars {_short(cuts, 12)}"
        if doc_id in traces:
            t = traces[doc_id]
            line += f"; boundary scores at the cut tokens: {_short([f'{t.score[b]:.2f}' for b in t.boundaries if b < len(t.score)], 12)}"
        out.append((f"boundaries in {doc_id}", line))
    if "query_concepts" in trace:
        out.append(("query concepts", _short(trace["query_concepts"])))
    if "kg_prox" in trace:
        out.append(("kg_prox of the hits", _short(trace["kg_prox"])))
    return out


class Explorer:
    """Builds methods on demand and keeps them (see the module docstring).

    ``embedder``/``reasoner`` are handed to every method built; ``keep(dataset, *retrievers)`` adds a
    dataset and retrievers the caller built already (a notebook's), so they are not built again."""

    def __init__(self, embedder=None, reasoner=None, datasets: Sequence[str] | None = None):
        self.embedder, self.reasoner = embedder, reasoner
        self.datasets: dict[str, Dataset | None] = {name: None for name in (datasets or shipped_datasets())}
        self._built: dict[tuple[str, str, str], Retriever] = {}

    @property
    def methods(self) -> list[str]:
        return list(available_methods())

    def keep(self, dataset: Dataset, *retrievers: Retriever) -> "Explorer":
        self.datasets[dataset.name] = dataset
        for r in retrievers:
            self._built[(r.name, r.config.config_id, dataset.name)] = r
        return self

    def dataset(self, name: str) -> Dataset:
        if self.datasets.get(name) is None:
            self.datasets[name] = load_dataset(name)
        return self.datasets[name]

    def retriever(self, method: str, dataset: str, knob_value: Any = None) -> tuple[Retriever, bool, float]:
        """(retriever for these settings, whether a built index was reused, build seconds)."""
        knob, config = main_knob(method), registered_config(method)
        change = {}
        if knob is not None and knob_value is not None:
            default = getattr(config, knob.name)
            change = {knob.name: type(default)(knob_value) if default is not None else knob_value}
        index_change = {} if knob is None or knob.query_time else change
        key = (method, config.replace(**index_change).config_id, dataset)
        reused = key in self._built
        if not reused:
            r = get_retriever(method, embedder=self.embedder, reasoner=self.reasoner, **index_change)
            self._built[key] = build(r, self.dataset(dataset).documents)
        built = self._built[key]
        if change and knob.query_time:   # the same index, queried with the knob changed
            built = copy.copy(built)
            built.config = built.config.replace(**change)
        return built, reused, self._built[key].build_cost.seconds

    def flipped(self, dataset: str, a: str, b: str, k: int = 5) -> list[tuple[str, str, str]]:
        """The questions of ``dataset`` that exactly one of ``a`` and ``b`` gets right at ``k`` (a gold
        passage, else a gold document, in its top k): (question id, the method that gets it, question),
        from the explorer's own builds of both (``flips.flips``; notebook 10 lists the same)."""
        from ..evaluation.harness import evaluate_retrieval
        from ..evaluation.flips import flips

        if a == b:
            return []
        data = self.dataset(dataset)
        ra, rb = self.retriever(a, dataset)[0], self.retriever(b, dataset)[0]
        scores = evaluate_retrieval({a: ra, b: rb}, data, [k], progress=False)
        table = flips(scores, a, b, k, data)
        return list(zip(table["question_id"], table["winner"], table["question"]))

    def view(self, dataset: str, method: str, question: str | None = None, text: str | None = None,
             k: int = 5, knob_value: Any = None) -> ExplorerView:
        """What the widget shows: ``text`` (a typed query) wins over ``question`` (an id; default the first)."""
        data = self.dataset(dataset)
        q = _pick_question(data, question) if not (text and text.strip()) else None
        query = text.strip() if q is None else q.question
        if not query:
            raise ValueError(f"dataset {dataset!r} has no questions: type a query")
        retriever, reused, build_seconds = self.retriever(method, dataset, knob_value)
        t0 = time.perf_counter()
        retrieval = retrieve(retriever, query, k)
        seconds = time.perf_counter() - t0
        golds = locate_contexts(q, {d.id: d for d in data.documents}) if q is not None else []
        titles = {d.id: d.title for d in data.documents}
        hits = [HitView(i, h.chunk.id, h.chunk.doc_id, titles.get(h.chunk.doc_id, ""), h.score, h.via,
                        gold_segments(h.chunk, golds), q is not None and h.chunk.doc_id in q.gold_doc_ids,
                        any(span_overlap_match(h.chunk, g, 0.5) for g in golds if g.doc_id is not None))
                for i, h in enumerate(retrieval.hits, 1)]
        knob = main_knob(method)
        return ExplorerView(dataset, method, retriever.config.as_dict(),
                            (knob.name, getattr(retriever.config, knob.name)) if knob else None, k, query,
                            q.id if q else None, q.answer if q else None, list(q.gold_doc_ids) if q else [], hits,
                            trace_lines(method, retriever, retrieval.trace, hits), build_seconds, seconds, reused)


def _pick_question(data: Dataset, question: str | None) -> Question | None:
    if not data.questions:
        return None
    if question is None:
        return data.questions[0]
    for q in data.questions:
        if q.id == question:
            return q
    raise ValueError(f"dataset {data.name!r} has no question {question!r}")


def view_html(v: ExplorerView) -> str:
    """The view as a self-contained HTML fragment (inline styles: it renders in JupyterLab, in an
    executed notebook and in nbconvert's HTML alike)."""
    e = lambda s: html.escape(str(s))  # noqa: E731
    knob = f" · {e(v.knob[0])} = {e(v.knob[1])}" if v.knob else ""
    cost = "" if v.error else (("index reused" if v.reused_index else f"built in {v.build_seconds:.1f} s")
                               + f" · query {v.query_seconds * 1000:.0f} ms")
    lines = [f"<b>{e(v.method)}</b> on <b>{e(v.dataset)}</b>, top {v.k}{knob} · {cost}",
             f"<b>Q{' ' + e(v.question_id) if v.question_id else ''}:</b> {e(v.query)}"]
    if v.answer:
        lines.append(f"<b>reference answer:</b> {e(v.answer)}")
    if v.gold_doc_ids:
        lines.append(f"<b>gold documents:</b> {e(', '.join(v.gold_doc_ids))}")
    head = "<div style='font-size:13px'>" + "<br>".join(lines) + "</div>"
    rows = []
    for h in v.hits:
        text = "".join(f"<mark style='background:#fff176'>{e(t)}</mark>" if g else e(t) for t, g in h.segments)
        flags = ("✓ gold passage" if h.gold_context else "") or ("gold document" if h.gold_doc else "")
        rows.append(f"<tr><td style='vertical-align:top;text-align:right'>{h.rank}</td>"
                    f"<td style='vertical-align:top'>{h.score:.3f}<br><small>{e(h.via)}</small></td>"
                    f"<td style='vertical-align:top'><code>{e(h.chunk_id)}</code><br><small>{e(h.title)}</small>"
                    f"<br><small style='color:#2e7d32'>{flags}</small><br><small>{e(h.note)}</small></td>"
                    f"<td style='vertical-align:top;text-align:left;white-space:pre-wrap'>{text}</td></tr>")
    table = ("<table class='rag-lab-hits' style='border-collapse:collapse;font-size:12px'><tr><th>#</th><th>score</th>"
             "<th>chunk</th><th style='text-align:left'>text (gold passages marked)</th></tr>" + "".join(rows) + "</table>")
    trace = "".join(f"<li><b>{e(what)}:</b> <span style='white-space:pre-wrap'>{e(words)}</span></li>"
                    for what, words in v.trace)
    error = f"<p style='color:#c62828'>{e(v.error)}</p>" if v.error else ""
    return (f"<div class='rag-lab-explorer'>{head}{error}{table}<div style='font-size:12px'><b>What {e(v.method)} did</b>"
            f"<ul>{trace}</ul></div></div>")
