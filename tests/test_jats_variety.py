"""JATS as PMC serves it: a research article, a review and an editorial inside a <pmc-articleset>, and a case
report, each carrying some of the quirks real files have (fixtures in tests/fixtures/pmc_oa_variety/, written
for these tests with invented content); and malformed input, which gets a message naming file, line and
element, or is handled."""
import logging

import pytest

from rag_lab import load_dataset
from rag_lab.datasets.jats import iter_jats_folder, parse_jats, parse_jats_articles
from rag_lab.datasets.jats_inline import tex_text

FOLDER = "tests/fixtures/pmc_oa_variety"


@pytest.fixture(scope="module")
def docs():
    return {d.id: d for d in iter_jats_folder(FOLDER)}


def top_titles(doc):
    return [s.title for s in doc.sections if s.kind == "section"]


def block(doc, section_id):
    s = next(s for s in doc.sections if s.id == section_id)
    return doc.text[s.start:s.end]


def test_mixed_article_types_load_through_the_registry():
    data = load_dataset("pmc_oa", path=FOLDER)                     # the paper's IMRaD filter, 1,000 words
    assert [d.id for d in data.documents] == ["PMC9910001"]
    assert data.meta["articles_read"] == {"research-article": 1, "case-report": 1, "review-article": 1,
                                          "editorial": 1}
    assert data.meta["left_out_by_filter"] == {"case-report": 1, "review-article": 1, "editorial": 1}
    assert data.meta["repaired"] == ["PMC9910003"]
    assert {q.meta["template"] for q in data.questions} == {"method_result", "intro_result", "result_discussion",
                                                          "method_discussion", "cross_study"}
    everything = load_dataset("pmc_oa", path=FOLDER, imrad_only=False)
    assert sorted(d.id for d in everything.documents) == ["PMC9910001", "PMC9910002", "PMC9910003", "PMC9910004"]
    assert {d.meta["article_type"] for d in everything.documents} == {"research-article", "review-article",
                                                                       "case-report", "editorial"}
    assert len(load_dataset("pmc_oa", path=FOLDER, imrad_only=False, articles=2, questions=False).documents) == 2


def test_sections_and_titles_as_the_files_have_them(docs):
    research, review, case, editorial = (docs[f"PMC991000{i}"] for i in (1, 2, 3, 4))
    assert research.title.startswith("Evening dosing of an invented antihypertensive, zelbrotide, in adults")
    assert top_titles(research) == ["Abstract", "Introduction", "Methods", "Results", "Discussion", "Conclusions"]
    assert top_titles(review) == ["Abstract", "", "Mechanisms linking sleep and metabolism",
                                  "Sleep, obesity and blood pressure in populations", "",
                                  "Abbreviations used in this review", "Future directions and conclusions"]
    assert top_titles(case) == ["Abstract", "Background", "Case presentation", "Discussion", "Conclusions"]
    assert top_titles(editorial) == [] and [s.kind for s in editorial.sections] == ["paragraph", "paragraph"]
    assert [s.title for s in case.sections if s.kind == "subsection"] == [
        "Background", "Case presentation", "Conclusions", "History", "Investigations", "Treatment and outcome"]
    for doc in docs.values():  # every block is trimmed, every section holds its children
        for s in doc.sections:
            assert doc.text[s.start:s.end] == doc.text[s.start:s.end].strip() and s.end > s.start
        spans = [(s.start, s.end, s.level) for s in doc.sections]
        for (a, b, lv), (c, d, lv2) in zip(spans, spans[1:]):
            assert c >= a and (lv2 > lv) <= (d <= b)   # a deeper section that follows lies inside
    # paragraphs counted by hand from the file: abstract 4, introduction 3, methods 1 + 3 (two list items)
    # + 3 (formula) + 1, results 2 + 3 (the table and two figure captions), discussion 2 + 1, conclusions 1 = 24
    assert sum(s.kind == "paragraph" for s in research.sections) == 24


def test_untitled_sections_start_at_their_first_paragraph(docs):
    research, review = docs["PMC9910001"], docs["PMC9910002"]
    untitled = next(s for s in research.sections if s.id == "PMC9910001:sec2-1")
    assert untitled.title == "" and untitled.kind == "subsection"
    assert research.text[untitled.start:].startswith("This section of the fixture has no title on purpose")
    assert block(review, "PMC9910002:s4") == "A section with an empty title element: its text stays, its title is empty."


def test_formulas_tables_and_figure_groups_inside_paragraphs(docs):
    research = docs["PMC9910001"]
    assert "estimated with the eGFR equation of an invented consortium." in research.text   # written once
    assert block(research, "PMC9910001:E1") == r"d = \frac{S_{day} - S_{night}}{S_{day}} (1)"
    p = block(research, "PMC9910001:sec3-1.p1")
    assert "(Table 1). Daytime pressure changed" in p and "Night systolic" not in research.text
    assert "footnote" not in research.text
    assert block(research, "PMC9910001:T1") == ("Table 1. Change in ambulatory pressure at twelve months. "
                                                "Values are invented means.")
    assert [s.title for s in research.sections if s.id in ("PMC9910001:F1", "PMC9910001:F2")] == ["Figure 1A",
                                                                                                  "Figure 1B"]
    targets = {x["rid"]: x["target"] for x in research.meta["xrefs"]}
    assert targets == {"T1": "PMC9910001:T1", "F1": "PMC9910001:F1", "F2": "PMC9910001:F2"}
    review = docs["PMC9910002"]
    assert r"varies with age: RR = 1 + \beta \cdot \Delta h where Δh is the shortfall" in review.text


def test_supplementary_and_back_matter_are_left_out(docs):
    research, review, case = docs["PMC9910001"], docs["PMC9910002"], docs["PMC9910003"]
    for doc, gone in [(research, ["Supplementary", "every invented visit", "Thanks to nobody", "Appendix text"]),
                      (review, ["Supporting information", "Search strategy"]),
                      (case, ["Additional file", "Timeline", "Back-matter section", "estimated glomerular"])]:
        assert not any(g in doc.text for g in gone)
        assert doc.meta["skipped"] == {"supplementary section": 1}
    assert research.meta["references"]["B2"]["title"] == "Bedtime dosing in a made-up cohort"


def test_boxes_definition_lists_quotes_and_deep_sections(docs):
    review = docs["PMC9910002"]
    box = next(s for s in review.sections if s.id == "PMC9910002:box1")
    assert (box.title, box.kind, box.level) == ("Box 1 Key points", "subsection", 2)
    assert review.text[box.start:box.end].endswith("The link with obesity may run in both directions.")
    assert block(review, "PMC9910002:s5.p1") == "HOMA-IR An invented shorthand for a homeostasis index."
    assert block(review, "PMC9910002:s2-2.p2").startswith("Sleep is the one risk factor")
    assert [s.level for s in review.sections if s.id.startswith("PMC9910002:s2-1") and s.kind != "paragraph"] == [2, 3, 4]
    editorial = docs["PMC9910004"]
    assert block(editorial, "PMC9910004:body.p2") == ("Its second paragraph holds a list without paragraph elements: "
                                                      "first point second point and continues after it.")


def test_articleset_ids_and_entities():
    review, editorial = parse_jats_articles(f"{FOLDER}/efetch_set_01.xml")
    assert (review.id, editorial.id) == ("PMC9910002", "PMC9910004")     # pub-id-type "pmc" with and without "PMC"
    assert parse_jats(f"{FOLDER}/efetch_set_01.xml").id == "PMC9910002"  # the first article of a set
    case = parse_jats(f"{FOLDER}/case_reports/PMC9910003.nxml")
    assert "71–year–old man" in case.text and "7.1 mmol/L" in case.text     # &ndash; and &nbsp; as characters
    assert case.meta["repairs"] == ["named entities &ndash;, &nbsp; read as characters"]
    research = parse_jats(f"{FOLDER}/PMC9910001.nxml")
    assert research.id == "PMC9910001" and research.meta["repairs"] == []   # pub-id-type "pmcid"


def test_tex_preamble_and_wrappers_are_removed():
    assert tex_text("\\documentclass[12pt]{minimal}\n\\usepackage{amsmath}\n\\begin{document}$$\\mathrm{eGFR}$$"
                    "\\end{document}") == "eGFR"
    assert tex_text("\\usepackage{amsmath} $x_1$") == "x_1"


# -- malformed input (issue 17's table): a message naming the file, the line or element, what was expected --
def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_unclosed_tag_names_file_line_and_element(tmp_path):
    p = write(tmp_path, "unclosed.nxml", "<article>\n<body>\n<sec><title>T</title>\n<p>never closed\n</sec>\n"
                                         "</body></article>\n")
    with pytest.raises(ValueError) as e:
        parse_jats(p)
    msg = str(e.value)
    assert str(p) in msg and "line 5" in msg and "<p> opened at line 4 is not closed: expected </p>" in msg


def test_truncated_and_empty_files(tmp_path):
    p = write(tmp_path, "cut.nxml", "<article>\n<body>\n<p>the download stopped here")
    with pytest.raises(ValueError, match=r"cut.nxml: .*line 3.*ends inside <p> opened at line 3: expected </p>"):
        parse_jats(p)
    with pytest.raises(ValueError, match=r"empty.nxml: .*the file is empty: expected a JATS <article>"):
        parse_jats(write(tmp_path, "empty.nxml", ""))
    with pytest.raises(ValueError, match=r"ent.nxml: not well-formed XML at line 2, column 6: undefined entity \(&foo; is no XML entity"):
        parse_jats(write(tmp_path, "ent.nxml", "<article><body>\n<p>A &foo; B</p></body></article>"))
    with pytest.raises(ValueError, match=r"html.xml: expected a JATS <article> element .* found <html>"):
        parse_jats(write(tmp_path, "html.xml", "<html><body/></html>"))


def test_no_body_is_handled_and_no_text_is_an_error(tmp_path, caplog):
    abstract_only = ("<article article-type='research-article'><front><article-meta><article-id pub-id-type='pmc'>"
                     "PMC1</article-id><abstract><p>Only an abstract.</p></abstract></article-meta></front></article>")
    with caplog.at_level(logging.INFO, logger="rag_lab.datasets.jats"):
        doc = parse_jats(write(tmp_path, "a.nxml", abstract_only))
    assert doc.text == "Abstract\n\nOnly an abstract." and doc.meta["has_body"] is False
    assert "has no <body>" in caplog.text
    empty = "<article><front><article-meta><article-id pub-id-type='pmc'>PMC2</article-id></article-meta></front></article>"
    with pytest.raises(ValueError, match=r"b.nxml: article PMC2 has no text \(expected an <abstract> or a <body>"):
        parse_jats(write(tmp_path, "b.nxml", empty))
    no_id = "<article><body><p>Text.</p></body></article>"
    assert parse_jats(write(tmp_path, "PMC3.nxml", no_id)).id == "PMC3"        # the file name stands in
    with pytest.raises(ValueError, match="no <article-id>"):
        parse_jats(no_id)


def test_sections_nested_ten_deep(tmp_path):
    inner = "<p>Deepest paragraph.</p>"
    for level in range(10, 0, -1):
        inner = f"<sec id='d{level}'><title>Level {level}</title>{inner}</sec>"
    doc = parse_jats(f"<article><body>{inner}</body></article>", "deep")
    heads = [s for s in doc.sections if s.kind != "paragraph"]
    assert [(s.title, s.level) for s in heads] == [(f"Level {n}", n) for n in range(1, 11)]
    assert [s.kind for s in heads] == ["section"] + ["subsection"] * 9
    assert all(s.end == len(doc.text) for s in heads) and doc.text.endswith("Level 10\n\nDeepest paragraph.")


def test_undeclared_namespace_prefix_is_declared_and_counted():
    doc = parse_jats("<article><body><sec><title>T</title><p>Let <mml:math><mml:mi>x</mml:mi></mml:math> vary; see "
                     "<ext-link xlink:href='u'>here</ext-link>.</p></sec></body></article>", "ns")
    assert doc.text == "T\n\nLet x vary; see here."
    assert doc.meta["repairs"] == ["undeclared namespace prefixes mml, xlink declared"]
