"""Notebook 04's sections (``gralc.report``) and the sentences under Table 5 and the λ ablation
(``gralc.sentences``), on hand-made tables and runs whose answers are worked out by hand in the comments."""
import pandas as pd
import pytest

from rag_lab.core.types import Dataset, Document, Question
from rag_lab.evaluation.harness import COLUMNS
from rag_lab.evaluation.uncertainty import decided_pairs
from rag_lab.methods.gralc import experiment as ex
from rag_lab.methods.gralc import paper
from rag_lab.methods.gralc import report
from rag_lab.methods.gralc import sentences as said
from rag_lab.methods.gralc import tables as tb
from test_gralc_decided_tables import seccov_rows
from test_gralc_experiment import rows, two_small_documents

CS, CS_INTRO = "CS Recall@20 full", "CS Recall@20 introduction"


def test_cs_sentence_says_the_range_the_intervals_and_the_shorter_conditions():
    t5 = pd.DataFrame({CS: [0.0, 0.5], CS_INTRO: [0.0, 0.0]}, index=["Naive", "GraLC-RAG (KG)"])
    low = pd.DataFrame({CS: [0.0, 0.1], CS_INTRO: [0.0, 0.0]}, index=t5.index)
    text = said.cs_sentence(t5, low, 20, ["introduction", "full"], "full")
    # 0 to 0.5, KG best; one lower bound (0.1) above 0, the lowest 0.0; introduction all 0
    assert text == ("CS Recall@20, full condition: 0.000 to 0.500 (best GraLC-RAG (KG)); the 95% interval lies above 0 for 1 of 2 "
                    "strategies (lowest lower bound 0.000), against the paper-reported 0.000 for every strategy; in the introduction "
                    "condition it is 0.000 for every strategy, as it must be: those texts end before Results and Discussion, where "
                    "each template's second section lies.")
    t5.loc["Naive", CS_INTRO] = 0.25
    assert "in the introduction condition it reaches 0.250 although" in said.cs_sentence(t5, low, 20, ["introduction", "full"], "full")
    zero = said.cs_sentence(t5[[CS]] * 0, low, 20, ["full"], "full")
    assert zero == "CS Recall@20, full condition: 0.000 for every strategy, as paper-reported."
    assert said.cs_sentence(t5, low, 20, [], None) is None


def test_contrast_sentences_say_which_reading_reproduces_the_papers_finding():
    # pattern: structure (3, 5, 4) minus content 1: +3; fair: 2 minus (2, 3, 2): −1/3 (Table 5c's hand-worked case)
    data = pd.DataFrame(seccov_rows("full", [1, 1, 1], [3, 5, 4], [2, 3, 2], [2, 2, 2]))
    decided = decided_pairs(data, [f"{m}@5" for m in tb.READINGS.values()], [paper.GROUPS], "F", sides=paper.SIDES, by="condition")
    contrast = tb.table5c(decided, data)
    lines = said.contrast_sentences(contrast, (5, 5), "full")
    assert len(lines) == 3
    verdicts = contrast["verdict"].tolist()
    assert "content-only 1.00 vs structure-aware 4.00, paper-reported difference +3.36 — there the content-only strategies score 1.00" in lines[0]
    assert "the fair reading (the source article's sections, every chunk labelled by the section holding most of its characters): content-only 2.33 vs structure-aware 2.00." in lines[0]
    fair_word = "reproduces" if verdicts[1] == "supported" else "does not reproduce"
    pattern_word = "reproduces" if verdicts[0] == "supported" else "does not reproduce"
    assert lines[0].endswith(f"{pattern_word} on the pattern reading and {fair_word} on the fair reading here.")
    supported = int(verdicts[0] == "supported")
    assert lines[1].startswith(f"Over all 1 condition × k cells, on the pattern reading structure-aware strategies cover more sections in {supported},")
    assert said.contrast_sentences(contrast.iloc[:0], (5,), "full") == []


def sweep_of(mrr0, mrr1):
    """A two-λ sweep (0 and 0.1) on three questions with its table worked from the scores."""
    scores = pd.DataFrame(rows("λ = 0", "doc_mrr", 5, mrr0) + rows("λ = 0.1", "doc_mrr", 5, mrr1))
    table = pd.DataFrame({"MRR@5": [sum(mrr0) / 3, sum(mrr1) / 3], "chunks": [4, 5], "top 5 changed vs λ = 0": [0.0, 0.5],
                          ex.MENTION_COSINE: [1.0, 0.98], ex.ALL_COSINE: [1.0, 0.999]}, index=pd.Index([0.0, 0.1], name="lambda"))
    sweep = ex.Sweep(table, scores)
    decided = decided_pairs(scores, "doc_mrr@5", sweep.pairs, "F")
    return sweep, decided, sweep.by_lambda(decided)


def test_lambda_sentences_from_the_sweep_table():
    sweep, decided, diffs = sweep_of([0.5, 0.5, 0.5], [1.0, 0.5, 0.5])
    reported = ("Table 4, full", pd.Series({"GraLC-RAG (KG)": 0.30, "Structure-Aware": 0.35}))
    lines = said.lambda_sentences(sweep, decided, diffs, "full", reported, 0.1)
    # MRR 0.5 -> 2/3: +0.167; the paper's KG minus Structure-Aware 0.30 − 0.35 = −0.05
    assert lines[0].startswith("λ ablation (gralc-kg, full condition, against λ = 0, paired by question):\n  ")
    assert "at the paper's λ = 0.1 our MRR@5 changes by +0.167 against no infusion, paper-reported -0.0500 (GraLC-RAG (KG) minus Structure-Aware, Table 4, full)." in lines[0]
    assert lines[1] == "The top 5 differs from λ = 0's for 50% of questions at λ = 0.1; chunks: 4 (λ = 0), 5 (λ = 0.1)."
    # the largest 1 − cos: 1 − 0.98 = 0.02 ≥ 0.01
    assert lines[2] == ("Infused mention tokens keep a mean cosine to their original vectors of 1.0000 at λ = 0, 0.9800 at λ = 0.1 "
                        "(all tokens: 1.0000, 0.9990); the largest 1 − cos is 0.0200 (≥ 0.01: the vectors turn).")
    moved = diffs.loc[("MRR@5", 0.1), "verdict"] in ("supported", "contradicted")
    assert lines[3].startswith("Over λ ∈ {0, 0.1}, the random infusion " + ("changes retrieval" if moved else "turns the mention vectors, but"))
    one = ex.Sweep(sweep.table.iloc[:1], sweep.scores)
    assert said.lambda_sentences(one, decided.iloc[:0], diffs.iloc[:0], "full", None, 0.1) == [
        "λ ablation: only λ = 0 ran, so there is nothing to compare."]


def test_indexing_cost_sets_ratios_to_naive_beside_the_papers():
    costs = pd.DataFrame([{"method": "gralc-naive", "metric": "chunks", "value": 10.0},
                          {"method": "gralc-naive", "metric": "build_seconds", "value": 2.0},
                          {"method": "gralc-late", "metric": "chunks", "value": 5.0},
                          {"method": "gralc-late", "metric": "build_seconds", "value": 4.0}]).assign(articles=3, repeats=1)
    cost = report.indexing_cost(costs, "full")
    assert (cost.articles, cost.condition) == (3, "full")
    late = cost.table.loc["Late Chunking"]
    # ours: 5 / 10 chunks, 4 / 2 seconds; the paper's Late Chunking 3055 / 1109 chunks
    assert late[("Chunks", "ours ÷ Naive")] == 0.5 and late[("Time (s)", "ours ÷ Naive")] == 2.0
    assert late[("Chunks", "paper ÷ Naive")] == pytest.approx(3055 / 1109)
    assert "Figure 5 — chunks and indexing time (3 articles, full)" in cost.figure.layout.title.text


def test_load_data_clusters_each_question_by_its_document():
    data, units = ex.load_data("biomed_articles", articles=1)
    assert len(data.documents) == 1 and data.questions
    assert units == {q.id: q.gold_doc_ids[0] for q in data.questions}


def short_run():
    """Two abstracts, four questions (two on each), the six strategies with hand-set MRR@10."""
    docs = [Document("d1", "One abstract."), Document("d2", "Another abstract.")]
    questions = [Question(f"q{i}", f"question {i}?", None, ["d1" if i < 2 else "d2"]) for i in range(4)]
    data = []
    for name, mrr in [("gralc-naive", [0.5, 0.5, 0.25, 0.25]), ("gralc-semantic", [0.5, 0.5, 0.5, 0.5]),
                      ("gralc-late", [1.0, 1.0, 0.5, 0.5]), ("gralc-structure", [1.0, 1.0, 0.5, 0.5]),
                      ("gralc-kg", [0.5, 0.5, 0.5, 0.5]), ("gralc-graph", [1.0, 1.0, 1.0, 1.0])]:
        data += rows(name, "doc_mrr", 10, mrr) + rows(name, "doc_recall", 1, [1, 1, 0, 0]) + rows(name, "doc_recall", 10, [1, 1, 1, 1])
    scores = pd.DataFrame(data).reindex(columns=COLUMNS)
    dataset = Dataset("toy[abstract]", docs, questions, {"condition": "abstract"})
    return ex.Run(scores, pd.DataFrame(), {}, {}, dataset), Dataset("toy", docs, questions)


def test_short_texts_table1_and_the_ablation_from_one_run():
    run, data = short_run()
    units = {"q0": "d1", "q1": "d1", "q2": "d2", "q3": "d2"}
    short = report.short_texts({"abstract": run}, data, list(tb.ALL), [1, 10, 20], {}, units)
    assert short.run is run and short.condition == "abstract" and short.ks == [1, 10] and not short.like_for_like
    # MRR: late and structure (1 + 1 + .5 + .5) / 4 = 0.75, kg 0.5, graph 1.0
    # naive (.5 + .5 + .25 + .25) / 4 = 0.375, semantic 0.5
    assert short.means["MRR"].tolist() == [0.375, 0.5, 0.75, 0.75, 0.5, 1.0]
    assert short.table1.loc[("MRR", "GraLC-RAG (+Graph)"), "ours"] == 1.0 and "difference" not in short.table1.columns
    assert len(short.order) == 15 and short.order.iloc[0]["method"] == "GraLC-RAG (+Graph)"
    assert short.said[0].startswith("Table 1 (abstract condition): other data than the paper's PubMedQA*")
    # ΔMRR against the late base: 0, −0.25, +0.25
    assert short.table2[("ΔMRR", "ours")].tolist()[1:] == [0.0, -0.25, 0.25]
    assert short.said_ablation[0].startswith("Ablation (abstract condition") and "+ Structure Boundaries -0.0003" in short.said_ablation[0]
    assert set(short.figures) == {"fig2_mrr", "fig3_recall_at_k", "fig4_ablation"}
    # the closing lines: the lowest MRR (Naive, 0.375) against the 0.95 ceiling, then the sections' findings in order
    lengths = report.ByLength([], None, "no long condition", 20, *[pd.DataFrame()] * 2, ["t4"], *[pd.DataFrame()] * 3, None, ["t5"], {})
    found = report.Evidence(pd.DataFrame(), ["ctx"], pd.DataFrame(), pd.DataFrame(), "worked")
    answered = report.Answers("abstract", run, pd.DataFrame(), pd.DataFrame(), ["t6"])
    sweep = report.LambdaAblation("abstract", 4, pd.DataFrame(), pd.DataFrame(), ["λ"], None)
    lines = report.findings(short, lengths, found, answered, sweep, data, units)
    assert lines[0].endswith(" The paper reports no tests.") and lines[1] == "t5"
    said = "The lowest MRR, 0.375 (Naive; its interval: Table 1), minus 0.95"
    ceiling = next(i for i, line in enumerate(lines) if line.startswith(said))
    # the lowest strategy (Naive: gralc-naive in the ledger) decided against the paper's ceiling, said under it
    under = lines[ceiling + 1]
    assert under.startswith("  ") and "Naive" in under and "the 0.95 ceiling" in under
    assert lines.index("t4") < lines.index("ctx") < lines.index("t6") < lines.index("λ")
    assert lines[-len(short.said):] == short.said


def length_rows():
    """Two questions on two documents in the introduction and full conditions, every strategy: MRR@20 (1, 0.5)
    but +Graph (1, 1); recall 1 at every k; SecCov 1 for content-only and 3 for structure-aware strategies in both
    readings; CS Recall 0 in the introduction, (0, 1) in the full texts; ctx recall (0, 1) in the full texts."""
    data = []
    for cond in ("introduction", "full"):
        for name in tb.ALL:
            data += rows(name, "doc_mrr", 20, [1.0, 1.0] if name == "gralc-graph" else [1.0, 0.5], cond)
            data += rows(name, "doc_recall", 1, [1, 1], cond) + rows(name, "doc_recall", 5, [1, 1], cond)
            seccov = [1.0, 1.0] if name in paper.CONTENT_ONLY else [3.0, 3.0]
            for k in (5, 20):
                data += rows(name, tb.SECCOV, k, seccov, cond) + rows(name, tb.SOURCE_SECCOV, k, seccov, cond)
            data += rows(name, "cs_recall", 20, [0, 0] if cond == "introduction" else [0, 1], cond)
            if cond == "full":
                data += rows(name, "ctx_recall", 5, [0, 1], cond) + rows(name, "ctx_recall", 20, [0, 1], cond)
                data += rows(name, "ctx_mrr", 20, [0, 0.5], cond)
    return pd.DataFrame(data).reindex(columns=[*COLUMNS, "condition"])


def test_by_length_tables_4_to_5c_from_the_gradient_rows():
    grad, data = length_rows(), Dataset("toy", [], [])
    units = {"q0": "d0", "q1": "d1"}
    runs = {"introduction": None, "full": None}      # only which conditions ran is read
    lengths = report.by_length(runs, grad, data, list(tb.ALL), [1, 5, 20], ["introduction", "full"], units)
    assert (lengths.long_conditions, lengths.longest, lengths.mrr_k) == (["introduction", "full"], "full", 20)
    assert lengths.note.startswith("No partial condition here")
    # MRR@20: (1 + 0.5) / 2 = 0.75, +Graph 1.0; the paper's full Naive 0.344 beside it
    assert lengths.table4.loc[("full", "Naive"), ("MRR", "ours")] == 0.75
    assert lengths.table4.loc[("full", "GraLC-RAG (+Graph)"), ("MRR", "ours")] == 1.0
    assert lengths.table4.loc[("full", "Naive"), ("MRR", "paper-reported")] == 0.344
    assert len(lengths.order) == 15 and lengths.said[0].startswith("Table 4 (full condition)")
    # Table 5c: both readings, k 5 and 20, two conditions; structure 3 minus content 1 = +2 on every question
    assert len(lengths.contrast) == 8 and (lengths.contrast["diff"] == 2.0).all()
    assert lengths.said_cs.startswith("CS Recall@20, full condition: 0.500 to 0.500 (best Naive)")
    assert lengths.coverage_printed == "\n".join(lengths.said_coverage)
    assert set(lengths.figures) == {"fig6_mrr_by_length", "fig7_seccov_by_length"}
    none = report.by_length({"abstract": None}, grad[grad["condition"] == "abstract"], data, list(tb.ALL), [1, 5, 20], ["abstract"], units)
    assert none.longest is None and none.said_cs is None and none.coverage_printed == none.note


def test_evidence_paragraphs_and_a_run_without_gold_passages():
    grad, data = length_rows(), Dataset("toy", [], [])
    questions = [Question("q0", "question 0?", None, ["d0"]), Question("q1", "question 1?", None, ["d1"])]
    run = ex.Run(grad, pd.DataFrame(), {}, {5: {}}, Dataset("toy[full]", [], questions))
    found = report.evidence({"full": run}, grad, data, list(tb.ALL), "full", {"q0": "d0", "q1": "d1"})
    # ctx R@5 (0 + 1) / 2 = 0.5 for every strategy, n = 2
    assert found.table.loc[("full", "Naive"), ("ctx R@5", "ours")] == 0.5 and found.table.loc[("full", "Naive"), ("ctx R@5", "n")] == 2
    assert found.said[0].startswith("Evidence paragraphs (full condition, ours only)")
    assert found.worked == "No question of the full condition lists gold passages: nothing to mark."
    assert found.passages.empty and found.hits.empty


def test_answers_lambda_ablation_and_boundary_figure_on_two_small_documents(embedder):
    from types import SimpleNamespace

    docs, qs = two_small_documents()
    data, units = Dataset("toy", docs, qs), {"q1": "kidney", "q2": "heart"}
    params = ex.strategy_params(min_tokens=4, max_tokens=16)
    run = ex.evaluate(list(tb.ALL), Dataset("toy[full]", docs, qs, {"condition": "full"}), (1, 5, 10), params)
    answered = report.answers({"full": run}, "offline", list(tb.ALL), data, units)
    assert (answered.condition, answered.questions) == ("full", 2)
    assert answered.table.loc["Naive", ("Tokens", "ours ÷ Naive")] == 1.0 and answered.said
    # λ = 0 is gralc-structure with the same knobs: its MRR@10 is the run's Structure-Aware MRR@10 (Table 4's deepest k)
    lengths, short = SimpleNamespace(long_conditions=["full"], mrr_k=10), SimpleNamespace(ks=[1, 5], condition="abstract")
    sweep = report.lambda_ablation(answered, [0.0, 0.1], params, lengths, short, data, units)
    structure = tb.metric_means(run.scores, "doc_mrr", 10)["gralc-structure"]
    assert list(sweep.table.index) == [0.0, 0.1] and sweep.table.loc[0.0, "MRR@10"] == pytest.approx(structure)
    assert sweep.questions == 2 and sweep.said[0].startswith("λ ablation (gralc-kg, full condition, against λ = 0")
    assert sorted(set(sweep.differences.index.get_level_values("lambda"))) == [0.1]
    # the trace covers the document's tokens; its chunks are gralc-structure's on that document alone
    fig = report.boundary_figure(docs[0], params)
    alone = ex.evaluate(["gralc-structure"], Dataset("one", docs[:1], qs[:1]), (1,), params).retrievers["gralc-structure"]
    assert fig.layout.title.text.startswith("Boundary score over kidney (") and f"{len(alone.chunks)} chunks)" in fig.layout.title.text


def test_ran_falls_back_to_the_first_condition_and_refuses_no_run():
    runs = {"abstract": None, "introduction": None}
    assert report.ran(runs, "full") == "abstract" and report.ran(runs, "introduction") == "introduction"
    assert report.ran(runs, None) == "abstract"
    with pytest.raises(ValueError, match="runs is empty"):
        report.ran({}, "full")
