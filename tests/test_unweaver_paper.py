"""UnWeaver's Table 1 (paper-reported) and our run in the same layout."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from rag_lab.evaluation import harness
from rag_lab.methods.unweaver import paper
from rag_lab.evaluation.statistics import INCONCLUSIVE, SUPPORTED, UNDECIDABLE
from rag_lab.methods.unweaver.paper import (beside_paper, estimated_llm_tokens, paper_fc_gap, paper_table1,
                                            token_usage_table)
from rag_lab.reasoning.prompts import ANSWER, ENTITIES
from rag_lab.reasoning.tokens import count_message_tokens
from rag_lab.core.types import Cost, Dataset, Question
from test_unweaver_retriever import DOCS, QUERY, TEXTS, built


def test_paper_table_as_printed():
    t = paper_table1()
    assert t.shape == (12, 8)
    row = t.loc[("COVID-QA (1234 questions)", "UnWeaver")]
    # FC 0.3823; tokens 1 466k / 994k prompt, 4 043k / 230k completion, 2 224k / 17k embedder
    assert row[("FC", "mean")] == 0.3823
    assert [row[c] for c in t.columns[2:]] == [1_466_000, 994_000, 4_043_000, 230_000, 2_224_000, 17_000]
    assert pd.isna(t.loc[("eManual (522 questions)", "VectorRAG"), ("LLM prompt", "index")])
    assert t.loc[("Tech-QA (596 questions)", "RAPTOR")].isna().all()
    # UnWeaver - VectorRAG: +0.0033 (COVID-QA), +0.0018 (eManual), -0.0083 (Tech-QA)
    assert paper_fc_gap().round(4).tolist() == [0.0033, 0.0018, -0.0083]


def test_token_usage_table_from_a_run():
    r = built()     # build: 30 prompt + 12 completion LLM tokens, 22 embedder tokens
    df = pd.DataFrame([("unweaver", "q1", "query_embedding_tokens", math.nan, 4.0),
                       ("unweaver", "q2", "query_embedding_tokens", math.nan, 6.0),
                       ("unweaver", "q1", "factual_correctness", 5, 0.5),
                       ("unweaver", "q2", "factual_correctness", 5, 0.25)],
                      columns=["method", "question_id", "metric", "k", "value"])
    t = token_usage_table({"unweaver": r}, df, {"unweaver": Cost(llm_prompt_tokens=100, llm_completion_tokens=7)},
                          "toy")
    assert t.loc[("toy", "unweaver")].tolist()[:1] == [0.375]
    assert t.loc[("toy", "unweaver")].tolist()[2:] == [30, 100, 12, 7, 22, 10.0]
    both = beside_paper(t, "ours (reasoner: fake)")
    assert set(both.index.get_level_values("source")) == {"ours (reasoner: fake)", "paper-reported"}
    assert ("ours (reasoner: fake)", "toy", "unweaver (cf. UnWeaver)") in both.index
    # SKETCH's KG-only is no GraphRAG: its row says so and invites no comparison
    kg = beside_paper(t.rename(index={"unweaver": "kg"}, level="method"), "ours")
    assert [m for m in kg.index.get_level_values("method") if m.startswith("kg")] == [
        "kg (SKETCH's KG-only, not GraphRAG: no paper row to compare)"]
    assert not any("cf. GraphRAG" in m for m in kg.index.get_level_values("method"))


def test_estimated_llm_tokens_counts_planned_and_answer_prompts():
    r = built()
    data = Dataset("toy", DOCS, [Question("q1", QUERY, gold_doc_ids=["d1"])])
    t = estimated_llm_tokens({"unweaver": r}, data, answer_k=2)
    contexts = [h.chunk.text for h in harness.retrieve(r, QUERY, 2).hits]
    index_prompt = sum(count_message_tokens(ENTITIES.messages(text=text)) for text in TEXTS.values())
    assert t.loc[("toy", "unweaver")].tolist() == [
        index_prompt, count_message_tokens(ANSWER.messages(question=QUERY, contexts=contexts)),
        3 * ENTITIES.completion_allowance, ANSWER.completion_allowance]
    with pytest.raises(KeyError):
        t.loc[("toy", "naive")]


def test_the_claim_family_is_said_from_its_numbers():
    from rag_lab.evaluation.findings import finding_sentences

    # UnWeaver - naive: ctx_recall [0.5, 0.5, 0, 0] twice -> 0.25 over 8, t p = 0.033 but the exact sign-flip
    # over the 4 moving questions is 2/16 = 0.125 (the larger is kept); doc_mrr +0.5 on each of 7 (n differs
    # per column): soft Tango z = 3.5/sqrt(3.5) = 1.87, p = 0.06
    rows = [(m, f"q{i}", metric, 5, v) for m, metric, values in (
        ("unweaver", "ctx_recall", [1.0, 1.0, 0.5, 0.5] * 2), ("naive", "ctx_recall", [0.5] * 8),
        ("unweaver", "doc_mrr", [1.0] * 7), ("naive", "doc_mrr", [0.5] * 7)) for i, v in enumerate(values)]
    results = pd.DataFrame(rows, columns=["method", "question_id", "metric", "k", "value"])
    tokens = pd.DataFrame({("Embedder", "index"): [90, 10]},
                          index=pd.MultiIndex.from_tuples([("toy", "unweaver"), ("toy", "naive")]))
    tokens.index.names = ["dataset", "method"]
    family = paper.claim_family(results, 5, 5, dataset="toy")
    lines = finding_sentences(family)
    # one declared family of three (the two metrics and the claim). doc_mrr: +0.5 on 7 questions, p = 2 * 1.5^-7
    # = 0.117; ctx_recall: +0.5 on 4 of 8, p = 2 * 1.5^-4 = 0.395; the claim at -0.05: P(E0 * 0.95 >= sum (d + 0.05) E)
    # = (0.95 / 1.5)^4 * 0.95^4 = 0.131, p = 0.262. Holm: 3 x 0.117 = 0.35, then 2 x 0.262 = 0.53, then 0.53.
    # MDE of doc_mrr (no spread: the decision point alone): a constant c on 7 is decided once c - (1 + c) q > 0,
    # q = 1 - 0.025^(1/7) = 0.4096 the unseen weight's 97.5% point: c = q / (1 - q) = 0.694 (0.695 on the weights)
    assert lines[:2] == [
        f"unweaver - naive on doc_mrr@5: 0.500 [-0.115, 0.705] (n = 7, p = 0.12, MDE 0.695, p Holm = 0.35): {INCONCLUSIVE}",
        f"unweaver - naive on ctx_recall@5: 0.250 [-0.226, 0.555] (n = 8, p = 0.39, MDE 0.692, p Holm = 0.53): {INCONCLUSIVE}"]
    # against the margin: p = 0.262 (above), Holm 0.53, and the MDE 0.66 is above the margin: eight questions
    # cannot show "no worse than 0.05" (the old t / sign-flip union said supported, p = 0.016)
    claim = family[family["threshold"] < 0].iloc[0]
    assert claim["p"] == pytest.approx(2 * (0.95 / 1.5) ** 4 * 0.95 ** 4, abs=0.004)
    assert claim["p_holm"] == pytest.approx(2 * claim["p"]) and claim["verdict"] == UNDECIDABLE
    assert lines[2] == (f"1 comparison {UNDECIDABLE} (MDE 0.66 above the margin 0.05): unweaver - naive; ctx_recall@5 "
                        "(threshold -0.05); no interval, MDE or verdict is shown for it.")
    assert lines[3].startswith('p Holm-adjusted within the declared family "unweaver minus naive on toy: each metric, and '
                               'at least as good on ctx_recall@5 (margin 0.05)" (3 comparisons)')
    said = paper.caveats({"toy": family}, 5, "fake", True, tokens)
    # paper: 2224/476 = 4.7 (COVID-QA), 105/36 = 2.9 (eManual), 2411/3026 = 0.8 (Tech-QA)
    assert said[-2] == ("toy: UnWeaver's index cost 9.0x the embedder tokens of VectorRAG's (paper-reported: "
                        "4.7x on COVID-QA, 2.9x on eManual, 0.8x on Tech-QA).")
    assert "UnWeaver ahead on 2 of 3" in said[-1]


def test_load_available_skips_with_a_reason(tmp_path, monkeypatch):
    monkeypatch.setenv("RAG_LAB_DATA_RAGBENCH", str(tmp_path))
    kept, notes = paper.load_available(["italian_cuisine", "ragbench_techqa"], limit=2)
    assert [d.name for d in kept] == ["italian_cuisine"] and len(kept[0].questions) == 2
    assert notes[0].startswith("ragbench_techqa: skipped, no local copy.") and "galileo-ai/ragbench" in notes[0]
