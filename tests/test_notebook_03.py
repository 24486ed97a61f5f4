import json
import re
from pathlib import Path

import pandas as pd
import pytest

from conftest import assert_captions_name_reasoners, run_notebook_smoke
from rag_lab.evaluation.uncertainty import SUMMARY_COLUMNS
from rag_lab.methods.ssg.config import ALGORITHM_NAMES
from rag_lab.methods.ssg.paper import paper_table

pytestmark = pytest.mark.notebook


def printed(manifest: dict, tmp_path: Path) -> str:
    """Everything the executed notebook printed (stream outputs)."""
    nb = json.loads((tmp_path / "runs" / manifest["run_id"] / manifest["notebooks"][0]["output"]).read_text("utf-8"))
    return "".join("".join(o.get("text", "")) for c in nb["cells"] if c["cell_type"] == "code"
                   for o in c.get("outputs", []) if o.get("output_type") == "stream")


def test_ssg_traversal_notebook_runs(tmp_path):
    manifest = run_notebook_smoke("03_ssg_traversal", {"limit": 3, "limit_documents": 0,
                                                        "decide_on": {"loader": "fenwold_gazetteer", "documents": 4}}, tmp_path)
    paths = {Path(p).name: Path(p) for p in manifest["notebooks"][0]["files"]}
    assert {"window_similarity_heatmap.png", "window_similarity_heatmap.html", "multilayer_graph.png",
            "traversal_neighbourhood.png", "traversal_neighbourhood.html",
            "traversal_paths_3d.png", "traversal_paths_3d.html", "traversal_paths_3d_focus.png",
            "sequential_path.png", "ssg_results.csv", "ssg_results.md", "vs_paper_1.md", "vs_paper_2.md",
            "vs_paper_1_like_for_like.csv", "vs_paper_2_like_for_like.csv",
            "document_themes.csv", "stop_reasons.csv", "equal_budget.csv", "walk_steps.csv",
            "walk_sentences.csv"} <= set(paths)

    ours = pd.read_csv(paths["ssg_results.csv"], index_col=0)
    assert list(ours.index) == list(ALGORITHM_NAMES)
    for column in ("gold_sentence_precision", "gold_sentence_recall"):
        assert ours[column].between(0, 1).all(), column
    # no judge: the LLM-judged columns are empty, not zeros
    assert ours[["llm_context_precision", "llm_context_recall", "faithfulness"]].isna().all().all()
    # the offline llm_guided row is an algorithm of its own, not query_traversal again
    compared = ["gold_sentence_precision", "gold_sentence_recall", "sentences"]
    assert not ours.loc["llm_guided_traversal", compared].equals(ours.loc["query_traversal", compared])

    vs = pd.read_csv(paths["vs_paper_1.csv"], index_col=0)
    name = "20q theme_based (paper-reported)"
    assert vs["recall (paper-reported)"].tolist() == paper_table(name)["recall"].tolist()
    # the row set beside the paper's LLM row says its choices were the offline rule
    assert vs.index[-1] == "llm_guided_traversal (ours: offline rule, no LLM)"
    assert "recall (ours: gold_sentence_recall)" in vs.columns
    # our intervals are shown, and never set against the paper's numbers: no column is like-for-like
    assert (vs["recall (n)"] > 0).all()          # one question of this strategy at limit 3: no interval (blank)
    bounded = vs["recall (ci_low)"].notna()
    assert (vs.loc[bounded, "recall (ci_low)"] <= vs.loc[bounded, "recall (ours: gold_sentence_recall)"] + 1e-3).all()
    assert set(vs["recall (paper in our 95% CI)"]) == {"not like-for-like"}
    ci = pd.read_csv(paths["ssg_results_ci.csv"])
    assert list(ci.columns) == SUMMARY_COLUMNS
    assert set(ci["method"]) == set(ALGORITHM_NAMES) and (ci["n"] == 3).all()
    assert ((ci["ci_low"] <= ci["mean"] + 1e-4) & (ci["mean"] <= ci["ci_high"] + 1e-4)).all()
    like = pd.read_csv(paths["vs_paper_1_like_for_like.csv"], index_col=0)
    assert like.loc["precision", "ours"] == "gold_sentence_precision" and (like["like-for-like"] == "no").all()
    # the paper tables are shown narrowed (the CSV keeps every column)
    assert "precision: ours [95% interval]" in paths["vs_paper_1.md"].read_text(encoding="utf-8")
    # the equal-sentence-budget view: one budget per question, never above an algorithm's own count
    budget = pd.read_csv(paths["equal_budget.csv"], index_col=0)
    assert list(budget.index) == list(ALGORITHM_NAMES)
    assert budget["sentences (equal budget)"].nunique() == 1
    assert (budget["sentences (equal budget)"] <= budget["sentences (own stop)"] + 1e-9).all()
    # the sentences the notebook writes beside it read the tables: the spread of own budgets, the equal budget
    text = printed(manifest, tmp_path)
    # the findings are decided on decide_on (4 Fenwold documents, 3 questions): the seven algorithms' own rows,
    # each sentence naming that data set; 3 questions cannot decide, so no interval is printed for them
    decided = pd.read_csv(paths["decided_per_question.csv"])
    assert set(decided["dataset"]) == {"fenwold_gazetteer"} and decided["question_id"].nunique() == 3
    assert sorted(decided["algorithm"].unique()) == sorted(ours.index)
    means = decided.groupby("algorithm")["gold_sentence_recall"].mean()
    said = re.search(r"fenwold_gazetteer \(3 questions, [^)]*\), own stopping points, gold_sentence_recall minus "
                     r"basic_retrieval's \((\d\.\d\d)\)", text)
    assert said and float(said.group(1)) == pytest.approx(means["basic_retrieval"], abs=0.006), text[-3000:]
    leader = re.search(r"fenwold_gazetteer \(3 questions, [^)]*\), own stopping points: highest mean gold_sentence_recall: "
                       r"(\w+) \((\d\.\d\d)\)", text)
    assert leader and float(leader.group(2)) == pytest.approx(means.max(), abs=0.006), text[-3000:]
    assert means[leader.group(1)] == pytest.approx(means.max(), abs=1e-9)
    assert ("Unlike the paper's tables (one grouping strategy each, DeepEval's LLM-judged metrics), this one pools 3 "
            "questions of 3 strategies and measures context by gold-sentence precision/recall (no judge, so no answer "
            "relevancy or faithfulness).") in text
    own = budget["sentences (own stop)"]
    assert (f"the algorithms gather {own.min():.1f} ({own.idxmin()}) to {own.max():.1f} ({own.idxmax()}) sentences"
            in text), text
    per_q = pd.read_csv(paths["per_question.csv"]).groupby("question_id")["sentences"].min()   # the fewest any gathered
    assert (f"({per_q.min()} to {per_q.max()}, mean {per_q.mean():.1f} over {len(per_q)} questions), every algorithm run "
            "again with that cap.") in text
    assert re.search(r"llm_guided_traversal's choices were made by the offline reasoner's relevance-minus-redundancy "
                     r"rule \(no LLM\); its path was query_traversal's on [0-3] of 3 questions\.", text)
    # the worked walk: the anchor first, a stop last, every gathered or missed gold sentence marked
    steps = pd.read_csv(paths["walk_steps.csv"])["decision"].fillna("")
    assert steps.iloc[0].startswith("anchor") and steps.str.contains("stop").any()
    sentences = pd.read_csv(paths["walk_sentences.csv"])
    assert set(sentences["gold"].fillna("")) <= {"", "✓", "✓ missed"}
    # the example's gold sentences P1, P2 … against every algorithm: a rank in its gathered list or "not elected"
    example = pd.read_csv(paths["example_gold_passages.csv"], index_col=0)
    assert list(example.index) == [f"P{i}" for i in range(1, len(example) + 1)] and len(example) > 0
    ranks = example[[c for c in example.columns if c not in ("document", "text")]]
    assert ranks.shape[1] == len(ALGORITHM_NAMES)
    assert ranks.stack().str.fullmatch(r"rank \d+|not elected").all()
    gathered = int((sentences["gold"].fillna("") == "✓").sum())     # the traced walk's gold sentences, ✓ there
    walked = next(c for c in ranks.columns if c in paths["walk_steps.md"].read_text(encoding="utf-8").splitlines()[0])
    assert int(ranks[walked].str.startswith("rank").sum()) == gathered
    assert_captions_name_reasoners(manifest)
