"""GraLC-RAG: JATS parsing (exact offsets), the document structure graph and the fallback units."""
import pytest

from rag_lab.datasets.jats import parse_jats
from rag_lab.datasets.structure import edge_type_counts, section_for_span, section_role, structure_graph, \
    structure_units
from rag_lab.core.types import Document, Section

TINY = """<article><front><article-meta><article-id pub-id-type="pmid">42</article-id>
<title-group><article-title>Tiny trial</article-title></title-group>
<abstract><p>Short abstract.</p></abstract></article-meta></front>
<body>
<sec id="s1" sec-type="intro"><title>Introduction</title><p>CKD is common <xref ref-type="bibr" rid="B1">1</xref>.</p></sec>
<sec id="s2"><title>Methods</title><sec id="s2-1"><title>Design</title><p>See <xref ref-type="fig" rid="F1">Figure 1</xref>.</p>
<fig id="F1"><label>Figure 1</label><caption><p>Flow.</p></caption></fig></sec></sec>
</body><back><ref-list><ref id="B1"><mixed-citation><article-title>Old study</article-title></mixed-citation></ref></ref-list></back>
</article>"""

# Text layout, blocks joined by one blank line (2 chars):
#   "Abstract" 0-8 | "Short abstract." 10-25 | "Introduction" 27-39 | "CKD is common [1]." 41-59 ("[1]" 55-58)
#   "Methods" 61-68 | "Design" 70-76 | "See Figure 1." 78-91 ("Figure 1" 82-90) | "Figure 1. Flow." 93-108
EXPECTED_TEXT = ("Abstract\n\nShort abstract.\n\nIntroduction\n\nCKD is common [1].\n\nMethods\n\nDesign\n\n"
                 "See Figure 1.\n\nFigure 1. Flow.")
EXPECTED_SECTIONS = [
    ("42:abstract", "section", 1, 0, 25), ("42:abstract.p1", "paragraph", 2, 10, 25),
    ("42:s1", "section", 1, 27, 59), ("42:s1.p1", "paragraph", 2, 41, 59),
    ("42:s2", "section", 1, 61, 108), ("42:s2-1", "subsection", 2, 70, 108),
    ("42:s2-1.p1", "paragraph", 3, 78, 91), ("42:F1", "paragraph", 3, 93, 108),
]


def test_jats_sections_have_exact_offsets():
    doc = parse_jats(TINY)
    assert doc.id == "42" and doc.title == "Tiny trial"
    assert doc.text == EXPECTED_TEXT
    assert [(s.id, s.kind, s.level, s.start, s.end) for s in doc.sections] == EXPECTED_SECTIONS
    assert doc.text[41:59] == "CKD is common [1]."
    assert doc.meta["citations"] == [{"rid": "B1", "start": 55, "end": 58, "paragraph": "42:s1.p1"}]
    assert doc.text[55:58] == "[1]"
    [xref] = doc.meta["xrefs"]
    assert (xref["start"], xref["end"], xref["target"]) == (82, 90, "42:F1") and doc.text[82:90] == "Figure 1"
    assert doc.meta["references"]["B1"]["title"] == "Old study"
    assert section_role(doc, "42:s1") == "intro" and section_role(doc, "42:s2") == "methods"


def test_structure_graph_edges():
    g = structure_graph(parse_jats(TINY))
    # hierarchical: doc->abstract, abstract->p1, doc->s1, s1->p1, doc->s2, s2->s2-1, s2-1->p1, s2-1->F1 = 8
    # sequential: abstract->s1, s1->s2 (children of the root), s2-1.p1->F1 = 3
    assert edge_type_counts(g) == {"hierarchical": 8, "sequential": 3, "citation": 1, "cross_reference": 1}
    assert g.has_edge("42:s1.p1", "42:B1", key="citation")
    assert g.nodes["42:B1"]["kind"] == "citation" and g.nodes["42:B1"]["title"] == "Old study"
    assert g.has_edge("42:s2-1.p1", "42:F1", key="cross_reference")
    assert g.has_edge("42:s2-1.p1", "42:F1", key="sequential")  # the caption follows the paragraph too
    assert g.nodes["42:s2-1"]["kind"] == "subsection"


def test_pmc_fixture_with_doctype_namespaces_lists_and_floats():
    doc = parse_jats("tests/fixtures/pmc_oa/batch1/PMC9900001.nxml")
    assert doc.id == "PMC9900001"
    assert "Teaser" not in doc.text and "cell text" not in doc.text and "Acknowledgement" not in doc.text
    titles = {s.id: s.title for s in doc.sections}
    assert titles["PMC9900001:sec1"] == "1. Introduction" and titles["PMC9900001:fig1"] == "Figure 1"
    for s in doc.sections:  # paragraphs and heading blocks never start or end in whitespace
        assert doc.text[s.start:s.end] == doc.text[s.start:s.end].strip()
    p = next(s for s in doc.sections if s.id == "PMC9900001:sec2b.p1")
    assert doc.text[p.start:p.end] == "The eGFR was measured every six months; x denotes nothing."
    assert [section_role(doc, f"PMC9900001:sec{i}") for i in range(1, 5)] == ["intro", "methods", "results",
                                                                            "discussion"]
    for x in doc.meta["citations"] + doc.meta["xrefs"]:
        assert doc.text[x["start"]:x["end"]] in ("[1]", "[2]", "Figure 1", "Table 1")


def test_bad_jats_input_says_what_is_wrong(tmp_path):
    with pytest.raises(ValueError, match="not well-formed"):
        parse_jats("<article><body><p>unclosed</body></article>")
    with pytest.raises(ValueError, match="expected a JATS <article>"):
        parse_jats("<html><body/></html>")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        parse_jats(tmp_path / "missing.xml")


def test_units_fall_back_to_paragraphs_then_sentences():
    units, level = structure_units(Document("d", "First block here.\n\nSecond block."))
    assert level == "paragraphs" and [(u.start, u.end) for u in units] == [(0, 17), (19, 32)]
    units, level = structure_units(Document("d", "One sentence. Another one."))
    assert level == "sentences" and [(u.start, u.end) for u in units] == [(0, 13), (14, 26)]
    # sections without paragraph children get blank-line blocks as paragraphs
    doc = Document("d", "Intro\n\nText a.\n\nText b.", sections=[Section("d:s1", "Intro", "section", 0, 23)])
    units, level = structure_units(doc)
    assert level == "sections" and [(u.kind, u.start, u.end) for u in units] == [
        ("section", 0, 23), ("paragraph", 0, 5), ("paragraph", 7, 14), ("paragraph", 16, 23)]


def test_section_for_span_takes_the_majority_section():
    doc = parse_jats(TINY)
    assert section_for_span(doc, 41, 59, "section") == "42:s1"
    assert section_for_span(doc, 50, 80, "section") == "42:s2"      # 9 chars in s1, 19 in s2
    assert section_for_span(doc, 78, 108, "subsection") == "42:s2-1"
    assert section_for_span(doc, 78, 91, "paragraph") == "42:s2-1.p1"


def test_empty_xref_keeps_a_visible_span():
    # "T" 0-1, blank line, "Seen before[B7]." from 3: "Seen before" is 11 chars, so "[B7]" is 14-18
    doc = parse_jats('<article><body><sec><title>T</title><p>Seen before<xref ref-type="bibr" rid="B7"/>.</p>'
                     '</sec></body></article>', "x")
    assert doc.text == "T\n\nSeen before[B7]."
    assert doc.meta["citations"] == [{"rid": "B7", "start": 14, "end": 18, "paragraph": "x:sec1.p1"}]
