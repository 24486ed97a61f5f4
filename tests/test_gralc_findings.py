"""The GraLC-RAG notebook's findings sentences, built from small hand-made tables: every verdict word must
follow from the paired interval it quotes (above 0, below 0, or spanning it: the questions cannot decide),
both ways round, and a sentence whose premise does not hold (a condition that did not run) must be left out
or say so."""
import math

import pandas as pd
import pytest

from rag_lab.evaluation.statistics import CONTRADICTED, INCONCLUSIVE, SUPPORTED, UNDECIDABLE
from rag_lab.methods.gralc import findings as fd
from rag_lab.methods.gralc import paper
from rag_lab.methods.gralc.comparisons import READINGS, Where
from rag_lab.methods.gralc.experiment import ALL_COSINE, MENTION_COSINE

ORDER = paper.ORDER
PATTERN, FAIR = list(READINGS)


def series(values):
    return pd.Series(values, index=ORDER[:len(values)], dtype=float)


def diff(d, lo, hi, n=59, p_holm=math.nan):
    """A hand-made decided row; without a Holm p its verdict is given (as ``decide`` would have written it:
    decided when the interval excludes 0, inconclusive when it spans 0), since an interval alone decides
    nothing (``decisions.row_verdict``)."""
    row = {"diff": d, "ci_low": lo, "ci_high": hi, "n": n, "p_holm": p_holm}
    if math.isnan(p_holm) and not math.isnan(lo):
        row["verdict"] = SUPPORTED if lo > 0 else CONTRADICTED if hi < 0 else INCONCLUSIVE
    return row


def order_table(*rows):
    """A pairwise table (comparisons.order) from (method, below, diff, lo, hi, p_holm) rows."""
    return pd.DataFrame([{"method": a, "below": b, "diff": d, "n": 59, "ci_low": lo, "ci_high": hi, "p_holm": p}
                         for a, b, d, lo, hi, p in rows])


def test_pair_turns_a_row_round():
    order = order_table(("A", "B", 0.1, 0.02, 0.2, 0.5))
    assert fd.pair(order, "A", "B")["ci_low"] == 0.02
    back = fd.pair(order, "B", "A")           # B − A = −0.1 [−0.2, −0.02]
    assert (back["diff"], back["ci_low"], back["ci_high"]) == (-0.1, -0.2, -0.02)
    assert fd.pair(order, "A", "C") is None


def test_leader_says_when_the_questions_cannot_decide():
    ours = series([0.773, 0.764, 0.821])          # Late Chunking best, then Naive, then Semantic
    order = order_table(("Late Chunking", "Naive", 0.048, -0.002, 0.111, 1.0),
                        ("Late Chunking", "Semantic", 0.057, -0.026, 0.142, 1.0),
                        ("Naive", "Semantic", 0.009, -0.06, 0.08, 1.0))
    s = fd.leader("T", ours, order, "MRR", series([0.979, 0.980, 0.977]))
    assert s.startswith("T: the best MRR is Late Chunking (0.821), then Naive (0.773); Late Chunking minus Naive is "
                        f"+0.048 [-0.002, +0.111], n = 59, Holm p = 1.0: {INCONCLUSIVE}")
    # the paper's best (Semantic) is 0.057 behind ours, but the interval spans 0: not called "behind"
    assert ("paper-reported: Semantic best (0.980); here Semantic (0.764) is behind our best by +0.057 [-0.026, "
            f"+0.142], n = 59, Holm p = 1.0: {INCONCLUSIVE}.") in s


def test_leader_clear_lead_tie_and_single():
    order = order_table(("Naive", "Semantic", 0.2, 0.1, 0.3, 0.01))
    assert "Naive minus Semantic is +0.200 [+0.100, +0.300], n = 59, Holm p = 0.010: a clear lead" in \
        fd.leader("T", series([0.8, 0.6]), order, "MRR")
    same = fd.leader("T", series([0.8, 0.6]), order, "MRR", series([0.9, 0.1]))
    assert same.endswith("paper-reported: Naive best (0.900), the same strategy as ours.")
    runner = fd.leader("T", series([0.8, 0.6]), order, "MRR", series([0.1, 0.9]))
    assert runner.endswith("paper-reported: Semantic best (0.900), our runner-up (above).")
    tie = fd.leader("T", series([0.9, 0.9, 0.5]), order, "MRR", series([0.1, 0.95]))
    assert tie == ("T: the best MRR, 0.900, is shared by Naive, Semantic (a tie: no winner); paper-reported: "
                   "Semantic best (0.950), one of our best.")
    assert fd.leader("T", series([math.nan]), order, "MRR") is None
    assert "only Naive has a MRR (0.500), so there is no ranking" in fd.leader("T", series([0.5]), order, "MRR")


def intervals(low, high, column="MRR"):
    return {"ci_low": pd.DataFrame({column: low}), "ci_high": pd.DataFrame({column: high})}


def test_table1_ceiling_is_decided_by_a_test_not_by_the_interval():
    from rag_lab.methods.gralc.comparisons import ceiling_test

    t1 = pd.DataFrame({"MRR": series([0.99, 0.97])})
    order = order_table(("Naive", "Semantic", 0.02, 0.0, 0.04, 1.0))
    ci = intervals(series([0.98, 0.96]), series([1.0, 0.98]))
    assert fd.short_text(t1, ci, order, "x")[1] == "The lowest MRR, 0.970 [0.960, 0.980] (Semantic): whether it lies above 0.95 was not tested."
    # per question: semantic 0.97 +- 0.01 on 200 questions, naive 1.0: its scores minus 0.95 are +0.03 or +0.01.
    # The bounded-mean test: P(D_low <= 0) = 1.03^-100 * 1.01^-100 = 0.0193, p = 0.0386: decided above the
    # ceiling (on 20 such questions p = 1: one unseen question at the bound could undo 20 small wins)
    rows = [(m, f"q{i}", "doc_mrr", 10, v) for i in range(200)
            for m, v in (("gralc-naive", 1.0), ("gralc-semantic", 0.97 + 0.01 * (-1) ** i))]
    scores = pd.DataFrame(rows, columns=["method", "question_id", "metric", "k", "value"])
    above = ceiling_test(scores, "doc_mrr@10")
    assert above["method"] == "gralc-semantic" and above["diff"] == pytest.approx(0.02) and above["verdict"] == SUPPORTED
    assert above["p"] == pytest.approx(2 * 1.03 ** -100 * 1.01 ** -100, abs=0.004)
    assert fd.short_text(t1, ci, order, "x", above)[1].startswith(
        "The lowest MRR, 0.970 [0.960, 0.980] (Semantic), lies above 0.95 (minus 0.95: 0.020 [")
    # the same scores in two documents: no clustered test can decide, whatever the interval of the mean says
    two = ceiling_test(scores, "doc_mrr@10", where=Where("d", "abstract", {f"q{i}": f"doc{i % 2}" for i in range(200)}))
    assert two["units"] == 2 and two["verdict"] == UNDECIDABLE
    said = fd.short_text(t1, ci, order, "x", two)[1]
    assert f") {UNDECIDABLE}" in said and f"is {UNDECIDABLE}" not in said
    below = {**diff(-0.15, -0.25, -0.05, n=20, p_holm=0.004), "p": 0.004, "verdict": CONTRADICTED}
    assert "lies below 0.95" in fd.short_text(pd.DataFrame({"MRR": series([0.99, 0.80])}), ci, order, "x", below)[1]


def test_ablation_verdicts_follow_each_interval():
    diffs = pd.DataFrame([diff(-0.021, -0.068, 0.015, p_holm=0.66), diff(-0.05, -0.09, -0.01, p_holm=0.03),
                          diff(0.02, 0.005, 0.04, p_holm=0.04)],
                         index=["+ Structure Boundaries", "+ KG Infusion", "+ Graph-Guided Retrieval"])
    s = fd.ablation(diffs, "abstract condition")
    assert (f"+ Structure Boundaries -0.021 [-0.068, +0.015], n = 59, Holm p = 0.66: {INCONCLUSIVE}; "
            "paper-reported -0.0003") in s
    assert "+ KG Infusion -0.050 [-0.090, -0.010], n = 59, Holm p = 0.030: lowers MRR; paper-reported -0.0081" in s
    assert "+ Graph-Guided Retrieval +0.020 [+0.005, +0.040], n = 59, Holm p = 0.040: raises MRR" in s
    assert s.endswith("2 of 3 components change MRR by a decided difference (Holm p < 0.05 across the steps).")
    assert fd.ablation(pd.DataFrame(), "x") is None


def test_by_length_names_the_longest_condition_or_says_none_ran():
    empty = pd.DataFrame(columns=["MRR"], index=pd.MultiIndex.from_tuples([], names=["condition", "strategy"]))
    assert fd.by_length(empty, pd.DataFrame()).startswith("Tables 4–5: no introduction, partial or full condition ran")
    t4 = pd.DataFrame({"MRR": [0.4, 0.6, 0.3]}, index=pd.MultiIndex.from_product([["full"], ORDER[:3]]))
    s = fd.by_length(t4, order_table(("Semantic", "Naive", 0.2, 0.1, 0.3, 0.01)))
    assert s.startswith("Table 4 (full condition): the best MRR is Semantic (0.600), then Naive (0.400)")
    assert "paper-reported: Semantic best (0.517), the same strategy as ours" in s


def contrast_table(pattern, fair, content_pattern=1.0):
    """seccov_contrast rows for the full condition at k = 5: (diff, lo, hi) per reading."""
    rows = {(PATTERN, 5, "full"): {**diff(*pattern), "structure-aware": content_pattern + pattern[0],
                                   "content-only": content_pattern, "paper-reported diff": 3.36},
            (FAIR, 5, "full"): {**diff(*fair), "structure-aware": 2.54, "content-only": 2.42,
                                "paper-reported diff": math.nan}}
    out = pd.DataFrame.from_dict(rows, orient="index")
    out.index = out.index.set_names(["reading", "k", "condition"])
    return out


def test_coverage_says_which_reading_reproduces_the_papers_pattern():
    lines = fd.coverage(contrast_table((3.24, 3.1, 3.37), (0.11, -0.05, 0.25)), "full")
    head = lines[0]
    assert head.startswith("SecCov@5, full condition, structure-aware minus content-only")
    assert ("+3.240 [+3.100, +3.370], n = 59: structure-aware strategies cover more sections, paper-reported +3.36 — "
            "there the content-only strategies score 1.00 on every question by construction") in head
    assert f"content-only 2.42 vs structure-aware 2.54: +0.110 [-0.050, +0.250], n = 59: {INCONCLUSIVE}" in head
    assert head.endswith("reproduces on the pattern reading and does not reproduce on the fair reading here.")
    assert lines[1] == ("Over all 1 condition × k cells, on the pattern reading structure-aware strategies cover more "
                        "sections in 1, content-only ones in 0, and 0 are not decided.")
    assert lines[2].endswith("in 0, content-only ones in 0, and 1 are not decided.")
    # content-only ahead on the fair reading, and a pattern reading whose content-only value is not 1
    other = fd.coverage(contrast_table((0.2, 0.1, 0.3), (-0.3, -0.45, -0.18), content_pattern=1.5), "full")[0]
    assert "by construction" not in other
    assert "-0.300 [-0.450, -0.180], n = 59: content-only strategies cover more sections" in other
    assert fd.coverage(pd.DataFrame(), "full") == []


def test_cross_section_against_the_papers_zero_and_in_shorter_conditions():
    cs = lambda cond, values: pd.DataFrame({f"CS Recall@20 {cond}": values}, index=ORDER)   # noqa: E731
    t5 = pd.concat([cs("full", [0, 0.2, 0, 0, 0, 0.5]), cs("introduction", [0] * 6)], axis=1)
    low = {"ci_low": pd.DataFrame({"CS Recall@20 full": [0, 0.1, 0, 0, 0, 0.3]}, index=ORDER)}
    s = fd.cross_section(t5, low, "full")
    assert ("CS Recall@20, full condition: 0.000 to 0.500 (best GraLC-RAG (+Graph)); the 95% interval lies above 0 "
            "for 2 of 6 strategies (lowest lower bound 0.000)") in s
    assert "in the introduction condition it is 0.000 for every strategy, as it must be" in s
    t5 = pd.concat([cs("full", [0] * 6), cs("partial", [0, 0, 0.1, 0, 0, 0])], axis=1)
    s = fd.cross_section(t5, {"ci_low": pd.DataFrame({"CS Recall@20 full": [0] * 6}, index=ORDER)}, "full")
    assert "full condition: 0.000 for every strategy, as paper-reported" in s
    assert "in the partial condition it reaches 0.100 although those texts end before Results" in s
    assert fd.cross_section(t5, {}, "introduction") is None     # no column for a condition that did not run


def test_answers_section_diversity_from_the_group_difference():
    t6 = pd.DataFrame({"Avg F1": [0.2, 0.3, 0.2, 0.2, 0.2, 0.2], "Sec Diversity": [1, 1, 1, 4, 4, 4]}, index=ORDER)
    order = order_table(("Semantic", "Naive", 0.1, 0.05, 0.15, 0.01))
    more = {**diff(3.0, 2.5, 3.5, n=4), "first": 4.0, "second": 1.0}
    first, second = fd.answers(t6, order, more, "offline", "full")
    assert first.startswith("Answers (offline reasoner, full condition): the best proxy F1 (answer vs question) is "
                            "Semantic (0.300)")
    assert "paper-reported with GPT-4o-mini: Semantic best (0.403), the same strategy as ours" in first
    assert ("content-only 1.00, structure-aware 4.00, difference +3.000 [+2.500, +3.500], n = 4: structure-aware "
            "contexts span more sections; paper-reported 1.00 vs 4.53") in second
    spans = {**diff(0.2, -0.1, 0.5, n=4), "first": 2.2, "second": 2.0}
    assert f"n = 4: {INCONCLUSIVE}" in fd.answers(t6, order, spans, "offline", "full")[1]
    assert fd.answers(pd.DataFrame(columns=["Avg F1", "Sec Diversity"]), order, None, "offline", "full") == []


def sweep_table(mrr, cos_mention, top_changed=(0.0, 0.1, 0.3)):
    return pd.DataFrame({"MRR@5": mrr, "R@5": [0.9, 0.9, 0.9], paper.source_seccov_label(5): [2.0, 2.1, 2.2],
                         "chunks": [10, 10, 11], "top 5 changed vs λ = 0": list(top_changed),
                         MENTION_COSINE: cos_mention, ALL_COSINE: [1.0, 0.9999, 0.999]},
                        index=pd.Index([0.0, 0.1, 0.5], name="lambda"))


def sweep_diffs(mrr_05=(-0.004, -0.02, 0.01)):
    """Each λ minus λ = 0 (comparisons.sweep_differences); MRR@5 at λ = 0.5 as given, every other spanning 0."""
    rows = {}
    for col in ("MRR@5", "R@5", paper.source_seccov_label(5)):
        for lam in (0.1, 0.5):
            rows[(col, lam)] = diff(*(mrr_05 if (col, lam) == ("MRR@5", 0.5) else (0.002, -0.01, 0.015)))
    out = pd.DataFrame.from_dict(rows, orient="index")
    out.index = out.index.set_names(["column", "lambda"])
    return out


def test_infusion_sentence_retrieval_undecided_but_vectors_turned():
    lines = fd.infusion(sweep_table([0.700, 0.702, 0.696], [1.0, 0.999, 0.97]), sweep_diffs(), "full")
    assert lines[0].startswith("λ ablation (gralc-kg, full condition, against λ = 0, paired by question): MRR@5 at "
                               f"λ = 0.1 +0.002 [-0.010, +0.015], n = 59: {INCONCLUSIVE}, at λ = 0.5 "
                               f"-0.004 [-0.020, +0.010], n = 59: {INCONCLUSIVE}")
    assert lines[1] == ("The top 5 differs from λ = 0's for 10% of questions at λ = 0.1, 30% of questions at λ = 0.5; "
                        "chunks: 10 (λ = 0), 10 (λ = 0.1), 11 (λ = 0.5).")
    assert "the largest 1 − cos is 0.0300 (≥ 0.01: the vectors turn)" in lines[2]
    assert lines[3] == ("Over λ ∈ {0, 0.1, 0.5}, the random infusion turns the mention vectors, but no retrieval "
                        "change is decided by these questions.")


def test_infusion_sentence_retrieval_moved_or_vectors_untouched():
    moved = fd.infusion(sweep_table([0.70, 0.70, 0.65], [1.0, 0.999, 0.97]), sweep_diffs((-0.05, -0.08, -0.02)), "full")
    assert "at λ = 0.5 -0.050 [-0.080, -0.020], n = 59: lower" in moved[0]
    assert moved[3].endswith("the random infusion changes retrieval beyond the 95% interval (MRR@5).")
    still = fd.infusion(sweep_table([0.70, 0.70, 0.70], [1.0, 0.9999, 0.995]), sweep_diffs(), "full")
    assert "the largest 1 − cos is 0.0050 (< 0.01: the vectors barely turn)" in still[2]
    assert still[3].endswith("barely touches the vectors, and no retrieval change is decided by these questions.")
    no_sections = sweep_table([0.70, 0.70, 0.70], [1.0, 0.9999, 0.995])
    no_sections[paper.source_seccov_label(5)] = math.nan                    # documents without sections: no SecCov
    lines = fd.infusion(no_sections, sweep_diffs(), "abstract")
    assert "nan" not in "\n".join(lines)
    assert lines[0].endswith(f"; {paper.source_seccov_label(5)} not measured in this run (the documents have no sections).")
    one = sweep_table([0.7, 0.7, 0.7], [1.0, 1.0, 1.0]).iloc[:1]
    assert fd.infusion(one, sweep_diffs(), "full") == ["λ ablation: only λ = 0 ran, so there is nothing to compare."]


def test_findings_on_abstracts_only_never_mention_full_texts():
    """A PubMedQA-like run: only the abstract condition, so Tables 4-5 did not run."""
    t1 = pd.DataFrame({"MRR": series([0.97, 0.98, 0.96, 0.96, 0.95, 0.94]), "R@1": series([0.9] * 6),
                       "R@5": series([1.0] * 6)})
    t1_ci = intervals(t1["MRR"] - 0.02, t1["MRR"] + 0.02)
    order = order_table(("Semantic", "Naive", 0.01, -0.02, 0.04, 1.0))
    empty4 = pd.DataFrame(columns=["MRR"], index=pd.MultiIndex.from_tuples([], names=["condition", "strategy"]))
    t6 = pd.DataFrame({"Avg F1": [0.2] * 6, "Sec Diversity": [1.0] * 6}, index=ORDER)
    lines = fd.findings(short="abstract", t1=t1, t1_ci=t1_ci, t1_order=order, ablation_diffs=pd.DataFrame(), t4=empty4,
                        t4_order=pd.DataFrame(), contrast=pd.DataFrame(), t5=pd.DataFrame(index=ORDER), t5_ci={},
                        t6=t6, f1_order=order, diversity=None, reasoner="offline", generation_condition="abstract",
                        sweep=sweep_table([0.9, 0.9, 0.9], [1, 0.99, 0.98]), sweep_diffs=sweep_diffs(),
                        sweep_condition="abstract")
    text = "\n".join(lines)
    says_missing = [line for line in lines if line.startswith("Tables 4–5: no introduction, partial or full")]
    assert len(says_missing) == 1
    assert not any("full" in line for line in lines if line not in says_missing)
    assert lines[0] == fd.METHOD and "2/n" not in text
    assert "Table 1 (abstract condition)" in text
    assert "λ ablation (gralc-kg, abstract condition, against λ = 0" in text


def test_reported_infusion_delta_is_the_papers_kg_minus_structure_row():
    # by hand from the transcribed tables: Table 4 full 0.323 - 0.365, introduction 0.364 - 0.393;
    # Table 1 (PubMedQA*) 0.9687 - 0.9765
    where, d = fd.reported_infusion_delta("full", "abstract")
    assert where == "Table 4, full" and d == pytest.approx(-0.042)
    assert fd.reported_infusion_delta("introduction", "abstract")[1] == pytest.approx(-0.029)
    where, d = fd.reported_infusion_delta("abstract", "abstract")
    assert where == "Table 1, PubMedQA*" and d == pytest.approx(-0.0078)
    assert fd.reported_infusion_delta("documents", "abstract") is None     # a setting the paper has no row for


def test_infusion_sentence_quotes_the_paper_beside_our_lambda_point_one():
    sweep = sweep_table([0.700, 0.702, 0.696], [1.0, 0.999, 0.97])
    line = fd.infusion(sweep, sweep_diffs(), "full", ("Table 4, full", -0.042))[0]
    # ours: MRR@5 at λ = 0.1 minus λ = 0 = 0.702 - 0.700 = +0.002
    assert line.endswith("; at the paper's λ = 0.1 our MRR@5 changes by +0.002 against no infusion, paper-reported "
                         "-0.0420 (GraLC-RAG (KG) minus Structure-Aware, Table 4, full).")
    without_point_one = sweep.drop(index=0.1)                           # the paper's λ did not run: no quote
    assert "paper-reported" not in fd.infusion(without_point_one, sweep_diffs(), "full", ("Table 4, full", -0.042))[0]
