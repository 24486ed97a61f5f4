"""SKETCH's knobs, with the paper's values as defaults (Mahalingam et al., "SKETCH: Structured
Knowledge Enhanced Text Comprehension for Holistic Retrieval"). The KG-only baseline uses the
same knobs (``baselines/config.py``)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...core.configs import Config
from .graph_stores import GRAPH_STORES


@dataclass(frozen=True)
class SketchConfig(Config):
    # knobs read only at query time: a variant changing them shares the built pieces and graph
    QUERY_KNOBS: ClassVar[tuple[str, ...]] = ("hops", "match_threshold", "max_matches_per_entity", "max_facts")

    semantic_threshold: float = 95.0     # SKETCH §2.2.1: a breakpoint where the distance passes the 95th percentile
    semantic_buffer_size: int = 1        # ours: one neighbour sentence each side (§2.2.1 names a window k, no value)
    chunk_size: int = 100                # SKETCH §3.2.1.3: recursive split into 100-token pieces ...
    chunk_overlap: int = 16              # SKETCH §3.2.1.3: ... with 16 tokens of overlap
    graph_store: str = "kuzu"            # SKETCH §3.2.2.1 queries its graph in Cypher: Kùzu ("networkx": in memory)
    graph_path: str | None = None        # ours: where Kùzu keeps its database (None: a temporary folder)
    hops: int = 1                        # ours: §3.2.2.1 reads the entities' nodes and relations, no depth given
    match_threshold: float = 0.75        # ours: cosine for a query entity to match a node name (exact names always do)
    max_matches_per_entity: int = 3      # ours: nodes one query entity may match by embedding
    max_facts: int = 50                  # ours: relation lines in the structured context

    def validate(self) -> None:
        self.check_range("semantic_threshold", 0.0, 100.0, low_open=True)
        self.check_integer("semantic_buffer_size", "hops", "max_matches_per_entity", "max_facts")
        self.check_non_negative("semantic_buffer_size", "hops", "max_facts")
        self.check_positive("max_matches_per_entity")
        self.check_overlap("chunk_size", "chunk_overlap")
        self.check_choice("graph_store", GRAPH_STORES)
        self.check_range("match_threshold", 0.0, 1.0)

    def radius_sentence(self) -> str:
        """The radius the graph queries use, said beside the tables (the paper gives no depth)."""
        return (f"SKETCH and KG-only read the graph {self.hops} hop(s) out from the entities a question names "
                "(SketchConfig.hops; ours: the paper stresses multi-hop retrieval but gives no depth).")
