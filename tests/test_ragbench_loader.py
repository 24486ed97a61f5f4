"""RAGBench loader on fixtures in the upstream layout (tests/fixtures/ragbench, text invented)."""
from __future__ import annotations

from pathlib import Path

import pytest

from rag_lab.datasets import available_datasets, load_dataset
from rag_lab.datasets.loaders.ragbench import doc_id

FIXTURES = Path(__file__).parent / "fixtures" / "ragbench"
P1 = "Masks reduce droplet spread in clinics. Staff wore them during every shift."


def test_parquet_rows_become_documents_and_questions():
    d = load_dataset("ragbench_covidqa", path=FIXTURES)
    # 3 rows with passages [P1, P2], [P1, P3], [P3]: P1 and P3 are shared, so 3 documents
    assert d.name == "ragbench_covidqa" and len(d.documents) == 3 and len(d.questions) == 3
    assert d.documents[0].id == doc_id("covidqa", P1) and d.documents[0].text == P1
    q1, q2, q3 = d.questions
    # row 1: relevant "1a" (found verbatim) and "1b" (re-spaced upstream, "Symptoms  began": found with any
    # whitespace between its words, and given as the passage writes it)
    assert q1.id == "cq-1" and q1.answer == "About five days."
    assert q1.gold_doc_ids == [d.documents[1].id]
    assert q1.gold_contexts == ["The incubation period of the virus was about five days.", "Symptoms began with fever."]
    assert d.meta["unlocated_gold_sentences"] == 0
    # row 2: "0a", "1a", "0b." (stray dot ignored) are located; "1z" names no sentence
    assert q2.gold_doc_ids == [doc_id("covidqa", P1), d.documents[2].id]
    assert q2.gold_contexts == ["Masks reduce droplet spread in clinics.",
                                "Hand washing with soap for twenty seconds removes most viral particles.",
                                "Staff wore them during every shift."]
    # row 3: nothing relevant -> no gold (retrieval metrics skip it); null completeness not kept
    assert q3.gold_doc_ids == [] and q3.gold_contexts == [] and "completeness_score" not in q3.meta
    assert q1.meta["relevance_score"] == 0.25 and q1.meta["adherence_score"] is True


def test_jsonl_split_max_rows_and_env_var(monkeypatch):
    monkeypatch.setenv("RAG_LAB_DATA_RAGBENCH", str(FIXTURES))
    e = load_dataset("ragbench_emanual", split="validation")
    assert [q.id for q in e.questions] == ["em-1"]
    assert e.questions[0].gold_contexts == ["Press the power button for three seconds to restart the television."]
    small = load_dataset("ragbench_covidqa", max_rows=1)
    assert [q.id for q in small.questions] == ["cq-1"] and len(small.documents) == 2


def test_missing_subset_says_what_to_download(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"galileo-ai/ragbench.*techqa/"):
        load_dataset("ragbench_techqa", path=tmp_path)
    with pytest.raises(ValueError, match="unknown RAGBench split"):
        load_dataset("ragbench_covidqa", path=FIXTURES, split="dev")
    assert {"ragbench_covidqa", "ragbench_emanual", "ragbench_techqa"} <= set(available_datasets())


def test_bad_rows_are_named(tmp_path):
    (tmp_path / "techqa").mkdir()
    (tmp_path / "techqa" / "test-00000-of-00001.jsonl").write_text('{"id": "t1", "question": "q?"}\n{oops\n')
    with pytest.raises(ValueError, match=r"test-00000-of-00001.jsonl:2: not valid JSON"):
        load_dataset("ragbench_techqa", path=tmp_path)
    (tmp_path / "techqa" / "test-00000-of-00001.jsonl").write_text('{"id": "t1", "question": "q?"}\n')
    with pytest.raises(ValueError, match="row 1: RAGBench row has no 'documents' column"):
        load_dataset("ragbench_techqa", path=tmp_path)
