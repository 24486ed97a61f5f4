"""Loaders for GraLC-RAG's sources on small fixtures in their upstream formats: the shipped JATS
articles, a PMC OA folder, the MeSH descriptor XML and PubMedQA's ori_pqal.json."""
import json

import pytest

from rag_lab.datasets import load_dataset
from rag_lab.datasets.vocabulary import load_mesh_descriptors
from rag_lab.datasets.loaders.pubmedqa import hf_record, load_pubmedqa
from rag_lab.datasets.linking import ConceptLinker
from rag_lab.datasets.vocabulary import load_vocabulary

FIX = "tests/fixtures"


def test_biomed_articles_loader_is_deterministic_and_well_formed():
    a = load_dataset("biomed_articles", articles=2, seed=3)
    b = load_dataset("biomed_articles", articles=2, seed=3)
    assert [d.id for d in a.documents] == ["rl-bm-01", "rl-bm-02"]
    assert [(q.id, q.question) for q in a.questions] == [(q.id, q.question) for q in b.questions]
    assert {q.meta["template"] for q in a.questions} == {"method_result", "intro_result", "result_discussion",
                                                         "method_discussion", "cross_study"}
    docs = {d.id: d for d in a.documents}
    for q in a.questions:
        [gold] = q.gold_doc_ids
        sections = {s.id: s for s in docs[gold].sections}
        assert len(q.gold_section_ids) == 2 and all(sections[s].kind == "section" for s in q.gold_section_ids)
        assert all(ctx in docs[gold].text for ctx in q.gold_contexts)
    full = load_dataset("biomed_articles")
    assert len(full.documents) == 12 and len(full.questions) >= 50


def test_pmc_oa_folder_with_imrad_filter(monkeypatch):
    data = load_dataset("pmc_oa", path=f"{FIX}/pmc_oa", min_words=50)
    assert [d.id for d in data.documents] == ["PMC9900001"]          # the letter has no IMRaD sections
    assert {q.meta["template"] for q in data.questions} >= {"method_result", "cross_study"}
    everything = load_dataset("pmc_oa", path=f"{FIX}/pmc_oa", imrad_only=False, questions=False)
    assert sorted(d.id for d in everything.documents) == ["PMC9900001", "PMC9900002"]
    monkeypatch.delenv("RAG_LAB_DATA_PMC_OA", raising=False)
    with pytest.raises(FileNotFoundError, match="oa_bulk"):
        load_dataset("pmc_oa")


def test_mesh_descriptors_as_a_vocabulary():
    v = load_mesh_descriptors(f"{FIX}/mesh/desc_fixture.xml")
    ckd = v["X000002"]
    assert ckd.name == "Renal Insufficiency, Chronic" and ckd.synonyms == ("Chronic Kidney Disease", "CKD")
    assert ckd.semantic_type == "Diseases"
    # tree C12.777.419.780 -> parent C12.777.419 (X000001); see-related -> associated_with
    assert set(ckd.relations) == {("is_a", "X000001"), ("associated_with", "X000003")}
    assert v["X000001"].synonyms == ("Renal Diseases",)              # the permuted term is left out
    assert v["X000003"].relations == (("is_a", "X000004"),)           # the action outside the file is dropped
    assert v["X000005"].relations == (("part_of", "X000006"),)        # Anatomy tree: part_of
    text = "Chronic kidney disease (CKD) and metformin."
    assert [m.concept_id for m in ConceptLinker(v).link(text)] == ["X000002", "X000002", "X000003"]
    assert load_vocabulary(f"{FIX}/mesh/desc_fixture.xml")["X000003"].name == "Metformin"
    with pytest.raises(FileNotFoundError, match="desc20XX.xml"):
        load_mesh_descriptors(f"{FIX}/mesh/missing.xml")


def test_pubmedqa_maps_pmids_to_documents_and_questions(tmp_path, monkeypatch):
    data = load_pubmedqa(f"{FIX}/pubmedqa")
    assert [d.id for d in data.documents] == ["90000001", "90000002"]
    d = data.documents[0]
    # contexts joined by a blank line, whitespace collapsed: "This fictional ... loader." is 51 chars and
    # " An exercise programme was invented." 36 more (0-87); the second context starts at 87 + 2 = 89 and
    # "Blood pressure fell by an invented amount." is 42 chars (89-131)
    assert d.text.startswith("This fictional record exists only to test a loader. An exercise")
    assert [(s.title, s.start, s.end) for s in d.sections] == [("BACKGROUND", 0, 87), ("RESULTS", 89, 131)]
    assert d.text[89:131] == "Blood pressure fell by an invented amount."
    q = data.questions[0]
    assert q.gold_doc_ids == ["90000001"] and q.answer == "The invented programme lowered blood pressure."
    assert q.meta["final_decision"] == "yes"
    monkeypatch.setenv("RAG_LAB_DATA_PUBMEDQA", f"{FIX}/pubmedqa/ori_pqal.json")
    assert len(load_dataset("pubmedqa").questions) == 2
    bad = tmp_path / "ori_pqal.json"
    bad.write_text(json.dumps({"1": {"QUESTION": "q?"}}))
    with pytest.raises(ValueError, match="PMID 1 lacks field 'CONTEXTS'"):
        load_pubmedqa(bad)
    monkeypatch.delenv("RAG_LAB_DATA_PUBMEDQA")
    with pytest.raises(FileNotFoundError, match="ori_pqal.json"):
        load_pubmedqa()


def test_hugging_face_rows_map_to_the_same_layout():
    pmid, rec = hf_record({"pubid": 7, "question": "q?", "context": {"contexts": ["c"], "labels": ["L"],
                                                                       "meshes": ["m"]},
                           "long_answer": "a", "final_decision": "no"})
    assert pmid == "7" and rec["CONTEXTS"] == ["c"] and rec["LABELS"] == ["L"] and rec["LONG_ANSWER"] == "a"
