import math

import pytest

from rag_lab.evaluation.metrics import Coverage, coverage_metric, reference_chunk_ids, retrieval_metrics, section_coverage
from rag_lab.core.types import Chunk, Document, Question, Section


def chunk(doc, start=-1, end=-1, text="", section=None):
    return Chunk(id=f"{doc}:{start}", doc_id=doc, text=text, start=start, end=end, section_id=section)


def as_dict(rows):
    return {(m, k): v for m, k, v in rows}


def test_document_level_metrics_by_hand():
    # gold docs {A, B}; ranked hits come from docs C, A, A, B.
    q = Question("q", "?", gold_doc_ids=["A", "B"])
    hits = [chunk("C"), chunk("A"), chunk("A"), chunk("B")]
    m = as_dict(retrieval_metrics(hits, q, {}, ks=[3, 4]))
    # k=3: first relevant at rank 2 -> MRR 1/2; only A found -> recall 1/2; 2 of 3 hits relevant.
    assert m[("doc_mrr", 3)] == 0.5
    assert m[("doc_recall", 3)] == 0.5
    assert m[("doc_precision", 3)] == pytest.approx(2 / 3)
    # nDCG@3: only rank 2 brings a new gold doc: 1/log2(3); ideal (2 gold) = 1 + 1/log2(3).
    assert m[("doc_ndcg", 3)] == pytest.approx((1 / math.log2(3)) / (1 + 1 / math.log2(3)))
    # k=4: B appears at rank 4 -> recall 1, precision 3/4, DCG adds 1/log2(5).
    assert m[("doc_recall", 4)] == 1.0
    assert m[("doc_precision", 4)] == 0.75
    assert m[("doc_ndcg", 4)] == pytest.approx((1 / math.log2(3) + 1 / math.log2(5)) / (1 + 1 / math.log2(3)))


def test_context_level_overlap_rule_by_hand():
    text = "Alpha one. Beta two is here. Gamma three follows. Delta four ends."
    doc = Document("d", text)
    beta = "Beta two is here."          # chars 11..28
    delta = "Delta four ends."          # chars 50..66
    q = Question("q", "?", gold_contexts=[beta, delta])
    b0 = text.index(beta)
    hits = [
        chunk("d", 0, 10, text[0:10]),            # "Alpha one." no overlap
        chunk("d", b0 + 5, b0 + 9, text[b0 + 5:b0 + 9]),  # "two " inside beta: overlap 4 of shorter 4 -> match
        chunk("d", b0 - 5, b0 + 3, text[b0 - 5:b0 + 3]),  # 3 chars of beta, shorter is 8 -> 3/8 < 0.5 -> no
        chunk("other", 0, 5, "x"),                # other document
        chunk("d", text.index(delta), len(text), delta),  # exactly delta
    ]
    m = as_dict(retrieval_metrics(hits, q, {"d": doc}, ks=[2, 5]))
    assert m[("ctx_mrr", 2)] == 0.5 and m[("ctx_recall", 2)] == 0.5 and m[("ctx_precision", 2)] == 0.5
    assert m[("ctx_recall", 5)] == 1.0 and m[("ctx_precision", 5)] == pytest.approx(2 / 5)
    ideal = 1 + 1 / math.log2(3)
    assert m[("ctx_ndcg", 5)] == pytest.approx((1 / math.log2(3) + 1 / math.log2(6)) / ideal)


def test_summary_hits_match_contexts_by_text():
    q = Question("q", "?", gold_contexts=["saffron gives colour"])
    summary = Chunk("s", "", "In short, saffron gives colour to risotto.", -1, -1)
    m = as_dict(retrieval_metrics([summary], q, {"d": Document("d", "x saffron gives colour y")}, ks=[1]))
    assert m[("ctx_recall", 1)] == 1.0


def test_question_without_gold_gives_no_rows():
    assert retrieval_metrics([chunk("A")], Question("q", "?"), {}, ks=[1]) == []


def coverage_docs():
    # A: three top-level sections, the second with a subsection; B: two sections
    a = Document("A", "x" * 30, sections=[Section("A:s1", "Intro", "section", 0, 10),
                                          Section("A:s2", "Methods", "section", 10, 20),
                                          Section("A:s2-1", "Design", "subsection", 10, 15),
                                          Section("A:s3", "Results", "section", 20, 30)])
    b = Document("B", "y" * 20, sections=[Section("B:s1", "Intro", "section", 0, 10),
                                          Section("B:s2", "Methods", "section", 10, 20)])
    return {"A": a, "B": b}


# the chunkers' labels (section=...) are deliberately wrong: coverage must not read them
RANKING = [chunk("A", 0, 5, section="A:s3"), chunk("A", 2, 8), chunk("B", 0, 10), chunk("A", 8, 16),
           chunk("A", 21, 29), Chunk("summary", "A", "a summary", -1, -1)]


def test_section_coverage_of_the_source_article_by_hand():
    d = coverage_docs()
    # top 3: A(0,5) and A(2,8) lie in A:s1; B(0,10) is not the source -> 1 section of A's 3
    cov = section_coverage(RANKING, 3, d, "section", ["A"])
    assert (cov.count, cov.total) == (1, 3) and cov.share == pytest.approx(1 / 3)
    # top 5 adds A(8,16): 2 chars in A:s1, 6 in A:s2 -> A:s2; and A(21,29) -> A:s3: all 3 of A's sections
    assert section_coverage(RANKING, 5, d, "section", ["A"]) == Coverage(3, 3)
    # a summary (no span) belongs to no section; it adds nothing at k=6
    assert section_coverage(RANKING, 6, d, "section", ["A"]) == Coverage(3, 3)
    # subsection level: A(8,16) overlaps A:s1 by 2, A:s2 by 6, A:s2-1 by 5 -> A:s2 (most characters);
    # A has 4 units at that level (3 sections + 1 subsection)
    assert section_coverage(RANKING, 4, d, "subsection", ["A"]) == Coverage(2, 4)
    # a source the top k never reaches covers nothing
    assert section_coverage(RANKING, 2, d, "section", ["B"]) == Coverage(0, 2)


def test_section_coverage_of_any_retrieved_document_by_hand():
    d = coverage_docs()
    # no source: distinct (doc, section) among the top 3 = (A, A:s1), (B, B:s1); over A's 3 + B's 2 sections
    cov = section_coverage(RANKING, 3, d, "section")
    assert (cov.count, cov.total) == (2, 5) and cov.share == pytest.approx(2 / 5)


def test_coverage_names_say_level_and_reading():
    assert coverage_metric("section") == "section_coverage_source"
    assert coverage_metric("paragraph", source=False) == "paragraph_coverage_retrieved"
    with pytest.raises(ValueError, match="level must be one of"):
        section_coverage(RANKING, 3, coverage_docs(), "chapter", ["A"])


def test_reference_chunk_ids_use_the_context_match_rule():
    text = "Alpha one. Beta two is here. Gamma three follows."
    doc = Document("d", text)
    beta = "Beta two is here."                       # chars 11..28
    q = Question("q", "?", gold_doc_ids=["d"], gold_contexts=[beta])
    chunks = [chunk("d", 0, 12, text[0:12]),         # overlap 1 char of a shorter 12 -> no
              chunk("d", 9, 30, text[9:30]),         # contains all 17 chars of beta -> yes
              chunk("d", 20, 28, text[20:28]),       # 8 chars, all inside beta -> yes
              chunk("e", 11, 28, "elsewhere"),       # another document -> no
              Chunk("s", "d", "summary: Beta two is here.", -1, -1)]   # no span: by text -> yes
    assert reference_chunk_ids(chunks, q, {"d": doc}) == ["d:9", "d:20", "s"]
    assert reference_chunk_ids(chunks, Question("q2", "?"), {"d": doc}) == []


def test_ndcg_reaches_one_when_one_chunk_holds_two_gold_contexts():
    # three documents; the one relevant chunk (doc a, chars 0..40) holds both gold sentences.
    # gain per newly covered gold item: 2 / log2(2) = 2; the ideal from the method's chunks is the
    # same chunk first (2), so nDCG = 1 (before: gain 1, ideal 1 + 1/log2(3) -> 0.613)
    text = "Saffron colours risotto. Pesto is Genoese. Other words follow."
    docs = {"a": Document("a", text), "b": Document("b", "bbbb bbbb"), "c": Document("c", "cccc cccc")}
    q = Question("q", "?", gold_doc_ids=["a"], gold_contexts=["Saffron colours risotto.", "Pesto is Genoese."])
    relevant = chunk("a", 0, 42, text[:42])
    ranking = [relevant, chunk("b", 0, 9, "bbbb bbbb"), chunk("c", 0, 9, "cccc cccc")]
    m = as_dict(retrieval_metrics(ranking, q, docs, ks=[5], pool=ranking))
    assert m[("ctx_ndcg", 5)] == pytest.approx(1.0) and m[("ctx_recall", 5)] == 1.0
    # the same chunk at rank 2: DCG 2/log2(3), ideal still 2
    m = as_dict(retrieval_metrics(ranking[1:2] + [relevant], q, docs, ks=[5], pool=ranking))
    assert m[("ctx_ndcg", 5)] == pytest.approx((2 / math.log2(3)) / 2)


def test_ndcg_ideal_comes_from_the_methods_chunks():
    # gold g0 = "AAAA", g1 = "BBBB"; the method has a chunk holding both, but the ranking gives two
    # separate chunks: DCG 1 + 1/log2(3), ideal 2 (the joint chunk first) -> (1 + 0.631) / 2
    text = "AAAA BBBB CCCC"
    docs = {"d": Document("d", text)}
    q = Question("q", "?", gold_contexts=["AAAA", "BBBB"])
    a, b, both = chunk("d", 0, 4, "AAAA"), chunk("d", 5, 9, "BBBB"), chunk("d", 0, 9, "AAAA BBBB")
    m = as_dict(retrieval_metrics([a, b], q, docs, ks=[2], pool=[a, b, both]))
    assert m[("ctx_ndcg", 2)] == pytest.approx((1 + 1 / math.log2(3)) / 2)
    # without the joint chunk in the pool the two separate chunks are the ideal
    m = as_dict(retrieval_metrics([a, b], q, docs, ks=[2], pool=[a, b]))
    assert m[("ctx_ndcg", 2)] == pytest.approx(1.0)
    # an empty ranking scores 0 on every metric, never NaN
    m = as_dict(retrieval_metrics([], q, docs, ks=[2], pool=[a, b]))
    assert all(v == 0.0 for v in m.values())


def test_repeated_gold_contexts_count_once():
    text = "Alpha one. Beta two."
    docs = {"d": Document("d", text)}
    q = Question("q", "?", gold_contexts=["Alpha one.", "Alpha one."])
    m = as_dict(retrieval_metrics([chunk("d", 0, 10, "Alpha one.")], q, docs, ks=[3]))
    # one gold item: recall 1 and nDCG 1 (before: recall 1/2, ideal 1 + 1/log2(3))
    assert m[("ctx_recall", 3)] == 1.0 and m[("ctx_ndcg", 3)] == pytest.approx(1.0)


def test_ideal_dcg_by_hand():
    from rag_lab.evaluation.metrics import ideal_dcg
    # no chunk known: one gold item per rank
    assert ideal_dcg([], 3, 2) == pytest.approx(1 + 1 / math.log2(3))
    # overlapping sets {0,1}, {1,2}, {2}: best is {0,1} then {1,2} (gains 2, then 1/log2(3))
    assert ideal_dcg([{0, 1}, {1, 2}, {2}], 3, 5) == pytest.approx(2 + 1 / math.log2(3))
    # k = 1 keeps only the best first rank
    assert ideal_dcg([{0, 1}, {2}], 3, 1) == pytest.approx(2.0)


def test_coverage_is_nan_when_the_source_has_no_section_at_the_level():
    d = coverage_docs()
    d["P"] = Document("P", "plain text without sections")
    cov = section_coverage([chunk("P", 0, 5)], 1, d, "section", ["P"])
    assert cov.total == 0 and math.isnan(cov.value) and math.isnan(cov.share)
    assert section_coverage(RANKING, 3, d, "section", ["A"]).value == 1.0
