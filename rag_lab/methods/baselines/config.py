"""The baselines' knobs. Naive, Semantic-only, KG-only and RAPTOR are the baselines of the SKETCH
paper (Mahalingam et al., "SKETCH: Structured Knowledge Enhanced Text Comprehension for Holistic
Retrieval"), which gives few of their settings; RAPTOR's come from its own paper (Sarthi et al.,
"RAPTOR: Recursive Abstractive Processing for Tree-Organized Retrieval")."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...configs import Config
from ..sketch.config import SketchConfig


@dataclass(frozen=True)
class NaiveConfig(Config):
    chunker: ClassVar[str] = "fixed"     # rag_lab.chunking's fixed token windows

    size: int = 128                      # ours: the SKETCH paper gives no size for its Naive RAG
    overlap: int = 16                    # ours: the overlap SKETCH §3.2.1.3 uses for its own pieces

    def validate(self) -> None:
        self.check_overlap("size", "overlap")


@dataclass(frozen=True)
class SemanticConfig(Config):
    chunker: ClassVar[str] = "semantic"  # rag_lab.chunking's LangChain SemanticChunker

    threshold: float = 95.0              # SKETCH §2.2.1: breakpoints past the 95th percentile of distances
    buffer_size: int = 1                 # ours: one neighbour sentence each side (§2.2.1 gives no window k)

    def validate(self) -> None:
        self.check_range("threshold", 0.0, 100.0, low_open=True)
        self.check_integer("buffer_size")
        self.check_non_negative("buffer_size")


@dataclass(frozen=True)
class KGConfig(SketchConfig):
    """KG-only is SKETCH's structured retriever alone: SKETCH's knobs (its split and graph), no vector index."""


@dataclass(frozen=True)
class RaptorConfig(Config):
    chunk_size: int = 100                # RAPTOR §3: leaves are contiguous texts of 100 tokens
    chunk_overlap: int = 0               # ours, as RAPTOR's code: leaves do not overlap
    levels: int = 3                      # ours: at most three summary layers (fewer when a layer stops shrinking)
    reduce_dim: int = 10                 # RAPTOR's code reduces to 10 dimensions before clustering (UMAP; PCA here)
    max_cluster_size: int = 10           # ours: bounds how few clusters BIC may choose (RAPTOR re-clusters big ones)
    max_clusters: int = 50               # RAPTOR's code: BIC compares mixtures of up to 50 components
    membership_threshold: float = 0.1    # RAPTOR's code: soft membership at posterior >= 0.1
    patience: int = 5                    # ours: the BIC scan stops after 5 k in a row without improvement
    summary_words: int = 100             # ours: summary length asked of the reasoner
    seed: int = 0                        # ours: seeds PCA and the Gaussian mixtures

    def validate(self) -> None:
        self.check_overlap("chunk_size", "chunk_overlap")
        self.check_integer("levels", "reduce_dim", "max_cluster_size", "max_clusters", "patience", "summary_words",
                           "seed")
        self.check_non_negative("levels")
        self.check_positive("reduce_dim", "max_cluster_size", "max_clusters", "patience", "summary_words")
        self.check_range("membership_threshold", 0.0, 1.0, low_open=True)
