"""The GraLC-RAG notebook's findings sentences, built from small hand-made tables: every verdict
word must follow from the numbers and the stated threshold, both ways round, and a sentence whose
premise does not hold (a condition that did not run) must be left out or say so."""
import math

import pandas as pd
import pytest

from rag_lab.methods.gralc import findings as fd
from rag_lab.methods.gralc import paper
from rag_lab.methods.gralc.experiment import ALL_COSINE, MENTION_COSINE

ORDER = paper.ORDER


def series(values):
    return pd.Series(values, index=ORDER[:len(values)], dtype=float)


def test_rank_threshold_is_two_questions_worth_for_small_runs():
    assert fd.rank_tie(59) == pytest.approx(2 / 59)        # 0.0339 > 0.01
    assert fd.rank_tie(1000) == 0.01 and fd.rank_tie(None) == 0.01
    line = fd.thresholds({"abstract": 59, "full": 59}, answered=4)
    assert "0.034 for 59 questions (abstract, full)" in line and "0.500 for 4 questions (the answers)" in line


def test_leader_clear_lead_and_no_clear_winner():
    # best 0.80, runner-up 0.78: gap 0.02 >= 0.01 -> a clear lead; 0.785 -> gap 0.015 under a 0.02 threshold
    s = fd.leader("T", series([0.80, 0.78, 0.5]), "MRR", 0.01)
    assert "the best MRR is Naive (0.800), 0.020 ahead of Semantic (0.780; ≥ 0.01: a clear lead)" in s
    s = fd.leader("T", series([0.80, 0.785]), "MRR", 0.02)
    assert "0.015 ahead of Semantic (0.785; < 0.02: no clear winner)" in s
    # a tie at the top (Naive and Semantic both 0.9): named together, and the paper's best is among them
    tie = fd.leader("T", series([0.9, 0.9, 0.5]), "MRR", 0.01, series([0.1, 0.95]))
    assert tie == ("T: the best MRR, 0.900, is shared by Naive, Semantic (a tie: no clear winner); paper-reported: "
                   "Semantic best (0.950), one of our best.")
    assert "< 0.286: no clear winner" in fd.leader("T", series([0.80, 0.78]), "MRR", 2 / 7)   # 2/7 shown to 3 digits
    assert fd.leader("T", series([math.nan]), "MRR") is None
    assert "only Naive has a MRR (0.500), so there is no ranking" in fd.leader("T", series([0.5]), "MRR")


def test_leader_places_the_papers_best_in_our_run():
    reported = series([0.1, 0.9])                            # the paper's best: Semantic
    same = fd.leader("T", series([0.5, 0.7]), "MRR", 0.01, reported)
    assert "paper-reported: Semantic best (0.900), the same strategy as ours" in same
    behind = fd.leader("T", series([0.8, 0.7]), "MRR", 0.01, reported)     # 0.1 behind our best
    assert "here Semantic is 0.100 behind our best (≥ 0.01: behind)" in behind
    level = fd.leader("T", series([0.705, 0.7]), "MRR", 0.01, reported)    # 0.005 behind
    assert "here Semantic is 0.005 behind our best (< 0.01: level with it)" in level


def test_table1_ceiling_both_ways():
    above, below = pd.DataFrame({"MRR": series([0.99, 0.97])}), pd.DataFrame({"MRR": series([0.99, 0.90])})
    assert "Every strategy's MRR is above 0.95 (lowest 0.970, Semantic): near the ceiling" in fd.short_text(above, "x")[1]
    assert "The lowest MRR is 0.900 (Semantic), not above 0.95" in fd.short_text(below, "x")[1]
    assert "paper-reported lowest 0.950" in fd.short_text(below, "x")[1]


def ablation_t1(late, structure, kg, graph):
    return pd.DataFrame({"MRR": [late, structure, kg, graph], "R@1": [0.5] * 4, "R@5": [0.9] * 4},
                        index=["Late Chunking", "Structure-Aware", "GraLC-RAG (KG)", "GraLC-RAG (+Graph)"])


def test_ablation_sizes_each_step_against_the_threshold():
    # deltas against 0.80: +0.005 (no change), -0.05 (lowers), +0.02 (raises)
    s = fd.ablation(ablation_t1(0.80, 0.805, 0.75, 0.82), "abstract condition", 0.01)
    assert "+ Structure Boundaries +0.0050 (size < 0.01: no measurable change; paper-reported -0.0003)" in s
    assert "+ KG Infusion -0.0500 (size ≥ 0.01: lowers MRR; paper-reported -0.0081)" in s
    assert "+ Graph-Guided Retrieval +0.0200 (size ≥ 0.01: raises MRR" in s
    assert s.endswith("2 of 3 components move MRR by 0.01 or more.")
    no_base = ablation_t1(0.8, 0.8, 0.8, 0.8).drop(index="Late Chunking")
    assert fd.ablation(no_base, "x") is None                 # no ΔMRR without the base


def t4_full(values):
    return pd.DataFrame({"MRR": values}, index=pd.MultiIndex.from_product([["full"], ORDER[:len(values)]]))


def test_by_length_names_the_longest_condition_or_says_none_ran():
    empty = pd.DataFrame(columns=["MRR"], index=pd.MultiIndex.from_tuples([], names=["condition", "strategy"]))
    assert fd.by_length(empty).startswith("Tables 4–5: no introduction, partial or full condition ran")
    s = fd.by_length(t4_full([0.4, 0.6, 0.3]), 0.01)
    assert s.startswith("Table 4 (full condition): the best MRR is Semantic (0.600)")
    assert "paper-reported: Semantic best (0.517), the same strategy as ours" in s


def t5_table(cond, seccov, cs):
    return pd.DataFrame({f"{paper.seccov_label(5)} {cond}": seccov, f"CS Recall@20 {cond}": cs}, index=ORDER)


def test_coverage_compares_content_only_with_structure_aware():
    # content-only mean 1.0, structure-aware mean 3.0: Δ +2.00 >= 0.5
    more = fd.coverage(t5_table("full", [1, 1, 1, 3, 3, 3], [0] * 6), "full")[0]
    assert ("content-only strategies average 1.00 sections, structure-aware ones 3.00 (Δ +2.00, size ≥ 0.5 "
            "sections: structure-aware strategies cover more sections); paper-reported 1.00 vs 4.36") in more
    # content-only 2.4, structure-aware 2.6: Δ +0.2 < 0.5
    tie = fd.coverage(t5_table("full", [2.4] * 3 + [2.6] * 3, [0] * 6), "full")[0]
    assert "(Δ +0.20, size < 0.5 sections: no clear difference)" in tie
    fewer = fd.coverage(t5_table("full", [3] * 3 + [1] * 3, [0] * 6), "full")[0]
    assert "content-only strategies cover more" in fewer


def test_cross_section_against_the_papers_zero_and_in_shorter_conditions():
    t5 = pd.concat([t5_table("full", [1] * 6, [0, 0.2, 0, 0, 0, 0.5]), t5_table("introduction", [1] * 6, [0] * 6)],
                   axis=1)
    s = fd.cross_section(t5, "full")
    assert "CS Recall@20, full condition: 0.000 to 0.500 (best GraLC-RAG (+Graph)) — above 0, unlike the paper" in s
    assert "in the introduction condition it is 0.000 for every strategy, as it must be" in s
    t5 = pd.concat([t5_table("full", [1] * 6, [0] * 6), t5_table("partial", [1] * 6, [0, 0, 0.1, 0, 0, 0])], axis=1)
    s = fd.cross_section(t5, "full")
    assert "full condition: 0.000 for every strategy, as paper-reported" in s
    assert "in the partial condition it reaches 0.100 although those texts end before Results" in s
    assert fd.cross_section(t5, "introduction") is None     # no column for a condition that did not run


def test_answers_section_diversity_both_ways():
    t6 = pd.DataFrame({"Avg F1": [0.2, 0.3, 0.2, 0.2, 0.2, 0.2], "Sec Diversity": [1, 1, 1, 4, 4, 4]}, index=ORDER)
    first, second = fd.answers(t6, "offline", "full", 0.01)
    assert first.startswith("Answers (offline reasoner, full condition): the best proxy F1 (answer vs question) is "
                            "Semantic (0.300)")
    assert "paper-reported with GPT-4o-mini: Semantic best (0.403), the same strategy as ours" in first
    assert "(Δ +3.00, size ≥ 0.5 sections: structure-aware contexts span more sections)" in second
    t6["Sec Diversity"] = [2, 2, 2, 2.2, 2.2, 2.2]
    assert "size < 0.5 sections: no clear difference" in fd.answers(t6, "offline", "full")[1]
    assert fd.answers(pd.DataFrame(columns=["Avg F1", "Sec Diversity"]), "offline", "full") == []


def sweep_table(mrr, cos_mention, top_changed=(0.0, 0.1, 0.3)):
    return pd.DataFrame({"MRR@5": mrr, "R@5": [0.9, 0.9, 0.9], paper.seccov_label(5): [2.0, 2.1, 2.2],
                         "chunks": [10, 10, 11], "top 5 changed vs λ = 0": list(top_changed),
                         MENTION_COSINE: cos_mention, ALL_COSINE: [1.0, 0.9999, 0.999]},
                        index=pd.Index([0.0, 0.1, 0.5], name="lambda"))


def test_infusion_sentence_retrieval_unmoved_but_vectors_turned():
    # MRR moves by +0.002 and -0.004 (< 0.01); mention cosine 0.97 at λ = 0.5: 1 − cos = 0.03 >= 0.01
    lines = fd.infusion(sweep_table([0.700, 0.702, 0.696], [1.0, 0.999, 0.97]), "full", 0.01)
    assert ("MRR@5 moves by +0.002 at λ = 0.1 and -0.004 at λ = 0.5 (largest 0.004, < 0.01: no measurable change)"
            in lines[0])
    assert "SecCov@5 (any-level labels, all retrieved) moves by +0.100 at λ = 0.1 and +0.200 at λ = 0.5 (largest 0.200, < 0.5" in lines[0]
    assert lines[1] == ("The top 5 differs from λ = 0's for 10% of questions at λ = 0.1, 30% of questions at λ = 0.5; "
                        "chunks: 10 (λ = 0), 10 (λ = 0.1), 11 (λ = 0.5).")
    assert "the largest 1 − cos is 0.0300 (≥ 0.01: the vectors turn measurably)" in lines[2]
    assert lines[3] == ("Over λ ∈ {0, 0.1, 0.5}, the random infusion turns the mention vectors but leaves retrieval "
                        "within the thresholds.")


def test_infusion_sentence_retrieval_moved_or_vectors_untouched():
    moved = fd.infusion(sweep_table([0.70, 0.70, 0.65], [1.0, 0.999, 0.97]), "full", 0.01)
    assert "(largest 0.050, ≥ 0.01: a measurable change)" in moved[0]
    assert moved[3].endswith("the random infusion changes retrieval measurably (MRR@5).")
    still = fd.infusion(sweep_table([0.70, 0.70, 0.70], [1.0, 0.9999, 0.995]), "full", 0.01)
    assert "the largest 1 − cos is 0.0050 (< 0.01: the vectors barely turn)" in still[2]
    assert still[3].endswith("barely touches the vectors and leaves retrieval within the thresholds.")
    no_sections = sweep_table([0.70, 0.70, 0.70], [1.0, 0.9999, 0.995])
    no_sections[paper.seccov_label(5)] = math.nan                    # documents without sections: no SecCov
    lines = fd.infusion(no_sections, "abstract", 0.01)
    assert "SecCov" not in lines[0].split("; SecCov")[0] and "nan" not in "\n".join(lines)
    assert lines[0].endswith("; SecCov@5 (any-level labels, all retrieved) not measured in this run (the documents have no sections).")
    one = sweep_table([0.7, 0.7, 0.7], [1.0, 1.0, 1.0]).iloc[:1]
    assert fd.infusion(one, "full") == ["λ ablation: only λ = 0 ran, so there is nothing to compare."]


def test_findings_on_abstracts_only_never_mention_full_texts():
    """A PubMedQA-like run: only the abstract condition, so Tables 4-5 did not run."""
    t1 = pd.DataFrame({"MRR": series([0.97, 0.98, 0.96, 0.96, 0.95, 0.94]), "R@1": series([0.9] * 6),
                       "R@5": series([1.0] * 6)})
    t1.index = ORDER
    empty4 = pd.DataFrame(columns=["MRR"], index=pd.MultiIndex.from_tuples([], names=["condition", "strategy"]))
    t6 = pd.DataFrame({"Avg F1": [0.2] * 6, "Sec Diversity": [1.0] * 6}, index=ORDER)
    lines = fd.findings(t1, empty4, pd.DataFrame(index=ORDER), t6, sweep_table([0.9, 0.9, 0.9], [1, 0.99, 0.98]),
                        short="abstract", reasoner="offline", generation_condition="abstract",
                        sweep_condition="abstract", questions={"abstract": 7}, answered=2)
    text = "\n".join(lines)
    says_missing = [line for line in lines if line.startswith("Tables 4–5: no introduction, partial or full")]
    assert len(says_missing) == 1
    assert not any("full" in line for line in lines if line not in says_missing)
    assert "Table 1 (abstract condition)" in text
    assert "0.286 for 7 questions (abstract)" in lines[0]                     # 2/7
    assert "λ ablation (gralc-kg, abstract condition, against λ = 0)" in text


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
    line = fd.infusion(sweep, "full", 0.01, ("Table 4, full", -0.042))[0]
    # ours: MRR@5 at λ = 0.1 minus λ = 0 = 0.702 - 0.700 = +0.002
    assert line.endswith("; at the paper's λ = 0.1 our MRR@5 changes by +0.002 against no infusion, paper-reported "
                         "-0.0420 (GraLC-RAG (KG) minus Structure-Aware, Table 4, full).")
    without_point_one = sweep.drop(index=0.1)                           # the paper's λ did not run: no quote
    assert "paper-reported" not in fd.infusion(without_point_one, "full", 0.01, ("Table 4, full", -0.042))[0]

