"""The metric declaration (rag_lab/evaluation/metric_specs.py): every metric name the package writes has the
kind the old per-name regular expressions (evaluation/metric_kinds.py, removed) gave it; the names the metric
code writes are declared; the leaderboards, ranking, ragas classes, ir_measures names and a run's columns read
from it are the lists the package used to write out by hand."""
from __future__ import annotations

from rag_lab.core.types import Chunk, Cost, Dataset, Document, Question, Section
from rag_lab.evaluation.answer_metrics import ID_METRICS, JUDGE_SD, LLM_METRICS, NON_LLM_METRICS, AnswerSample, \
    answer_scores
from rag_lab.evaluation.coverage_readings import READINGS
from rag_lab.evaluation.metric_specs import (LEADERBOARD, LEADERBOARD_SCORES, METRICS, RANKED_BY, declared,
                                             declared_kind, produced_columns)
from rag_lab.evaluation.metrics import LEVELS, coverage_metric, retrieval_metrics
from rag_lab.evaluation.trec import DOCUMENT_METRICS, PASSAGE_METRICS

# What metric_kinds.declared_kind gave, computed with it (at 5559b83) on every name the package writes: the
# retrieval metrics at both levels, coverage at every level and reading (+ _share), the 27 SecCov readings,
# GraLC-RAG's and SSG's own, the costs (Cost's fields as build_*, GraLC-RAG's four timed steps), the answer
# metrics and each judged one's _judge_sd.
SECCOV = [f"seccov[{r.name}]" for r in READINGS]
COVERAGE = [coverage_metric(level, source) for level in LEVELS for source in (True, False)]
OLD_KINDS = {
    "unit": ["doc_mrr", "doc_recall", "doc_precision", "doc_ndcg", "ctx_mrr", "ctx_recall", "ctx_precision",
             "ctx_ndcg", *(f"{c}_share" for c in COVERAGE), "gold_sentence_precision", "gold_sentence_recall",
             "proxy_f1", "answer_f1", "token_f1", "rouge_l", "bleu", "string_similarity", "nonllm_context_precision",
             "nonllm_context_recall", "id_context_precision", "id_context_recall", "faithfulness",
             "llm_context_precision", "llm_context_recall", "factual_correctness"],
    "count": [*COVERAGE, *SECCOV, "section_diversity"],
    "binary": ["cs_recall"],
    "unbounded": ["context_tokens", "latency_seconds", "query_embedding_tokens", "query_llm_tokens",
                  "answer_llm_tokens", "chunks", "context_budget", "tokens_handed", "build_embedding_tokens",
                  "build_llm_prompt_tokens", "build_llm_completion_tokens", "build_llm_calls", "build_llm_fallbacks",
                  "build_seconds", "seconds_encode", "seconds_boundaries", "seconds_link", "seconds_infuse",
                  "answer_relevancy", "faithfulness_judge_sd", "answer_relevancy_judge_sd",
                  "llm_context_precision_judge_sd", "llm_context_recall_judge_sd", "factual_correctness_judge_sd"],
    None: ["exact_match"],
}


def test_every_metric_keeps_the_kind_the_regular_expressions_gave_it():
    old = {name: kind for kind, names in OLD_KINDS.items() for name in names}
    assert len(old) == 90 and len(SECCOV) == 27 and len(COVERAGE) == 6
    new = {name: declared_kind(name) for name in old}
    # the one addition: exact_match had no kind, so its interval was read off its values; they are 0 or 1 by
    # construction (float of an equality), which reads as binary: declaring it binary moves no interval
    assert {n: (old[n], new[n]) for n in old if old[n] != new[n]} == {"exact_match": (None, "binary")}
    # by hand: recall is a fraction, a coverage count a count, its share a fraction, a judge's spread unbounded
    assert [new[n] for n in ("ctx_recall", "section_coverage_source", "section_coverage_source_share",
                             "faithfulness_judge_sd", "seccov[paragraph/bare/unlabelled]", "answer_relevancy")] == \
        ["unit", "count", "unit", "unbounded", "count", "unbounded"]
    # looked up without @k or @<B>tok; a family's <part> must be some text; an unknown name has no kind
    assert declared_kind("ctx_recall@5") == declared_kind("ctx_recall@130tok") == "unit"
    assert declared("seconds_encode").name == "seconds_<step>" and declared("seconds_") is None
    assert declared_kind("my_new_metric@5") is None and declared_kind("ctx_recall_judge_sd@5") is None


def test_each_name_is_declared_once_with_a_kind_cutoff_match_and_source():
    names = [m.name for m in METRICS]
    assert len(names) == len(set(names))
    for m in METRICS:
        assert m.kind in ("binary", "unit", "count", "unbounded") and m.cutoff in ("k", "answer_k", ""), m
        assert m.match and m.source and m.group, m


def test_the_names_the_metric_code_writes_are_declared():
    doc = Document("d", "Pesto is from Genoa. Basil grows.", sections=[Section("s", "S", "section", 0, 33)])
    q = Question("q", "?", gold_doc_ids=["d"], gold_contexts=["Pesto is from Genoa."])
    rows = retrieval_metrics([Chunk("c", "d", "Pesto is from Genoa.", 0, 20)], q, {"d": doc}, [1])
    assert {m for m, _, _ in rows} == {m.name for m in METRICS if m.group in ("doc", "ctx")}
    sample = AnswerSample("?", "Genoa", ["Pesto is from Genoa."], "Genoa", ["Pesto is from Genoa."], ["c"], ["c"])
    scored = answer_scores([sample])
    assert set(scored) == {m.name for m in METRICS if m.group in ("squad", "non-LLM", "ID")}
    assert {f"{m}{JUDGE_SD}" for m in LLM_METRICS} == {m.name for m in METRICS if m.group == "judge sd"}
    assert all(declared(f"build_{f}") for f in Cost().as_dict()) and all(declared(n) for n in SECCOV)


def test_readers_get_the_lists_they_used_to_write_out():
    assert LEADERBOARD == ("doc_mrr", "doc_recall", "ctx_mrr", "ctx_recall", "ctx_precision",
                           "section_coverage_source", "context_budget")
    assert LEADERBOARD_SCORES == LEADERBOARD[:-1] and RANKED_BY == ("ctx_recall", "doc_recall", "doc_mrr")
    assert NON_LLM_METRICS == {"rouge_l": "RougeScore", "bleu": "BleuScore", "string_similarity": "NonLLMStringSimilarity",
                               "nonllm_context_precision": "NonLLMContextPrecisionWithReference",
                               "nonllm_context_recall": "NonLLMContextRecall"}
    assert ID_METRICS == {"id_context_precision": "IDBasedContextPrecision", "id_context_recall": "IDBasedContextRecall"}
    assert list(LLM_METRICS.items()) == [("faithfulness", "Faithfulness"), ("answer_relevancy", "ResponseRelevancy"),
                                         ("llm_context_precision", "LLMContextPrecisionWithReference"),
                                         ("llm_context_recall", "LLMContextRecall"),
                                         ("factual_correctness", "FactualCorrectness")]
    assert DOCUMENT_METRICS == {"doc_mrr": "RR", "doc_recall": "R", "doc_precision": "P", "doc_ndcg": "nDCG"}
    assert PASSAGE_METRICS == {"ctx_mrr": "RR", "ctx_precision": "P"}


def test_columns_in_the_order_the_old_lists_gave():
    # gold contexts and sections at subsection level, a reasoner and a judge: per k the four doc_ and four ctx_
    # metrics, then the level's coverage and share; then at answer_k token F1 and EM, ragas' five non-LLM, the two
    # ID-based and the five judged metrics (old: [*STRING_MATCH, *NON_LLM_METRICS, *ID_METRICS, *LLM_METRICS])
    docs = [Document("a", "Pesto comes from Genoa.", sections=[Section("a-s", "S", "subsection", 0, 23)])]
    data = Dataset("d", docs, [Question("q", "?", gold_doc_ids=["a"], gold_contexts=["Pesto"])])
    ranked = ["mrr", "recall", "precision", "ndcg"]
    per_k = [*(f"doc_{m}" for m in ranked), *(f"ctx_{m}" for m in ranked), "subsection_coverage_source",
             "subsection_coverage_source_share"]
    answers = ["token_f1", "exact_match", *NON_LLM_METRICS, *ID_METRICS, *LLM_METRICS]
    assert produced_columns(data, [1, 3], "subsection", reasoner=True, judge=True, answer_k=2) == \
        [f"{m}@1" for m in per_k] + [f"{m}@3" for m in per_k] + [f"{m}@2" for m in answers]
