"""GraLC-RAG's knobs, one config per strategy following the retriever classes (Mortezaagha &
Rahgozar, "Graph-Aware Late Chunking for Retrieval-Augmented Generation in Biomedical Literature").
Each strategy's config adds its own knobs to the one it builds on: late chunking -> structure-aware
boundaries -> KG infusion -> graph-guided scoring."""
from __future__ import annotations

from dataclasses import dataclass

from ...core.configs import Config

SECTION_LEVELS = ("section", "subsection")
CONCEPT_NORMS = ("tokens", "unit")


@dataclass(frozen=True)
class GralcConfig(Config):
    """What every strategy shares: how its chunks are labelled with a section."""

    section_level: str = "subsection"    # ours: a chunk's section is the innermost unit holding most of it

    def validate(self) -> None:
        self.check_choice("section_level", SECTION_LEVELS)


@dataclass(frozen=True)
class NaiveChunksConfig(GralcConfig):
    size: int = 256                      # GraLC-RAG §3.2.2 (1): fixed chunks of 256 tokens ...
    overlap: int = 32                    # ... with 32 tokens of overlap

    def validate(self) -> None:
        super().validate()
        self.check_overlap("size", "overlap")


@dataclass(frozen=True)
class SemanticChunksConfig(GralcConfig):
    threshold: float = 0.75              # GraLC-RAG §3.2.2 (2): embedding similarity threshold 0.75

    def validate(self) -> None:
        super().validate()
        self.check_range("threshold", -1.0, 1.0)


@dataclass(frozen=True)
class LateChunksConfig(GralcConfig):
    min_tokens: int = 128                # GraLC-RAG §3.1.5: chunks of at least 128 tokens ...
    max_tokens: int = 1024               # ... and at most 1024 (used for plain late chunking too: ours)
    window_overlap: int = 64             # ours: §3.1.3 overlaps its sliding windows without saying by how much
    cache_tokens: bool = True            # ours: the late strategies share one encoding per text (False: cold timings)

    def validate(self) -> None:
        super().validate()
        self.check_integer("min_tokens", "max_tokens", "window_overlap")
        self.check_positive("min_tokens")
        self.check_non_negative("window_overlap")
        if self.max_tokens < 2 * self.min_tokens:
            self._fail("max_tokens", f"at least 2 * min_tokens ({2 * self.min_tokens})")
        self.check_choice("cache_tokens", (True, False))


@dataclass(frozen=True)
class StructureAwareConfig(LateChunksConfig):
    alphas: tuple[float, float, float] = (0.5, 0.3, 1.0)  # GraLC-RAG §3.1.5: α1..α3 (structural, semantic, entity)
    gamma: float = 0.5                   # GraLC-RAG §3.1.5: γ, the entity-crossing penalty
    tau: float = 0.3                     # GraLC-RAG §3.1.5: τ, the peak threshold
    semantic_window: int = 16            # ours: w of the semantic signal (§3.1.5 gives none)
    concepts: str | None = None          # ours: the concept vocabulary file (None: the shipped MeSH subset)

    def validate(self) -> None:
        super().validate()
        if len(self.alphas) != 3 or not all(isinstance(a, (int, float)) for a in self.alphas):
            self._fail("alphas", "three weights (structural, semantic, entity)")
        object.__setattr__(self, "alphas", tuple(float(a) for a in self.alphas))
        self.check_integer("semantic_window")
        self.check_positive("semantic_window")
        self.check_non_negative("gamma")
        if self.concepts is not None and not isinstance(self.concepts, str):
            object.__setattr__(self, "concepts", str(self.concepts))   # a Path is kept as its string


@dataclass(frozen=True)
class KGInfusedConfig(StructureAwareConfig):
    lam: float = 0.1                     # GraLC-RAG §3.1.4: λ, the fusion gate, initialised to 0.1
    seed: int = 0                        # ours: seeds the untrained GAT and MLP weights
    concept_model: str | None = None     # ours: None embeds concept names with the retriever's model (§3.2.3: SapBERT)
    concept_norm: str = "tokens"         # ours: concept vectors scaled to the token norms (infusion.py says why)

    def validate(self) -> None:
        super().validate()
        self.check_integer("seed")
        self.check_choice("concept_norm", CONCEPT_NORMS)


@dataclass(frozen=True)
class GraphGuidedConfig(KGInfusedConfig):
    beta: float = 0.7                    # GraLC-RAG §3.1.6: β weighs cosine against kg_prox
    pool: int = 100                      # ours: dense candidates re-scored per query

    def validate(self) -> None:
        super().validate()
        self.check_range("beta", 0.0, 1.0)
        self.check_integer("pool")
        self.check_positive("pool")
