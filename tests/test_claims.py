import pandas as pd

from rag_lab.compare.claims import claims_table


def test_claims_on_a_hand_made_summary():
    table = pd.DataFrame({"ctx_precision@5": [0.5, 0.4, 0.3, 0.6, 0.2, 0.1],
                          "ctx_recall@5": [0.7, 0.6, 0.5, 0.5, 0.1, 0.3],
                          "doc_recall@5": [1, 1, 1, 1, 1, 1],
                          "section_coverage_source@5": [None, None, None, None, None, None]},
                         index=["sketch", "naive", "kg", "unweaver", "ssg-basic-retrieval", "ssg-query-traversal"])
    out = claims_table({"d": table}).set_index("paper")
    # SKETCH beats naive and kg on both columns (raptor/semantic absent are ignored)
    assert out.loc["SKETCH", "this run"] == "supported"
    # UnWeaver recall 0.5 < naive 0.6 -> not supported
    assert out.loc["UnWeaver", "this run"] == "not supported"
    # the one traversal algorithm beats basic on recall (0.3 > 0.1) -> 1/1 -> supported
    assert out.loc["SSG traversal", "this run"] == "supported"
    assert out.loc["GraLC-RAG", "this run"] == "not tested"


def test_the_ssg_claim_counts_a_duplicate_row_once():
    # basic .2/.1; query beats it on recall (.3); llm-guided is query's twin on every metric, ssg-traversal
    # is below basic on both. Counting the twin: 2/3 win -> supported; counting it once: 1/2 -> not supported.
    table = pd.DataFrame({"ctx_precision@5": [0.2, 0.1, 0.1, 0.15], "ctx_recall@5": [0.1, 0.3, 0.3, 0.05],
                          "doc_recall@5": [1.0, 1.0, 1.0, 1.0]},
                         index=["ssg-basic-retrieval", "ssg-query-traversal", "ssg-llm-guided-traversal",
                                "ssg-ssg-traversal"])
    row = claims_table({"d": table}).set_index("paper").loc["SSG traversal"]
    assert row["this run"] == "not supported"
    assert "1/2 algorithms" in row["numbers"] and "ssg-llm-guided-traversal = ssg-query-traversal" in row["numbers"]
    # one metric apart (doc_recall) -> two algorithms: 2/3 win -> supported
    table.loc["ssg-llm-guided-traversal", "doc_recall@5"] = 0.9
    assert claims_table({"d": table}).set_index("paper").loc["SSG traversal", "this run"] == "supported"
