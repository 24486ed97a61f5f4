"""Chunkings of one corpus side by side, and semantic chunks decided against naive windows: what notebook 00
shows of them, each in one call (the sizes of each chunking, how alike its chunks are, semantic minus naive
paired by question with the encoder's cut of long semantic chunks tied to it). The pieces are
``core.chunking``'s, ``core.plots``' and ``evaluation``'s; the calls keep them together so the notebook
narrates rather than wires."""
from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd

from ..core.chunking import chunk_stats
from ..core.figures import readable_numbers, save_table
from ..core.plots import block_sentence, similarity_heatmap
from ..core.types import Chunk, Dataset
from ..evaluation.decisions import estimand_of
from ..evaluation.findings import finding_sentences
from ..evaluation.ledger import recorded
from ..evaluation.provenance import reasoners_label
from ..evaluation.truncation import encoder_cut, encoder_cut_finding
from ..evaluation.uncertainty import formatted_summary, paired_differences, question_units, summary_with_ci


def chunk_table(chunkings: Mapping[str, Sequence[Chunk]], embedder, folder: str | Path,
                name: str = "chunk_stats") -> pd.DataFrame:
    """``chunk_stats`` of each chunking (name -> its chunks; sizes in the embedder's word pieces), saved as
    ``name`` with its caption and returned as a reader sees it (``readable_numbers``)."""
    stats = pd.DataFrame({label: chunk_stats(list(chunks), embedder) for label, chunks in chunkings.items()}).T
    shown = readable_numbers(stats)
    save_table(stats, folder, name, caption=f"Chunk counts and sizes (MiniLM word pieces; {reasoners_label('none')})",
               shown=shown)
    return shown


def chunk_similarity(chunks: Sequence[Chunk], embedder, title: str):
    """(figure, sentence): the cosine similarity of every pair of ``chunks`` in their order, white lines between
    documents (``similarity_heatmap``), and the mean inside each document's square against across them
    (``block_sentence``), from the same vectors."""
    vectors = embedder.encode([c.text for c in chunks])
    documents = [c.doc_id for c in chunks]
    figure = similarity_heatmap(vectors, [c.id for c in chunks], title, groups=documents)
    return figure, block_sentence(vectors, documents)


def semantic_against_naive(decided: pd.DataFrame, data: Dataset, semantic, embedder, k: int, answer_k: int) -> list[str]:
    """What notebook 00 says of semantic minus naive on ``data`` (``decided``: ``evaluate``'s rows of both there;
    ``semantic``: its built retriever), clustered by document: the estimand, both means of ctx_recall@k with
    their intervals, the paired comparisons on ctx_recall@k and token_f1@answer_k as one declared family
    (recorded in the ledger), and the encoder's cut of semantic's long chunks tied to that comparison."""
    for method in ("naive", "semantic"):
        if method not in set(decided["method"]):
            raise ValueError(f"decided holds no rows of {method}: it needs evaluate's rows of naive and semantic")
    units = question_units(data)
    recall, f1 = f"ctx_recall@{k}", f"token_f1@{answer_k}"
    cut = encoder_cut("semantic", [c.text for c in semantic.chunks], embedder)   # chunks longer than the model reads
    family = recorded(paired_differences(decided, "naive", ["semantic"], [recall, f1], units=units,
                                         family=f"semantic minus naive on {recall}, {f1} (notebook 00)"), data.name)
    shown = formatted_summary(summary_with_ci(decided, [recall], units=units)).loc[recall]
    return [estimand_of(data),
            f"{data.name}: context recall@{k}, mean [95% interval] over {shown['n']} questions: naive {shown['naive']}, "
            f"semantic {shown['semantic']}.",
            "Paired, question by question: " + "\n".join(finding_sentences(family)),
            "Why semantic chunks are at a disadvantage here — "
            + encoder_cut_finding(decided, cut, "naive", recall, units=units, decided=family)]
