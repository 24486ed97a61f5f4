"""UnWeaver's knobs ("UnWeaving the knots of GraphRAG - turns out VectorRAG is almost enough").
The paper states the method's steps but few numbers, so most defaults are ours; each comment
says which part of the paper the knob belongs to."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...core.configs import Config
from .voting import RULES

SELECTIONS = ("election", "kelly", "constrained_lsq", "bounded_lsq")


@dataclass(frozen=True)
class UnWeaverConfig(Config):
    # knobs a query may change on a built index (``UnWeaverRetriever.variant``)
    QUERY_KNOBS: ClassVar[tuple[str, ...]] = ("rule", "top_n", "exact", "weighted", "select", "chunk_budget",
                                             "demanded_ideas")

    chunk_size: int = 128                # ours: §2 splits "by some tokenizer"; the naive baseline's windows,
    chunk_overlap: int = 16              # ours: ... so that only the indexing differs from VectorRAG
    description_cap: int | None = 150    # ours: §2 (footnote) shortens long descriptions by an LLM, no length given
    include_name: bool = True            # ours: a class's text starts with its name before the descriptions
    semantic_threshold: float | None = None  # ours: §2 joins classes by syntactic identity; a cosine merges names too
    top_n: int = 10                      # ours: §2 lets the top-n most similar classes vote, n not given
    rule: str = "pav"                    # ours: §2 names Approval, PAV and Chamberlin-Courant; PAV is proportional
    exact: bool = True                   # ours: the optimal PAV/CC committee (False: the greedy sequential rules)
    weighted: bool = False               # ours: §2's ballots are unweighted approvals
    select: str = "election"             # §2 elects; "kelly" and "constrained_lsq" are Appendix A.2's solvers,
                                         # "bounded_lsq" is ours (box-bounded least squares)
    chunk_budget: float = 1.0            # ours: one budget for every chunk (Appendix A.2 allows one per chunk)
    demanded_ideas: int = 1              # ours: A.2's demand d keeps the nearest class (the paper gives no count)

    def validate(self) -> None:
        self.check_overlap("chunk_size", "chunk_overlap")
        if self.description_cap is not None:
            self.check_integer("description_cap")
            self.check_positive("description_cap")
        if self.semantic_threshold is not None:
            self.check_range("semantic_threshold", -1.0, 1.0)
        self.check_integer("top_n", "demanded_ideas")
        self.check_positive("top_n", "chunk_budget", "demanded_ideas")
        self.check_choice("rule", RULES)
        self.check_choice("select", SELECTIONS)
        self.check_choice("exact", (True, False))
        self.check_choice("weighted", (True, False))
        self.check_choice("include_name", (True, False))
