"""GraLC-RAG notebook helpers: the summaries behind the paper's tables, from hand-made tidy rows."""
import math

import pandas as pd
import pytest

from rag_lab.methods.gralc import experiment as ex
from rag_lab.methods.gralc import tables as tb
from rag_lab.methods.gralc import paper


def rows(method, metric, k, values, condition=None):
    out = [{"method": method, "question_id": f"q{i}", "metric": metric, "k": k, "value": v}
           for i, v in enumerate(values)]
    return [{**r, "condition": condition} for r in out] if condition else out


def test_table1_and_ablation_deltas():
    data = []
    for name, mrr in [("gralc-late", [1.0, 0.5]), ("gralc-structure", [1.0, 0.5]), ("gralc-kg", [0.5, 0.5]),
                      ("gralc-graph", [0.5, 0.25])]:
        data += rows(name, "doc_mrr", 10, mrr) + rows(name, "doc_mrr", 1, [9, 9])   # only the k named is read
        data += rows(name, "doc_recall", 1, [1.0, 0.0]) + rows(name, "doc_recall", 10, [1.0, 1.0])
    parts = tb.summary(pd.DataFrame(data), {"MRR": "doc_mrr@10", "R@1": "doc_recall@1", "R@10": "doc_recall@10"})
    t1 = parts["ours"]
    assert list(t1.index) == ["Late Chunking", "Structure-Aware", "GraLC-RAG (KG)", "GraLC-RAG (+Graph)"]
    assert t1["MRR"].tolist() == [0.75, 0.75, 0.5, 0.375] and t1["R@1"].tolist() == [0.5] * 4
    # n: the two questions; every interval holds its mean, in the same rows and columns
    assert (parts["n"] == 2).all().all() and list(parts["ci_low"].index) == list(t1.index)
    assert ((parts["ci_low"] <= t1 + 1e-12) & (t1 <= parts["ci_high"] + 1e-12)).all().all()
    t2 = tb.table2(t1)
    # ΔMRR against the late-chunking base: 0, -0.25, -0.375
    assert math.isnan(t2["ΔMRR"].iloc[0]) and t2["ΔMRR"].iloc[1:].tolist() == [0.0, -0.25, -0.375]
    assert list(t2.index) == ["Late Chunking (base)", "+ Structure Boundaries", "+ KG Infusion",
                              "+ Graph-Guided Retrieval"]


def test_table5_and_table6_shapes():
    data = []
    for cond, naive, kg in [("introduction", 1.0, 2.0), ("full", 2.0, 4.0)]:
        for k in (5, 20):
            data += rows("gralc-naive", tb.SECCOV, k, [naive, naive], cond) + rows("gralc-kg", tb.SECCOV, k, [kg, kg], cond)
            data += rows("gralc-naive", "cs_recall", k, [0.0, 1.0], cond) + rows("gralc-kg", "cs_recall", k, [1, 1], cond)
            data += rows("gralc-kg", tb.SOURCE_SECCOV, k, [3.0, 3.0], cond)
    parts = tb.table5(pd.DataFrame(data), (5, 20), ["introduction", "full"])
    t5 = parts["ours"]
    # the interval parts have the table's shape; naive's source-article SecCov was never scored: n is missing
    assert list(parts["n"].columns) == list(t5.columns) and list(parts["n"].index) == ["Naive", "GraLC-RAG (KG)"]
    assert parts["n"].loc["GraLC-RAG (KG)", "CS Recall@20 full"] == 2
    assert pd.isna(parts["n"].loc["Naive", "SecCov@5 (source article's sections; ours only) full"])
    assert tb.SECCOV == "seccov[paragraph/bare/unlabelled]"     # the reading that reproduces the paper's pattern
    assert tb.SOURCE_SECCOV == "section_coverage_source"        # ours, not set beside the paper
    assert t5.loc["GraLC-RAG (KG)", "SecCov@5 (any-level labels, all retrieved) full"] == 4.0
    assert t5.loc["Naive", "CS Recall@20 introduction"] == 0.5
    assert t5.loc["GraLC-RAG (KG)", "SecCov@20 (source article's sections; ours only) full"] == 3.0
    assert list(t5.columns) == [f"{m} {c}" for m in ("SecCov@5 (any-level labels, all retrieved)",
                                                     "SecCov@20 (any-level labels, all retrieved)", "CS Recall@20",
                                                     "SecCov@5 (source article's sections; ours only)",
                                                     "SecCov@20 (source article's sections; ours only)")
                                for c in ("introduction", "full")]
    # beside the paper: the paper's columns compared, ours-only columns kept without a paper value
    side = tb.beside_paper(t5, paper.reported(5))
    assert side.loc["GraLC-RAG (KG)", ("SecCov@5 (any-level labels, all retrieved) full", "paper-reported")] == 4.46
    assert ("SecCov@5 (source article's sections; ours only) full", "ours") in side.columns
    assert not any(c[0].startswith("SecCov@5 (source") and c[1] != "ours" for c in side.columns)
    gen = pd.DataFrame(rows("gralc-naive", "proxy_f1", math.nan, [0.2, 0.4])
                       + rows("gralc-naive", "section_diversity", math.nan, [1, 3])
                       + rows("gralc-naive", "context_tokens", math.nan, [100, 50]))
    t6 = tb.table6(gen)
    assert t6.loc["Naive"].tolist() == [pytest.approx(0.3), 2.0, 150.0]   # tokens are summed, like the paper's


def test_table2_needs_the_late_chunking_base_and_labels_by_strategy():
    t1 = pd.DataFrame({"MRR": [0.8, 0.7, 0.6], "R@1": [0.5] * 3, "R@5": [0.9] * 3},
                      index=["Late Chunking", "GraLC-RAG (KG)", "GraLC-RAG (+Graph)"])
    t2 = tb.table2(t1)     # structure-aware missing: the KG row keeps its own label
    assert list(t2.index) == ["Late Chunking (base)", "+ KG Infusion", "+ Graph-Guided Retrieval"]
    assert t2["ΔMRR"].iloc[1:].tolist() == pytest.approx([-0.1, -0.2])
    assert tb.table2(t1.drop(index="Late Chunking")).empty


def two_small_documents():
    """Two short biomedical abstracts and a question on each (the λ sweep's and the report tests' corpus)."""
    from rag_lab.core.types import Document, Question

    docs = [Document("kidney", "Chronic kidney disease lowers eGFR slowly. Empagliflozin slowed the decline of eGFR "
                               "in adults with type 2 diabetes mellitus."),
            Document("heart", "Heart failure with preserved ejection fraction limits exercise capacity. Exercise "
                              "training improved peak oxygen uptake in heart failure.")]
    qs = [Question("q1", "Did empagliflozin slow eGFR decline?", gold_doc_ids=["kidney"]),
          Question("q2", "Does exercise help heart failure?", gold_doc_ids=["heart"])]
    return docs, qs


def test_lambda_sweep_on_the_same_questions(embedder):
    from rag_lab.core.types import Dataset

    docs, qs = two_small_documents()
    params = ex.strategy_params(min_tokens=4, max_tokens=16)
    result = ex.lambda_sweep(Dataset("toy", docs, qs), [0.0, 0.1, 0.5], 5, params, mrr_k=10)
    sweep, fair = result.table, paper.source_seccov_label(5)
    assert list(sweep.index) == [0.0, 0.1, 0.5]
    assert list(sweep.columns) == ["MRR@10", "R@5", fair, "chunks", "top 5 changed vs λ = 0",
                                   ex.MENTION_COSINE, ex.ALL_COSINE]
    assert sweep[fair].isna().all()   # these documents have no sections
    assert sweep.loc[0.0, "top 5 changed vs λ = 0"] == 0 and sweep.loc[0.0, ex.MENTION_COSINE] == pytest.approx(1.0)
    # the per-question rows behind the table: one method per λ, their means are the table's
    assert set(result.scores["method"]) == {"λ = 0", "λ = 0.1", "λ = 0.5"}
    mrr = result.scores.query("metric == 'doc_mrr' and k == 10").groupby("method")["value"].mean()
    assert mrr["λ = 0.5"] == pytest.approx(sweep.loc[0.5, "MRR@10"])
    assert ex.sweep_columns(result) == {"MRR@10": "doc_mrr@10", "R@5": "doc_recall@5", fair: f"{tb.SOURCE_SECCOV}@5"}
    cos = sweep[ex.MENTION_COSINE]
    assert 1.0 > cos[0.1] > cos[0.5] and (sweep[ex.ALL_COSINE] >= cos - 1e-9).all()   # unchanged tokens add 1s
    assert ((sweep[["MRR@10", "R@5"]] >= 0) & (sweep[["MRR@10", "R@5"]] <= 1)).all().all()
    # λ = 0 adds nothing to the tokens, so gralc-kg is gralc-structure with the same knobs: same chunks, same scores
    structure = ex.evaluate(["gralc-structure"], Dataset("toy", docs, qs), (1, 5, 10), params)
    assert sweep.loc[0.0, "chunks"] == len(structure.retrievers["gralc-structure"].chunks)
    assert sweep.loc[0.0, "MRR@10"] == pytest.approx(tb.metric_means(structure.scores, "doc_mrr", 10).iloc[0])
    assert sweep.loc[0.0, "R@5"] == pytest.approx(tb.metric_means(structure.scores, "doc_recall", 5).iloc[0])
    with pytest.raises(ValueError, match="distinct"):
        ex.lambda_sweep(Dataset("toy", docs, qs), [0.1, 0.1], 5, params)
    with pytest.raises(ValueError, match="at least one"):
        ex.lambda_sweep(Dataset("toy", docs, qs), [], 5, params)


def test_table6_tokens_are_counted_in_gpt_4o_minis_tokenizer(embedder):
    from rag_lab.core.types import Dataset, Document, Question
    from rag_lab.reasoning.tokens import count_encoding_tokens
    from test_evaluation import Recorder

    text = "Empagliflozin slowed the decline of eGFR in adults with type 2 diabetes mellitus."
    data = Dataset("toy", [Document("kidney", text)], [Question("q1", "Did empagliflozin slow eGFR decline?",
                                                                 gold_doc_ids=["kidney"])])
    run = ex.evaluate(["gralc-naive"], data, (1,))
    reasoner = Recorder()
    gen = ex.generation(run, reasoner, k=1)
    contexts = reasoner.seen["Did empagliflozin slow eGFR decline?"]
    tokens = gen[gen.metric == "context_tokens"]["value"].item()
    # contexts + question in o200k_base, not MiniLM word pieces (which split "empagliflozin" into many)
    assert tokens == count_encoding_tokens(contexts + [data.questions[0].question])
    assert tokens != embedder.count_tokens(contexts + [data.questions[0].question])
    assert tb.table6(gen).loc["Naive", "Tokens"] == tokens and "o200k_base" in ex.TOKENS_SCOPE


def test_table5_by_condition_by_hand_and_when_no_condition_ran():
    from rag_lab.methods.gralc.paper import by_condition

    cols = pd.MultiIndex.from_tuples([("SecCov@5 full", "ours"), ("SecCov@5 full", "paper-reported"),
                                      ("SecCov@5 partial", "ours"), ("CS Recall@20 full", "ours")])
    side = pd.DataFrame([[1.0, 2.0, 3.0, 0.5], [4.0, 5.0, 6.0, 0.25]], index=["Naive", "Late"], columns=cols)
    out = by_condition(side)
    assert list(out.index) == [("SecCov@5", "Naive"), ("SecCov@5", "Late"), ("CS Recall@20", "Naive"),
                               ("CS Recall@20", "Late")]
    assert list(out.columns) == [("partial", "ours"), ("full", "ours"), ("full", "paper-reported")]
    assert out.loc[("SecCov@5", "Late"), ("full", "paper-reported")] == 5.0
    assert out.loc[("CS Recall@20", "Naive"), ("full", "ours")] == 0.5
    assert pd.isna(out.loc[("CS Recall@20", "Naive"), ("partial", "ours")])
    empty = by_condition(pd.DataFrame(index=["Naive"], columns=pd.MultiIndex.from_arrays([[], []])))
    assert empty.empty and empty.index.names == ["metric", "strategy"]


def test_summary_clusters_its_intervals_by_document_when_given_units():
    from rag_lab.evaluation.statistics import mean_ci

    # four questions from two documents, each document's two questions alike: clustered, the interval is the
    # statistics layer's over 2 units (wider than the 4 questions' own), the mean and n unchanged
    data = pd.DataFrame(rows("gralc-late", "doc_recall", 5, [1.0, 1.0, 0.0, 0.5]))
    units = {"q0": "a", "q1": "a", "q2": "b", "q3": "b"}
    plain = tb.summary(data, {"R@5": "doc_recall@5"})
    clustered = tb.summary(data, {"R@5": "doc_recall@5"}, units=units)
    by_hand = mean_ci([1.0, 1.0, 0.0, 0.5], units=["a", "a", "b", "b"])
    assert clustered["ours"].loc["Late Chunking", "R@5"] == plain["ours"].loc["Late Chunking", "R@5"] == 0.625
    assert clustered["ci_low"].loc["Late Chunking", "R@5"] == pytest.approx(by_hand.ci_low)
    assert clustered["ci_high"].loc["Late Chunking", "R@5"] == pytest.approx(by_hand.ci_high)
    assert (clustered["ci_high"] - clustered["ci_low"]).iloc[0, 0] > (plain["ci_high"] - plain["ci_low"]).iloc[0, 0]
