"""The baselines' knobs. Naive, Semantic-only, KG-only and RAPTOR are the baselines of the SKETCH
paper (Mahalingam et al., "SKETCH: Structured Knowledge Enhanced Text Comprehension for Holistic
Retrieval"), which gives few of their settings; RAPTOR's come from its own paper (Sarthi et al.,
"RAPTOR: Recursive Abstractive Processing for Tree-Organized Retrieval"). BM25 and the hybrid are the
baselines every retrieval benchmark runs (BEIR, pyserini, FlashRAG): Lucene's BM25 with Lucene's
defaults, and reciprocal rank fusion as Cormack, Clarke and Büttcher (SIGIR 2009) define it."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...core.configs import Config
from ..sketch.config import SketchConfig


@dataclass(frozen=True)
class NaiveConfig(Config):
    chunker: ClassVar[str] = "fixed"     # rag_lab.core.chunking's fixed token windows
    chunk_knobs: ClassVar[tuple[str, ...]] = ("size", "overlap")   # the knobs the chunker reads

    size: int = 128                      # ours: the SKETCH paper gives no size for its Naive RAG
    overlap: int = 16                    # ours: the overlap SKETCH §3.2.1.3 uses for its own pieces

    def validate(self) -> None:
        self.check_overlap("size", "overlap")


@dataclass(frozen=True)
class SemanticConfig(Config):
    chunker: ClassVar[str] = "semantic"  # rag_lab.core.chunking's LangChain SemanticChunker
    chunk_knobs: ClassVar[tuple[str, ...]] = ("threshold", "buffer_size")

    threshold: float = 95.0              # SKETCH §2.2.1: breakpoints past the 95th percentile of distances
    buffer_size: int = 1                 # ours: one neighbour sentence each side (§2.2.1 gives no window k)

    def validate(self) -> None:
        self.check_range("threshold", 0.0, 100.0, low_open=True)
        self.check_integer("buffer_size")
        self.check_non_negative("buffer_size")


BM25_VARIANTS = ("lucene", "robertson", "atire", "bm25l", "bm25+")   # bm25s's scoring variants
STOPWORD_LISTS = ("en", "none")


@dataclass(frozen=True)
class BM25Config(NaiveConfig):
    """BM25 over naive's windows: ``size`` and ``overlap`` are naive's (inherited, so the two always
    split alike). Tokens: lower-cased runs of two or more word characters (scikit-learn's pattern, as
    bm25s tokenises), no stemming; stop words removed before counting a window's length."""

    variant: str = "lucene"              # Lucene's BM25 (Kamphuis et al., ECIR 2020): idf ln(1 + (N-df+.5)/(df+.5))
    k1: float = 1.2                      # Lucene's (and Elasticsearch's, so BEIR's BM25's) default
    b: float = 0.75                      # Lucene's default
    stopwords: str = "en"                # "en": Lucene's 33 English stop words (bm25s's list); "none": keep all

    def validate(self) -> None:
        super().validate()
        self.check_choice("variant", BM25_VARIANTS)
        self.check_non_negative("k1")
        self.check_range("b", 0.0, 1.0)
        self.check_choice("stopwords", STOPWORD_LISTS)


@dataclass(frozen=True)
class HybridConfig(BM25Config):
    """BM25 and naive (same windows) fused by reciprocal rank fusion: score(c) = sum over the two
    rankings of 1 / (rrf_k + rank of c), rank from 1; a ranking adds nothing for a chunk outside its
    first ``depth``."""

    rrf_k: int = 60                      # Cormack et al. 2009: k = 60
    depth: int = 1000                    # Cormack et al. 2009 fused the top 1,000 of each run

    def validate(self) -> None:
        super().validate()
        self.check_integer("rrf_k", "depth")
        self.check_non_negative("rrf_k")
        self.check_positive("depth")


@dataclass(frozen=True)
class KGConfig(SketchConfig):
    """KG-only is SKETCH's structured retriever alone: SKETCH's knobs (its split and graph), no vector index."""


TREE_SCOPES = ("auto", "document", "corpus")


@dataclass(frozen=True)
class RaptorConfig(Config):
    """RAPTOR's knobs: the paper (Sarthi et al. 2024) where it gives a value, else the authors' code
    (parthsarthi03/raptor), else ours. Token counts are cl100k_base tokens, as RAPTOR's code counts."""

    chunk_size: int = 100                # RAPTOR §3: leaves are contiguous texts of 100 tokens (MiniLM tokens here)
    chunk_overlap: int = 0               # RAPTOR's code: leaves do not overlap
    levels: int = 5                      # RAPTOR's code (TreeBuilderConfig.num_layers): at most 5 summary layers
    reduce_dim: int = 10                 # RAPTOR's code (reduction_dimension): UMAP to 10 dimensions
    local_neighbors: int = 10            # RAPTOR's code (local_cluster_embeddings): UMAP n_neighbors, local stage
    max_clusters: int = 50               # RAPTOR's code (get_optimal_clusters): BIC over k < min(50, n)
    membership_threshold: float = 0.1    # RAPTOR's code (threshold): soft membership at posterior > 0.1
    max_cluster_tokens: int = 3500       # RAPTOR's code (max_length_in_cluster): longer clusters are re-clustered
    summary_words: int = 100             # RAPTOR's code asks for summaries of at most 100 tokens; we ask words
    context_tokens: int = 2000           # RAPTOR §3 (Querying): collapsed tree up to 2000 tokens (~ top-20 nodes)
    seed: int = 0                        # ours: seeds UMAP and the Gaussian mixtures
    tree: str = "auto"                   # RAPTOR §4: one tree per document on QASPER, NarrativeQA and QuALITY, where
    #                                      each question targets one document ("document"); "corpus": one tree over
    #                                      all documents; "auto" (ours): per document when the loader marks the data
    #                                      so (``questions_target_one_document``), else over the corpus

    def validate(self) -> None:
        self.check_overlap("chunk_size", "chunk_overlap")
        self.check_integer("levels", "reduce_dim", "local_neighbors", "max_clusters", "max_cluster_tokens",
                           "summary_words", "context_tokens", "seed")
        self.check_non_negative("levels")
        self.check_positive("reduce_dim", "max_cluster_tokens", "summary_words", "context_tokens")
        if self.local_neighbors < 2:
            self._fail("local_neighbors", "an integer >= 2 (UMAP needs two neighbours)")
        if self.max_clusters < 2:
            self._fail("max_clusters", "an integer >= 2 (BIC compares k = 1 .. max_clusters - 1)")
        self.check_range("membership_threshold", 0.0, 1.0, low_open=True)
        self.check_choice("tree", TREE_SCOPES)
