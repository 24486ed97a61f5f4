"""The encoder-cut count and its sentence, on texts whose word-piece counts are known by hand."""
import math

from rag_lab.evaluation.statistics import CONTRADICTED, INCONCLUSIVE, SUPPORTED, UNDECIDABLE
from rag_lab.evaluation.truncation import encoder_cut, encoder_cut_sentence


def diff(mean, low, high, p, verdict, reason=""):
    """A decided 20-question paired difference (20 units) with the given interval, Holm p and verdict."""
    return {"diff": mean, "n": 20, "units": 20, "design_effect": 1.0, "ci_low": low, "ci_high": high, "p_holm": p,
            "verdict": verdict, "reason": reason}


class WordCounter:
    """An embedder that reads 10 word pieces (8 of text and its 2 special tokens); one word = one piece."""
    max_tokens = 10

    def count_tokens(self, text):
        return len(text.split())


def test_counts_the_texts_longer_than_the_encoder_reads():
    texts = ["a " * 8, "a " * 9, "a " * 20, "a"]           # 8 fits exactly; 9 and 20 are cut
    cut = encoder_cut("semantic", texts, WordCounter())
    assert (cut.over, cut.total, cut.limit, cut.read) == (2, 4, 10, 8)
    assert cut.mean_tokens == (8 + 9 + 20 + 1) / 4 and cut.share == 0.5
    empty = encoder_cut("none", [], WordCounter())
    assert empty.total == 0 and math.isnan(empty.mean_tokens)


def test_sentence_names_the_count_and_ties_it_to_the_loss():
    cut = encoder_cut("semantic", ["a " * 30] * 10 + ["a"] * 2, WordCounter())    # mean (300 + 2) / 12 = 25.2
    plain = encoder_cut_sentence(cut)
    assert plain == ("semantic: 10 of 12 chunks (mean 25 word pieces) are longer than the 10 word pieces the encoder "
                     "reads; each is embedded from its first 8 only, so the rest of the chunk cannot make it match a "
                     "question.")
    loss = diff(-0.2, -0.35, -0.05, 0.01, CONTRADICTED)
    said = encoder_cut_sentence(cut, loss, "naive", "ctx_recall@5")
    assert said.endswith("That is a likely part of why semantic trails naive here: semantic - naive on ctx_recall@5 = "
                         f"-0.200 [-0.350, -0.050] (n = 20, p Holm = 0.010), {CONTRADICTED}.")
    tie = diff(-0.1, -0.3, 0.1, 0.3, INCONCLUSIVE)
    assert f"p Holm = 0.30): {INCONCLUSIVE}, so these questions show no loss to explain" in encoder_cut_sentence(
        cut, tie, "naive", "ctx_recall@5")
    ahead = diff(0.1, 0.05, 0.2, 0.01, SUPPORTED)
    assert ".\nEven so semantic is ahead of naive here" in encoder_cut_sentence(cut, ahead, "naive", "ctx_recall@5")
    # a design that cannot decide: the verdict and its reason in words, no interval or p
    cannot = {**diff(-0.2, -0.9, 0.6, 1.0, UNDECIDABLE), "reason": "3 documents: no test at 0.05 is possible"}
    said = encoder_cut_sentence(cut, cannot, "naive", "ctx_recall@5")
    assert said.endswith(".\nHere semantic - naive on ctx_recall@5 cannot be decided (3 documents: no test at 0.05 is "
                         "possible), so these questions cannot show a loss to explain; the cut chunks still compete with "
                         "a handicap.")
    assert "[" not in said and "p Holm" not in said


def test_sentence_when_nothing_is_cut():
    cut = encoder_cut("naive", ["a b c"] * 3, WordCounter())
    assert encoder_cut_sentence(cut) == ("naive: none of its 3 chunks (mean 3 word pieces) is longer than the 10 word "
                                         "pieces the encoder reads, so every chunk is embedded whole.")


def test_finding_pairs_the_cut_method_with_its_baseline():
    import pandas as pd

    from rag_lab.evaluation.truncation import encoder_cut_finding

    rows = [{"method": m, "question_id": f"q{i}", "metric": "ctx_recall", "k": 5, "value": v}
            for m, values in (("semantic", [0, 0, 0, 0]), ("naive", [1, 1, 1, 1])) for i, v in enumerate(values)]
    cut = encoder_cut("semantic", ["a " * 30] * 10 + ["a"] * 2, WordCounter())
    said = encoder_cut_finding(pd.DataFrame(rows), cut, "naive", "ctx_recall@5")
    # four questions, every one lost: p is 2/2^4 = 0.125 at best, so no loss can be told at this n; the upper
    # end solves ((1 - d) / 2)^4 = 0.025: d = 1 - 2 * 0.025^(1/4) = 0.205 (the old bootstrap said [-1, -1])
    assert said.startswith(encoder_cut_sentence(cut)[:-1] + ".\nHere semantic - naive on ctx_recall@5 cannot be "
                           "decided (4 questions: no test at 0.05 is possible)")
    assert "[" not in said and said.endswith("the cut chunks still compete with a handicap.")
    # clustered by document: two documents of two questions each -> the design effect is said
    units = {"q0": "d1", "q1": "d1", "q2": "d2", "q3": "d2"}
    assert "(2 documents: no test" in encoder_cut_finding(pd.DataFrame(rows), cut, "naive", "ctx_recall@5", units=units)
    # a row of the caller's family is read, not decided again
    family = pd.DataFrame([{"method": "semantic", "baseline": "naive", "metric": "ctx_recall@5",
                            **diff(-0.5, -0.7, -0.3, 0.001, CONTRADICTED)}])
    assert "trails naive here" in encoder_cut_finding(pd.DataFrame(rows), cut, "naive", "ctx_recall@5", decided=family)
    assert encoder_cut_finding(pd.DataFrame(rows), cut, "kg", "ctx_recall@5") == encoder_cut_sentence(cut)
