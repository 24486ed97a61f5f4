"""GraLC-RAG: longest-match concept linking with word boundaries, and the 1-hop concept subgraph."""
import pytest

from rag_lab.methods.gralc.concept_graph import concept_subgraph
from rag_lab.datasets.linking import ConceptLinker, is_case_sensitive
from rag_lab.datasets.vocabulary import Concept, ConceptVocabulary, load_vocabulary


def vocab():
    return ConceptVocabulary.from_concepts([
        Concept("C1", "diabetes mellitus", ("diabetes", "DM"), "Disease or Syndrome", (("associated_with", "C4"),)),
        Concept("C2", "type 2 diabetes mellitus", ("T2DM",), "Disease or Syndrome", (("is_a", "C1"),)),
        Concept("C3", "eGFR", ("estimated glomerular filtration rate",), "Laboratory or Test Result"),
        Concept("C4", "kidney", (), "Body Part, Organ, or Organ Component"),
        Concept("C5", "kidney failure", (), "Disease or Syndrome", (("part_of", "C4"),)),
    ])


def test_longest_match_and_word_boundaries():
    text = "Type 2 diabetes mellitus and prediabetes; DM, dm, eGFR, EGFR and kidney failure in kidneys."
    mentions = ConceptLinker(vocab()).link(text)
    got = [(m.concept_id, text[m.start:m.end]) for m in mentions]
    # "Type 2 diabetes mellitus" wins over "diabetes mellitus"/"diabetes" inside it (longest, leftmost);
    # "prediabetes" and "kidneys" are not words of the vocabulary (boundaries); "dm"/"EGFR" have the
    # wrong case for case-sensitive forms; "kidney failure" beats "kidney".
    assert got == [("C2", "Type 2 diabetes mellitus"), ("C1", "DM"), ("C3", "eGFR"), ("C5", "kidney failure")]
    for m in mentions:
        assert text[m.start:m.end] == m.surface


def test_case_rule():
    assert is_case_sensitive("CKD") and is_case_sensitive("eGFR") and is_case_sensitive("HbA1c")
    assert is_case_sensitive("syndrome X") and is_case_sensitive("NT-proBNP")
    assert not is_case_sensitive("Alzheimer disease") and not is_case_sensitive("loop of Henle")
    assert not is_case_sensitive("diabetes")


def test_offsets_survive_characters_whose_lowercase_is_longer():
    text = "İstanbul diabetes"  # 'İ'.lower() is two characters
    [m] = ConceptLinker(vocab()).link(text)
    assert (m.start, m.end, m.concept_id) == (9, 17, "C1")


def test_concept_subgraph_one_hop_neighbourhood():
    g = concept_subgraph(["C2"], vocab())
    # C2 -> C1 (is_a); C1's own neighbour C4 is two hops away and stays out; C2's semantic type joins.
    assert set(g.nodes) == {"C2", "C1", "type:Disease or Syndrome"}
    assert g.edges["C2", "C1"]["relation"] == "is_a"
    assert g.nodes["C2"]["linked"] and not g.nodes["C1"]["linked"]
    g = concept_subgraph(["C4"], vocab(), with_types=False)   # incoming edges count as neighbours too
    assert set(g.nodes) == {"C4", "C1", "C5"}
    with pytest.raises(KeyError, match="not in the vocabulary"):
        concept_subgraph(["C9"], vocab())


def test_vocabulary_errors_and_shipped_file(tmp_path):
    bad = tmp_path / "c.jsonl"
    bad.write_text('{"id": "A", "name": "a", "relations": [{"type": "is_a", "target": "B"}]}\n')
    with pytest.raises(ValueError, match="unknown concept 'B'"):
        ConceptVocabulary.from_jsonl(bad)
    bad.write_text('{"id": "A"}\n')
    with pytest.raises(ValueError, match=r"c.jsonl:1: field 'name'"):
        ConceptVocabulary.from_jsonl(bad)
    shipped = load_vocabulary()
    assert len(shipped) == 447 and ConceptLinker(shipped).collisions == []
