"""QASPER, QuALITY and NarrativeQA loaders on hand-written fixtures in the upstream formats
(tests/fixtures/<name>/); every expected value read off the fixture files by hand."""
from __future__ import annotations

from pathlib import Path

import pytest

from rag_lab.datasets import load_dataset

FIXTURES = Path(__file__).parent / "fixtures"


# -- QASPER -------------------------------------------------------------------------------------
def test_qasper_documents_and_sections():
    data = load_dataset("qasper", path=FIXTURES / "qasper")
    assert data.name == "qasper-dev" and [d.id for d in data.documents] == ["2101.00001", "2101.00002"]
    doc = data.documents[0]
    # title, "Abstract", abstract, then each section name and its paragraphs, blank lines between;
    # the fourth entry (null name, null paragraphs) is skipped.
    assert doc.text == ("Counting Rare Words in Small Corpora\n\nAbstract\n\n"
                        "We study how often rare words appear in corpora of fewer than ten thousand tokens.\n\n"
                        "Introduction\n\nSmall corpora are common in field linguistics.\n\n"
                        "Rare words make up most of the vocabulary of a small corpus.\n\n"
                        "Method\n\nWe count every word type that occurs once, called a hapax.\n\n"
                        "Method ::: Data\n\nThe data are twelve folk tales recorded in 1970.")
    assert [(s.id, s.title, s.kind, s.level) for s in doc.sections] == [
        ("abstract", "Abstract", "section", 1), ("s0", "Introduction", "section", 1), ("s1", "Method", "section", 1),
        ("s2", "Method ::: Data", "subsection", 2)]
    intro = doc.sections[1]
    assert doc.text[intro.start:intro.end] == ("Introduction\n\nSmall corpora are common in field linguistics.\n\n"
                                               "Rare words make up most of the vocabulary of a small corpus.")
    assert doc.sections[-1].end == len(doc.text)


def test_qasper_questions_answers_and_evidence():
    data = load_dataset("qasper", path=FIXTURES / "qasper")
    qs = {q.id: q for q in data.questions}
    assert list(qs) == ["q-data", "q-table", "q-lang", "q-bytes"]
    q = qs["q-data"]
    # first annotation's extractive span; evidence of both annotations, de-duplicated, in order
    assert q.answer == "twelve folk tales" and q.gold_doc_ids == ["2101.00001"]
    assert q.gold_contexts == ["The data are twelve folk tales recorded in 1970.",
                               "Small corpora are common in field linguistics."]
    assert q.gold_section_ids == ["s2", "s0"]
    assert q.meta["answers"] == ["twelve folk tales", "folk tales from 1970"]
    # yes/no answer; its only evidence is a table caption, not in the text
    assert qs["q-table"].answer == "Yes" and qs["q-table"].gold_contexts == []
    assert qs["q-lang"].answer == "Unanswerable" and qs["q-lang"].meta["unanswerable"] is True
    assert qs["q-bytes"].answer == "They never meet unknown characters."
    assert data.meta["evidence_not_in_text"] == 1


def test_qasper_limit_and_max_documents():
    data = load_dataset("qasper", limit=2, path=FIXTURES / "qasper")
    assert [q.id for q in data.questions] == ["q-data", "q-table"]
    one = load_dataset("qasper", path=FIXTURES / "qasper", max_documents=1)
    assert [d.id for d in one.documents] == ["2101.00001"] and len(one.questions) == 3
    # the JSON file itself is accepted as path; "validation" is an alias of "dev"
    same = load_dataset("qasper", path=FIXTURES / "qasper" / "qasper-dev-v0.3.json", split="validation")
    assert len(same.questions) == 4


def test_qasper_missing_copy_says_what_and_where(tmp_path, monkeypatch):
    monkeypatch.delenv("RAG_LAB_DATA_QASPER", raising=False)
    with pytest.raises(FileNotFoundError) as e:
        load_dataset("qasper", path=tmp_path)
    msg = str(e.value)
    assert "qasper-dev-v0.3.json" in msg and "qasper-train-dev-v0.3.tgz" in msg and str(tmp_path) in msg
    assert "RAG_LAB_DATA_QASPER" in msg
    monkeypatch.setenv("RAG_LAB_DATA_QASPER", str(FIXTURES / "qasper"))
    assert len(load_dataset("qasper").documents) == 2
    with pytest.raises(ValueError, match="split must be one of"):
        load_dataset("qasper", split="dev2")


# -- QuALITY ------------------------------------------------------------------------------------
def test_quality_articles_deduplicated_and_gold_options():
    data = load_dataset("quality", path=FIXTURES / "quality")
    # article 61001 is on two lines (two writers): one document, the questions of both lines
    assert [d.id for d in data.documents] == ["61001", "61002"]
    assert data.documents[0].title == "The Keeper of the Cape"
    assert [q.id for q in data.questions] == ["61001_W1_1", "61001_W1_2", "61001_W2_1", "61002_W1_1"]
    q = data.questions[1]
    assert q.answer == "In the winter of the great storm"        # gold_label 3 -> third option
    assert q.gold_doc_ids == ["61001"] and q.gold_contexts == []
    assert q.meta["difficult"] == 1 and len(q.meta["options"]) == 4
    assert data.questions[3].answer == "At the chapel door"
    one = load_dataset("quality", path=FIXTURES / "quality", max_documents=1)
    assert [d.id for d in one.documents] == ["61001"] and len(one.questions) == 3


def test_quality_missing_copy_and_bad_label(tmp_path, monkeypatch):
    monkeypatch.delenv("RAG_LAB_DATA_QUALITY", raising=False)
    with pytest.raises(FileNotFoundError) as e:
        load_dataset("quality", path=tmp_path)
    assert "QuALITY.v1.0.1.htmlstripped.dev" in str(e.value) and "QuALITY.v1.0.1.zip" in str(e.value)
    bad = tmp_path / "QuALITY.v1.0.1.htmlstripped.dev"
    bad.write_text('{"article_id": "1", "article": "x", "questions": [{"question": "q", "options": ["a", "b"], '
                   '"gold_label": 3}]}\n')
    with pytest.raises(ValueError, match="gold_label must be 1..2"):
        load_dataset("quality", path=tmp_path)


# -- NarrativeQA --------------------------------------------------------------------------------
def test_narrativeqa_summaries():
    data = load_dataset("narrativeqa", path=FIXTURES / "narrativeqa")
    # split "valid" keeps d0001 and d0002 (d0003 is train) and their three questions
    assert data.name == "narrativeqa-valid-summaries"
    assert [(d.id, d.title) for d in data.documents] == [("d0001", "The Orchard Letters"), ("d0002", "Night Tunnel")]
    assert data.documents[1].text.startswith("A train driver is trapped")
    assert [q.id for q in data.questions] == ["d0001-q0", "d0001-q1", "d0002-q0"]
    q = data.questions[1]
    assert q.answer == "A neighbour" and q.meta["answers"] == ["A neighbour", "Her neighbour"]
    assert q.gold_doc_ids == ["d0001"]
    train = load_dataset("narrativeqa", path=FIXTURES / "narrativeqa", split="train")
    assert [q.question for q in train.questions] == ["Where is the kite found?"]


def test_narrativeqa_stories_cut_at_markers():
    data = load_dataset("narrativeqa", path=FIXTURES / "narrativeqa", source="stories", max_documents=1)
    # boilerplate before "THE ORCHARD LETTERS" and after "THE END" is cut; Latin-1 "café" decoded
    assert data.documents[0].text == ("THE ORCHARD LETTERS\n\nDear Anna, the apples are ripe and the café in the "
                                      "village wants forty baskets.\n\nTHE END")
    with pytest.raises(FileNotFoundError, match="download_stories.sh"):
        load_dataset("narrativeqa", path=FIXTURES / "narrativeqa", source="stories")   # d0002 has no story file


def test_narrativeqa_missing_copy(tmp_path, monkeypatch):
    monkeypatch.delenv("RAG_LAB_DATA_NARRATIVEQA", raising=False)
    with pytest.raises(FileNotFoundError) as e:
        load_dataset("narrativeqa", path=tmp_path)
    assert "documents.csv" in str(e.value) and "github.com/google-deepmind/narrativeqa" in str(e.value)
    with pytest.raises(ValueError, match="source must be one of"):
        load_dataset("narrativeqa", path=FIXTURES / "narrativeqa", source="books")
