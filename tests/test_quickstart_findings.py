"""Notebook 00's closing sentences on hand-made tables: four questions, which cannot decide anything (the
exact sign-flip p is at least 2/2^4 = 0.125), so the sentences say so once, in words, with no interval; and
twenty questions that do decide, each comparison then said with its numbers."""
import pandas as pd

from rag_lab.evaluation.statistics import CONTRADICTED, UNDECIDABLE
from rag_lab.evaluation.truncation import EncoderCut
from rag_lab.methods.baselines.findings import VERDICTS, quickstart_findings


def rows(recall: dict, f1: dict, n: int):
    return pd.DataFrame([{"method": m, "question_id": f"q{i}", "metric": metric, "k": 5, "value": v}
                         for metric, by in (("ctx_recall", recall), ("token_f1", f1)) for m, values in by.items()
                         for i, v in enumerate(values[:n])])


CUT = EncoderCut("semantic", 10, 12, 531.4, 256, 254)
CUT_SAID = ("Why semantic chunks are at a disadvantage here — semantic: 10 of 12 chunks (mean 531 word pieces) are "
            "longer than the 256 word pieces the encoder reads; each is embedded from its first 254 only, so the rest "
            "of the chunk cannot make it match a question.\n")


def test_four_questions_cannot_decide_and_say_so_once_without_numbers():
    table = rows({"naive": [1, 1, 0.5, 0.5], "semantic": [0.5, 0.5, 0, 0]}, {"naive": [0.4] * 4, "semantic": [0.3] * 4}, 4)
    lines = quickstart_findings(table, CUT, 5, 5, "offline", judged=False)
    assert lines[0].startswith("Context recall@5, mean [95% interval] over 4 questions: naive 0.750 [")
    assert ", semantic 0.250 [" in lines[0]
    # the floor 2/16 = 0.125 >= 0.05: both comparisons of the family cannot be decided, said once
    assert lines[1] == (f"Paired, question by question: 2 comparisons {UNDECIDABLE} (4 questions: no test at 0.05 is "
                        "possible): semantic - naive; ctx_recall@5, token_f1@5; no interval, MDE or verdict is shown "
                        "for them.")
    assert lines[2] == (CUT_SAID + f"Here semantic - naive on ctx_recall@5 {UNDECIDABLE} (4 questions: no test at 0.05 "
                        "is possible), so these questions cannot show a loss to explain; the cut chunks still compete "
                        "with a handicap.")
    assert len(lines) == 3 and not any("[-" in line for line in lines[1:])
    # clustered by document (two documents of two questions): the reason names the documents
    units = {"q0": "a", "q1": "a", "q2": "b", "q3": "b"}
    clustered = quickstart_findings(table, CUT, 5, 5, "offline", judged=False, units=units)
    assert "(2 documents: no test at 0.05 is possible)" in clustered[1]


def test_twenty_questions_decide_and_each_comparison_carries_its_numbers():
    # semantic loses every question's recall (1 -> 0): the sign-flip p is 2/2^20, Holm x2 still far below 0.05
    table = rows({"naive": [1.0] * 20, "semantic": [0.0] * 20},
                 {"naive": [0.4, 0.6] * 10, "semantic": [0.3, 0.7] * 10}, 20)
    table.attrs["dataset"] = "handmade"
    lines = quickstart_findings(table, CUT, 5, 5, "offline", judged=False)
    assert lines[0].startswith("handmade: context recall@5, mean [95% interval] over 20 questions: naive 1.000 [")
    assert lines[1].startswith("Paired, question by question: semantic - naive on ctx_recall@5: -1.000 [")
    assert lines[1].endswith(f"): {CONTRADICTED}.")
    assert lines[2] == VERDICTS + ";"
    assert lines[3].startswith('p Holm-adjusted within the declared family "semantic minus naive on ctx_recall@5, '
                               'token_f1@5 (notebook 00)" (2 comparisons)')
    assert lines[4].startswith(CUT_SAID + "That is a likely part of why semantic trails naive here: semantic - naive "
                               "on ctx_recall@5 = -1.000 [")
    # token F1: +0.1 on half the questions, -0.1 on the other half: mean 0, inconclusive, said with its numbers
    assert lines[5].startswith("Answers: semantic - naive on token_f1@5: 0.000 [")
    assert lines[6].startswith("What that measures: the offline reasoner's answers are extractive") and "no judge ran" in lines[6]
    assert max(map(len, "\n".join(lines).split("\n"))) <= 400
    # recall decided, token F1 on one question only (no test): the undecided one said once, in words, after it
    mixed = pd.concat([table[table["metric"] == "ctx_recall"],
                       table[(table["metric"] == "token_f1") & (table["question_id"] == "q0")]], ignore_index=True)
    mixed.attrs["dataset"] = "handmade"
    said = quickstart_findings(mixed, CUT, 5, 5, "offline", judged=False)
    assert said[1].startswith("Paired, question by question: semantic - naive on ctx_recall@5: -1.000 [")
    assert said[4].startswith(f"1 comparison {UNDECIDABLE} (") and "semantic - naive; token_f1@5;" in said[4]
    assert not any(line.startswith("Answers:") for line in said)


def test_two_recalls_sentence_tells_the_span_recall_from_the_id_recall():
    from rag_lab.methods.baselines.findings import two_recalls_sentence

    rows = pd.DataFrame({"method": ["naive"] * 4, "question_id": ["a", "b", "a", "b"],
                         "metric": ["ctx_recall", "ctx_recall", "id_context_recall", "id_context_recall"],
                         "k": [5, 5, 3, 3], "value": [1.0, 0.5, 0.5, 0.5]})
    text = two_recalls_sentence(rows, "naive", 5, 3)
    assert "ctx_recall@5 = 0.750" in text and "id_context_recall@3 = 0.500" in text and "counts half" in text
    assert two_recalls_sentence(rows, "semantic", 5, 3) == ""        # not scored: nothing to say
