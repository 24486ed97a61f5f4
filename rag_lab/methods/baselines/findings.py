"""The sentences notebook 00 ends with: naive against semantic chunking, computed from the run.

Each comparison is semantic minus naive, paired by question, with its 95% interval, p and
``statistics.verdict`` (decided only when p < 0.05); the encoder cut of the semantic chunks (``evaluation.truncation``) is said
beside the retrieval result it helps explain, and the answer comparison says what the reasoner's
answers are (the offline one copies sentences) and that no judge scored them when none ran.
"""
from __future__ import annotations

import pandas as pd

from ...evaluation.truncation import EncoderCut, encoder_cut_finding
from ...evaluation.uncertainty import difference_sentence, formatted_summary, summary_with_ci

VERDICTS = ("(supported/contradicted: p < 0.05, the interval then lies above/below 0; inconclusive: these questions "
            "cannot tell the two apart; cannot be decided at this n: no p below 0.05 is possible with so few questions)")


def quickstart_findings(results: pd.DataFrame, cut: EncoderCut, k: int, answer_k: int, reasoner: str,
                        judged: bool, methods: tuple[str, str] = ("naive", "semantic")) -> list[str]:
    """Context recall@k of both methods with intervals, their paired difference, the encoder cut of the
    semantic chunks tied to it, and the answers' token F1 compared the same way, with its caveat."""
    base, other = methods
    recall = f"ctx_recall@{k}"
    shown = formatted_summary(summary_with_ci(results, [recall])).loc[recall]
    out = [f"Context recall@{k}, mean [95% interval] over {shown['n']} questions: "
           + ", ".join(f"{m} {shown[m]}" for m in methods if m in shown.index) + ".",
           "Paired, question by question: " + difference_sentence(results, other, base, recall) + f" {VERDICTS}.",
           "Why semantic chunks are at a disadvantage here — " + encoder_cut_finding(results, cut, base, recall)]
    f1 = f"token_f1@{answer_k}"
    if (results["metric"] == "token_f1").any():
        what = ("the offline reasoner's answers are extractive (sentences copied from the top contexts), so token F1 "
                "measures word overlap of those sentences with the reference answer, not answer quality"
                if reasoner == "offline" else f"answers written by {reasoner}, scored by word overlap with the reference")
        judge = "" if judged else "; no judge ran, so faithfulness and answer relevancy are not measured"
        out.append(f"Answers: {difference_sentence(results, other, base, f1)} — {what}{judge}.")
    return out


def two_recalls_sentence(results: pd.DataFrame, method: str, k: int, answer_k: int) -> str:
    """Why the retrieval table's context recall and the answer table's ID-based context recall differ for
    ``method``: both ask whether the gold passages were retrieved, but ``ctx_recall`` counts a passage found
    when some hit overlaps it (at k), and ragas' ``id_context_recall`` counts the method's own chunks that
    overlap a gold passage (the share of them retrieved at answer_k). Means from the run."""
    means = results[results["method"] == method].groupby(["metric", "k"])["value"].mean()
    ctx, ids = means.get(("ctx_recall", k)), means.get(("id_context_recall", answer_k))
    if ctx is None or ids is None or pd.isna(ctx) or pd.isna(ids):
        return ""
    return (f"Two context recalls for {method}: ctx_recall@{k} = {ctx:.3f} counts a gold passage found when a retrieved "
            f"chunk overlaps at least half of it (or of the chunk); id_context_recall@{answer_k} = {ids:.3f} (ragas' "
            f"ID-based recall) is the share of the {method} chunks overlapping a gold passage that were retrieved, so a "
            "passage spread over two chunks counts half when only one of them is (docs/metrics.md).")
