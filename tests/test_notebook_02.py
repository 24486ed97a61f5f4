"""Notebook 02 on two data sets: the shipped italian_cuisine and RAGBench COVID-QA from the fixture in
tests/fixtures/ragbench (found through RAG_LAB_DATA_RAGBENCH, as a user's local copy would be). Both
must run — a data set skipped for want of a copy would leave the comparison with one — and the
evaluation and Table 1 tables are checked by content."""
import json
import math
import re
from pathlib import Path

import pandas as pd
import pytest

from conftest import ROOT, assert_captions_name_reasoners, run_notebook_smoke
from rag_lab.evaluation.uncertainty import SUMMARY_COLUMNS
from rag_lab.datasets import load_dataset
from rag_lab.methods.unweaver.config import UnWeaverConfig
from rag_lab.methods.unweaver.paper import TOKEN_COLUMNS, paper_table1
from rag_lab.methods.unweaver.voting import RULES

pytestmark = pytest.mark.notebook

DATASETS = ["italian_cuisine", "ragbench_covidqa"]
# UnWeaver, its other voting rules on the same index, and the one baseline asked for
METHODS = {"unweaver", "naive"} | {f"unweaver-{r}" for r in RULES if r != UnWeaverConfig().rule}


def executed(manifest: dict, tmp_path: Path) -> dict:
    return json.loads((tmp_path / "runs" / manifest["run_id"] / manifest["notebooks"][0]["output"]).read_text("utf-8"))


def printed(manifest: dict, tmp_path: Path) -> str:
    nb = executed(manifest, tmp_path)
    return "".join("".join(o.get("text", "")) for c in nb["cells"] if c["cell_type"] == "code"
                   for o in c.get("outputs", []) if o.get("output_type") == "stream")


def test_unweaver_notebook_runs(tmp_path, monkeypatch, embedder):
    fixture = ROOT / "tests" / "fixtures" / "ragbench"
    monkeypatch.setenv("RAG_LAB_DATA_RAGBENCH", str(fixture))
    manifest = run_notebook_smoke("02_unweaver", {"compare_datasets": DATASETS, "baselines": ["naive"], "limit": 2,
                                                  "ks": [1, 5], "description_cap": 60,
                                                  "decide_on": ["ragbench_covidqa"]}, tmp_path)
    paths = {p.rsplit("/", 1)[-1]: p for p in manifest["notebooks"][0]["files"]}
    assert {"chunk_class_heatmap.png", "question_votes.png", "alignment_example_kkt.csv", "evaluation.csv",
            "token_usage.md", "table1_beside_paper.csv", "alignment_example_kkt_system.csv"} <= set(paths)
    # the worked example: every solver meets its KKT conditions; the constrained form's solution is the
    # hand-worked x = (1, 1/5, 13/20), z = -2/5 (tests/test_unweaver_constrained_lsq.py)
    kkt = pd.read_csv(paths["alignment_example_kkt.csv"], index_col=0)
    assert list(kkt.columns) == ["kelly (price iteration)", "constrained lsq (KKT system)", "bounded lsq (ours)"]
    assert (kkt.max() < 1e-8).all()
    system = pd.read_csv(paths["alignment_example_kkt_system.csv"], index_col=0)
    assert system.loc["solution [x; z]"].iloc[:4].tolist() == pytest.approx([1, 0.2, 0.65, -0.4])
    assert "constrained_lsq" in pd.read_csv(paths["question_elected.csv"], index_col=0).columns
    assert_captions_name_reasoners(manifest)

    # both data sets ran: none was skipped, and the comparison counts two
    text = printed(manifest, tmp_path)
    assert "all datasets available" in text and "ragbench_covidqa: skipped" not in text
    assert re.search(r"On ragbench_covidqa \(n = \d+ questions\) UnWeaver minus VectorRAG \(naive\); at least as good as "
                     r"VectorRAG on context recall@5 is the paper's claim, the threshold row:\n(?:  .*\n)*?  [^\n]*"
                     r"ctx_recall@5 \(threshold -0\.05\)", text), text[-3000:]
    check_findings(text, pd.read_csv(paths["evaluation.csv"]), pd.read_csv(paths["voting_classes.csv"]))
    # the opening says whether the rules elect the same chunks on the worked question, as its table shows
    elected = pd.read_csv(paths["question_elected.csv"], index_col=0).fillna("")
    sets = {frozenset(m.split(" ✓")[0] for m in elected[r] if m) for r in RULES}
    assert ("Why approval, pav and cc elect the same chunks:" in text) == (len(sets) == 1)
    check_gold_passages(text, pd.read_csv(paths["question_elected.csv"], index_col=0),
                        pd.read_csv(paths["question_gold_passages.csv"], index_col=0))
    check_readable(executed(manifest, tmp_path), text, Path(paths["build_stats.md"]).read_text("utf-8"))

    # the comparison with the baselines: n and a 95% interval around every mean
    evaluation = pd.read_csv(paths["evaluation.csv"])
    assert list(evaluation.columns) == ["dataset", *SUMMARY_COLUMNS]
    assert {"unweaver", "naive"} <= set(evaluation["method"]) and "italian_cuisine" in set(evaluation["dataset"])
    assert (evaluation["n"] <= 2).all() and (evaluation["n"] >= 1).all()          # limit 2 questions per dataset
    ok = evaluation.dropna(subset=["ci_low"])
    assert ((ok["ci_low"] <= ok["mean"] + 1e-4) & (ok["mean"] <= ok["ci_high"] + 1e-4)).all()

    # evaluation: every method on both data sets, rates in [0, 1]
    evaluation = evaluation.pivot_table(index=["dataset", "method"], columns="metric", values="mean")
    assert set(evaluation.index) == {(d, m) for d in DATASETS for m in METHODS}
    rates = [c for c in evaluation.columns if c.startswith(("doc_", "ctx_"))]
    assert {"doc_mrr@5", "ctx_recall@5"} <= set(rates)
    assert evaluation[rates].notna().all().all()
    assert ((evaluation[rates] >= 0) & (evaluation[rates] <= 1)).all().all()
    # by hand: the fixture's three COVID-QA passages are each shorter than one 128-token naive chunk, so
    # naive indexes 3 chunks and its top 5 holds all of them: every gold passage is found
    assert evaluation.loc[("ragbench_covidqa", "naive"), "ctx_recall@5"] == 1.0

    # token usage in the paper's layout: a row per data set and method, every index embedded something
    tokens = pd.read_csv(paths["token_usage.csv"], index_col=[0, 1], header=[0, 1])
    labels = {d for d, _ in tokens.index}
    assert labels == {"italian_cuisine (2 questions)", "ragbench_covidqa (2 questions)"}
    assert (tokens[("Embedder", "index")] > 0).all()
    # naive embeds each of those passages once, whole: its index cost is their word pieces
    passages = load_dataset("ragbench_covidqa", path=fixture, max_rows=100, limit=2).documents
    assert tokens.loc[("ragbench_covidqa (2 questions)", "naive"), ("Embedder", "index")] == embedder.count_tokens(
        [d.text for d in passages])

    # Table 1 beside ours: our rows for both data sets, the paper's rows exactly as transcribed
    side = pd.read_csv(paths["table1_beside_paper.csv"], index_col=[0, 1, 2], header=[0, 1])
    ours = side.xs("ours (reasoner: offline)", level="source")
    assert {d for d, _ in ours.index} == labels
    assert ours[("FC", "mean")].isna().all()                  # no judge, no factual correctness
    # ...so the shown token table leaves the empty FC columns out and says so
    assert "Left out above, with no score of ours in this run (judge: none): FC; the column stays in token_usage.csv." in text
    # ...and the LLM token columns, 0 for every method with the offline reasoner (the CSV keeps them, all 0)
    llm = [c for c in tokens.columns if c[0].startswith("LLM")]
    assert llm and (tokens[llm] == 0).all().all()
    assert "Left out above, 0 for every method with the offline reasoner: LLM prompt · index" in text
    reported = side.xs("paper-reported", level="source")
    expected = paper_table1()
    assert list(reported.index) == list(expected.index)
    for column in [("FC", "mean"), *TOKEN_COLUMNS]:
        for got, want in zip(reported[column], expected[column]):
            assert (pd.isna(got) and pd.isna(want)) or math.isclose(float(got), float(want)), (column, got, want)


def check_findings(text: str, evaluation: pd.DataFrame, voters: pd.DataFrame):
    """Why the rules agree, with the voting-class table's own counts, and the findings paragraph whose
    differences are the evaluation table's differences of means, with its caveats."""
    import re

    assert len(voters) >= UnWeaverConfig().top_n and voters["copied from its chunk"].all()   # offline: sentences
    why = re.search(r"(?:Why approval, pav and cc elect the same chunks:|Approval, pav and cc elect different chunks "
                    r"here \(\d+ distinct chunks between them\) although) (\d+) of the (\d+) voting classes embed "
                    r"descriptions copied word for word from their chunk, and the \d+ voters embed only (\d+) distinct", text)
    assert why, text[:3000]
    assert int(why.group(1)) == int(why.group(2)) == len(voters)
    assert int(why.group(3)) == voters["description (embedded)"].nunique()
    assert re.search(r"Over 2 questions the rules elect the same set on [012] and the same ranked list on [012]\.", text)
    assert "a class is in effect a sentence" in text and "An LLM reasoner writes a description" in text
    means = evaluation[evaluation["metric"] == "ctx_recall@5"].set_index(["dataset", "method"])["mean"]
    # decided on decide_on only (ragbench_covidqa here); italian_cuisine is said once to be described only
    assert "Not decided on italian_cuisine (not in decide_on: too few documents to decide)" in text
    assert "On italian_cuisine (n = " not in text
    said = re.search(r"On ragbench_covidqa \(n = (\d) questions\) UnWeaver minus VectorRAG \(naive\)[^\n]*:\n(?:  .*\n)*?"
                     r"  (?:unweaver - naive on ctx_recall@5: (-?\d\.\d{3}) [\[(]|(\d+ comparisons? cannot be decided \(\d "
                     r"(?:questions|documents?): no test[^\n]*ctx_recall@5))", text)
    assert said and int(said.group(1)) == 2, text[-3000:]
    if said.group(2):      # a comparison that can be decided carries its difference of means
        assert float(said.group(2)) == pytest.approx(means[("ragbench_covidqa", "unweaver")] - means[("ragbench_covidqa", "naive")], abs=1.1e-3)
    assert "factual correctness, needs a judge and was not computed" in text and "answers are extractive" in text
    # the agreement caveat's conclusion follows its counts: "differ little" only when most (not all) sets agree
    for name in ["ragbench_covidqa"]:
        said = re.search(rf"On {name} approval, PAV and CC elect the same set on (?:only )?(\d+) of (\d+) questions"
                         r"([^;.]*)", text)
        assert said, name
        same, n = int(said.group(1)), int(said.group(2))
        assert ("differ little" in said.group(3)) == (n / 2 < same < n), said.group(0)
        if same == n:
            assert "identical" in said.group(3) or "only order-sensitive scores" in said.group(3), said.group(0)
        elif same <= n / 2:
            assert "can differ" in said.group(0) and "only" in said.group(0), said.group(0)


def check_gold_passages(text: str, elected: pd.DataFrame, passages: pd.DataFrame):
    """The worked question's gold passages (ic-q01: the saffron-in-risotto and the protected-saffron
    passages): a chunk is marked only with the passages it holds, each passage's rank under each rule is
    the rank of its first marked chunk, and the printed sentence reads that table."""
    import re
    from rag_lab.methods.unweaver.views import gold_passage_sentence

    question = load_dataset("italian_cuisine", limit=2).questions[0]
    assert list(passages.index) == [f"P{i + 1}" for i in range(len(dict.fromkeys(question.gold_contexts)))]
    assert passages["document"].isin(question.gold_doc_ids).all()
    assert list(passages.columns[2:]) == list(elected.columns)
    for rule in elected.columns:
        marks = elected[rule].fillna("").tolist()
        assert all(re.fullmatch(r"[\w#-]+( ✓ P\d+(, P\d+)*)?", m) for m in marks if m), marks
        for label, row in passages.iterrows():
            ranks = [i + 1 for i, m in enumerate(marks) if re.search(rf"\b{label}\b", m)]
            assert row[rule] == (f"rank {ranks[0]}" if ranks else "not elected"), (rule, label)
    assert gold_passage_sentence(passages, 5) in text


def check_readable(nb: dict, text: str, build_md: str):
    """No raw dict, Series or dataclass repr printed; whole counts shown whole; every data set's
    evaluation figure shown; the votes figure has a legend."""
    import re

    assert "UnWeaverConfig(" not in text and "{'kelly" not in text and "dtype:" not in text
    plain = "".join("".join(o.get("data", {}).get("text/plain", "")) for c in nb["cells"] if c["cell_type"] == "code"
                    for o in c.get("outputs", []))
    assert "dtype:" not in plain
    # the knobs one row each (index "knob", column "value"), and the worked question's voting classes
    assert re.search(r"value\s*\nknob\s*\n", plain) and re.search(r"\ntop_n\s+\d+\n", plain), plain[:2000]
    assert re.search(r"class\s+similarity\s+\\?\n0 ", plain) and re.search(r"\n\s+approves\s*\n0 ", plain)
    assert "| chunks" in build_md and ".000 " not in build_md and re.search(r"\| build_seconds +\| \d+\.\d\d s", build_md)
    assert re.search(r"Kelly's price iteration (converged|did not converge) after \d+ iterations;\nthe constrained form "
                     r"demands ", text)
    figures = {"".join(c["source"]).split("\n")[0]: [o for o in c.get("outputs", []) if "application/vnd.plotly.v1+json"
                                                      in o.get("data", {})]
               for c in nb["cells"] if c["cell_type"] == "code"}
    evaluation = next(v for src, v in figures.items() if src.startswith("for name, s in ev.summaries.items()"))
    assert len(evaluation) == len(DATASETS)
    votes = next(v for src, v in figures.items() if src.startswith("fig = votes_bar("))
    layout = votes[0]["data"]["application/vnd.plotly.v1+json"]
    names = [t.get("name") for t in layout["data"]]
    assert "elected (label: its rank)" in names and layout["layout"]["showlegend"]
