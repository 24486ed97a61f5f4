"""The encoder-cut count and its sentence, on texts whose word-piece counts are known by hand."""
import math

from rag_lab.evaluation.statistics import Difference
from rag_lab.evaluation.truncation import encoder_cut, encoder_cut_sentence


def diff(mean, low, high, p):
    """A 20-question paired difference with the given interval and p (t procedure, no exact bound)."""
    return Difference(mean, 20, 0, 20, 1.0, low, high, "t", 0.0, p, False, 0, 0.0, 0.1)


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
    loss = diff(-0.2, -0.35, -0.05, 0.01)
    said = encoder_cut_sentence(cut, loss, "naive", "ctx_recall@5")
    assert said.endswith("That is a likely part of why semantic trails naive here: semantic - naive on ctx_recall@5 = "
                         "-0.200 [-0.350, -0.050] (n = 20), below zero.")
    tie = diff(-0.1, -0.3, 0.1, 0.3)
    assert "the interval spans zero, so these questions show no loss to explain" in encoder_cut_sentence(
        cut, tie, "naive", "ctx_recall@5")
    ahead = diff(0.1, 0.05, 0.2, 0.01)
    assert "even so semantic is ahead of naive here" in encoder_cut_sentence(cut, ahead, "naive", "ctx_recall@5")


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
    # four questions, every one lost: the exact sign-flip p is 2/2^4 = 0.125 at best, so no loss can be
    # told at this n and the interval is the whole range (the old bootstrap said [-1, -1], "below zero")
    assert said.endswith("semantic - naive on ctx_recall@5 = -1.000 [-1.000, 1.000] (n = 4): too few questions to "
                         "tell a loss from none (no p below 0.05 is possible), but the cut chunks still compete with a "
                         "handicap.")
    assert encoder_cut_finding(pd.DataFrame(rows), cut, "kg", "ctx_recall@5") == encoder_cut_sentence(cut)
