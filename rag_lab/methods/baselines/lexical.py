"""BM25 over naive's fixed windows: the sparse baseline every retrieval benchmark puts first (``bm25``).

The windows are naive's (``BM25Config`` inherits ``NaiveConfig``'s size and overlap, MiniLM tokens), so
bm25 and naive differ only in how a window is scored. Scoring is the library bm25s (an eager sparse
matrix of per-term scores), by default its Lucene variant with Lucene's k1 = 1.2 and b = 0.75:

    score(q, c) = sum over the query's tokens t found in c of
                  ln(1 + (N - df_t + 0.5) / (df_t + 0.5)) * tf_tc / (tf_tc + k1 * (1 - b + b * |c| / avg |c|))

N windows, df_t the windows holding t, tf_tc its count in c, |c| the window's tokens. Tokens: lower-cased
runs of two or more word characters, Lucene's 33 English stop words removed, no stemming (``tokens``);
a token the query repeats counts each time. A window sharing no token with the query is not returned
(a short ranking, never padded), and equal scores are ordered by chunk id: one total order, so the
top k is the prefix of the top K (nested). Building embeds nothing: only the tokenizer that cuts the
windows is used; queries cost no tokens of any model.
"""
from __future__ import annotations

import logging

import numpy as np

from ...core.types import Chunk, Cost, Document, Hit, Retrieval
from ...evaluation.retrievers import Method, register
from .config import BM25Config
from .fusion import by_score_then_id
from .vector import config_chunks


def tokens(texts: list[str], stopwords: str) -> list[list[str]]:
    """Each text's BM25 tokens (module docstring); ``stopwords``: "en" or "none"."""
    import bm25s

    return bm25s.tokenize(texts, lower=True, stopwords="en" if stopwords == "en" else None, return_ids=False,
                          show_progress=False)


class BM25Index:
    """bm25s over a list of texts, with row numbers and ids; ``ranking`` gives the rows a query matches."""

    def __init__(self, texts: list[str], ids: list[str], config: BM25Config):
        import bm25s

        logging.getLogger("bm25s").setLevel(logging.WARNING)   # bm25s sets its logger to DEBUG on import
        corpus = tokens(texts, config.stopwords)
        if not any(corpus):
            raise ValueError(f"BM25: none of the {len(texts)} texts holds a word to index "
                             "(two or more letters or digits, not a stop word)")
        self.ids, self.stopwords = list(ids), config.stopwords
        # float64: near-equal scores stay apart, so only true ties fall to the chunk id
        self.model = bm25s.BM25(k1=config.k1, b=config.b, method=config.variant, dtype="float64")
        self.model.index(corpus, show_progress=False)

    def query_tokens(self, query: str) -> list[str]:
        return tokens([query], self.stopwords)[0]

    def ranking(self, query: str) -> tuple[list[int], np.ndarray]:
        """(rows sharing a token with ``query``, best first, ties by id; every row's score)."""
        ids = self.model.get_tokens_ids(self.query_tokens(query))
        if not ids:
            return [], np.zeros(len(self.ids))
        scores = self.model.get_scores_from_ids(ids)
        # BM25L and BM25+ give a window without any query token a constant; Lucene, Robertson and ATIRE 0
        missing = self.model.nonoccurrence_array
        floor = float(missing[ids].sum()) if missing is not None else 0.0
        return by_score_then_id(scores, self.ids, np.flatnonzero(scores > floor)), scores


class BM25Retriever(Method):
    """BM25 over naive's windows (module docstring)."""

    nested_ranking = True   # one total order (score, then chunk id), cut at k
    config_class = BM25Config

    def __init__(self, config: BM25Config | None = None, *, reasoner=None, embedder=None, **overrides):
        super().__init__(config, reasoner=reasoner, embedder=embedder, **overrides)   # the embedder cuts the windows
        self.bm25: BM25Index | None = None

    def make_chunks(self, documents: list[Document]) -> list[Chunk]:
        return config_chunks(self.config, documents, self.embedder)

    def build(self, documents: list[Document]):
        self.chunks = self.make_chunks(documents)
        if not self.chunks:
            raise ValueError(f"{self.name}: chunking produced no chunks")
        self.bm25 = BM25Index([c.text for c in self.chunks], [c.id for c in self.chunks], self.config)
        return self

    def retrieve(self, query: str, k: int) -> Retrieval:
        self._check_built(self.bm25)
        rows, scores = self.bm25.ranking(query)
        hits = [Hit(self.chunks[r], float(scores[r]), "bm25") for r in rows[:k]]
        trace = {"chunker": self.config.chunker, "query_tokens": self.bm25.query_tokens(query), "matched": len(rows)}
        return Retrieval(query, hits, trace, Cost())


register("bm25", "rag_lab.methods.baselines.lexical:BM25Retriever",
         "BM25 ({c.variant} variant, k1={c.k1:g}, b={c.b:g}; bm25s) over naive's windows of {c.size} MiniLM tokens "
         "({c.overlap} overlap); lower-cased words, English stop words out".format(c=BM25Config()), BM25Config())
