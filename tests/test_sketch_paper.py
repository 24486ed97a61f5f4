"""The SKETCH paper's tables as transcribed, our numbers in its columns, and the findings sentences."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from rag_lab.evaluation.findings import finding_sentences
from rag_lab.evaluation.statistics import CONTRADICTED, INCONCLUSIVE, format_ci, paired_difference

from rag_lab.evaluation.uncertainty import decided_pairs
from rag_lab.methods.sketch.paper import named_beside_paper, paper_table, setting_note, table_number_for


@pytest.mark.parametrize("number", [1, 2, 3, 4])
def test_transcribed_f1_is_the_harmonic_mean_of_precision_and_recall(number):
    # a check on the transcription: every printed F1 is 2PR/(P+R) of its row to two decimals,
    # e.g. Table 1 SKETCH: 2 * 0.99 * 0.72 / 1.71 = 0.834 -> 0.83
    t = paper_table(number)
    for method, row in t.iterrows():
        p, r = row["context_precision"], row["context_recall"]
        assert row["f1"] == pytest.approx(2 * p * r / (p + r), abs=0.006), method


def test_paper_values_and_dataset_mapping():
    assert paper_table(1).loc["sketch", "answer_relevancy"] == 0.94
    assert paper_table(3).loc["kg", "context_precision"] == 0.71
    assert paper_table(4).loc["raptor", "answer_relevancy"] == 0.10          # the table's value, not the text's
    assert [table_number_for(n) for n in ("italian_cuisine", "quality-dev", "qasper-dev", "narrativeqa-valid-summaries",
                                          "ml_encyclopedia")] == [1, 2, 3, 4, None]
    with pytest.raises(ValueError, match="Tables 1-4"):
        paper_table(5)


def test_findings_on_the_paper_columns_name_the_paper_order():
    # per question: precision sketch - naive = -1 on each of 8 questions (the bound): the bounded-mean test's
    # p is its floor 2/2^8 = 0.0078, behind; recall scored on 6 (sketch's q6, q7 unscored): d = [.25, .25, 0,
    # 0, .25, 0], mean 0.125, small wins an unseen loss could undo: inconclusive. The columns' n differ (8 and
    # 6), so each column says its own (the old sentence printed the last one's)
    rows = [(m, f"q{i}", metric, 5, v) for m, metric, values in (
        ("naive", "nonllm_context_precision", [1.0] * 8), ("sketch", "nonllm_context_precision", [0.0] * 8),
        ("naive", "nonllm_context_recall", [0.5] * 8),
        ("sketch", "nonllm_context_recall", [0.75, 0.75, 0.5, 0.5, 0.75, 0.5, math.nan, math.nan]))
        for i, v in enumerate(values)]
    results = pd.DataFrame(rows, columns=["method", "question_id", "metric", "k", "value"])
    pairs = decided_pairs(results, ["answer_relevancy@5", "faithfulness@5", "nonllm_context_precision@5",   # unscored: no row
                                    "nonllm_context_recall@5"], [("sketch", "naive")],
                          "sketch minus each baseline on nonllm_context_precision@5, nonllm_context_recall@5")
    pairs.insert(2, "column", pairs["metric"].str.removeprefix("nonllm_").str.removesuffix("@5"))   # the paper's column
    sentences = finding_sentences(pairs, name=named_beside_paper(paper_table(1)))
    precision = paired_difference([0.0] * 8, [1.0] * 8)
    recall = paired_difference([0.75, 0.75, 0.5, 0.5, 0.75, 0.5], [0.5] * 6)
    assert precision.diff == -1 and precision.p == pytest.approx(2 / 2 ** 8, abs=1e-3) and not recall.p < 0.05
    assert sentences[0].startswith(
        "sketch - naive on nonllm_context_precision@5 (paper-reported 0.99 vs 0.81, ahead): "
        f"{format_ci(-1.0, precision.ci_low, precision.ci_high)} (n = 8, ") and sentences[0].endswith(f": {CONTRADICTED}")
    assert sentences[1].startswith(
        "sketch - naive on nonllm_context_recall@5 (paper-reported 0.72 vs 0.88, behind): "
        f"{format_ci(0.125, recall.ci_low, recall.ci_high)} (n = 6, ") and sentences[1].endswith(f": {INCONCLUSIVE}")
    # both columns are one declared family (Holm: 2 x 2/2^8 = 0.016 keeps precision decided), said once
    assert sentences[2].startswith('p Holm-adjusted within the declared family "sketch minus each baseline on '
                                   'nonllm_context_precision@5, nonllm_context_recall@5" (2 comparisons)')
    assert len(sentences) == 3 and not any("f1" in line for line in sentences)   # two means: no per-question interval


def test_setting_note_names_data_metric_and_model_of_the_run():
    note = setting_note("ml_encyclopedia", 10, 18, "offline", None)
    assert note.startswith("Not like-for-like with the paper —\n  data: ml_encyclopedia (10 documents, 18 questions) "
                           "is none of the paper's datasets;\n  metric: with no judge configured, context precision")
    assert max(map(len, note.split("\n"))) <= 400
    assert "model: the offline reasoner" in note and "GPT-3.5-turbo-16k judged" in note
    judged = setting_note("qasper-dev", 5, 40, "openai:gpt-4o-mini", "openai:gpt-4o-mini")
    assert "data: qasper-dev (5 documents, 40 questions) against the paper's QASPER" in judged
    assert "metric: all four RAGAS metrics are judged by openai:gpt-4o-mini" in judged
    assert "model: openai:gpt-4o-mini does every LLM job" in judged
    assert "data: italian_cuisine (3 documents, 20 questions) was written for rag_lab after the paper's own Italian " \
           "Cuisine corpus (three files" in setting_note("italian_cuisine", 3, 20, "offline", None)
    assert "the paper reports no retrieval metrics" in setting_note("italian_cuisine", 3, 20, "offline", None,
                                                                    retrieval_table=True)


def test_truncation_sentence_counts_texts_past_the_encoder_limit():
    from types import SimpleNamespace

    from rag_lab.core.types import Chunk
    from rag_lab.methods.sketch.paper import truncation_sentence

    class Words:            # an encoder reading 6 word pieces (4 of text + 2 special), counting words
        max_tokens = 6

        def count_tokens(self, text):
            return len(text.split())

    def made(*texts, vectors=True):
        return SimpleNamespace(chunks=[Chunk(str(i), "d", t, 0, len(t)) for i, t in enumerate(texts)],
                               uses_vectors=vectors)

    methods = {"naive": made("a b c", "a b c d"), "semantic": made("a b c d e", "a", "a b c d e f g"),
               "kg": made("a b c d e f g", vectors=False)}
    # limit 6 - 2 = 4 words: naive 0 of 2; semantic 2 of 3; KG-only embeds no chunk and is left out
    assert truncation_sentence(methods, Words()) == (
        "Texts longer than the encoder reads (6 word pieces with its two special tokens; each is embedded from its "
        "opening only): naive 0 of 2, semantic 2 of 3.")
