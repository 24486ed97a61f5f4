"""Notebook 10 end to end on small parameters, checked by the contents of its tables (notebook 11:
tests/test_notebook_11.py): every method requested is present, rates stay in [0, 1], the claims
table holds one verdict per paper and every caption names the reasoners. Notebook 10's context
budget equals the tokens of the hits a fresh retrieval returns, its equal-budget table holds every
method at one budget, and its SSG claim reads the gold sentences as notebook 03 does."""
import ast
import json
import re
import math
from pathlib import Path

import pandas as pd
import pytest

from conftest import assert_captions_name_reasoners, run_notebook_smoke
from rag_lab.evaluation import harness
from rag_lab.compare.claims import CLAIMS
from rag_lab.compare.comparison import MID, SMALLEST, unequal
from rag_lab.evaluation import ledger
from rag_lab.evaluation.statistics import CONTRADICTED, SUPPORTED, VERDICTS

pytestmark = pytest.mark.notebook
SETTINGS = [SMALLEST, MID, unequal(5)]


def written(manifest: dict) -> dict[str, Path]:
    return {Path(p).name: Path(p) for p in manifest["notebooks"][0]["files"]}


def printed(manifest: dict, tmp_path: Path) -> str:
    """Everything the executed notebook printed (stream outputs)."""
    nb = json.loads((tmp_path / "runs" / manifest["run_id"] / manifest["notebooks"][0]["output"]).read_text("utf-8"))
    return "".join("".join(o.get("text", "")) for c in nb["cells"] if c["cell_type"] == "code"
                   for o in c.get("outputs", []) if o.get("output_type") == "stream")


def test_compare_notebook_tables(tmp_path):
    # one method per family keeps CI short; every method also runs in its own paper notebook's test
    from rag_lab.methods import available_methods

    family = [m for m in ("naive", "semantic", "bm25", "hybrid", "sketch", "unweaver", "ssg-query-traversal", "gralc-graph")
              if m in available_methods()]
    manifest = run_notebook_smoke("10_compare_retrieval", {"datasets": ["italian_cuisine"], "limit": 2, "ks": [1, 5],
                                                           "methods": ",".join(family)}, tmp_path)
    assert_captions_name_reasoners(manifest)
    files = written(manifest)

    board = pd.read_csv(files["leaderboard_italian_cuisine.csv"])
    assert list(board.columns) == ["rank", "method", "metric", "mean", "n", "ci_low", "ci_high", "n_dropped", "interval", "units",
                                  "design_effect"]
    assert sorted(board["method"].unique()) == sorted(family)
    assert {"doc_mrr@5", "doc_recall@5", "ctx_recall@5"} <= set(board["metric"])
    rates = board[board["metric"].str.startswith(("doc_", "ctx_"))]
    assert rates["mean"].between(0, 1).all() and (rates["n"] == 2).all()     # n: the questions scored
    ok = board.dropna(subset=["ci_low"])
    assert ((ok["ci_low"] <= ok["mean"] + 1e-12) & (ok["mean"] <= ok["ci_high"] + 1e-12)).all()
    recall = board[board["metric"] == "ctx_recall@5"].sort_values("rank")["mean"].tolist()
    assert recall == sorted(recall, reverse=True), "the leaderboard is ranked by context recall, best first"
    shown = files["leaderboard_italian_cuisine.md"].read_text(encoding="utf-8")
    assert "ctx_recall@5 (n=2)" in shown and "[" in shown

    per_question = pd.read_csv(files["results_italian_cuisine.csv"])
    assert set(per_question["method"]) == set(family) and per_question["question_id"].nunique() == 2

    diffs = pd.read_csv(files["differences_italian_cuisine.csv"])
    assert set(diffs["baseline"]) == {"naive"} and set(diffs["method"]) == set(family) - {"naive"}
    assert {"diff", "n", "ci_low", "ci_high", "p", "p_holm", "mde", "interval", "n_dropped", "family", "family_size",
            "resamples", "verdict"} <= set(diffs.columns)
    assert not (diffs["verdict"].isin([SUPPORTED, CONTRADICTED]) & (diffs["p_holm"] >= 0.05)).any()
    ranks = pd.read_csv(files["ranks_italian_cuisine.csv"])
    assert sorted(ranks["method"]) == sorted(family) and abs(ranks["share_best"].sum() - 1) <= 5e-5 * len(ranks)   # each rounded to 4 places
    assert ((ranks["rank_low"] >= 1) & (ranks["rank_low"] <= ranks["rank_high"])).all()
    tested = diffs.dropna(subset=["p"])       # two questions of one document give no test ("none: one unit")
    assert (diffs["n"] == 2).all() and (tested["p_holm"] >= tested["p"] - 1e-12).all()
    assert diffs.loc[diffs["p"].isna(), "interval"].str.startswith("none").all()
    # the difference is the difference of the two methods' means on the same questions
    means = board.set_index(["method", "metric"])["mean"]
    for _, row in diffs[diffs["metric"] == "ctx_recall@5"].iterrows():
        assert abs(row["diff"] - (means[(row["method"], "ctx_recall@5")] - means[("naive", "ctx_recall@5")])) < 1e-3
    assert "forest_italian_cuisine.png" in files
    # n, documents and the comparisons that cannot be decided, said once from the differences table
    undecided = int(diffs["verdict"].str.startswith("cannot be decided").sum())
    said = next(line for line in printed(manifest, tmp_path).splitlines() if line.startswith("italian_cuisine: 2 questions"))
    documents = int(diffs["units"].max())          # the resampling units: the questions' first gold documents
    assert said.startswith(f"italian_cuisine: 2 questions from {documents} document{'' if documents == 1 else 's'} (each "
                           "difference resampled by document); the median minimum detectable effect (80% power) of "
                           "ctx_recall differences is ")
    counts = re.findall(r"(\d+) of (\d+) comparisons? at [^;]*? cannot be decided", printed(manifest, tmp_path))
    # one data set here: its settings' counts add up to the differences table's
    assert sum(int(u) for u, _ in counts) == undecided and sum(int(t) for _, t in counts) == len(diffs), counts
    check_decision_settings(files, diffs, per_question, family, printed(manifest, tmp_path))

    flips = pd.read_csv(files["flip_counts.csv"])
    assert {("sketch", "naive"), ("unweaver", "naive")} <= set(zip(flips["method"], flips["baseline"]))
    assert ((flips["wins"] + flips["losses"] + flips["ties"]) == flips["n"]).all()
    listed = pd.read_csv(files["flips_italian_cuisine.csv"])
    assert list(dict.fromkeys(flips["setting"])) == SETTINGS == list(dict.fromkeys(listed["setting"]))
    for setting in SETTINGS:
        counted = flips[flips["setting"] == setting].set_index("method")
        mine = listed[listed["setting"] == setting]
        for method in ("sketch", "unweaver"):
            assert (mine["method"] == method).sum() == counted.loc[method, "wins"] + counted.loc[method, "losses"]
    assert flips.loc[flips["setting"] == SETTINGS[2], "cut"].eq("k=5").all()
    assert flips.loc[flips["setting"] == SETTINGS[0], "cut"].str.endswith(" tokens").all()
    check_flip_view(manifest, tmp_path, flips)

    claims = pd.read_csv(files["claims.csv"])
    assert list(dict.fromkeys(claims["setting"])) == SETTINGS
    for setting in SETTINGS:
        assert list(claims.loc[claims["setting"] == setting, "paper"]) == [c.paper for c in CLAIMS]
    assert set(claims["this run"]) <= {*VERDICTS, "not tested"}
    assert claims["numbers"].notna().all()
    check_verdict_table(files, claims)
    tested = claims[claims["this run"] != "not tested"]
    # an interval, or why there is none (two questions of one document: "none: one unit")
    assert tested["numbers"].str.contains(r"(\[.*\]|\(none: .*\)).*p Holm = .*MDE", regex=True).all()
    comparisons = pd.read_csv(files["claim_comparisons.csv"])
    assert set(comparisons["verdict"]) <= set(VERDICTS)
    # two questions: no p below 0.05 is attainable, and no decided row may have p Holm >= 0.05
    assert not (comparisons["verdict"].isin([SUPPORTED, CONTRADICTED]) & (comparisons["p_holm"] >= 0.05)).any()
    # one family per claim and setting, each named for both (never "SKETCH" for three families)
    assert (comparisons["family"] == comparisons["paper"] + " (" + comparisons["setting"] + ")").all()
    # the run's ledger holds every decided comparison of the notebook, and none given two answers
    book = manifest["ledger"]
    assert book["per_notebook"]["10_compare_retrieval"] >= len(diffs) and book["conflicts"] == []
    rows = pd.read_csv(tmp_path / "runs" / manifest["run_id"] / ledger.COMPARISONS)
    assert list(rows.columns) == ledger.COLUMNS and set(rows["dataset"]) == {"italian_cuisine"}
    assert {"k=5", *(f"{b} tokens" for b in diffs["metric"].str.extract(r"@(\d+)tok")[0].dropna())} <= set(rows["setting"])
    # each setting reads its own columns: the tokens of its budget, or k
    sketch = comparisons[(comparisons["paper"] == "SKETCH") & comparisons["metric"].str.startswith("ctx_recall")]
    suffixes = sketch.groupby("setting")["metric"].first().str.split("@").str[1]
    assert suffixes[SETTINGS[2]] == "5" and suffixes[SETTINGS[0]].endswith("tok") and suffixes[SETTINGS[1]].endswith("tok")
    assert (comparisons.groupby("paper").size().reindex(tested["paper"]).fillna(0) > 0).all()
    # no two of these methods retrieve alike here, so each is shown (Run.same finds the twins)
    assert "italian_cuisine: no two methods retrieve exactly alike." in printed(manifest, tmp_path)
    check_budgets(files, family, printed(manifest, tmp_path))
    check_heatmaps(manifest, tmp_path, ["italian_cuisine"], per_question)


def check_decision_settings(files: dict[str, Path], diffs: pd.DataFrame, per_question: pd.DataFrame, family: list[str],
                            text: str) -> None:
    """Every difference is made at the two equal budgets and, beside them, at k=5 labelled as unequal; the
    mid budget is naive's median budget at k=5 (recomputed here from the per-question rows); each row
    shows both methods' tokens, and the sentences count the questions and name the verdicts that move."""
    budget_at_5 = per_question[(per_question["metric"] == "context_budget") & (per_question["k"] == 5)]
    smallest = int(math.floor(budget_at_5.groupby("method")["value"].mean().min()))
    mid = int(math.floor(budget_at_5.loc[budget_at_5["method"] == "naive", "value"].median()))
    kinds = diffs["setting"].str.split(":").str[0]
    assert list(dict.fromkeys(kinds)) == SETTINGS
    assert diffs.loc[kinds == SMALLEST, "metric"].str.endswith(f"@{smallest}tok").all()
    assert diffs.loc[kinds == MID, "metric"].str.endswith(f"@{mid}tok").all()
    assert diffs.loc[kinds == unequal(5), "metric"].str.endswith("@5").all()
    for kind in SETTINGS:
        assert set(diffs.loc[kinds == kind, "method"]) == set(family) - {"naive"}
        assert diffs.loc[kinds == kind, "family_size"].nunique() == 1          # one Holm family per setting
    # tokens beside every row: at a budget at most the budget, at k the context budget of the leaderboard
    assert (diffs.loc[kinds == SMALLEST, ["method_tokens", "baseline_tokens"]] <= smallest + 1e-9).all().all()
    assert (diffs.loc[kinds == MID, ["method_tokens", "baseline_tokens"]] <= mid + 1e-9).all().all()
    at_k = budget_at_5.groupby("method")["value"].mean()
    for _, row in diffs[kinds == unequal(5)].iterrows():
        assert row["method_tokens"] == pytest.approx(at_k[row["method"]], abs=1e-3)
        assert row["baseline_tokens"] == pytest.approx(at_k["naive"], abs=1e-3)
    mid_board = pd.read_csv(files["equal_budget_mid_italian_cuisine.csv"])
    assert {f"ctx_recall@{mid}tok", "tokens_handed"} <= set(mid_board["metric"])
    assert "Questions scored at k=5: italian_cuisine 2 of 2" in text
    assert "decided at k=5 (unequal budgets)" in text


FLIPS_CELL = "f9b29843"


def check_flip_view(manifest: dict, tmp_path: Path, flips: pd.DataFrame) -> None:
    """The flips cell shows one row per data set and method, one column per setting in the settings' order (the
    equal budgets, then k), each cell "wins–losses (ties)" from flip_counts.csv."""
    nb = json.loads((tmp_path / "runs" / manifest["run_id"] / manifest["notebooks"][0]["output"]).read_text("utf-8"))
    cell = next(c for c in nb["cells"] if c.get("id") == FLIPS_CELL)
    html = next("".join(o["data"]["text/html"]) for o in cell["outputs"] if o.get("output_type") == "execute_result")
    header = html[:html.index("</thead>")]
    assert [header.index(f"<th>{s}</th>") for s in SETTINGS] == sorted(header.index(f"<th>{s}</th>") for s in SETTINGS)
    for _, r in flips.iterrows():
        assert f"<td>{r['wins']}–{r['losses']} ({r['ties']})</td>" in html, r.to_dict()
    assert html.count("<td>") == len(flips)              # one cell a setting and method, nothing else


def check_verdict_table(files: dict[str, Path], claims: pd.DataFrame) -> None:
    """claims.md shows one row per claim (in CLAIMS' order) and one verdict column per setting (the equal budgets,
    then k), each the claims table's verdict for that claim and setting."""
    lines = [l for l in files["claims.md"].read_text(encoding="utf-8").splitlines() if l.startswith("|")]
    cells = [[c.strip() for c in l.strip("|").split("|")] for l in lines]
    assert cells[0] == ["paper", "claim", *SETTINGS]
    body = cells[2:]
    assert [r[0] for r in body] == [c.paper for c in CLAIMS]
    said = claims.set_index(["paper", "setting"])["this run"]
    assert all(r[2 + i] == said[(r[0], s)] for r in body for i, s in enumerate(SETTINGS))


HEATMAP_CELL = "3a8754d3"


def check_heatmaps(manifest: dict, tmp_path: Path, datasets: list[str], per_question: pd.DataFrame) -> None:
    """Every data set's heatmap is shown (not only the last drawn in the loop), and exact_match, 0 on
    every row because the offline reasoner answered, is left out with the sentence saying why."""
    nb = json.loads((tmp_path / "runs" / manifest["run_id"] / manifest["notebooks"][0]["output"]).read_text("utf-8"))
    cell = next(c for c in nb["cells"] if c.get("id") == HEATMAP_CELL)
    shown = [o["data"]["application/vnd.plotly.v1+json"] for o in cell["outputs"]
             if "application/vnd.plotly.v1+json" in o.get("data", {})]
    assert [f["layout"]["title"]["text"].split(":")[0] for f in shown] == datasets
    em = per_question[per_question["metric"] == "exact_match"]
    assert not em.empty and (em["value"] == 0).all() and (em["answer_reasoner"] == "offline").all()   # kept in the CSV
    for figure in shown:
        columns = {str(x) for trace in figure["data"] for x in trace.get("x", [])}
        assert columns and not any(c.startswith("exact_match") for c in columns), columns
    text = "".join("".join(o.get("text", "")) for o in cell["outputs"] if o.get("output_type") == "stream")
    assert ("Not shown: exact_match and answer_llm_tokens, which are 0 for every method and question because no answer "
            "model ran") in text


def check_budgets(files: dict[str, Path], family: list[str], text: str) -> None:
    """The budget column is the tokens of the hits each method returns at k=5 (recomputed here from a
    fresh build and retrieval of naive and semantic); the equal-budget table holds every method at one
    budget, the smallest method's mean at k=5; the sentences say so, with the encoder's cut-offs counted."""
    from rag_lab.core.chunking import over_encoder_limit
    from rag_lab.datasets import load_dataset
    from rag_lab.methods import get_retriever
    from rag_lab.reasoning.tokens import count_text_tokens

    board = pd.read_csv(files["leaderboard_italian_cuisine.csv"])
    tokens = board[board["metric"] == "context_budget@5"].set_index("method")["mean"]
    assert sorted(tokens.index) == sorted(family) and (tokens > 0).all()
    assert "context_budget@5 (n=2)" in files["leaderboard_italian_cuisine.md"].read_text(encoding="utf-8")
    data = load_dataset("italian_cuisine", limit=2)
    for method in ("naive", "semantic"):
        r = harness.build(get_retriever(method), data.documents)
        handed = [sum(count_text_tokens(h.chunk.text) for h in harness.retrieve(r, q.question, 5).hits) for q in data.questions]
        assert tokens[method] == pytest.approx(sum(handed) / len(handed)), method
    assert tokens["semantic"] > tokens["ssg-query-traversal"]       # whole segments against single sentences

    equal = pd.read_csv(files["equal_budget_italian_cuisine.csv"])
    assert list(equal.columns) == ["rank", "method", "metric", "mean", "n", "ci_low", "ci_high", "n_dropped", "interval", "units",
                                  "design_effect"]
    assert sorted(equal["method"].unique()) == sorted(family)
    budget = int(math.floor(tokens.min()))
    assert {f"ctx_recall@{budget}tok", f"doc_recall@{budget}tok", "tokens_handed"} <= set(equal["metric"])
    handed = equal[equal["metric"] == "tokens_handed"].set_index("method")["mean"]
    assert (handed <= budget + 1e-9).all() and handed[tokens.idxmin()] > 0
    rates = equal[equal["metric"].str.endswith("tok")]
    assert rates["mean"].between(0, 1).all() and (rates["n"] == 2).all()
    ok = equal.dropna(subset=["ci_low"])
    assert ((ok["ci_low"] <= ok["mean"] + 1e-9) & (ok["mean"] <= ok["ci_high"] + 1e-9)).all()
    recall = equal[equal["metric"] == f"ctx_recall@{budget}tok"].sort_values("rank")["mean"].tolist()
    assert recall == sorted(recall, reverse=True)
    rows = pd.read_csv(files["equal_budget_rows_italian_cuisine.csv"])
    assert (rows.loc[rows["metric"] == "tokens_handed", "value"] <= budget).all()
    assert f"cut to {budget} tokens (the smallest method's mean budget at k=5, {tokens.idxmin()}'s" in text
    assert "The fair comparison for methods whose hits differ in size is at one budget" in text

    semantic = harness.build(get_retriever("semantic"), data.documents)
    over, total = over_encoder_limit((c.text for c in semantic.chunks), semantic.embedder)
    assert f"semantic: {over} of {total} chunks are longer (mean " in text
    assert f"reads at most {semantic.embedder.max_tokens} word pieces" in text


def test_the_ssg_claim_reads_gold_sentences_as_notebook_03_does(tmp_path):
    """Notebook 10's SSG claim and notebook 03 count the same thing: each traversal's gold-sentence
    precision and recall over every sentence it gathered, capped per question as notebook 03's default
    (the paper's). Here notebook 03's results cell is run by hand on its defaults and set beside the
    notebook 10 run question by question, and the paired comparisons with basic retrieval agree."""
    from rag_lab.core.embedding import shared_embedder
    from rag_lab.datasets import load_dataset
    from rag_lab.compare.descriptions import definition_sentence
    from rag_lab.methods.ssg import experiment, ledgered
    from rag_lab.reasoning import resolve_reasoner
    from rag_lab.methods.ssg.config import SSGConfig
    from rag_lab.methods.ssg.graph import build_graph

    notebooks = Path(__file__).resolve().parents[1] / "notebooks"
    cells = json.loads((notebooks / "03_ssg_traversal.ipynb").read_text("utf-8"))["cells"]
    parameters = next("".join(c["source"]) for c in cells if "parameters" in c["metadata"].get("tags", []))
    defaults = {t.id: ast.literal_eval(node.value) for node in ast.parse(parameters).body
                if isinstance(node, ast.Assign) for t in node.targets if isinstance(t, ast.Name) and t.id == "max_sentences"}
    assert defaults["max_sentences"] == experiment.PAPER_MAX_SENTENCES
    # notebook 03 prints the definition among its results' sentences (paper.results says what it is given:
    # tests/test_ssg_notebook_calls.py)
    assert any("paper.results(" in "".join(c["source"]) and "definition_sentence(max_sentences)" in "".join(c["source"])
               for c in cells)

    algos = ["basic_retrieval", "query_traversal", "triangulation_fulldim"]
    methods = [f"ssg-{a.replace('_', '-')}" for a in algos]
    manifest = run_notebook_smoke("10_compare_retrieval", {"datasets": ["ml_encyclopedia"], "ks": [5, 10],
                                                           "methods": ",".join(methods)}, tmp_path)
    files = written(manifest)
    assert definition_sentence() in printed(manifest, tmp_path)

    data = load_dataset("ml_encyclopedia")
    embedder = shared_embedder()
    reasoner = resolve_reasoner("offline", embedder)
    graph = build_graph(data.documents, embedder, reasoner, SSGConfig())
    scores = experiment.gathered_scores(experiment.run_algorithms(graph, data, algos, experiment.PAPER_MAX_SENTENCES,
                                                                  reasoner, embedder), data)
    assert scores.loc[scores["strategy"] == "sequential_multi_hop", "sentences"].max() > 10   # the cap of 15 applies

    ten = pd.read_csv(files["results_ml_encyclopedia.csv"])
    ten = ten[ten["metric"].isin(experiment.GOLD_COLUMNS)].set_index(["method", "question_id", "metric"])["value"]
    three = scores.melt(id_vars=["method", "question_id"], value_vars=experiment.GOLD_COLUMNS, var_name="metric")
    three = three.set_index(["method", "question_id", "metric"])["value"]
    pd.testing.assert_series_equal(ten.sort_index(), three.sort_index(), check_names=False)

    comparisons = pd.read_csv(files["claim_comparisons.csv"])
    ssg = comparisons[comparisons["paper"] == "SSG traversal"]
    assert set(ssg["metric"]) == set(experiment.GOLD_COLUMNS)
    for column in experiment.GOLD_COLUMNS:
        vs = ledgered.versus_basic(scores, column).set_index("method")
        for _, row in ssg[ssg["metric"] == column].iterrows():
            theirs = vs.loc[row["method"].removeprefix("ssg-").replace("-", "_")]
            # the CSV is written rounded to 4 places
            assert row["diff"] == pytest.approx(theirs["diff"], abs=1e-4)
            # both clustered by document (the same units): notebook 03's very computation, the same numbers
            assert row["units"] == theirs["units"]
            assert row["ci_low"] == pytest.approx(theirs["ci_low"], abs=1e-4)
            assert row["p"] == pytest.approx(theirs["p"], abs=1e-4)
            # the claim's family (every algorithm, both metrics) holds notebook 03's (every algorithm,
            # this metric): Holm never adjusts less in the larger family, so supported here is above there
            if row["verdict"] == SUPPORTED:
                assert theirs["side"] == "above"



PQAL = Path(__file__).parent / "fixtures" / "pubmedqa_pqal" / "ori_pqal.json"


def test_compare_notebook_on_document_level_gold_and_a_folder(tmp_path):
    """Notebook 10 to the end on a PubMedQA-format file (gold documents, no gold passages) given as a loader
    with arguments, beside a generic-form folder: every table ranked by the metrics each data set has, the
    missing ones said once, the comparisons in the ledger (was an IndexError in cell 7, 0 comparisons)."""
    from rag_lab.core.generic_form import write_dataset
    from rag_lab.datasets import load_dataset

    folder = write_dataset(load_dataset("italian_cuisine", limit=2), tmp_path / "my_folder")
    methods = "naive,bm25,gralc-naive,gralc-graph"
    manifest = run_notebook_smoke("10_compare_retrieval", {
        "datasets": [{"loader": "pubmedqa", "path": str(PQAL)}, str(folder)], "ks": [1, 5], "methods": methods}, tmp_path)
    files = written(manifest)
    board = pd.read_csv(files["leaderboard_pubmedqa.csv"])
    assert not board["metric"].str.startswith("ctx_").any() and {"doc_recall@5", "doc_mrr@5"} <= set(board["metric"])
    recall = board[board["metric"] == "doc_recall@5"].sort_values("rank")["mean"].tolist()
    assert recall == sorted(recall, reverse=True) and len(recall) == 4          # ranked by doc_recall, best first
    assert len(pd.read_csv(files["ranks_pubmedqa.csv"])) == 4
    assert "ctx_recall@5" in set(pd.read_csv(files["leaderboard_my_folder.csv"])["metric"])   # the folder ran
    text = printed(manifest, tmp_path)
    assert text.count("pubmedqa: no ctx_mrr@5, ctx_recall@5, ctx_precision@5") == 1
    assert "so its tables are ranked by doc_recall@5, not ctx_recall@5" in text
    assert "Highest doc_recall@5: " in text and "Highest ctx_recall@5: " in text       # each data set's own
    rows = pd.read_csv(tmp_path / "runs" / manifest["run_id"] / ledger.COMPARISONS)
    assert (rows["dataset"] == "pubmedqa").sum() > 0 and set(rows["dataset"]) == {"pubmedqa", "my_folder"}
    assert not rows.loc[rows["dataset"] == "pubmedqa", "metric"].str.startswith("ctx_").any()   # no gold passages
