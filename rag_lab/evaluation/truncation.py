"""How much of a method's chunks the encoder never reads, said in a sentence beside a result.

MiniLM reads at most ``embedder.max_tokens`` word pieces, two of them its special tokens; a longer
text is cut silently and embedded from its opening only. Semantic chunks run to several hundred
word pieces, so most of a semantic chunk cannot make it match a question: a cause of a semantic
chunker's loss that a table of means does not show.

- ``encoder_cut``: per method, how many of its embedded texts are longer than the encoder reads,
  their mean size, and the limit (``EncoderCut``).
- ``encoder_cut_sentence``: the sentence a notebook prints where it draws a conclusion about a
  method whose chunks are cut, optionally tied to that method's paired difference against another.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable

from .statistics import Difference, format_ci


@dataclass(frozen=True)
class EncoderCut:
    """``over`` of ``total`` texts of ``method`` are longer than the ``read`` word pieces the encoder
    reads (``limit`` with its special tokens); ``mean_tokens``: their mean size in word pieces."""
    method: str
    over: int
    total: int
    mean_tokens: float
    limit: int
    read: int

    @property
    def share(self) -> float:
        return self.over / self.total if self.total else math.nan


def encoder_cut(method: str, texts: Iterable[str], embedder) -> EncoderCut:
    """Count the texts of ``method`` that ``embedder`` cuts (``count_tokens`` > ``max_tokens`` - 2)."""
    sizes = [embedder.count_tokens(t) for t in texts]
    limit = int(embedder.max_tokens)
    read = limit - 2
    mean = sum(sizes) / len(sizes) if sizes else math.nan
    return EncoderCut(method, sum(1 for s in sizes if s > read), len(sizes), mean, limit, read)


def encoder_cut_sentence(cut: EncoderCut, diff: Difference | None = None, baseline: str = "",
                         metric: str = "") -> str:
    """``semantic: 10 of 12 chunks (mean 531 word pieces) are longer than the 256 word pieces the encoder
    reads ...``. With ``diff`` (``cut.method`` minus ``baseline`` on ``metric``, paired by question) the
    sentence says whether that comparison is a loss the cut can explain: only a difference whose
    p is below 0.05 (its interval then lies below zero) is called a loss."""
    if cut.total == 0:
        return f"{cut.method}: no chunk was embedded, so nothing was cut."
    if cut.over == 0:
        text = (f"{cut.method}: none of its {cut.total} chunks (mean {cut.mean_tokens:.0f} word pieces) is longer "
                f"than the {cut.limit} word pieces the encoder reads, so every chunk is embedded whole.")
        return text
    text = (f"{cut.method}: {cut.over} of {cut.total} chunks (mean {cut.mean_tokens:.0f} word pieces) are longer than "
            f"the {cut.limit} word pieces the encoder reads; each is embedded from its first {cut.read} only, so the "
            "rest of the chunk cannot make it match a question")
    if diff is None or diff.n == 0:
        return text + "."
    said = f"{cut.method} - {baseline} on {metric} = {format_ci(diff.diff, diff.ci_low, diff.ci_high)} (n = {diff.n})"
    v = diff.verdict()
    if v == "contradicted":
        return text + f". That is a likely part of why {cut.method} trails {baseline} here: {said}, below zero."
    if v == "supported":
        return text + f"; even so {cut.method} is ahead of {baseline} here: {said}, above zero."
    if v == "inconclusive":
        return (text + f". Here {said}: the interval spans zero, so these questions show no loss to explain, "
                "but the cut chunks still compete with a handicap.")
    return (text + f". Here {said}: too few questions to tell a loss from none (no p below 0.05 is possible), "
            "but the cut chunks still compete with a handicap.")


def encoder_cut_finding(results, cut: EncoderCut, baseline: str, column: str) -> str:
    """``encoder_cut_sentence`` tied to ``cut.method`` minus ``baseline`` on ``column`` (metric@k), paired
    by question over ``results`` (evaluate's tidy table); the plain count when either is not scored."""
    from .statistics import paired_difference
    from .uncertainty import per_question

    table = per_question(results, column)
    if cut.method not in table.columns or baseline not in table.columns:
        return encoder_cut_sentence(cut)
    d = paired_difference(table[cut.method].to_numpy(), table[baseline].to_numpy())
    return encoder_cut_sentence(cut, d, baseline, column)
