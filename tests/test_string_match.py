"""rag_lab.evaluation.string_match: the length bound of ragas' non-LLM context match (a text more than
twice as long as every gold passage can never match), checked against ragas itself on hand-made strings,
and the sentence a heatmap with all-zero columns carries."""
import asyncio

import pandas as pd
import pytest

from rag_lab.core.plots import question_metric_heatmap, with_note, wrap_title
from rag_lab.evaluation.string_match import all_zero_columns, all_zero_note, unreachable

GOLD = ["Pesto comes from Genoa.", "Basil grows in Liguria."]         # 23 characters each
SAME, TRIPLE, CLOSE = GOLD[0], GOLD[0] * 3, GOLD[0] + " It is green."  # 23, 69 (> 2 x 23), 35 characters


def test_texts_over_twice_the_longest_gold_passage_are_unreachable():
    assert unreachable([SAME, TRIPLE, CLOSE], GOLD) == 1
    assert unreachable([GOLD[0] * 2], GOLD) == 0                    # exactly twice: similarity can still be 0.5
    assert unreachable([TRIPLE], GOLD, threshold=0.25) == 0         # 23 / 69 = 0.33 >= 0.25
    assert unreachable(["x"], []) == 1                               # no gold passage: nothing matches
    with pytest.raises(ValueError, match="threshold"):
        unreachable([SAME], GOLD, threshold=0)


def test_the_bound_holds_for_ragas_own_metric():
    from ragas import SingleTurnSample
    from ragas.metrics import NonLLMContextPrecisionWithReference

    def precision(contexts):
        sample = SingleTurnSample(retrieved_contexts=contexts, reference_contexts=GOLD)
        return asyncio.run(NonLLMContextPrecisionWithReference().single_turn_ascore(sample))

    assert precision([SAME]) == pytest.approx(1.0)
    assert precision([TRIPLE]) == pytest.approx(0.0)                 # contains the gold passage, and still 0


def results(values_by_metric):
    return pd.DataFrame([{"method": "semantic", "question_id": f"q{i}", "metric": m, "k": k, "value": v}
                         for m, (k, values) in values_by_metric.items() for i, v in enumerate(values)])


def test_the_note_names_the_all_zero_columns_and_why():
    df = results({"nonllm_context_precision": (5, [0.0, 0.0]), "nonllm_context_recall": (5, [0.0, 0.0]),
                  "ctx_recall": (5, [0.5, 0.0]), "faithfulness": (5, [float("nan")] * 2),
                  "token_f1": (None, [0.0, 0.2])})
    metrics = ["nonllm_context_precision", "nonllm_context_recall", "faithfulness", "ctx_recall", "token_f1"]
    assert all_zero_columns(df, "semantic", metrics, 5) == ["nonllm_context_precision", "nonllm_context_recall"]
    note = all_zero_note(df, "semantic", metrics, 5, [TRIPLE, SAME], GOLD)
    assert note.startswith("nonllm_context_precision and nonllm_context_recall are 0 for all 2 questions: ")
    assert "1 of semantic's 2 chunks are more than 2x the longest gold passage (23 characters)" in note
    assert "none of semantic's chunks is too long" in all_zero_note(df, "semantic", metrics, 5, [SAME], GOLD)
    assert all_zero_note(df, "semantic", ["ctx_recall", "token_f1"], 5, [TRIPLE], GOLD) == ""


def test_titles_wrap_and_the_note_sits_under_the_title():
    title = "llm_guided_traversal over the visited articles' similarity matrices: ssg-q09 (index built by: offline)"
    assert wrap_title(title, 60).split("<br>") == ["llm_guided_traversal over the visited articles' similarity",
                                                   "matrices: ssg-q09 (index built by: offline)"]
    assert wrap_title("short") == "short"
    text, top = with_note("Heatmap", "why a column is zero")
    assert text == "Heatmap<br><sup>why a column is zero</sup>" and top > 80
    df = results({"ctx_recall": (5, [0.5, 0.0])})
    fig = question_metric_heatmap(df, "semantic", ["ctx_recall"], 5, "Heatmap", "why")
    assert fig.layout.title.text == "Heatmap<br><sup>why</sup>"
