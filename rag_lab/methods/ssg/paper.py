"""The SSG-traversal paper's two result tables (typed in from the paper, paper-reported) and our
run's table set beside one of them.

The paper scores each algorithm by precision and recall of the retrieved context, answer
relevancy and faithfulness (DeepEval, LLM-judged) and the number of test cases passed; what our
columns measure is described in ``experiment.py``.
"""
from __future__ import annotations

import pandas as pd

_PAPER_COLUMNS = ["precision", "recall", "answer_relevancy", "faithfulness", "passed", "total"]


PAPER_TABLES: dict[str, pd.DataFrame] = {
    # "20qa-themes-gpt4omini-reasoning": 20 questions from theme_based groups (max_sentences 10)
    "20q theme_based (paper-reported)": pd.DataFrame([
        ("basic_retrieval", 0.87, 0.74, 0.91, 0.93, 16, 20),
        ("query_traversal", 0.83, 0.83, 0.91, 1.00, 16, 20),
        ("ssg_traversal", 0.73, 0.72, 0.98, 0.92, 15, 20),
        ("triangulation_average", 0.84, 0.77, 0.96, 1.00, 16, 20),
        ("triangulation_geometric_3d", 0.86, 0.77, 0.96, 1.00, 16, 20),
        ("triangulation_fulldim", 0.90, 0.78, 0.95, 0.99, 17, 20),
        ("llm_guided_traversal", 0.88, 0.82, 0.95, 1.00, 17, 20),
    ], columns=["algorithm", *_PAPER_COLUMNS]).set_index("algorithm"),
    # "50qa-seq-multihop-gpt4o-reasoning-comparative-multicontext": sequential_multi_hop groups (max 15)
    "50q sequential_multi_hop (paper-reported)": pd.DataFrame([
        ("basic_retrieval", 0.93, 0.88, 0.99, 0.99, 48, 50),
        ("query_traversal", 0.91, 0.91, 0.98, 1.00, 50, 50),
        ("ssg_traversal", 0.93, 0.87, 0.99, 0.99, 49, 50),
        ("triangulation_average", 0.92, 0.87, 0.98, 0.99, 49, 50),
        ("triangulation_geometric_3d", 0.93, 0.85, 0.98, 1.00, 48, 50),
        ("triangulation_fulldim", 0.93, 0.87, 1.00, 0.97, 47, 50),
        ("llm_guided_traversal", 0.91, 0.94, 0.99, 0.99, 49, 50),
    ], columns=["algorithm", *_PAPER_COLUMNS]).set_index("algorithm"),
}


# which of our question strategies matches each paper table
PAPER_STRATEGY = {"20q theme_based (paper-reported)": "theme_based",
                  "50q sequential_multi_hop (paper-reported)": "sequential_multi_hop"}


def paper_table(name: str) -> pd.DataFrame:
    """One paper table with ``pass_rate`` (passed / total) and ``test_cases`` ("16/20")."""
    t = PAPER_TABLES[name].copy()
    t["pass_rate"] = t["passed"] / t["total"]
    t["test_cases"] = [f"{p}/{n}" for p, n in zip(t["passed"], t["total"])]
    return t.drop(columns=["passed", "total"])


NUMERIC_COLUMNS = ["precision", "recall", "answer_relevancy", "faithfulness", "pass_rate"]


def compare_with_paper(ours: pd.DataFrame, paper_name: str) -> pd.DataFrame:
    """Ours | paper-reported | difference per metric (``plots.with_paper``), plus both test-case counts;
    columns named like ``"recall (paper-reported)"``."""
    from ...plots import with_paper

    paper = paper_table(paper_name)
    table = with_paper(ours[NUMERIC_COLUMNS], paper[NUMERIC_COLUMNS])
    table[("test_cases", "ours")] = ours["test_cases"]
    table[("test_cases", "paper-reported")] = paper["test_cases"]
    table.columns = [f"{metric} ({who})" for metric, who in table.columns]
    return table
