"""Notebook 00 on four questions, checked by the contents of its tables: the three chunkings' sizes,
the retrieval and answer tables against the per-question rows the notebook also writes (their means,
computed here with a plain groupby), and the closing sentence against the table."""
import json
import math
import re
from pathlib import Path

import pandas as pd
import pytest

from conftest import assert_captions_name_reasoners
from rag_lab.evaluation.uncertainty import SUMMARY_COLUMNS
from rag_lab.datasets import load_dataset
from rag_lab.methods.baselines.config import NaiveConfig

# one group with the browser tests: they read this run (test_browser_report) or run the notebook in JupyterLab
pytestmark = [pytest.mark.notebook, pytest.mark.xdist_group("quickstart")]
SMALL = {"limit": 4, "ks": [1, 3, 5], "decide_on": {"loader": "fenwold_gazetteer", "documents": 6}}

HEADLINE = [f"{m}@5" for m in ("doc_mrr", "doc_recall", "ctx_mrr", "ctx_recall", "ctx_precision", "ctx_ndcg")]


def question_means(per_question: pd.DataFrame, columns) -> pd.DataFrame:
    """Mean over questions per method of each ``metric@k`` column, NaN values left out."""
    rows = per_question.dropna(subset=["k", "value"])
    rows = rows.assign(column=[f"{m}@{int(k)}" for m, k in zip(rows["metric"], rows["k"])])
    return rows[rows["column"].isin(columns)].groupby(["method", "column"])["value"].mean().unstack()[list(columns)]


def test_quickstart_runs(notebook_run, embedder):
    run = notebook_run("00_quickstart", SMALL)        # the run tests/test_browser_report.py shows
    manifest, root = run.manifest, run.root
    paths = {Path(p).name: Path(p) for p in manifest["notebooks"][0]["files"]}
    assert {"chunk_similarity_heatmap.png", "chunk_similarity_heatmap.html", "retrieval_metrics.csv",
            "retrieval_metrics.md", "chunk_stats.csv", "answer_metrics.csv", "retrieval_per_question.csv"} <= set(paths)
    assert_captions_name_reasoners(manifest)

    # chunkings: each made chunks, sizes in order, and as many fixed windows as the documents' lengths give
    stats = pd.read_csv(paths["chunk_stats.csv"], index_col=0)
    assert list(stats.index) == ["fixed", "recursive", "semantic"]
    assert (stats["chunks"] > 0).all() and (stats["over_model_limit"] >= 0).all()
    assert ((stats["min_tokens"] <= stats["mean_tokens"]) & (stats["mean_tokens"] <= stats["max_tokens"])).all()
    # fixed windows of `size` pieces starting every size - overlap pieces: a document of n pieces gives
    # 1 + ceil(max(0, n - size) / (size - overlap)) windows
    config, data = NaiveConfig(), load_dataset("italian_cuisine")
    pieces = [len(embedder.tokenize_with_offsets(d.text)[0]) for d in data.documents]
    step = config.size - config.overlap
    assert stats.loc["fixed", "chunks"] == sum(1 + math.ceil(max(0, n - config.size) / step) for n in pieces)

    # the similarity heatmap draws a line between each pair of neighbouring documents on both axes
    heatmap = paths["chunk_similarity_heatmap.html"].read_text(encoding="utf-8")
    assert heatmap.count('"type":"line"') == 2 * (len(data.documents) - 1)
    assert "chunks, grouped by document (lines: document boundaries)" in heatmap

    block = re.search(r"Mean cosine of two chunks of one document \(inside the white squares\): (\d\.\d{3}) over \d+ "
                      r"pairs; of two chunks from different documents: (\d\.\d{3}) over \d+ pairs; difference ([+-]\d\.\d{3})",
                      "".join("".join(o.get("text", "")) for c in json.loads((root / "runs" / manifest["run_id"] /
                              manifest["notebooks"][0]["output"]).read_text("utf-8"))["cells"] if c["cell_type"] == "code"
                              for o in c.get("outputs", [])))
    assert block and float(block.group(3)) == pytest.approx(float(block.group(1)) - float(block.group(2)), abs=1.1e-3)

    # per-question rows: both methods on the same four questions
    per_question = pd.read_csv(paths["retrieval_per_question.csv"])
    assert set(per_question["method"]) == {"naive", "semantic"} and per_question["question_id"].nunique() == 4

    # the retrieval table is the mean of those rows (rounded to 4 places), every value a rate
    retrieval = pd.read_csv(paths["retrieval_metrics.csv"]).pivot(index="method", columns="metric", values="mean")
    assert sorted(retrieval.index) == ["naive", "semantic"] and set(HEADLINE) <= set(retrieval.columns)
    means = question_means(per_question, HEADLINE).loc[retrieval.index]
    assert retrieval[HEADLINE].to_numpy() == pytest.approx(means.to_numpy(), abs=6e-4)
    assert ((retrieval[HEADLINE] >= 0) & (retrieval[HEADLINE] <= 1)).all().all()

    # the answer table likewise, for the answer metrics at answer_k = 5
    answers = pd.read_csv(paths["answer_metrics.csv"]).pivot(index="method", columns="metric", values="mean")
    assert {"token_f1@5", "exact_match@5", "rouge_l@5"} <= set(answers.columns)
    columns = [c for c in ("token_f1@5", "exact_match@5", "rouge_l@5") if c in answers.columns]
    assert answers[columns].to_numpy() == pytest.approx(
        question_means(per_question, columns).loc[answers.index].to_numpy(), abs=6e-4)

    # the closing sentences are decided on decide_on (fenwold_gazetteer, its first 4 questions here): they quote
    # the means of the rows the notebook wrote for it; 4 questions cannot decide, which is said once, without numbers
    nb = json.loads((root / "runs" / manifest["run_id"] / manifest["notebooks"][0]["output"]).read_text("utf-8"))
    text = "".join("".join(o.get("text", "")) for c in nb["cells"] if c["cell_type"] == "code"
                   for o in c.get("outputs", []) if o.get("output_type") == "stream")
    decided = pd.read_csv(paths["decided_per_question.csv"])
    assert set(decided["method"]) == {"naive", "semantic"} and decided["question_id"].nunique() == 4
    assert set(decided["question_id"]) <= {q.id for q in load_dataset("fenwold_gazetteer").questions}
    said = re.search(r"fenwold_gazetteer: context recall@5, mean \[95% interval\] over 4 questions: naive (\d\.\d{3}) "
                     r"\[[^]]*\], semantic (\d\.\d{3})", text)
    assert said, text[-2000:]
    recall = question_means(decided, ["ctx_recall@5"])["ctx_recall@5"]
    assert float(said.group(1)) == pytest.approx(recall["naive"], abs=6e-4)
    assert float(said.group(2)) == pytest.approx(recall["semantic"], abs=6e-4)
    assert re.search(r"Paired, question by question: 2 comparisons cannot be decided \(4 (questions|documents): no test "
                     r"at 0\.05 is possible\): semantic - naive; ctx_recall@5, token_f1@5; no interval, MDE or verdict", text), text[-2000:]
    # the encoder cut is said beside that result, for the semantic chunks built on the deciding data, and tied
    # to the same comparison, in words
    cut = re.search(r"semantic: (\d+) of (\d+) chunks \(mean (\d+) word pieces\) are longer than the (\d+) word pieces "
                    r"the encoder reads", text)
    whole = re.search(r"semantic: none of its (\d+) chunks \(mean (\d+) word pieces\) is longer than the (\d+) word "
                      r"pieces the encoder reads, so every chunk is embedded whole", text)
    assert cut or whole, text[-2000:]
    if cut:       # some chunks cut: tied to the same comparison, in words
        assert int(cut.group(4)) == embedder.max_tokens and int(cut.group(1)) <= int(cut.group(2))
        assert "Here semantic - naive on ctx_recall@5 cannot be decided (4 " in text
    else:
        assert int(whole.group(3)) == embedder.max_tokens and int(whole.group(2)) <= embedder.max_tokens - 2
    # the worked example: gold passages numbered and marked, every hit labelled, and the reading of the
    # answer quotes the token F1 the per-question table holds for naive on the first question
    assert "Gold passages of this question" in text and re.search(r"  P1 \(\S+; (in rank|NOT in the top)", text)
    assert len(re.findall(r"^#\d+ \S+ — (holds P\d|no gold passage)", text, flags=re.M)) == 5
    reading = next(line for line in text.splitlines() if line.startswith("The answer "))
    assert re.search(r"\);\n(it is pasted|\d+ of its \d+ sentences|none of its sentences)", text), reading   # its own line
    first = per_question[(per_question["method"] == "naive") & (per_question["metric"] == "token_f1")
                         & (per_question["k"] == 5) & (per_question["question_id"] == data.questions[0].id)]
    f1 = re.search(r"token F1 against it (\d\.\d\d)\)", reading)
    assert len(first) == 1 and (f1 is not None) == (first["value"].iloc[0] < 1), reading
    if f1:
        assert float(f1.group(1)) == pytest.approx(first["value"].iloc[0], abs=0.006)
    # the two context recalls told apart, each quoting its own table's mean
    two = re.search(r"ctx_recall@5 = (\d\.\d{3}) .* id_context_recall@5 = (\d\.\d{3})", text)
    assert two and float(two.group(1)) == pytest.approx(retrieval.loc["naive", "ctx_recall@5"], abs=6e-4), text[-2000:]
    assert float(two.group(2)) == pytest.approx(answers.loc["naive", "id_context_recall@5"], abs=6e-4)
    check_intervals(manifest, root)


def check_intervals(manifest, root):
    """The comparative tables carry n and a 95% interval around each mean; the findings pair the methods."""
    import pandas as pd

    folder = root / "figures" / "00_quickstart"
    for name in ("retrieval_metrics", "answer_metrics"):
        table = pd.read_csv(folder / f"{name}.csv")
        assert list(table.columns) == SUMMARY_COLUMNS
        assert set(table["method"]) == {"naive", "semantic"}
        assert (table["n"] == 4).all(), table                 # every one of the 4 questions has gold and an answer
        ok = table.dropna(subset=["ci_low"])
        assert ((ok["ci_low"] <= ok["mean"] + 1e-4) & (ok["mean"] <= ok["ci_high"] + 1e-4)).all()
        assert "[" in (folder / f"{name}.md").read_text(encoding="utf-8")   # "mean [low, high]" cells
    nb = (root / "runs" / manifest["run_id"] / manifest["notebooks"][0]["output"]).read_text(encoding="utf-8")
    assert "italian_cuisine: Every interval below is a 95% interval for the mean over questions like these" in nb
    # the run's ledger: the family's two comparisons, clustered by document, under notebook 00
    from rag_lab.evaluation import ledger

    rows = pd.read_csv(root / "runs" / manifest["run_id"] / ledger.COMPARISONS)
    mine = rows[rows["notebook"] == "00_quickstart"]
    assert set(zip(mine["metric"], mine["setting"])) == {("ctx_recall", "k=5"), ("token_f1", "k=5")}
    assert set(mine["family"]) == {"semantic minus naive on ctx_recall@5, token_f1@5 (notebook 00)"}
    assert set(mine["dataset"]) == {"fenwold_gazetteer"}        # decided on decide_on, not on the teaching set
    assert (mine["units"] <= mine["n"]).all() and manifest["ledger"]["conflicts"] == []
