"""The sentence test's own rules (tests/sentence_checks.py) on hand-written sentences and tables: each rule
passes a sentence that reads and agrees with its table, and refuses one that does not."""
import nbformat
import pandas as pd
import pytest

from sentence_checks import (alike_problems, count_problems, family_problems, grammar_problems, identical_methods, leader_problems,
                             length_problems, notebook_problems, undecided_problems, verdict_problems, whole_range_problems)

# a ledger of 4 comparisons on one data set: 2 metrics x 2 methods against naive
LEDGER = pd.DataFrame({
    "dataset": ["cuisine"] * 4, "metric": ["ctx_recall", "ctx_recall", "doc_mrr", "doc_mrr"],
    "setting": ["k=5"] * 4, "family": ["f"] * 4, "method": ["sketch", "raptor", "sketch", "raptor"],
    "baseline": ["naive"] * 4,
    "verdict": ["supported", "cannot be decided", "cannot be decided", "inconclusive"], "p": [float("nan")] * 4})


@pytest.mark.parametrize("line", ["sketch is ahead of naive", "sketch cannot be decided against naive",
                                  "the difference is inconclusive", "2 comparisons are supported",
                                  "raptor is inconclusive against naive", "p = 0.1 documents, 11 comparisons"])
def test_grammar_passes_the_decisions_wording(line):
    assert grammar_problems(line) == []


@pytest.mark.parametrize("line", ["sketch is cannot be decided against naive",      # copula before 'cannot be decided'
                                  "these are cannot be decided",
                                  "unweaver is supported against naive",            # relation: 'ahead of'
                                  "raptor contradicted against naive",              # relation: 'behind'
                                  "the the best MRR",                                # a word twice
                                  "Holm within the family (1 comparisons)"])         # one is singular
def test_grammar_refuses_a_verdict_glued_wrongly(line):
    assert len(grammar_problems(line)) == 1


def test_long_lines_and_the_whole_range_are_refused():
    assert length_problems("x" * 400) == [] and len(length_problems("x" * 401)) == 1
    assert whole_range_problems("sketch - naive: 0.000 [-0.2, 0.3]") == []
    assert len(whole_range_problems("sketch - naive: 0.000 (interval: the whole range, -1 to 1)")) == 1


def test_an_undecided_comparison_carries_no_interval_or_mde():
    assert undecided_problems("semantic - naive on ctx_recall@5 cannot be decided: 2 documents, no test at 0.05") == []
    assert undecided_problems("ahead of raptor +0.100 [+0.020, +0.180]; cannot be decided against kg (3 documents)") == []
    assert len(undecided_problems("semantic - naive: -0.708 [-0.957, 0.758] (n = 4): cannot be decided (2 documents)")) == 1
    assert len(undecided_problems("(n = 4, MDE 1.477): cannot be decided (2 documents)")) == 1
    assert len(undecided_problems("sketch cannot be decided against kg -0.020 [-0.110, 0.070] (3 documents)")) == 1
    assert len(undecided_problems("sketch cannot be decided against kg -0.020 (one unit)")) == 1
    assert len(undecided_problems("naive        -0.111 cannot be decided")) == 1            # a verdict row of a table
    assert len(undecided_problems("sketch minus naive: ctx_recall@5 -0.111, cannot be decided; ...")) == 1
    assert undecided_problems("gralc minus naive is +0.057, n = 7: cannot be decided (one unit)") == []  # a difference alone


def test_counts_must_match_a_slice_of_the_ledger():
    # by hand: 2 of the 4 rows cannot be decided; on ctx_recall 1 of 2; sketch's 2 rows: 1 supported
    assert count_problems("2 of 4 comparisons cannot be decided at this n.", LEDGER) == []
    assert count_problems("cuisine: 1 of 2 ctx_recall comparisons cannot be decided", LEDGER) == []
    assert count_problems("1 of 2 comparisons are supported", LEDGER) == []
    assert count_problems("1 of 4 comparisons decide", LEDGER) == []          # supported or contradicted: 1
    assert len(count_problems("3 of 4 comparisons cannot be decided", LEDGER)) == 1     # 2, not 3
    assert len(count_problems("2 of 5 comparisons cannot be decided", LEDGER)) == 1     # no slice of 5 rows
    assert len(count_problems("2 of 2 comparisons are supported", LEDGER)) == 1         # no pair both supported
    assert len(count_problems("1 of 4 comparisons cannot be decided", None)) == 1       # no ledger to agree with


def test_a_family_is_named_with_its_size():
    # by hand: family "f" holds the 4 rows of LEDGER, all without a p (so 0 with a test)
    assert family_problems('p Holm-adjusted within the declared family "f" (4 comparisons)', LEDGER) == []
    assert len(family_problems('p Holm-adjusted within the declared family "f" (3 comparisons)', LEDGER)) == 1
    assert len(family_problems('Holm within the family "f" (0 comparisons)', LEDGER)) == 1


def test_a_named_leader_is_the_tables_best():
    wide = pd.DataFrame({"strategy": ["Naive", "Structure-Aware"], "MRR": [0.612, 0.701]})
    tidy = pd.DataFrame({"method": ["naive", "sketch"], "metric": ["ctx_recall@5"] * 2, "mean": [0.50, 0.40]})
    assert leader_problems("Table 1: the best MRR is Structure-Aware (0.701), then Naive (0.612)", [wide]) == []
    assert len(leader_problems("Table 1: the best MRR is Naive (0.612), then Structure-Aware (0.701)", [wide])) == 1
    assert len(leader_problems("Table 1: the best MRR is Structure-Aware (0.650)", [wide])) == 1    # not its value
    assert leader_problems("highest ctx_recall@5: naive (0.500)", [tidy]) == []
    assert len(leader_problems("highest ctx_recall@5: sketch (0.400)", [tidy])) == 1


def results(scores: dict[str, list[float]]) -> pd.DataFrame:
    rows = [{"question_id": f"q{i}", "metric": "ctx_recall", "k": 5, "method": m, "value": v}
            for m, values in scores.items() for i, v in enumerate(values)]
    return pd.DataFrame(rows)


def test_no_two_alike_is_refused_when_two_methods_score_the_same_on_every_question():
    differ = results({"naive": [1.0, 0.5], "gralc-kg": [1.0, 0.0], "gralc-graph": [0.5, 0.0]})
    same = results({"naive": [1.0, 0.5], "gralc-kg": [1.0, 0.0], "gralc-graph": [1.0, 0.0]})
    assert identical_methods(same) == [("gralc-graph", "gralc-kg")]
    assert alike_problems("cuisine: no two methods retrieve exactly alike.", {"cuisine": differ}) == []
    assert len(alike_problems("cuisine: no two methods retrieve exactly alike.", {"cuisine": same})) == 1
    # said, with why: the line names the pair
    assert alike_problems("cuisine: no two methods retrieve exactly alike. cuisine: gralc-graph scores as gralc-kg: ...",
                          {"cuisine": same}) == []


def test_a_printed_verdict_agrees_with_the_ledger_and_a_claim_with_its_counts():
    ok = "sketch - naive on ctx_recall@5: +0.100 [+0.020, +0.180] (n = 20, p = 0.01): supported"
    assert verdict_problems(ok, LEDGER) == []
    assert len(verdict_problems(ok.replace(": supported", ": inconclusive"), LEDGER)) == 1
    # an indented finding is read too; a test against a margin is checked against its own row, not the plain one
    assert len(verdict_problems("  " + ok.replace(": supported", ": inconclusive"), LEDGER)) == 1
    margin = pd.concat([LEDGER, LEDGER.iloc[[0]].assign(setting="k=5; threshold -0.05", verdict="inconclusive")])
    said = "sketch - naive on ctx_recall@5 (threshold -0.05): +0.100 [+0.020, +0.180] (n = 20, p = 0.2): "
    assert verdict_problems(said + "inconclusive", margin) == [] and len(verdict_problems(said + "supported", margin)) == 1
    # a claim that must hold in every comparison: 2 supported and 2 that cannot be decided leave it open
    assert verdict_problems("UnWeaver | cannot be decided | 0 supported, 0 inconclusive, 0 contradicted, 4 cannot be decided",
                            None) == []
    assert verdict_problems("UnWeaver | cannot be decided | 2 supported, 0 inconclusive, 0 contradicted, "
                            "2 cannot be decided", None) == []          # open: the 2 undecided could go either way
    assert len(verdict_problems("UnWeaver | supported | 2 supported, 0 inconclusive, 0 contradicted, "
                                "2 cannot be decided", None)) == 1      # not every one holds
    assert len(verdict_problems("UnWeaver | cannot be decided | 2 supported, 1 inconclusive, 0 contradicted, "
                                "1 cannot be decided", None)) == 1      # an inconclusive one: inconclusive
    assert len(verdict_problems("SKETCH | supported | 3 supported, 0 inconclusive, 1 contradicted, 0 cannot be decided",
                                None)) == 1


def test_a_notebook_is_read_from_its_streams_and_displays():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("sketch is cannot be decided (a markdown cell: not an output)"),
                nbformat.v4.new_code_cell("x", outputs=[
                    nbformat.v4.new_output("stream", name="stdout", text="fine.\nsketch is cannot be decided against naive\n"),
                    nbformat.v4.new_output("display_data", data={"text/markdown": "2 of 9 comparisons cannot be decided",
                                                                 "text/plain": "<IPython.Markdown>"})])]
    found = notebook_problems(nb, LEDGER)
    assert len(found) == 2 and found[0].startswith("cell 1: grammar") and found[1].startswith("cell 1: count"), found
