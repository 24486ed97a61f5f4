"""GraLC-RAG template questions on a hand-made article with a hand-made vocabulary."""
from rag_lab.methods.gralc.gradient import condition_dataset, condition_document
from rag_lab.datasets.jats import parse_jats
from rag_lab.datasets.linking import ConceptLinker
from rag_lab.datasets.section_questions import QuestionGenerator
from rag_lab.datasets.vocabulary import Concept, ConceptVocabulary
from rag_lab.core.types import Dataset

ARTICLE = "tests/fixtures/pmc_oa/batch1/PMC9900001.nxml"


def linker():
    return ConceptLinker(ConceptVocabulary.from_concepts([
        Concept("M", "metformin", (), "Pharmacologic Substance"),
        Concept("G", "eGFR", (), "Laboratory or Test Result"),
        Concept("A", "ambulatory monitoring", (), "Diagnostic Procedure"),
        Concept("K", "chronic kidney disease", (), "Disease or Syndrome"),
    ]))


def test_five_templates_with_slots_from_the_article():
    doc = parse_jats(ARTICLE)
    qs = {q.meta["template"]: q for q in QuestionGenerator(linker(), seed=0).for_document(doc)}
    assert set(qs) == {"method_result", "intro_result", "result_discussion", "method_discussion", "cross_study"}
    s = {role: f"PMC9900001:sec{i}" for i, role in enumerate(["intro", "methods", "results", "discussion"], 1)}
    # metformin is the only method-type concept of the Methods that the Results mention
    assert qs["method_result"].question == "What results were obtained using metformin?"
    assert qs["method_result"].gold_section_ids == [s["methods"], s["results"]]
    # the Introduction states its hypothesis explicitly
    assert qs["intro_result"].question == ("Does the data support the hypothesis that metformin slows the "
                                           "decline of eGFR in adults with diabetes?")
    assert qs["intro_result"].gold_section_ids == [s["intro"], s["results"]]
    # the only Results sentence with a number and a concept the Discussion shares; "(Table 1)" removed
    assert qs["result_discussion"].question == ("How do the authors interpret the finding that with metformin "
                                                "the eGFR fell by 1.2 units per year compared with 2.9 units per "
                                                "year with placebo?")
    # the Limitations subsection names ambulatory monitoring and metformin; both are Methods concepts
    assert qs["method_discussion"].meta["slot"] in {"metformin", "ambulatory monitoring"}
    assert qs["method_discussion"].gold_section_ids == [s["methods"], s["discussion"]]
    # the Discussion cites reference R2
    assert qs["cross_study"].question == ("How do the results compare to the prior study "
                                          "“An imaginary metformin cohort”?")
    for q in qs.values():
        assert q.gold_doc_ids == ["PMC9900001"] and all(c in doc.text for c in q.gold_contexts)


def test_seeded_choice_is_repeatable():
    doc = parse_jats(ARTICLE)
    runs = [[q.question for q in QuestionGenerator(linker(), seed=5).for_document(doc)] for _ in range(2)]
    assert runs[0] == runs[1]


def test_length_conditions_cut_the_article():
    doc = parse_jats(ARTICLE)
    intro = condition_document(doc, "introduction")
    assert intro.text.startswith("1. Introduction") and intro.text.endswith("adults with diabetes.")
    assert [s.id for s in intro.sections] == ["PMC9900001:sec1", "PMC9900001:sec1.p1"]
    for s in intro.sections:
        orig = next(o for o in doc.sections if o.id == s.id)
        assert intro.text[s.start:s.end] == doc.text[orig.start:orig.end]
    partial = condition_document(doc, "partial")
    assert partial.text.startswith("1. Introduction") and partial.text.endswith("Second listed item.")
    assert [c["rid"] for c in partial.meta["citations"]] == ["R1"]
    assert condition_document(doc, "abstract").text.startswith("Abstract")
    assert condition_document(doc, "full") is doc
    qs = QuestionGenerator(linker()).for_document(doc)
    sub = condition_dataset(Dataset("x", [doc], qs), "introduction")
    assert len(sub.questions) == len(qs)
    assert all(c in sub.documents[0].text for q in sub.questions for c in q.gold_contexts)
