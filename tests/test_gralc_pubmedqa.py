"""GraLC-RAG Table 1 in the paper's PubMedQA* setting: whole abstracts (every context section), one question
each, gold = its source abstract (fixture tests/fixtures/pubmedqa_pqal/ori_pqal.json, upstream layout)."""
from pathlib import Path

import pandas as pd
import pytest

from rag_lab.datasets.loaders.pubmedqa import load_pubmedqa
from rag_lab.methods.gralc import experiment as ex
from rag_lab.methods.gralc import paper
from rag_lab.methods.gralc import tables as tb
from rag_lab.methods.gralc.gradient import condition_dataset, condition_span
from rag_lab.core.types import Dataset, Document, Question, Section

PQAL = Path(__file__).parent / "fixtures" / "pubmedqa_pqal" / "ori_pqal.json"


@pytest.fixture(scope="module")
def pubmedqa():
    return load_pubmedqa(PQAL)


def test_an_abstract_is_the_abstract_condition_whole(pubmedqa):
    doc = pubmedqa.documents[0]
    assert [s.title for s in doc.sections] == ["BACKGROUND", "METHODS", "RESULTS"]
    # before the fix the BACKGROUND section was taken for an Introduction and became the short text
    assert condition_span(doc, "abstract") == (0, len(doc.text))
    assert [condition_span(doc, c) for c in ("introduction", "partial", "full")] == [None, None, None]
    short = condition_dataset(pubmedqa, "abstract")
    assert [d.text for d in short.documents] == [d.text for d in pubmedqa.documents]
    assert [q.gold_doc_ids for q in short.questions] == [[d.id] for d in pubmedqa.documents]
    assert condition_dataset(pubmedqa, "introduction").documents == []
    assert ex.short_text_dataset(pubmedqa).documents == short.documents


def test_an_article_abstract_still_comes_from_its_sections():
    text = "Abstract\n\nShort.\n\nIntroduction\n\nLonger text."
    doc = Document("a", text, sections=[Section("a:abstract", "Abstract", "section", 0, 16),
                                        Section("a:s1", "Introduction", "section", 18, 44)])
    assert condition_span(doc, "abstract") == (0, 16) and condition_span(doc, "full") == (0, 44)


def test_short_text_run_reuses_the_gradient_and_builds_otherwise(pubmedqa):
    sentinel = object()
    assert ex.short_text_run({"abstract": sentinel}, pubmedqa, ["gralc-naive"]) is sentinel
    run = ex.short_text_run({}, pubmedqa, ["gralc-naive"], (1, 3))
    assert len(run.dataset.documents) == 7 and len(run.dataset.questions) == 7
    mrr = tb.metric_means(run.scores, "doc_mrr", 3)
    assert list(mrr.index) == ["gralc-naive"] and 0 < mrr.iloc[0] <= 1


def test_setting_phrases_loader_arguments_and_missing_conditions(pubmedqa):
    short = condition_dataset(pubmedqa, "abstract")
    assert paper.short_text_setting(short) == (
        "PubMedQA*: 7 full abstracts (all context sections), 7 questions, one each, gold = its source abstract — "
        "the paper's protocol, not its question set (the paper: 1,000 questions, described as 500 expert-annotated "
        "+ 500 artificial; PQA-L's 1,000 are all expert-labelled)")
    jats = Dataset("x[abstract]", [Document("d", "t")], [Question("q", "?", gold_doc_ids=["d"])],
                   {"condition": "abstract"})
    assert paper.short_text_setting(jats).startswith("abstracts of 1 JATS articles, 1 template questions")
    assert paper.loader_kwargs("pubmedqa", "/p", 1000) == {"path": "/p", "limit_records": 1000}
    assert paper.loader_kwargs("pmc_oa", None, 5, seed=1, per_template=2) == {"seed": 1, "per_template": 2,
                                                                                "articles": 5}
    assert paper.loader_kwargs("italian_cuisine", None, 5) == {}
    note = paper.missing_conditions({"abstract": 1}, ("introduction", "partial", "full"))
    assert note.startswith("No introduction, partial, full condition here: its documents are abstracts")
    assert paper.missing_conditions({"introduction": 1, "partial": 1, "full": 1},
                                      ("introduction", "partial", "full")) == ""


def test_table4_without_long_conditions_is_empty_not_an_error():
    none = pd.DataFrame(columns=["method", "question_id", "metric", "k", "value", "condition"])
    parts = tb.summary(none, {"MRR": "doc_mrr@20", "R@1": "doc_recall@1", "R@5": "doc_recall@5"}, by="condition")
    assert set(parts) == {"ours", "n", "ci_low", "ci_high"}
    assert all(f.empty and list(f.columns) == ["MRR", "R@1", "R@5"] for f in parts.values())
    assert parts["ours"].index.names == ["condition", "strategy"]
