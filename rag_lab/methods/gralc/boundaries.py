"""Structure-aware chunk boundaries (GraLC-RAG, Section 3.1.5 of the paper).

A boundary "at token i" means a chunk starts at token i. Three signals per position:

- structural: 1.0 where a section starts, 0.7 a subsection, 0.4 a paragraph, else 0
- semantic: 1 − cos(mean of the w tokens before i, mean of the w tokens from i)
- entity: −γ where a concept mention spans across i (it would be cut in two)

combined as b_i = α1·struct + α2·sem + α3·entity (the paper: 0.5, 0.3, 1.0; γ = 0.5). Boundaries
are the local maxima of b above τ (the paper: 0.3; ``scipy.signal.find_peaks``), taken greedily
from the highest while every chunk keeps at least ``min_tokens``; a chunk still longer than
``max_tokens`` is split at its best-scoring admissible position, recursively. The paper
leaves the semantic window w unstated. Every value comes from ``StructureAwareConfig``
(``config.py``), where the defaults are stated.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np

from ...core import ties

from ...datasets.structure import STRUCTURAL_SCORES, Unit
from .config import StructureAwareConfig


def structural_signal(offsets: np.ndarray, units: Iterable[Unit], scores: dict[str, float] = STRUCTURAL_SCORES,
                      ) -> np.ndarray:
    """Per token: the strongest structural unit that starts at that token (position 0 stays 0)."""
    n = len(offsets)
    out = np.zeros(n)
    starts = offsets[:, 0]
    for u in units:
        i = int(np.searchsorted(starts, u.start, side="left"))
        if 0 < i < n:
            out[i] = max(out[i], scores.get(u.kind, 0.0))
    return out


def semantic_signal(embeddings: np.ndarray, window: int) -> np.ndarray:
    """1 − cos(mean(h[i−w:i]), mean(h[i:i+w])) for i ≥ 1 (windows clipped at the ends); 0 at i = 0."""
    n = len(embeddings)
    out = np.zeros(n)
    if n < 2:
        return out
    csum = np.vstack([np.zeros((1, embeddings.shape[1])), np.cumsum(embeddings, axis=0, dtype=np.float64)])
    i = np.arange(1, n)
    lo, hi = np.maximum(i - window, 0), np.minimum(i + window, n)
    left = (csum[i] - csum[lo]) / (i - lo)[:, None]
    right = (csum[hi] - csum[i]) / (hi - i)[:, None]
    cos = (left * right).sum(1) / np.maximum(np.linalg.norm(left, axis=1) * np.linalg.norm(right, axis=1), 1e-12)
    out[1:] = 1.0 - cos
    return out


def entity_signal(n: int, token_spans: Iterable[tuple[int, int]], gamma: float) -> np.ndarray:
    """−γ at every i with a < i < b for some mention token span [a, b)."""
    out = np.zeros(n)
    for a, b in token_spans:
        if b - a > 1:
            out[a + 1:b] = -gamma
    return out


def combine(struct: np.ndarray, sem: np.ndarray, entity: np.ndarray, alphas: Sequence[float]) -> np.ndarray:
    a1, a2, a3 = alphas
    return a1 * struct + a2 * sem + a3 * entity


def _check_sizes(min_tokens: int, max_tokens: int) -> None:
    if min_tokens < 1 or max_tokens < 2 * min_tokens:
        raise ValueError(f"chunk size limits need 1 <= min_tokens and max_tokens >= 2 * min_tokens, "
                         f"got min_tokens={min_tokens} max_tokens={max_tokens}")


def peak_positions(scores: np.ndarray, tau: float) -> np.ndarray:
    """Local maxima strictly above τ (plateaus count once, at their middle). ``find_peaks`` compares
    floats exactly, so the decisions noise can flip are noted (core/ties.py): a would-be peak within
    noise of τ, and a peak whose neighbour lies within noise of it (a plateau, or a shoulder that
    noise can make the peak)."""
    from scipy.signal import find_peaks

    scores = np.asarray(scores, dtype=float)
    peaks, _ = find_peaks(scores, height=tau)
    _note_fragile_peaks(scores, tau)
    return peaks[scores[peaks] > tau]


def _note_fragile_peaks(scores: np.ndarray, tau: float) -> None:
    if len(scores) < 3:
        return
    inner = scores[1:-1]
    left, right = scores[:-2], scores[2:]
    could_peak = (inner >= left - ties.NOISE) & (inner >= right - ties.NOISE)
    for i in np.flatnonzero(could_peak & (np.abs(inner - tau) <= ties.NOISE)) + 1:
        ties.note("GraLC boundary peak vs tau", f"token {i}", f"tau {tau:g}", float(scores[i] - tau))
    shoulder = np.minimum(np.abs(inner - left), np.abs(inner - right)) <= ties.NOISE
    for i in np.flatnonzero(could_peak & shoulder & (inner > tau + ties.NOISE)) + 1:
        j = i - 1 if abs(scores[i] - scores[i - 1]) <= abs(scores[i] - scores[i + 1]) else i + 1
        if scores[j] > scores[i] or (scores[j] == scores[i] and j < i):
            continue                                 # one note per pair: from its higher (or earlier) side
        ties.note("GraLC boundary peak vs neighbour", f"token {i}", f"token {j}", float(scores[i] - scores[j]))


def select_boundaries(scores: np.ndarray, tau: float, min_tokens: int, max_tokens: int,
                      candidates: Sequence[int] | None = None) -> list[int]:
    """Chunk start positions (excluding 0), sorted.

    Candidates (peaks above τ unless given) are accepted from the highest score down (ties: the
    earlier position first) when they are at least ``min_tokens`` from the text's ends and from
    every accepted boundary; then chunks longer than ``max_tokens`` are split recursively at
    their highest-scoring position that leaves both parts at least ``min_tokens`` long.
    """
    _check_sizes(min_tokens, max_tokens)
    scores = np.asarray(scores, dtype=float)
    n = len(scores)
    if candidates is None:
        candidates = peak_positions(scores, tau)
    accepted: list[int] = []
    candidates = [int(c) for c in candidates]
    for p in [candidates[i] for i in ties.order([scores[c] for c in candidates], keys=candidates,
                                                  what="GraLC boundary choice", names=lambda i: f"token {candidates[i]}")]:
        if p < min_tokens or n - p < min_tokens:
            continue
        if all(abs(p - q) >= min_tokens for q in accepted):
            accepted.append(p)
    cuts = sorted(accepted)
    edges = [0, *cuts, n]
    out: list[int] = []
    for a, b in zip(edges, edges[1:]):
        out.extend(_split_long(scores, a, b, min_tokens, max_tokens))
        if b < n:
            out.append(b)
    return sorted(out)


def _split_long(scores: np.ndarray, a: int, b: int, min_tokens: int, max_tokens: int) -> list[int]:
    if b - a <= max_tokens:
        return []
    lo, hi = a + min_tokens, b - min_tokens
    p = lo + ties.best(scores[lo:hi + 1], what="GraLC long-span split", names=lambda i: f"token {lo + i}")
    return [*_split_long(scores, a, p, min_tokens, max_tokens), p, *_split_long(scores, p, b, min_tokens, max_tokens)]


def spans_from_boundaries(n: int, boundaries: Sequence[int]) -> list[tuple[int, int]]:
    edges = [0, *boundaries, n]
    return [(a, b) for a, b in zip(edges, edges[1:]) if b > a]


@dataclass
class BoundaryTrace:
    """Every signal per token, the combined score and the chosen boundaries (for plots and tests)."""

    structural: np.ndarray
    semantic: np.ndarray
    entity: np.ndarray
    score: np.ndarray
    boundaries: list[int]

    def as_frame(self):
        import pandas as pd

        df = pd.DataFrame({"token": np.arange(len(self.score)), "structural": self.structural,
                           "semantic": self.semantic, "entity": self.entity, "score": self.score})
        df["boundary"] = df["token"].isin(self.boundaries)
        return df


def structure_aware_boundaries(offsets: np.ndarray, embeddings: np.ndarray, units: Iterable[Unit],
                               mention_token_spans: Iterable[tuple[int, int]],
                               config: StructureAwareConfig) -> BoundaryTrace:
    """The three signals, their weighted sum and the boundaries, with ``config``'s α, γ, τ, w and sizes."""
    struct = structural_signal(offsets, units)
    sem = semantic_signal(embeddings, config.semantic_window)
    ent = entity_signal(len(offsets), mention_token_spans, config.gamma)
    score = combine(struct, sem, ent, config.alphas)
    return BoundaryTrace(struct, sem, ent, score,
                         select_boundaries(score, config.tau, config.min_tokens, config.max_tokens))
