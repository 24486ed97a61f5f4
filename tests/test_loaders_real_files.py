"""Loaders on what real upstream files hold and hand-written fixtures usually do not. Each fixture folder
(tests/fixtures/*_real, tests/fixtures/pubmedqa_pqal; invented text in the upstream layouts) lists its quirks
in a README; every quirk has an assertion here, with the expected value worked out by hand from the file."""
import json
import logging
from pathlib import Path

import pytest

from rag_lab.datasets.loaders.narrativeqa import load_narrativeqa
from rag_lab.datasets.loaders.pubmedqa import hf_record, load_pubmedqa, record_to_pair
from rag_lab.datasets.loaders.qasper import load_qasper
from rag_lab.datasets.loaders.quality import load_quality
from rag_lab.datasets.loaders.ragbench import doc_id, load_ragbench, locate
from rag_lab.datasets.loaders.wikipedia import clean_extract
from rag_lab.datasets.text_clean import clean_block, clean_text, html_page_text, normalise_label

FIX = Path(__file__).parent / "fixtures"


# -- shared cleaning ---------------------------------------------------------------------------------------
def test_clean_text_entities_markup_and_lone_angle_brackets():
    assert clean_text("Effects <i>in vivo</i>: m<sup>2</sup><br/>next") == "Effects in vivo: m2 next"
    assert clean_text("p &lt; 0.05 &amp; n&nbsp;=&#x2009;4") == "p < 0.05 & n = 4"
    assert clean_text("a<b and c>d, x < y") == "a<b and c>d, x < y"          # not tags: left alone
    assert clean_text(None) == "" and clean_text(2012) == "2012" and clean_text("a\u200bb\u00ad") == "ab"
    assert clean_block("<p>One <b>two</b></p><p>three</p>\n\n four ") == "One two\n\nthree\n\nfour"
    page = "<html><head><script>x=1</script></head><body><pre>A\n  B\n\nC</pre><p>D &amp; E</p></body></html>"
    assert html_page_text(page, keep_lines=True) == "A\nB\n\nC\n\nD & E"


def test_labels_in_other_cases_and_char_lists():
    allowed = ("yes", "no", "maybe")
    assert [normalise_label(v, allowed, "f", "x") for v in ("Yes", "NO", " maybe ", ["y", "e", "s"], None, "")] == \
        ["yes", "no", "maybe", "yes", None, None]
    with pytest.raises(ValueError, match=r"f: x must be one of \['maybe', 'no', 'yes'\] \(any case\), got 'perhaps'"):
        normalise_label("perhaps", allowed, "f", "x")


# -- PubMedQA ------------------------------------------------------------------------------------------------
def test_pubmedqa_real_file_quirks(caplog):
    with caplog.at_level(logging.WARNING):
        data = load_pubmedqa(FIX / "pubmedqa_pqal")
    ids = [d.id for d in data.documents]
    assert ids == [f"9100000{i}" for i in range(1, 8)]                    # 91000008 has only empty contexts
    assert data.meta["records_without_context"] == ["91000008"] and "91000008" in caplog.text
    q = {x.meta["pmid"]: x for x in data.questions}
    assert [q[i].meta["final_decision"] for i in ids] == ["yes", "yes", "no", "yes", "maybe", "no", "yes"]
    docs = {d.id: d for d in data.documents}
    statins = docs["91000003"].text
    assert "prevent it in vivo." in statins and "(p < 0.05)" in statins and "age & left atrial" in statins
    # the empty second context of 91000004 is dropped with its label: the kept contexts are 66 and 183
    # characters long, so the sections start at 0, 68 (66 + 2) and 253 (68 + 183 + 2)
    adherence = docs["91000004"]
    assert [s.title for s in adherence.sections] == ["BACKGROUND", "METHODS", "RESULTS"]
    assert (adherence.sections[1].start, adherence.sections[2].start) == (68, 253)
    salt = docs["91000005"]                                                # no LABELS, YEAR a number
    assert [s.title for s in salt.sections] == ["", "", ""] and salt.meta["year"] == "2012"
    binders = docs["91000007"]                                             # MESHES and YEAR null
    assert binders.meta["meshes"] == [] and binders.meta["year"] is None
    assert "1 540 knee" in docs["91000006"].text and "\u200b" not in docs["91000006"].text
    assert all(d.meta["kind"] == "abstract" for d in data.documents)


def test_pubmedqa_bom_unknown_label_and_hf_char_lists(tmp_path):
    f = tmp_path / "ori_pqal.json"
    f.write_bytes(b"\xef\xbb\xbf" + json.dumps({"5": {"QUESTION": "q?", "CONTEXTS": ["c."]}}).encode())
    assert load_pubmedqa(f).questions[0].meta["final_decision"] is None
    with pytest.raises(ValueError, match=r"PMID 6: final_decision must be one of .* got 'unsure'"):
        record_to_pair("6", {"QUESTION": "q", "CONTEXTS": ["c"], "final_decision": "unsure"}, "f")
    with pytest.raises(ValueError, match=r"PMID 7: 1 LABELS for 2 CONTEXTS"):
        record_to_pair("7", {"QUESTION": "q", "CONTEXTS": ["a", "b"], "LABELS": ["X"]}, "f")
    pmid, rec = hf_record({"pubid": 9, "question": "q?", "context": {"contexts": ["c"], "labels": ["L"]},
                           "long_answer": "a", "final_decision": ["m", "a", "y", "b", "e"]})
    _, question = record_to_pair(pmid, rec, "hf")
    assert question.meta["final_decision"] == "maybe"


# -- QASPER --------------------------------------------------------------------------------------------------
def test_qasper_release_quirks():
    data = load_qasper(FIX / "qasper_real")
    paper, empty_paper = data.documents
    assert paper.title == "Counting Invented Tokens & Their Friends"
    titles = [(s.id, s.title, s.kind) for s in paper.sections]
    # s1 has a null name, s3 ("Results") null paragraphs, s4 is an empty entry (left out)
    assert titles == [("abstract", "Abstract", "section"), ("s0", "Introduction", "section"),
                      ("s1", "Section 2", "section"), ("s2", "Method ::: Data", "subsection"),
                      ("s3", "Results", "section"), ("s5", "Results", "section")]
    assert "Ours is invented & untested." in paper.text and "<i>" not in paper.text
    assert "We use 1,000 invented sentences. Each one has exactly ten words." in paper.text
    q1, q2 = data.questions                                                # the second paper has no qas
    # q1: the first annotation is empty (not unanswerable), the second answers; evidence re-spaced upstream
    assert q1.question == "How many sentences are used?" and q1.answer == "1,000 invented sentences"
    assert q1.meta["answers"] == ["", "1,000 invented sentences"] and q1.meta["unanswerable"] is False
    assert q1.gold_contexts == ["We use 1,000 invented sentences. Each one has exactly ten words."]
    assert q1.gold_section_ids == ["s2"]
    assert q2.answer == "No" and q2.gold_section_ids == ["s0"] and data.meta["evidence_not_in_text"] == 1
    assert empty_paper.text == "A paper with no questions\n\nBody\n\nOnly text."


@pytest.mark.parametrize("name", ["validation.jsonl", "validation-00000-of-00001.parquet"])
def test_qasper_hugging_face_rows_match_the_release(name):
    release = load_qasper(FIX / "qasper_real", max_documents=1)
    rows = load_qasper(FIX / "qasper_real" / name)
    assert rows.documents[0].text == release.documents[0].text
    assert [s.id for s in rows.documents[0].sections] == [s.id for s in release.documents[0].sections]
    assert [(q.id, q.answer, q.gold_contexts, q.meta) for q in rows.questions] == \
        [(q.id, q.answer, q.gold_contexts, q.meta) for q in release.questions]


# -- QuALITY -------------------------------------------------------------------------------------------------
def test_quality_raw_html_release():
    data = load_quality(FIX / "quality_real" / "QuALITY.v1.0.1.dev")
    [doc] = data.documents                                                 # 70002 has a blank article
    assert data.meta["articles_without_text"] == ["70002"]
    assert doc.text == ("The Lighthouse on Nowhere Rock\n\nThe keeper, Ines Varga, had never seen the supply boat "
                        "late. She climbed the stairs \u2014 all two hundred of them \u2014 and looked east.\n\n"
                        "\u201cIt will come,\u201d she told the gulls. It did not come that day, nor the next.\n\n"
                        "On the third day she lit the lamp with the last of the oil & waited.")
    assert doc.meta["author"] == "Nobody & Co."
    q1, q2 = data.questions
    assert q1.answer == "Two hundred" and q1.meta["gold_label"] == 2       # gold_label "2", a string
    assert q2.meta["options"][3] == "Gas & wood"


def test_quality_flattened_hugging_face_rows():
    data = load_quality(FIX / "quality_real" / "validation.jsonl")
    assert [d.id for d in data.documents] == ["70003"]                     # two rows, one article
    assert [(q.id, q.answer) for q in data.questions] == [("70003_X_1", "Ines Varga"), ("70003_X_2", "The supply boat")]
    assert data.documents[0].text.startswith("The keeper, Ines Varga, had never seen the supply boat late. She")


# -- NarrativeQA ---------------------------------------------------------------------------------------------
def test_narrativeqa_bom_entities_and_empty_summary():
    data = load_narrativeqa(FIX / "narrativeqa_real")
    [doc] = data.documents
    assert (doc.id, doc.title) == ("m0001", "Harbour & Light")             # header read despite the BOM
    assert doc.text == "Mara waits at the harbour for a boat. The boat arrives with oranges & letters."
    assert data.meta["documents_without_text"] == ["m0002"]
    assert [(q.question, q.answer) for q in data.questions] == [("Who waits at the harbour?", "Mara"),
                                                               ("What does the boat carry?", "Oranges")]


def test_narrativeqa_html_script_cut_at_respaced_markers():
    data = load_narrativeqa(FIX / "narrativeqa_real", source="stories", max_documents=1)
    assert data.documents[0].text == ("FADE IN:\n\nEXT. HARBOUR - DAWN\n\nMARA (30s) watches the water.\n\nMARA\n"
                                      "It will come, caf\u00e9 or no caf\u00e9.\n\nA boat appears, heavy with oranges."
                                      "\n\nTHE END")


# -- RAGBench ------------------------------------------------------------------------------------------------
def test_ragbench_empty_passages_case_of_keys_and_respaced_sentences():
    data = load_ragbench("techqa", path=FIX / "ragbench_real")
    p0 = "To reset the invented gateway, hold the power button\nfor ten seconds. The light turns amber."
    p2 = "Firmware 2.1 of the made-up gateway fixes the amber light."
    assert [d.text for d in data.documents] == [p0, p2] and data.meta["empty_passages"] == 1
    q1, q2 = data.questions
    # "0A" (upper case) -> 0a, found across the line break; "1a" names the empty passage (no gold); "2a" verbatim
    assert q1.gold_doc_ids == [doc_id("techqa", p0), doc_id("techqa", p2)]
    assert q1.gold_contexts == ["To reset the invented gateway, hold the power button\nfor ten seconds.", p2]
    assert q1.question == "How do I reset the gateway?" and q1.meta["row_doc_ids"] == q1.gold_doc_ids
    assert q2.answer is None and q2.gold_contexts == [p2] and data.meta["unlocated_gold_sentences"] == 0
    assert locate("not  there", p2) is None and locate("", p2) is None


# -- Wikipedia -----------------------------------------------------------------------------------------------
def test_wikipedia_invisible_characters_in_extracts():
    # "Intro" 0-5; heading with a zero-width space is still a heading; soft hyphen removed from "learn-ing"
    text, sections = clean_extract("Intro\u200b\n\n== \u200bHistory ==\nLearn\u00ading began.\n")
    assert text == "Intro\n\nLearning began." and [(s.title, s.start, s.end) for s in sections] == [("History", 7, 22)]
