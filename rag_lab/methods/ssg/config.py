"""The SSG method's knobs ("Novel Semantic Similarity Graph Traversal Algorithms for Semantic
Retrieval Augmented Generation Systems"): the graph's (``GRAPH_KNOBS``, read by ``graph.py``) and
the traversal's (which algorithm, how many sentences). The paper is a README without numbered
sections; comments name its parts."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from ...core.configs import Config

# the paper's seven algorithms, in its order (``algorithms.ALGORITHMS`` maps each to its function)
ALGORITHM_NAMES = ("basic_retrieval", "query_traversal", "ssg_traversal", "triangulation_average",
                   "triangulation_geometric_3d", "triangulation_fulldim", "llm_guided_traversal")


@dataclass(frozen=True)
class SSGConfig(Config):
    """``top_k + top_x = 10`` keeps ten comparisons per window, the number the paper names as
    typical for its sparse storage."""

    GRAPH_KNOBS: ClassVar[tuple[str, ...]] = ("window", "stride", "top_k", "top_x", "top_t", "n_themes",
                                              "theme_words", "ann_above")

    window: int = 3                      # SSG, graph architecture: three-sentence sliding windows ...
    stride: int = 1                      # ... moved one sentence at a time
    top_k: int = 5                       # ours: intra-document edges; the paper keeps ~10 comparisons per window ...
    top_x: int = 5                       # ours: ... and inter-document edges, split evenly between the two kinds
    top_t: int = 3                       # ours: theme bridges per document (the paper names top_t, no value)
    n_themes: int = 5                    # SSG, hierarchical properties: five themes per document ...
    theme_words: int = 500               # ... drawn from its first 500 words
    algorithm: str = "query_traversal"   # ours: the registry names one config per algorithm
    max_sentences: int = 10              # SSG, algorithms: a fixed cap of 10 to 15 sentences; 10 (its theme groups)
    ann_above: int = 100_000             # ours: inter-document edges by approximate (HNSW) search past this many
    #                                      windows, exact below: up to 100k exact is as fast (60 s vs 68 s there, 3 s
    #                                      vs 5 s at 20k) but grows with windows squared (docs/performance.md)

    def validate(self) -> None:
        self.check_integer("window", "stride", "n_themes", "theme_words", "top_k", "top_x", "top_t", "max_sentences",
                           "ann_above")
        self.check_positive("window", "stride", "n_themes", "theme_words", "max_sentences")
        self.check_non_negative("top_k", "top_x", "top_t", "ann_above")
        self.check_choice("algorithm", ALGORITHM_NAMES)

    def graph_knobs(self) -> dict[str, Any]:
        """The knobs the graph is built with (the traversal's are left out)."""
        return {name: getattr(self, name) for name in self.GRAPH_KNOBS}
