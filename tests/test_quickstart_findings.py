"""Notebook 00's closing sentences on a hand-made table: four questions, constant differences. Four
questions cannot decide anything (the exact sign-flip p is at least 2/2^4 = 0.125), which the
sentences must say instead of a verdict."""
import pandas as pd

from rag_lab.evaluation.statistics import UNDECIDABLE
from rag_lab.evaluation.truncation import EncoderCut
from rag_lab.methods.baselines.findings import quickstart_findings


def test_sentences_pair_the_methods_and_tie_the_cut_to_the_loss():
    rows = [{"method": m, "question_id": f"q{i}", "metric": metric, "k": 5, "value": v}
            for m, metric, values in (("naive", "ctx_recall", [1, 1, 0.5, 0.5]), ("semantic", "ctx_recall", [0.5, 0.5, 0, 0]),
                                      ("naive", "token_f1", [0.4] * 4), ("semantic", "token_f1", [0.3] * 4))
            for i, v in enumerate(values)]
    cut = EncoderCut("semantic", 10, 12, 531.4, 256, 254)
    lines = quickstart_findings(pd.DataFrame(rows), cut, 5, 5, "offline", judged=False)
    assert lines[0].startswith("Context recall@5, mean [95% interval] over 4 questions: naive 0.750 [")
    assert ", semantic 0.250 [" in lines[0]
    # semantic - naive = -0.5 on each question: P(D_high >= 0) = P(E0 >= 0.5 (E1 + .. + E4)) = 1.5^-4 = 0.198,
    # p = 0.395; the ends solve (2 (1 + d))^4 = 0.025 and ((1 - d) / 1.5)^4 = 0.025: [-0.801, 0.404] (0.402 over
    # the fixed weights); the floor 2/16 = 0.125 >= 0.05; one declared family with token F1: Holm 2 x 0.395 = 0.79
    assert lines[1].startswith("Paired, question by question: semantic - naive on ctx_recall@5: -0.500 [-0.801, 0.402] "
                               f"(n = 4, p = 0.40, p Holm = 0.79): {UNDECIDABLE}")
    assert 'declared family "semantic minus naive on ctx_recall@5, token_f1@5 (notebook 00)" (2 comparisons)' in lines[1]
    assert lines[2] == ("Why semantic chunks are at a disadvantage here — semantic: 10 of 12 chunks (mean 531 word pieces) "
                        "are longer than the 256 word pieces the encoder reads; each is embedded from its first 254 only, "
                        "so the rest of the chunk cannot make it match a question. Here semantic - naive on ctx_recall@5 = "
                        f"-0.500 [-0.801, 0.402] (n = 4, p Holm = 0.79): {UNDECIDABLE} (4 questions: no test at "
                        "0.05 is possible), so these questions show no loss "
                        "to explain, but the cut chunks still compete with a handicap.")
    assert lines[3].startswith("Answers: semantic - naive on token_f1@5: -0.100 [-0.641, 0.562]")
    # clustered by document (two documents of two questions): the sentences name the documents
    units = {"q0": "a", "q1": "a", "q2": "b", "q3": "b"}
    clustered = quickstart_findings(pd.DataFrame(rows), cut, 5, 5, "offline", judged=False, units=units)
    assert "(n = 4, 2 documents, p = 0.89, p Holm = 1.0)" in clustered[1]
    assert "the offline reasoner's answers are extractive" in lines[3] and "no judge ran" in lines[3]


def test_two_recalls_sentence_tells_the_span_recall_from_the_id_recall():
    import pandas as pd
    from rag_lab.methods.baselines.findings import two_recalls_sentence

    rows = pd.DataFrame({"method": ["naive"] * 4, "question_id": ["a", "b", "a", "b"],
                         "metric": ["ctx_recall", "ctx_recall", "id_context_recall", "id_context_recall"],
                         "k": [5, 5, 3, 3], "value": [1.0, 0.5, 0.5, 0.5]})
    text = two_recalls_sentence(rows, "naive", 5, 3)
    assert "ctx_recall@5 = 0.750" in text and "id_context_recall@3 = 0.500" in text and "counts half" in text
    assert two_recalls_sentence(rows, "semantic", 5, 3) == ""        # not scored: nothing to say
