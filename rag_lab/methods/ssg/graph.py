"""The semantic similarity graph (SSG) of the SSG-traversal paper, as a networkx DiGraph.

Three layers (the paper's Figure D):

- document nodes ``doc:<id>`` carry five themes drawn by the reasoner from the document's first
  500 words; ``theme`` edges join each document to its ``top_t`` most theme-similar others (the
  themes of a document are embedded together as one text);
- window nodes ``<id>#w<i>`` are runs of ``window`` sentences moved by ``stride`` sentences, with
  ``intra`` edges to their ``top_k`` most similar windows in the same document and ``inter`` edges
  to their ``top_x`` most similar windows elsewhere (FAISS, see ``edges.py``); a ``contains``
  edge leads from the document to each of its windows;
- sentence nodes ``<id>#s<j>`` are only children of the windows that hold them (``child`` edges).

Windows and sentences inherit their document's themes. Vectors live in numpy arrays beside the
networkx graph (rows in ``window_ids`` / ``sentence_ids`` / ``doc_ids`` order). A 3-component PCA
fitted on the window vectors serves the 3-D triangulation and the 3-D plot. The knobs (window,
stride, top_k, top_x, top_t, themes) are ``SSGConfig``'s (``config.py``); a graph keeps the config
it was built with as ``graph.config`` (only its ``GRAPH_KNOBS`` shape the graph).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import numpy as np

from ...core import ties

from ...caching.atomic import atomic_path, write_text
from ...core.types import Cost, Document
from ...reasoning.batch import run_batch
from .config import SSGConfig
from .edges import sparse_neighbours, theme_bridges

if TYPE_CHECKING:  # pragma: no cover
    import networkx as nx

SIMILARITY_KINDS = ("intra", "inter")
FORMAT_VERSION = 1


@dataclass(frozen=True)
class Sentence:
    id: str
    doc_id: str
    index: int
    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Window:
    id: str
    doc_id: str
    index: int
    start: int
    end: int
    text: str
    sentence_ids: tuple[str, ...]


def doc_node(doc_id: str) -> str:
    return f"doc:{doc_id}"


def segment(documents: Sequence[Document], window: int, stride: int) -> tuple[list[Sentence], list[Window]]:
    """Sentences and sentence windows of every document, as exact spans of its text."""
    from ...core.chunking import sentence_spans, sentence_window_spans

    sentences, windows = [], []
    for doc in documents:
        spans = sentence_spans(doc.text)
        if not spans:
            raise ValueError(f"document {doc.id!r} has no sentences")
        ids = [f"{doc.id}#s{j}" for j in range(len(spans))]
        sentences += [Sentence(ids[j], doc.id, j, s, e, doc.text[s:e]) for j, (s, e) in enumerate(spans)]
        for i, ((s, e), idx) in enumerate(sentence_window_spans(doc.text, window, stride)):
            windows.append(Window(f"{doc.id}#w{i}", doc.id, i, s, e, doc.text[s:e], tuple(ids[j] for j in idx)))
    return sentences, windows


def first_words(text: str, n: int) -> str:
    return " ".join(text.split()[:n])


class SimilarityGraph:
    """The built SSG: ``graph`` (networkx) plus the vectors and lookups the traversals need."""

    def __init__(self, graph: "nx.DiGraph", window_ids: list[str], sentence_ids: list[str], doc_ids: list[str],
                 window_vecs: np.ndarray, sentence_vecs: np.ndarray, theme_vecs: np.ndarray,
                 pca_mean: np.ndarray, pca_components: np.ndarray, config: SSGConfig):
        self.graph = graph
        self.config = config
        self.window_ids, self.sentence_ids, self.doc_ids = list(window_ids), list(sentence_ids), list(doc_ids)
        self.window_vecs = np.asarray(window_vecs, np.float32)
        self.sentence_vecs = np.asarray(sentence_vecs, np.float32)
        self.theme_vecs = np.asarray(theme_vecs, np.float32)
        self.pca_mean = np.asarray(pca_mean, np.float32)
        self.pca_components = np.asarray(pca_components, np.float32)
        self.window_row = {w: i for i, w in enumerate(self.window_ids)}
        self.sentence_row = {s: i for i, s in enumerate(self.sentence_ids)}
        self.doc_row = {d: i for i, d in enumerate(self.doc_ids)}
        self.windows = [self._window(w) for w in self.window_ids]
        self.sentences = [self._sentence(s) for s in self.sentence_ids]
        self._doc_windows: dict[str, list[str]] = {d: [] for d in self.doc_ids}
        for w in self.windows:
            self._doc_windows[w.doc_id].append(w.id)
        self.window_coords3 = self.project3(self.window_vecs)
        self.sentence_coords3 = self.project3(self.sentence_vecs)
        self._neighbours: dict[str, list[tuple[str, float]]] = {}
        self._pair_cache: dict[tuple[str, str], float] = {}
        self.build_cost = Cost()

    # -- lookups ---------------------------------------------------------------------------
    def _window(self, wid: str) -> Window:
        a = self.graph.nodes[wid]
        return Window(wid, a["doc_id"], a["index"], a["start"], a["end"], a["text"], tuple(a["sentence_ids"]))

    def _sentence(self, sid: str) -> Sentence:
        a = self.graph.nodes[sid]
        return Sentence(sid, a["doc_id"], a["index"], a["start"], a["end"], a["text"])

    def window(self, wid: str) -> Window:
        return self.windows[self.window_row[wid]]

    def sentence(self, sid: str) -> Sentence:
        return self.sentences[self.sentence_row[sid]]

    def sentences_of(self, wid: str) -> tuple[str, ...]:
        return self.windows[self.window_row[wid]].sentence_ids

    def windows_of(self, doc_id: str) -> list[str]:
        """The document's windows in order (empty for an unknown document)."""
        return list(self._doc_windows.get(doc_id, []))

    def themes(self, doc_id: str) -> list[str]:
        return list(self.graph.nodes[doc_node(doc_id)]["themes"])

    def theme_similarity(self, doc_a: str, doc_b: str) -> float:
        return float(self.theme_vecs[self.doc_row[doc_a]] @ self.theme_vecs[self.doc_row[doc_b]])

    def bridged_docs(self, doc_id: str) -> list[str]:
        """Documents this one has a theme bridge to (its ``top_t`` most theme-similar)."""
        node = doc_node(doc_id)
        return [self.graph.nodes[n]["doc_id"] for n in self.graph.successors(node)
                if self.graph.edges[node, n]["kind"] == "theme"]

    def neighbours(self, wid: str) -> list[tuple[str, float]]:
        """(window, cosine) over the window's own intra and inter edges, best first."""
        if wid not in self._neighbours:
            out = [(n, float(a["weight"])) for n, a in self.graph[wid].items() if a["kind"] in SIMILARITY_KINDS]
            out = [out[i] for i in ties.order([w for _, w in out], keys=[self.window_row[n] for n, _ in out], what="")]
            self._neighbours[wid] = out
        return self._neighbours[wid]

    def vector(self, node: str) -> np.ndarray:
        if node in self.window_row:
            return self.window_vecs[self.window_row[node]]
        if node in self.sentence_row:
            return self.sentence_vecs[self.sentence_row[node]]
        raise KeyError(f"{node!r} is neither a window nor a sentence of this graph")

    def similarity(self, a: str, b: str) -> float:
        """Cosine of two window/sentence nodes, from the edge when one exists, else computed once and cached."""
        key = (a, b) if a <= b else (b, a)
        if key not in self._pair_cache:
            edge = self.graph.get_edge_data(a, b) or self.graph.get_edge_data(b, a)
            if edge is not None and edge["kind"] in SIMILARITY_KINDS:
                self._pair_cache[key] = float(edge["weight"])
            else:
                self._pair_cache[key] = float(self.vector(a) @ self.vector(b))
        return self._pair_cache[key]

    def window_similarity_matrix(self, doc_id: str) -> tuple[np.ndarray, list[str]]:
        """All window-to-window cosines of ONE document (the paper's Figure A) and the window ids."""
        ids = self.windows_of(doc_id)
        if not ids:
            raise KeyError(f"graph has no document {doc_id!r}; documents: {', '.join(self.doc_ids)}")
        v = self.window_vecs[[self.window_row[w] for w in ids]]
        return v @ v.T, ids

    def project3(self, vectors: np.ndarray) -> np.ndarray:
        """Coordinates in the 3-D PCA space fitted on the window vectors."""
        return (np.atleast_2d(vectors) - self.pca_mean) @ self.pca_components.T

    # -- save / load -------------------------------------------------------------------------
    def save(self, folder: str | Path) -> Path:
        """``graph.json`` (networkx node-link data), ``vectors.npz`` and ``config.json``, each atomically.

        ``config.json`` marks a complete save: it is removed first and written last, so a save
        interrupted midway leaves a folder ``load`` refuses, never one graph's edges beside
        another's vectors."""
        import networkx as nx

        folder = Path(folder)
        (folder / "config.json").unlink(missing_ok=True)
        data = nx.node_link_data(self.graph, edges="edges")
        write_text(folder / "graph.json", json.dumps(data, ensure_ascii=False))
        with atomic_path(folder / "vectors.npz") as tmp:
            with open(tmp, "wb") as fh:
                np.savez(fh, window_vecs=self.window_vecs, sentence_vecs=self.sentence_vecs,
                         theme_vecs=self.theme_vecs, pca_mean=self.pca_mean, pca_components=self.pca_components,
                         window_ids=np.array(self.window_ids), sentence_ids=np.array(self.sentence_ids),
                         doc_ids=np.array(self.doc_ids))
        write_text(folder / "config.json", json.dumps({"format": FORMAT_VERSION, "config": self.config.as_dict()}))
        return folder

    @classmethod
    def load(cls, folder: str | Path) -> "SimilarityGraph":
        import networkx as nx

        folder = Path(folder)
        missing = [f for f in ("graph.json", "vectors.npz", "config.json") if not (folder / f).exists()]
        if missing:
            raise FileNotFoundError(f"{folder} is not a saved SSG: missing {', '.join(missing)} "
                                    "(write one with SimilarityGraph.save; an interrupted save leaves no config.json)")
        meta = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        if meta.get("format") != FORMAT_VERSION:
            raise ValueError(f"{folder}/config.json: format {meta.get('format')!r}, expected {FORMAT_VERSION}")
        graph = nx.node_link_graph(json.loads((folder / "graph.json").read_text(encoding="utf-8")), edges="edges")
        with np.load(folder / "vectors.npz") as z:
            arrays = {k: z[k] for k in z.files}
        return cls(graph, arrays["window_ids"].tolist(), arrays["sentence_ids"].tolist(), arrays["doc_ids"].tolist(),
                   arrays["window_vecs"], arrays["sentence_vecs"], arrays["theme_vecs"], arrays["pca_mean"],
                   arrays["pca_components"], SSGConfig.from_dict(meta["config"]))


def fit_pca3(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and (3, dim) components of a PCA on ``vectors`` (zero rows pad when fewer than 3 exist)."""
    from sklearn.decomposition import PCA

    n_comp = max(1, min(3, len(vectors), vectors.shape[1]))
    pca = PCA(n_components=n_comp, svd_solver="full").fit(vectors)
    comps = np.zeros((3, vectors.shape[1]), np.float32)
    comps[:n_comp] = pca.components_
    return pca.mean_.astype(np.float32), comps


def assemble_graph(documents: Sequence[Document], sentences: list[Sentence], windows: list[Window],
                   window_vecs: np.ndarray, sentence_vecs: np.ndarray, themes: dict[str, list[str]],
                   theme_vecs: np.ndarray, config: SSGConfig = SSGConfig()) -> SimilarityGraph:
    """The SSG from segmented units and their vectors (``build_graph`` embeds; tests pass hand-made vectors).

    ``theme_vecs`` rows follow ``documents``; an all-zero row means "no themes"."""
    import networkx as nx

    doc_ids = [d.id for d in documents]
    if len(window_vecs) != len(windows) or len(sentence_vecs) != len(sentences) or len(theme_vecs) != len(doc_ids):
        raise ValueError(f"vector counts do not match: {len(window_vecs)} window vectors for {len(windows)} windows, "
                         f"{len(sentence_vecs)} sentence vectors for {len(sentences)} sentences, "
                         f"{len(theme_vecs)} theme vectors for {len(doc_ids)} documents")
    g = nx.DiGraph(config=config.as_dict())
    for d in documents:
        g.add_node(doc_node(d.id), kind="document", doc_id=d.id, title=d.title, themes=list(themes.get(d.id, [])))
    for s in sentences:
        g.add_node(s.id, kind="sentence", doc_id=s.doc_id, index=s.index, start=s.start, end=s.end, text=s.text,
                   themes=list(themes.get(s.doc_id, [])))
    blocks, cursor = [], 0
    for d in doc_ids:
        n = sum(1 for w in windows if w.doc_id == d)
        blocks.append((cursor, cursor + n))
        cursor += n
    order = [w.doc_id for w in windows]
    if order != sorted(order, key=doc_ids.index):
        raise ValueError("windows must be grouped by document in the order of `documents`")
    for w in windows:
        g.add_node(w.id, kind="window", doc_id=w.doc_id, index=w.index, start=w.start, end=w.end, text=w.text,
                   sentence_ids=list(w.sentence_ids), themes=list(themes.get(w.doc_id, [])))
        g.add_edge(doc_node(w.doc_id), w.id, kind="contains", weight=1.0)
        for sid in w.sentence_ids:
            g.add_edge(w.id, sid, kind="child", weight=1.0)
    for e in sparse_neighbours(window_vecs, blocks, config.top_k, config.top_x, ann_above=config.ann_above):
        g.add_edge(windows[e.source].id, windows[e.target].id, kind=e.kind, weight=e.weight)
    for i, j, sim in theme_bridges(theme_vecs, config.top_t):
        g.add_edge(doc_node(doc_ids[i]), doc_node(doc_ids[j]), kind="theme", weight=sim)
    mean, comps = fit_pca3(np.asarray(window_vecs, np.float32))
    return SimilarityGraph(g, [w.id for w in windows], [s.id for s in sentences], doc_ids, window_vecs,
                           sentence_vecs, theme_vecs, mean, comps, config)


def document_themes(documents: Sequence[Document], reasoner, config: SSGConfig) -> dict[str, list[str]]:
    """Document id -> its themes: one reasoner call per document (its first ``theme_words`` words),
    sent as one batch (``rag_lab.reasoning.batch``)."""
    lists = run_batch(lambda d: list(reasoner.themes(first_words(d.text, config.theme_words), n=config.n_themes)),
                      documents, "SSG themes", reasoner=reasoner)
    return {d.id: t for d, t in zip(documents, lists)}


def build_graph(documents: Sequence[Document], embedder=None, reasoner=None,
                config: SSGConfig = SSGConfig()) -> SimilarityGraph:
    """Segment, embed (windows, sentences, joined themes), ask the reasoner for themes, assemble.

    ``build_cost`` of the result counts embedding tokens and the reasoner's theme calls."""
    if not documents:
        raise ValueError("build_graph: no documents")
    if embedder is None:
        from ...core.embedding import shared_embedder
        embedder = shared_embedder()
    if reasoner is None:
        from ...reasoning import resolve_reasoner
        reasoner = resolve_reasoner(None, embedder)
    sentences, windows = segment(documents, config.window, config.stride)
    before = reasoner.usage.copy()
    themes = document_themes(documents, reasoner, config)
    theme_cost = reasoner.usage_since(before)
    texts_w, texts_s = [w.text for w in windows], [s.text for s in sentences]
    theme_texts = [", ".join(themes[d.id]) for d in documents]
    window_vecs, sentence_vecs = embedder.encode(texts_w), embedder.encode(texts_s)
    theme_vecs = np.zeros((len(documents), window_vecs.shape[1]), np.float32)
    with_themes = [i for i, t in enumerate(theme_texts) if t]
    if with_themes:
        theme_vecs[with_themes] = embedder.encode([theme_texts[i] for i in with_themes])
    graph = assemble_graph(documents, sentences, windows, window_vecs, sentence_vecs, themes, theme_vecs, config)
    tokens = embedder.count_tokens(texts_w) + embedder.count_tokens(texts_s) + \
        embedder.count_tokens([t for t in theme_texts if t])
    graph.build_cost = theme_cost + Cost(embedding_tokens=tokens)
    return graph
