"""Orderings the sparse and hybrid baselines share: a ranking by score with ties broken by chunk id, and
reciprocal rank fusion (Cormack, Clarke and Büttcher, "Reciprocal Rank Fusion outperforms Condorcet and
individual Rank Learning Methods", SIGIR 2009). Each a few lines of our own: the libraries that fuse
rankings (ranx, LangChain's EnsembleRetriever) bring far more than this sum and do not break ties by id.
"""
from __future__ import annotations

from typing import Hashable, Sequence

import numpy as np

from ...core import ties


def by_score_then_id(scores: np.ndarray, ids: Sequence[str], rows: Sequence[int] | None = None) -> list[int]:
    """``rows`` (default: all) ordered by score, highest first, equal scores (at ``core.ties``' stated
    precision) by id: one total order, so a method's top k is the prefix of its top K whatever the ties,
    on every machine."""
    rows = list(range(len(ids)) if rows is None else rows)
    return [rows[i] for i in ties.order([float(scores[r]) for r in rows], keys=[ids[r] for r in rows],
                                        what="BM25 score", names=lambda i: ids[rows[i]])]


def reciprocal_rank_fusion(rankings: Sequence[Sequence[Hashable]], k: int = 60) -> list[tuple[Hashable, float]]:
    """(item, fused score) best first: score(d) = sum over the rankings holding d of 1 / (k + rank of d),
    ranks from 1 (Cormack et al. 2009, who set k = 60); an item a ranking lacks gains nothing from it.
    Equal scores are ordered by the items themselves (chunk ids)."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise ValueError(f"reciprocal_rank_fusion: k must be an integer >= 0, got {k!r}")
    fused: dict[Hashable, float] = {}
    for i, ranking in enumerate(rankings):
        if len(set(ranking)) != len(ranking):
            raise ValueError(f"reciprocal_rank_fusion: ranking {i} lists an item twice: {list(ranking)}")
        for rank, item in enumerate(ranking, start=1):
            fused[item] = fused.get(item, 0.0) + 1.0 / (k + rank)
    return sorted(fused.items(), key=lambda pair: (-pair[1], pair[0]))
