"""The SKETCH findings paragraph and the graph-half sentences, on hand-made tables whose sentences
are known in advance."""
import pytest
import pandas as pd

from rag_lab.evaluation.statistics import INCONCLUSIVE, SUPPORTED, UNDECIDABLE
from rag_lab.evaluation.uncertainty import TEST_COLUMNS, decided_pairs
from rag_lab.methods.sketch.paper import caveats, named_beside_paper
from rag_lab.methods.sketch.graph_reading import (answer_sentence, answer_sources, example_relation, graph_sentence,
                                                  head_word, triple_profile)
from rag_lab.methods.sketch.graph_stores import Edge, Node


def tidy(scores: dict[str, dict[str, list[float]]]) -> pd.DataFrame:
    """metric@k -> method -> per-question scores, as evaluate's tidy rows."""
    rows = []
    for column, by_method in scores.items():
        metric, k = column.split("@")
        for method, values in by_method.items():
            rows += [{"method": method, "question_id": f"q{i}", "metric": metric, "k": int(k), "value": v}
                     for i, v in enumerate(values)]
    return pd.DataFrame(rows)


def sketch_minus_baselines(results: pd.DataFrame, units=None) -> pd.DataFrame:
    """Notebook 01's call: sketch minus every other method on ctx_recall@5, one family named by its metric."""
    baselines = [("sketch", m) for m in dict.fromkeys(results["method"]) if m != "sketch"]
    return decided_pairs(results, ["ctx_recall@5"], baselines, "sketch minus each baseline on ctx_recall@5", units=units)


def test_sketch_minus_each_baseline_pairs_by_question_and_reads_the_interval():
    # eight questions, sketch ahead of naive on every one, by 1 (5) or 0.5 (3): P(D_low <= 0) = P(E0 >= sum d_i E_i)
    # = 2^-5 * 1.5^-3, p = 2 * 0.00926 = 0.0185 -> supported; semantic scores as sketch does -> p = 1
    sketch = [1, 1, 0.5, 1, 1, 1, 0.5, 0.5]
    results = tidy({"ctx_recall@5": {"sketch": sketch, "naive": [0, 0, 0, 0, 0, 0, 0, 0],
                                     "semantic": list(sketch)}})
    table = sketch_minus_baselines(results)
    got = table.set_index("baseline")
    assert got.loc["naive", ["diff", "n"]].tolist() == [0.8125, 8] and got.loc["naive", "p"] == pytest.approx(2 / 1.5 ** 3 / 2 ** 5, abs=0.004)
    assert got.loc["naive", "ci_low"] > 0 and got.loc["naive", "verdict"] == SUPPORTED
    assert got.loc["semantic", "diff"] == 0.0 and got.loc["semantic", "verdict"] == INCONCLUSIVE
    # one declared family of the two comparisons: Holm doubles the smaller p (2 x 2/256 = 0.0156, still decided)
    assert set(table["family"]) == {"sketch minus each baseline on ctx_recall@5"} and set(table["family_size"]) == {2}
    assert got.loc["naive", "p_holm"] == 2 * got.loc["naive", "p"] and set(TEST_COLUMNS) <= set(table.columns)
    # four questions: no p below 2/2^4 = 0.125 is possible -> the fourth state
    four = sketch_minus_baselines(tidy({"ctx_recall@5": {"sketch": sketch[:4], "naive": [0] * 4}}))
    assert four["verdict"].tolist() == [UNDECIDABLE]


HAND = pd.DataFrame([
    # baseline, column, diff, ci_low, ci_high, n, verdict
    ("naive", "ctx_recall@5", 0.1, -0.05, 0.25, 20, "inconclusive"),
    ("semantic", "ctx_recall@5", 0.2, 0.05, 0.35, 20, "supported"),
    ("naive", "context_precision", 0.3, 0.1, 0.5, 20, "supported"),
    ("semantic", "context_precision", 0.4, 0.2, 0.6, 20, "supported"),
], columns=["baseline", "column", "diff", "ci_low", "ci_high", "n", "verdict"]).assign(family="F", family_size=4)


def test_caveats_name_the_string_match_columns_the_setting_and_the_span_count():
    sizes = {"sketch": 80.0, "naive": 125.0, "semantic": 531.0}
    text = "\n".join(caveats(HAND, span="ctx_recall@5", reasoner="offline", judged=False, chunk_tokens=sizes,
                             string_columns=("context_precision", "context_recall"), extra=["semantic: 10 of 12 cut."]))
    assert max(map(len, text.split("\n"))) <= 400
    assert "penalises long chunks (mean chunk size here, word pieces: sketch 80, naive 125, semantic 531)" in text
    # the lead over semantic (long chunks) on the string metric is matched on the span metric: not flagged;
    # the lead over naive is not matched, but naive's chunks are not long: not flagged either
    assert "measures chunk length" not in text
    assert "semantic: 10 of 12 cut." in text
    assert "offline reasoner (classical NLP, no LLM)" in text and "faithfulness and answer relevancy" in text
    assert text.endswith("In sum, on ctx_recall@5 the 20 questions tell sketch apart from 1 of 2 baselines (1 ahead, "
                         "0 behind).")


def test_caveats_flag_a_string_metric_lead_over_long_chunks_the_span_metric_does_not_share():
    table = HAND.copy()
    table.loc[1, ["diff", "ci_low", "ci_high", "verdict"]] = [-0.1, -0.3, 0.1, "inconclusive"]
    text = "\n".join(caveats(table, span="ctx_recall@5", reasoner="openai:gpt-4o-mini", judged=True,
                             chunk_tokens={"sketch": 80.0, "naive": 125.0, "semantic": 531.0}))
    assert ("so the lead on context precision over semantic, whose chunks are long, is not a lead on ctx_recall@5 "
            "(there: inconclusive) — it measures chunk length more than retrieval.") in text
    assert "openai:gpt-4o-mini extracted the triples" in text
    assert "were not measured" not in text
    # chunks are long at a mean size of at least twice SKETCH's (LONG_FACTOR): 160 = 2 x 80 is, 159 is not
    for size, flagged in ((160.0, True), (159.0, False)):
        said = "\n".join(caveats(table, span="ctx_recall@5", reasoner="offline", judged=True,
                                 chunk_tokens={"sketch": 80.0, "naive": 125.0, "semantic": size}))
        assert ("over semantic, whose chunks are long" in said) == flagged
    assert caveats(HAND.iloc[:0], span="ctx_recall@5", reasoner="offline", judged=False, chunk_tokens={}) == []


NODES = [Node("merchant republics", "merchant republics", "CONCEPT"), Node("fall", "fall", "CONCEPT"),
         Node("venice", "Venice", "GPE"), Node("genoa", "Genoa", "GPE"), Node("spice trade", "spice trade", "CONCEPT")]
EDGES = [Edge("merchant republics", "grow_after", "fall", "c1"), Edge("venice", "rival", "genoa", "c1"),
         Edge("venice", "control", "spice trade", "c2"), Edge("genoa", "was_rival_of", "venice", "c2")]


def test_triple_profile_on_a_hand_made_graph():
    verbs = {"grow": True, "rival": True, "control": True, "was": False}
    profile = triple_profile(NODES, EDGES, verb_lemma=lambda words: [verbs[w] for w in words])
    assert head_word("not_grow_after") == "grow" and head_word("was_rival_of") == "was"
    assert profile["relations"] == 4 and profile["nodes"] == 5 and profile["distinct relation labels"] == 4
    assert profile["verb lemma"] == 3 / 4                 # "was_rival_of": "was" is no lemma, "rival" no preposition
    assert profile["two named entities"] == 2 / 4          # venice-genoa twice
    assert profile["a bare common noun at an end"] == 1 / 4    # "fall"
    assert profile["nodes in one relation only"] == 3 / 5  # merchant republics, fall, spice trade
    assert example_relation(EDGES, NODES) == "merchant republics -[grow_after]-> fall"
    assert example_relation(EDGES[1:], NODES) == ""                      # no bare common noun at an end: no example
    text = graph_sentence(profile, "offline", EDGES, NODES)
    assert text.startswith("What the graph half is here: 75% of its 4 relations are a verb lemma (with its "
                           "preposition), 50% link two named entities, 25% have a bare common noun at an end (e.g. "
                           "`merchant republics -[grow_after]-> fall`), and 60% of the 5 nodes are in one relation only.")
    assert "cannot resolve pronouns" in text and "An LLM extractor" in text
    assert "(e.g." not in graph_sentence(profile, "offline", EDGES[1:], NODES)
    assert graph_sentence(pd.Series({"relations": 0}), "offline").endswith("nothing to add.")


def test_answer_sources_count_the_facts_pasted_back():
    facts = ["a -[r]-> b", "c -[s]-> d", "a -[r]-> b"]
    answer = "Facts: a -[r]-> b Something else."          # 10 of 33 characters are the one fact
    sources = answer_sources(answer, facts)
    assert sources == {"facts handed over": 2, "facts in answer": 1, "fact chars": 10, "answer chars": 33}
    text = answer_sentence(answer, facts, "offline")
    assert text.startswith("1 of the 2 graph facts handed over appear word for word in this answer (30% of its "
                           "characters): the offline reasoner answers extractively")
    assert text.endswith("an LLM would write one from the same context.")
    assert answer_sentence(answer, facts, "m") == ("1 of the 2 graph facts handed over appear word for word in this "
                                                   "answer (30% of its characters).")     # an LLM: no extractive caveat
    assert answer_sentence("", facts, "offline").endswith("close enough to extract.")


def test_sketch_minus_each_baseline_clusters_by_document_when_given_units():
    # the same eight questions as above, but four per document: whole-document sign flips over 2 units
    # give no p below 2/2^2 = 0.5, so the difference (still 0.8125 over n = 8) cannot be decided
    sketch = [1, 1, 0.5, 1, 1, 1, 0.5, 0.5]
    results = tidy({"ctx_recall@5": {"sketch": sketch, "naive": [0] * 8}})
    units = {f"q{i}": "doc_a" if i < 4 else "doc_b" for i in range(8)}
    row = sketch_minus_baselines(results, units=units).iloc[0]
    assert row["diff"] == 0.8125 and row["n"] == 8 and row["verdict"] == UNDECIDABLE


def test_verdict_table_and_the_findings_of_the_span_and_string_match_columns():
    # the columns notebook 01 picks (span metrics under notebook 10's names, then string-match) are checked
    # in tests/test_notebook_01.py (check_lead)
    from rag_lab.evaluation.findings import finding_sentences
    from rag_lab.methods.sketch.paper import verdict_table

    pairs = HAND.assign(column=HAND["column"].replace({"context_precision": "string-match context precision"}))
    shown = verdict_table(pairs)
    assert list(shown.columns) == ["ctx_recall@5 (n = 20)", "string-match context precision (n = 20)"]
    assert shown.loc["naive", "ctx_recall@5 (n = 20)"] == "0.100 [-0.050, 0.250] inconclusive"
    assert shown.loc["semantic", "string-match context precision (n = 20)"] == "0.400 [0.200, 0.600] ahead"
    assert shown.index.name == "sketch minus (intervals unadjusted; verdicts Holm within the family)"
    # said in the table's order, each with its interval and verdict; the paper's order beside a paper column
    rows = HAND.assign(method="sketch", metric=["ctx_recall@5"] * 2 + ["nonllm_context_precision@5"] * 2, p=[0.2, 0.01, 0.01, 0.01],
                       p_holm=[0.2, 0.03, 0.03, 0.03], units=20, design_effect=float("nan"), mde=float("nan"))
    paper = pd.DataFrame({"context_precision": [0.99, 0.81, 0.92]}, index=["sketch", "naive", "semantic"])
    said = finding_sentences(rows, name=named_beside_paper(paper))
    assert said[:4] == [
        f"sketch - naive on ctx_recall@5: 0.100 [-0.050, 0.250] (n = 20, p = 0.20): {INCONCLUSIVE}",
        f"sketch - semantic on ctx_recall@5: 0.200 [0.050, 0.350] (n = 20, p = 0.010, p Holm = 0.030): {SUPPORTED}",
        "sketch - naive on nonllm_context_precision@5 (paper-reported 0.99 vs 0.81, ahead): 0.300 [0.100, 0.500] "
        f"(n = 20, p = 0.010, p Holm = 0.030): {SUPPORTED}",
        "sketch - semantic on nonllm_context_precision@5 (paper-reported 0.99 vs 0.92, ahead): 0.400 [0.200, 0.600] "
        f"(n = 20, p = 0.010, p Holm = 0.030): {SUPPORTED}"]
    assert said[4].startswith('p Holm-adjusted within the declared family "F" (4 comparisons)')
    assert finding_sentences(rows, name=named_beside_paper(None))[2].startswith("sketch - naive on nonllm_context_precision@5: 0.300")


def test_in_sum_counts_only_decided_differences():
    from rag_lab.methods.sketch.paper import verdict_table

    # both span rows "cannot be decided at this n": the questions tell sketch apart from none of the two
    table = HAND.copy()
    table.loc[[0, 1], "verdict"] = UNDECIDABLE
    table["reason"] = ["3 documents", "3 documents", "", ""]
    text = "\n".join(caveats(table, span="ctx_recall@5", reasoner="offline", judged=False,
                             chunk_tokens={"sketch": 80.0, "naive": 125.0}))
    assert "0.100 [" not in text and f"is {UNDECIDABLE}" not in text   # never "is cannot be"
    undecided = table.assign(column="ctx_recall@5")
    shown = verdict_table(undecided)
    assert list(shown.index) == ["naive", "semantic"] and "cannot" not in shown.to_string()   # no verdict row for them
    assert text.endswith("tell sketch apart from 0 of 2 baselines (0 ahead, 0 behind).")
    # a design that cannot decide: the baselines by name, the reason once, no interval
    from rag_lab.evaluation.findings import undecided_line
    assert undecided_line(table.assign(method="sketch", metric="ctx_recall@5")) == (
        f"2 comparisons {UNDECIDABLE} (3 documents): sketch - naive, sketch - semantic; ctx_recall@5; no interval, MDE "
        "or verdict is shown for them.")
