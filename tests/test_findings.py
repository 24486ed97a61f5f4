"""The one finding-sentence builder (evaluation/findings.py) on hand-made decided rows: a supported, a
contradicted, an inconclusive and a cannot-be-decided row, each said the way worked out here by hand; a
mixed list says the undecided rows once, without numbers; one and several are counted right. An order
table said as a ranking: its leader (the runner-up's difference read from its verdict, turned round when the
table has it first; the paper's best beside it) and its order against the paper's; and how many of the
paper's numbers our intervals hold, each worked by hand."""
import math

import pandas as pd
import pytest

from rag_lab.core.plots import IN_CI
from rag_lab.evaluation.findings import finding_sentences, inside_said, metric_of, name_of, undecided_line
from rag_lab.evaluation.statistics import CONTRADICTED, INCONCLUSIVE, SUPPORTED, UNDECIDABLE, format_p

FAMILY = "b minus a (hand-made)"
FEW = "3 documents: no test at 0.05 is possible"


def row(method="b", metric="ctx_recall@5", diff=0.2, lo=0.1, hi=0.3, p=0.01, p_holm=0.02, verdict=SUPPORTED,
        reason="", n=20, units=20, deff=math.nan, mde=0.15, size=4):
    return {"method": method, "baseline": "a", "metric": metric, "diff": diff, "ci_low": lo, "ci_high": hi, "n": n,
            "units": units, "design_effect": deff, "p": p, "p_holm": p_holm, "mde": mde, "family": FAMILY,
            "family_size": size, "verdict": verdict, "reason": reason}


def test_a_supported_row_says_its_estimate_interval_n_p_mde_holm_and_verdict():
    said = finding_sentences(pd.DataFrame([row()]), family=False)
    assert said == ["b - a on ctx_recall@5: 0.200 [0.100, 0.300] (n = 20, p = 0.010, MDE 0.150, p Holm = 0.020): "
                    f"{SUPPORTED}"]


def test_a_contradicted_row_clustered_by_document_names_the_documents_and_design_effect():
    r = row(diff=-0.242, lo=-0.442, hi=-0.042, p=0.02, p_holm=0.04, verdict=CONTRADICTED, units=3, deff=1.4)
    assert finding_sentences(pd.DataFrame([r]), family=False) == [
        "b - a on ctx_recall@5: -0.242 [-0.442, -0.042] (n = 20, 3 documents, design effect 1.40, p = 0.020, "
        f"MDE 0.150, p Holm = 0.040): {CONTRADICTED}"]


def test_an_inconclusive_row_with_p_holm_equal_to_p_says_p_once():
    r = row(diff=0.05, lo=-0.1, hi=0.2, p=0.4, p_holm=0.4, verdict=INCONCLUSIVE, mde=math.nan)
    assert finding_sentences(pd.DataFrame([r]), family=False) == [
        f"b - a on ctx_recall@5: 0.050 [-0.100, 0.200] (n = 20, p = 0.40): {INCONCLUSIVE}"]


def test_a_row_that_cannot_be_decided_gives_its_reason_and_no_numbers():
    r = row(diff=0.3, lo=-0.5, hi=0.9, p=1.0, p_holm=1.0, verdict=UNDECIDABLE, reason=FEW, n=4, units=3)
    said = finding_sentences(pd.DataFrame([r]))
    assert said == [f"1 comparison {UNDECIDABLE} ({FEW}): b - a; ctx_recall@5; no interval, MDE or verdict is shown "
                    "for it."]                 # singular; no family sentence: nothing was tested
    assert "0.3" not in said[0] and "[" not in said[0]


def test_a_mixed_list_says_each_tested_row_then_the_undecided_once_then_the_family():
    rows = pd.DataFrame([row(),
                         row(method="c", metric="doc_mrr@5", verdict=UNDECIDABLE, reason=FEW, lo=-0.6, hi=0.8),
                         row(method="b", metric="token_f1@5", verdict=UNDECIDABLE, reason=FEW, lo=-0.6, hi=0.8),
                         row(metric="doc_mrr@5", diff=0.0, lo=-0.1, hi=0.1, p=1.0, p_holm=1.0, verdict=INCONCLUSIVE)])
    said = finding_sentences(rows)
    assert len(said) == 4
    assert said[0].startswith("b - a on ctx_recall@5: 0.200 [") and said[0].endswith(SUPPORTED)
    assert said[1].startswith("b - a on doc_mrr@5: 0.000 [-0.100, 0.100]") and said[1].endswith(INCONCLUSIVE)
    assert said[2] == (f"2 comparisons {UNDECIDABLE} ({FEW}): b - a, c - a; doc_mrr@5, token_f1@5; no interval, MDE or "
                       "verdict is shown for them.")               # plural, said once, no numbers
    assert said[3].startswith(f'p Holm-adjusted within the declared family "{FAMILY}" (4 comparisons); each interval')
    assert sum(UNDECIDABLE in s for s in said) == 1
    assert '"b minus a (hand-made)" (1 comparison);' in finding_sentences(rows.iloc[[0]].assign(family_size=1))[1]   # singular
    # what is counted can be named
    assert finding_sentences(rows.iloc[[1]], what="pair")[0].startswith(f"1 pair {UNDECIDABLE} (")
    assert undecided_line(rows.iloc[[0, 3]]) == "" and finding_sentences(rows.iloc[:0]) == []


def test_a_difference_from_a_constant_bound_says_which_side_of_the_bound():
    # the lowest MRR minus the paper's 0.95 ceiling (uncertainty.decided_pairs against a constant, as notebook 04
    # decides it): above, below, inconclusive with its numbers; cannot be decided with its reason and no numbers
    ceiling = {**row(method="Semantic", metric="doc_mrr@10", diff=0.02, lo=0.01, hi=0.03, p=0.0386, p_holm=0.0386,
                     n=200, units=200, mde=math.nan, size=1), "baseline": "the 0.95 ceiling"}
    above = finding_sentences(pd.DataFrame([ceiling]), family=False)
    assert above == ["Semantic - the 0.95 ceiling on doc_mrr@10: 0.020 [0.010, 0.030] (n = 200, p = 0.039): supported"]
    below = {**ceiling, "diff": -0.15, "ci_low": -0.25, "ci_high": -0.05, "p": 0.004, "p_holm": 0.004,
             "verdict": CONTRADICTED}
    assert finding_sentences(pd.DataFrame([below]), family=False) == [
        "Semantic - the 0.95 ceiling on doc_mrr@10: -0.150 [-0.250, -0.050] (n = 200, p = 0.0040): contradicted"]
    open_ = {**ceiling, "p": 0.3, "p_holm": 0.3, "verdict": INCONCLUSIVE}
    assert finding_sentences(pd.DataFrame([open_]), family=False)[0].endswith(f"(n = 200, p = 0.30): {INCONCLUSIVE}")
    few = {**ceiling, "p": 1.0, "p_holm": 1.0, "verdict": UNDECIDABLE, "reason": FEW.replace("3", "2")}
    assert finding_sentences(pd.DataFrame([few])) == [
        f"1 comparison {UNDECIDABLE} (2 documents: no test at 0.05 is possible): Semantic - the 0.95 ceiling; "
        "doc_mrr@10; no interval, MDE or verdict is shown for it."]     # never "is cannot be decided"

def test_ledger_rows_name_their_metric_with_its_setting_and_the_other_side():
    ledger = {"method": "ssg", "below": "basic", "metric": "ctx_recall", "setting": "k=5"}
    assert name_of(ledger) == "ssg - basic on ctx_recall@5"
    assert metric_of({"metric": "ctx_recall", "setting": "136 tokens"}) == "ctx_recall@136tok"
    assert metric_of({"metric": "ctx_recall", "setting": "k=5; threshold -0.05"}) == "ctx_recall@5 (threshold -0.05)"
    assert metric_of({"metric": "cs_recall", "setting": "long"}) == "cs_recall (long)"
    assert metric_of({"metric": "doc_mrr@5", "setting": ""}) == "doc_mrr@5"
    assert metric_of({"metric": "ctx_recall@5", "threshold": -0.05}) == "ctx_recall@5 (threshold -0.05)"   # as the ledger says it
    assert metric_of({"metric": "ctx_recall@5", "threshold": 0.0}) == "ctx_recall@5"
    said = finding_sentences(pd.DataFrame([{**row(), **ledger}]), name=lambda r: metric_of(r), family=False)
    assert said[0].startswith("ctx_recall@5: 0.200 [0.100, 0.300] (n = 20")


def test_bad_input_is_named():
    with pytest.raises(TypeError, match="DataFrame"):
        finding_sentences([row()])
    with pytest.raises(ValueError, match=r"lack \['p_holm'\]"):
        finding_sentences(pd.DataFrame([row()]).drop(columns="p_holm"))


def scored(recall: dict, f1: dict, n: int) -> pd.DataFrame:
    """Per-question rows (evaluate's tidy form) of two metrics at k = 5 for the methods given."""
    return pd.DataFrame([{"method": m, "question_id": f"q{i}", "metric": metric, "k": 5, "value": v}
                         for metric, by in (("ctx_recall", recall), ("token_f1", f1)) for m, values in by.items()
                         for i, v in enumerate(values[:n])])


def decided(table: pd.DataFrame, units=None) -> pd.DataFrame:
    from rag_lab.evaluation.uncertainty import paired_differences

    return paired_differences(table, "naive", ["semantic"], ["ctx_recall@5", "token_f1@5"], units=units,
                              family="semantic minus naive on ctx_recall@5, token_f1@5 (notebook 00)")


def test_four_questions_cannot_decide_and_are_said_once_without_numbers():
    # notebook 00's family on four questions: the exact sign-flip floor 2/2^4 = 0.125 >= 0.05 decides nothing
    table = scored({"naive": [1, 1, 0.5, 0.5], "semantic": [0.5, 0.5, 0, 0]}, {"naive": [0.4] * 4, "semantic": [0.3] * 4}, 4)
    assert finding_sentences(decided(table)) == [
        f"2 comparisons {UNDECIDABLE} (4 questions: no test at 0.05 is possible): semantic - naive; ctx_recall@5, "
        "token_f1@5; no interval, MDE or verdict is shown for them."]
    # clustered by document (two documents of two questions): the reason names the documents
    units = {"q0": "a", "q1": "a", "q2": "b", "q3": "b"}
    assert "(2 documents: no test at 0.05 is possible)" in finding_sentences(decided(table, units))[0]


def test_twenty_questions_decide_and_each_comparison_carries_its_numbers():
    # semantic loses every question's recall (1 -> 0): p = 2/2^20, Holm x2 still far below 0.05; token F1 +0.1 on
    # half the questions and -0.1 on the other half: mean 0, inconclusive, said with its numbers
    table = scored({"naive": [1.0] * 20, "semantic": [0.0] * 20},
                   {"naive": [0.4, 0.6] * 10, "semantic": [0.3, 0.7] * 10}, 20)
    said = finding_sentences(decided(table))
    assert len(said) == 3
    assert said[0].startswith("semantic - naive on ctx_recall@5: -1.000 [") and said[0].endswith(f"): {CONTRADICTED}")
    assert said[1].startswith("semantic - naive on token_f1@5: 0.000 [") and said[1].endswith(f"): {INCONCLUSIVE}")
    assert said[2].startswith('p Holm-adjusted within the declared family "semantic minus naive on ctx_recall@5, '
                              'token_f1@5 (notebook 00)" (2 comparisons)')
    # recall decided, token F1 on one question only (no test): the undecided one said once, in words, after it
    mixed = pd.concat([table[table["metric"] == "ctx_recall"],
                       table[(table["metric"] == "token_f1") & (table["question_id"] == "q0")]], ignore_index=True)
    said = finding_sentences(decided(mixed))
    assert said[0].startswith("semantic - naive on ctx_recall@5: -1.000 [")
    assert said[1].startswith(f"1 comparison {UNDECIDABLE} (") and "semantic - naive; token_f1@5;" in said[1]
    assert not any("token_f1@5:" in s for s in said) and max(map(len, said)) <= 400


# -- across settings: notebook 10's rows at two equal budgets and at k (compare.budget.decision_differences) ----------
SMALL, MID = "smallest equal budget: 6 tokens (x)", "mid-size equal budget: 10 tokens (y)"
AT_K = "at k=5, unequal budgets"


def at(setting, metric, verdict, method="sketch", mde=0.1, n=30, units=6):
    """A decided row of one setting (the numbers the sentences across settings do not read are placeholders)."""
    return {**row(method=method, metric=metric, verdict=verdict, mde=mde, n=n, units=units), "setting": setting}


def test_across_settings_names_the_verdicts_that_move_between_k_and_the_budgets():
    rows = pd.DataFrame([at(AT_K, "ctx_recall@5", CONTRADICTED), at(SMALL, "ctx_recall@6tok", SUPPORTED),
                         at(MID, "ctx_recall@10tok", INCONCLUSIVE),
                         at(AT_K, "doc_recall@5", SUPPORTED), at(SMALL, "doc_recall@6tok", SUPPORTED),
                         at(MID, "doc_recall@10tok", SUPPORTED),
                         at(AT_K, "ctx_recall@5", INCONCLUSIVE, "kg"), at(SMALL, "ctx_recall@6tok", INCONCLUSIVE, "kg"),
                         at(MID, "ctx_recall@10tok", SUPPORTED, "kg")])
    # by hand: decided at k: sketch ctx (changes) and sketch doc (kept); kg ctx is decided only at the mid budget
    assert finding_sentences(rows, across_settings=True, dataset="d")[2:] == [
        "Of the 2 differences decided at k=5 (unequal budgets), 1 keep their verdict at both equal budgets; changed at "
        f"an equal budget:\n  sketch ctx_recall ({AT_K}: contradicted, smallest equal budget: supported, mid-size equal "
        "budget: inconclusive)",
        f"Decided at an equal budget but not at k=5:\n  kg ctx_recall ({AT_K}: inconclusive, smallest equal budget: "
        "inconclusive, mid-size equal budget: supported)"]
    undecided = rows[rows["method"] == "kg"]
    assert finding_sentences(undecided, across_settings=True, dataset="d")[2:] == [
        "No difference is decided at k=5 (unequal budgets).",
        f"Decided at an equal budget but not at k=5:\n  kg ctx_recall ({AT_K}: inconclusive, smallest equal budget: "
        "inconclusive, mid-size equal budget: supported)"]
    only_k = rows[rows["setting"] == AT_K]
    assert finding_sentences(only_k, across_settings=True, dataset="d")[2:] == [
        "No comparison was made both at k and at an equal budget."]
    assert finding_sentences(rows.iloc[:0], across_settings=True, dataset="d") == []


def test_across_settings_says_n_documents_and_the_median_mde_per_setting():
    small = "smallest equal budget: 40 tokens (x)"
    rows = pd.DataFrame([  # two settings; the median of 0.04 and 0.08 is 0.06; doc_recall rows do not count towards ctx_recall
        at(small, "ctx_recall@40tok", INCONCLUSIVE, "a", mde=0.04), at(small, "ctx_recall@40tok", SUPPORTED, "b", mde=0.08),
        at(small, "doc_recall@40tok", f"{UNDECIDABLE} at this n (one unit)", "b", mde=0.50),
        at(AT_K, "ctx_recall@5", CONTRADICTED, "a", mde=0.10)])
    said = finding_sentences(rows, across_settings=True, dataset="d")
    assert said[:2] == [
        "d: 30 questions from 6 documents (each difference resampled by document); the median minimum detectable "
        "effect (80% power) of ctx_recall differences is 0.060 at the smallest equal budget: 40 tokens; 0.100 at k=5, "
        "unequal budgets.",
        "At this n: 1 of 3 comparisons at the smallest equal budget of 40 tokens cannot be decided; "
        "0 of 1 comparison at k=5, unequal budgets cannot be decided."]
    unclustered = finding_sentences(rows.assign(units=math.nan), across_settings=True, dataset="d")
    assert unclustered[0].startswith("d: 30 questions (each its own resampling unit);")
    one = finding_sentences(rows.assign(units=1, mde=math.nan), across_settings=True, dataset="d")[0]  # one unit: no MDE
    assert one.startswith("d: 30 questions from 1 document (each") and "is none at the smallest equal budget" in one
    doc_only = rows[rows["metric"] == "doc_recall@40tok"]     # gold documents only (PubMedQA): doc_recall is said
    assert "the median minimum detectable effect (80% power) of doc_recall differences is 0.500 at the smallest" \
        in finding_sentences(doc_only, across_settings=True, dataset="d")[0]
    other = rows.assign(metric="token_f1@5")                  # no metric a data set is ranked by
    assert finding_sentences(other, across_settings=True, dataset="d")[0] == "d: no ctx_recall differences in this run."
    # ledger rows name their data set
    assert finding_sentences(rows.assign(dataset="e"), across_settings=True)[0].startswith("e: 30 questions")


def series(values, names=("Naive", "Semantic", "Late Chunking")):
    return pd.Series(values, index=list(names)[:len(values)], dtype=float)


def order_table(*rows, n=59):
    """An order table (uncertainty.pairwise_differences) from (method, below, diff, lo, hi, p_holm) rows; each
    verdict as ``decide`` gives it at Holm p < 0.05."""
    return pd.DataFrame([{"method": a, "below": b, "metric": "doc_mrr@10", "diff": d, "n": n, "ci_low": lo, "ci_high": hi,
                          "p": p, "p_holm": p, "mde": math.nan,
                          "verdict": (SUPPORTED if d > 0 else CONTRADICTED) if p < 0.05 else INCONCLUSIVE}
                         for a, b, d, lo, hi, p in rows])


def ranked(order, means=None, reported=None, **given):
    """The one sentence of ``order`` said as the ranking "T" on MRR: its leader with ``means``, else its order."""
    said = finding_sentences(order, ranking="T", metric="MRR", means=means, reported=reported, **given)
    assert len(said) <= 1
    return said[0] if said else None


def lead(order: pd.DataFrame) -> str:
    """What the leader sentence says of Naive (0.8) minus Semantic (0.6), the runner-up, from ``order``."""
    said = ranked(order, series([0.8, 0.6]))
    assert said.startswith("T: the best MRR is Naive (0.800), then Semantic (0.600)")
    return said.removeprefix("T: the best MRR is Naive (0.800), then Semantic (0.600)")


def test_a_leaders_difference_reads_the_verdict_not_the_interval():
    assert lead(order_table(("Naive", "Semantic", 0.057, -0.026, 0.142, 1.0))) == \
        f"; Naive minus Semantic is +0.057 [-0.026, +0.142], n = 59, Holm p = 1.0: {INCONCLUSIVE}."
    assert lead(order_table(("Naive", "Semantic", 0.05, 0.01, 0.09, 0.001))) == \
        f"; Naive minus Semantic is +0.050 [+0.010, +0.090], n = 59, Holm p = {format_p(0.001)}: a clear lead."
    # Holm p 0.2 decides nothing (decide: inconclusive), whatever the interval beside it says
    assert lead(order_table(("Naive", "Semantic", 0.05, 0.01, 0.09, 0.2))).endswith(f": {INCONCLUSIVE}.")
    # the verdict decide gave, with its reason, is what is said, and no interval or p beside it
    few = order_table(("Naive", "Semantic", 0.3, 0.1, 0.5, 0.3)).assign(verdict=UNDECIDABLE, reason="3 documents")
    assert lead(few) == f"; Naive minus Semantic is n = 59: {UNDECIDABLE} (3 documents)."
    no_interval = order_table(("Naive", "Semantic", 0.1, math.nan, math.nan, math.nan), n=1).assign(verdict=UNDECIDABLE)
    assert lead(no_interval) == f"; Naive minus Semantic is n = 1: {UNDECIDABLE}."
    assert lead(order_table(("Naive", "Semantic", 0.001, -0.0002, 0.004, 0.5))).startswith(
        "; Naive minus Semantic is +0.001 [+0.000, +0.004]")                                          # no "-0.000"
    # every question's difference 0: said as such, not "cannot decide"
    assert lead(order_table(("Naive", "Semantic", 0.0, 0.0, 0.0, 1.0), n=10)) == \
        "; Naive minus Semantic is +0.000 [+0.000, +0.000], n = 10, Holm p = 1.0: the same on every question."


def test_a_leaders_difference_is_turned_round_when_the_table_has_the_runner_up_first():
    # the table has Semantic − Naive = +0.1 [0.02, 0.2], supported: Naive − Semantic is its opposite, contradicted
    assert lead(order_table(("Semantic", "Naive", 0.1, 0.02, 0.2, 0.01))) == \
        "; Naive minus Semantic is -0.100 [-0.200, -0.020], n = 59, Holm p = 0.010: behind."
    assert lead(order_table(("Naive", "Late Chunking", 0.1, 0.02, 0.2, 0.01))) == "."     # no such pair: no difference


def test_leader_says_when_the_questions_cannot_decide():
    ours = series([0.773, 0.764, 0.821])          # Late Chunking best, then Naive, then Semantic
    order = order_table(("Late Chunking", "Naive", 0.048, -0.002, 0.111, 1.0),
                        ("Late Chunking", "Semantic", 0.057, -0.026, 0.142, 1.0),
                        ("Naive", "Semantic", 0.009, -0.06, 0.08, 1.0))
    s = ranked(order, ours, series([0.979, 0.980, 0.977]))
    assert s.startswith("T: the best MRR is Late Chunking (0.821), then Naive (0.773); Late Chunking minus Naive is "
                        f"+0.048 [-0.002, +0.111], n = 59, Holm p = 1.0: {INCONCLUSIVE}")
    # the paper's best (Semantic) is 0.057 behind ours, but Holm p = 1: not called "behind"
    assert ("paper-reported: Semantic best (0.980); here Semantic (0.764) is behind our best by +0.057 [-0.026, "
            f"+0.142], n = 59, Holm p = 1.0: {INCONCLUSIVE}.") in s


def test_leader_clear_lead_tie_and_single():
    order = order_table(("Naive", "Semantic", 0.2, 0.1, 0.3, 0.01))
    assert "Naive minus Semantic is +0.200 [+0.100, +0.300], n = 59, Holm p = 0.010: a clear lead" in \
        ranked(order, series([0.8, 0.6]))
    same = ranked(order, series([0.8, 0.6]), series([0.9, 0.1]))
    assert same.endswith("paper-reported: Naive best (0.900), the same strategy as ours.")
    runner = ranked(order, series([0.8, 0.6]), series([0.1, 0.9]), reported_label="paper-reported with GPT-4o-mini")
    assert runner.endswith("paper-reported with GPT-4o-mini: Semantic best (0.900), our runner-up (above).")
    tie = ranked(order, series([0.9, 0.9, 0.5]), series([0.1, 0.95]))
    assert tie == ("T: the best MRR, 0.900, is shared by Naive, Semantic (a tie: no winner); paper-reported: "
                   "Semantic best (0.950), one of our best.")
    assert ranked(order, series([math.nan])) is None
    assert "only Naive has a MRR (0.500), so there is no ranking" in ranked(order.iloc[:0], series([0.5]))


def test_an_order_counts_the_pairs_told_apart_and_the_papers_reversals():
    # ours: A > B > C; A − B decided (Holm p 0.01), the other two not. The paper ranks C above A and B above A:
    # it reverses A > C (undecided here) and A > B (decided here: a contradiction, quoted with its interval)
    order = order_table(("A", "B", 0.2, 0.1, 0.3, 0.01), ("A", "C", 0.1, -0.05, 0.25, 0.4),
                        ("B", "C", 0.05, -0.1, 0.2, 0.6))
    said = ranked(order, reported=pd.Series({"A": 0.5, "B": 0.6, "C": 0.7}))
    assert said == ("T: our MRR order is A > B > C (n = 59 questions); 1 of its 3 pairs are told apart (Holm-adjusted "
                    "p < 0.05 across the pairs). The paper-reported order reverses 3 of these pairs; 1 of them are "
                    "decided here (A > B by 0.200 [0.100, 0.300]).")
    agree = ranked(order, reported=pd.Series({"A": 0.7, "B": 0.6, "C": 0.5}))
    assert agree.endswith("across the pairs).")                 # the same order: no reversal to speak of
    undecided = ranked(order.iloc[1:], reported=pd.Series({"A": 0.5, "B": 0.6, "C": 0.7}))
    assert undecided.endswith("none is decided here, so the two orders do not contradict each other.")
    few = order.assign(verdict=UNDECIDABLE, mde=[0.1, 0.25, 0.2])
    assert ranked(few).endswith(f"(Holm-adjusted p < 0.05 across the pairs; 3 {UNDECIDABLE}; MDE up to 0.250).")
    assert ranked(order.iloc[:0], reported=pd.Series(dtype=float)) is None


def test_inside_said_reads_the_yes_and_no_of_each_metric():
    beside = pd.DataFrame({("MRR", "ours"): [0.9, 0.8, 0.7], ("MRR", IN_CI): ["yes", "no", "yes"],
                           ("R@1", IN_CI): ["no", "", "no"], ("R@3", IN_CI): ["", "", ""]})
    # MRR: 2 of 3 inside; R@1: 0 of the 2 that could be said; R@3: none could be said, left out
    assert inside_said(beside, "T", "strategies") == \
        "T: the paper-reported number lies inside our 95% interval for MRR 2/3, R@1 0/2 strategies."
    assert inside_said(beside[[("MRR", "ours")]], "T") == ""
