"""How much of a method's chunks the encoder never reads, said in a sentence beside a result.

MiniLM reads at most ``embedder.max_tokens`` word pieces, two of them its special tokens; a longer
text is cut silently and embedded from its opening only. Semantic chunks run to several hundred
word pieces, so most of a semantic chunk cannot make it match a question: a cause of a semantic
chunker's loss that a table of means does not show.

- ``encoder_cut``: per method, how many of its embedded texts are longer than the encoder reads,
  their mean size, and the limit (``EncoderCut``).
- ``encoder_cut_sentence``: the sentence a notebook prints where it draws a conclusion about a
  method whose chunks are cut, optionally tied to that method's paired difference against another
  (a row of a declared family: ``encoder_cut_finding`` reads it from the caller's decided table or
  decides it as a family of its own, clustered by document, and records it in the ledger).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Mapping

import pandas as pd

from .decisions import dataset_of, verdict_said
from .ledger import recorded
from .statistics import CONTRADICTED, SUPPORTED, UNDECIDABLE, format_ci, format_p
from .uncertainty import Units, clustering_note, decide, paired_on, per_question


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


def encoder_cut_sentence(cut: EncoderCut, row: Mapping | None = None, baseline: str = "",
                         metric: str = "") -> str:
    """``semantic: 10 of 12 chunks (mean 531 word pieces) are longer than the 256 word pieces the encoder
    reads ...``. With ``row`` (``cut.method`` minus ``baseline`` on ``metric``, paired by question: a row of
    a decided table, ``uncertainty.decide``'s columns) the sentence says whether that comparison is a
    loss the cut can explain: only a contradicted one (Holm p within its family below 0.05) is called a
    loss, and an undecided one is said with the verdict word (and its reason)."""
    if cut.total == 0:
        return f"{cut.method}: no chunk was embedded, so nothing was cut."
    if cut.over == 0:
        text = (f"{cut.method}: none of its {cut.total} chunks (mean {cut.mean_tokens:.0f} word pieces) is longer "
                f"than the {cut.limit} word pieces the encoder reads, so every chunk is embedded whole.")
        return text
    text = (f"{cut.method}: {cut.over} of {cut.total} chunks (mean {cut.mean_tokens:.0f} word pieces) are longer than "
            f"the {cut.limit} word pieces the encoder reads; each is embedded from its first {cut.read} only, so the "
            "rest of the chunk cannot make it match a question")
    if row is None or not row["n"]:
        return text + "."
    said = (f"{cut.method} - {baseline} on {metric} = {format_ci(row['diff'], row['ci_low'], row['ci_high'])} "
            f"(n = {int(row['n'])}{clustering_note(row)}, p Holm = {format_p(row['p_holm'])})")
    v = row["verdict"]
    if v == CONTRADICTED:
        return text + f".\nThat is a likely part of why {cut.method} trails {baseline} here: {said}, {CONTRADICTED}."
    if v == SUPPORTED:
        return text + f".\nEven so {cut.method} is ahead of {baseline} here: {said}, {SUPPORTED}."
    if v == UNDECIDABLE:      # a design that cannot decide: said in words, no numbers
        return text + (f".\nHere {cut.method} - {baseline} on {metric} {verdict_said(row)}, so these questions "
                       "cannot show a loss to explain; the cut chunks still compete with a handicap.")
    return (text + f".\nHere {said}: {verdict_said(row)}, so these questions show no loss to explain, "
            "but the cut chunks still compete with a handicap.")


def encoder_cut_finding(results, cut: EncoderCut, baseline: str, column: str, units: Units | None = None,
                        decided: pd.DataFrame | None = None) -> str:
    """``encoder_cut_sentence`` tied to ``cut.method`` minus ``baseline`` on ``column`` (metric@k), paired
    by question over ``results`` (evaluate's tidy table; ``units``: clustered by document): its row in
    ``decided`` (a family the caller declared) when there, else decided as a declared family of its own
    and recorded in the ledger; the plain count when either method is not scored."""
    table = per_question(results, column)
    if cut.method not in table.columns or baseline not in table.columns:
        return encoder_cut_sentence(cut)
    if decided is not None:
        mine = decided[(decided["method"] == cut.method) & (decided["baseline"] == baseline)
                       & (decided["metric"] == column)]
        if len(mine):
            return encoder_cut_sentence(cut, mine.iloc[0], baseline, column)
    rows = pd.DataFrame([{"method": cut.method, "baseline": baseline, "metric": column,
                          **paired_on(table, cut.method, baseline, units=units).as_dict()}])
    row = recorded(decide(rows, f"{cut.method} minus {baseline} on {column} (the encoder cut)"),
                   dataset_of(results, "unnamed")).iloc[0]
    return encoder_cut_sentence(cut, row, baseline, column)
