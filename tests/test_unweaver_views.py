"""Notebook 02's sentences on hand-made inputs: the voting classes of a tiny index, the rules'
agreement, why they agree, and the findings paragraph."""
from types import SimpleNamespace

import re
import numpy as np
import pytest
import pandas as pd

from rag_lab.core.types import Retrieval
from rag_lab.methods.unweaver.classes import EntityClass, Mention
from rag_lab.evaluation.statistics import UNDECIDABLE
from rag_lab.methods.unweaver.paper import caveats, claim_family, paper_fc_gap
from rag_lab.methods.unweaver.views import (agreement_sentence, answer_classes, gold_passage_sentence, rule_agreement,
                                            voting_classes, why_rules_agree)

S1 = "In Lombardy the signature dish is risotto alla milanese."
S2 = "Saffron colours the risotto."
S3 = "Saffron grows in Abruzzo."


def tiny_index():
    """Two chunks; 'Milan' and 'risotto alla milanese' share sentence S1; 'saffron' spans both chunks."""
    chunks = [SimpleNamespace(id="c0", text=f"{S1} {S2}"), SimpleNamespace(id="c1", text=S3)]
    mentions = [Mention(0, 0, "Lombardy", "GPE", S1, "lombardy"), Mention(1, 0, "risotto alla milanese", "CONCEPT", S1,
                                                                          "risotto alla milanese"),
                Mention(2, 0, "Saffron", "CONCEPT", S2, "saffron"), Mention(3, 1, "Saffron", "CONCEPT", S3, "saffron")]
    classes = [EntityClass(0, "lombardy", "Lombardy", [0], [0], f"Lombardy: {S1}"),
               EntityClass(1, "risotto alla milanese", "risotto alla milanese", [1], [0], f"risotto alla milanese: {S1}"),
               EntityClass(2, "saffron", "Saffron", [2, 3], [0, 1], f"Saffron: {S2} {S3}")]
    sims = np.array([0.9, 0.8, 0.3])
    return SimpleNamespace(chunks=chunks, mentions=mentions, classes=classes,
                           class_similarities=lambda q: (sims, None))


def test_voting_classes_show_copied_sentences_shared_by_voters():
    uw = tiny_index()
    ret = Retrieval("q", [], {"classes": [{"class": 0, "name": "Lombardy", "similarity": 0.9, "chunks": ["c0"]},
                                          {"class": 1, "name": "risotto alla milanese", "similarity": 0.8,
                                           "chunks": ["c0"]}]})
    table = voting_classes(uw, ret)
    assert table["class"].tolist() == ["Lombardy", "risotto alla milanese"]
    assert table["description (embedded)"].tolist() == [S1, S1]
    assert table["copied from its chunk"].all() and table["voters with the same description"].tolist() == [2, 2]
    answers = answer_classes(uw, "Which spice colours risotto alla milanese?", "Saffron, grown in Abruzzo.")
    assert answers.to_dict("records") == [{"class": "Saffron", "rank": 3, "of": 3, "similarity": 0.3, "mentions": 2,
                                           "chunks": 2}]
    text = why_rules_agree(table, {"questions": 4, "same list": 2, "same set": 3}, answers, k=1,
                           rules=["approval", "pav", "cc"], reasoner="offline")
    assert text.startswith("Why approval, pav and cc elect the same chunks: 2 of the 2 voting classes embed "
                           "descriptions copied word for word from their chunk, and the 2 voters embed only 1 distinct "
                           "text and approve 1 chunk between them, for k = 1 seats — every approved chunk is elected "
                           "whatever the rule")
    assert "Over 4 questions the rules elect the same set on 3 and the same ranked list on 2." in text
    assert "'Saffron' (2 mentions in 2 chunks), is #3 of 3 by similarity to the question: not among the 2 voters" in text
    assert "a class is in effect a sentence" in text and "(Saffron: what it is, in words of its own)" in text
    # the same on the worked question: the "why they agree" opening; different sets: said so, counted by hand
    same = {"approval": ["c0"], "pav": ["c0"], "cc": ["c0"]}
    assert why_rules_agree(table, {}, answers, 1, ["approval", "pav", "cc"], "offline", elected=same).startswith(
        "Why approval, pav and cc elect the same chunks: 2 of the 2")
    apart = {"approval": ["c0", "c1"], "pav": ["c0", "c2"], "cc": ["c1", "c0"]}
    text = why_rules_agree(table, {}, answers, 2, ["approval", "pav", "cc"], "offline", elected=apart)
    assert text.startswith("Approval, pav and cc elect different chunks here (3 distinct chunks between them) although 2 "
                           "of the 2 voting classes embed descriptions copied word for word from their chunk, and the 2 "
                           "voters embed only 1 distinct text and approve 1 chunk between them, for k = 2 seats — the "
                           "proportional rules still found voters left unrepresented to favour.")
    assert "Why approval" not in text


class ElectsByHand:
    """A retriever whose rule variants elect the chunk ids of ``elected`` (query -> rule -> ids), as
    ``variant(rule=...)`` of an UnWeaver index would."""

    def __init__(self, elected, rule=None):
        self.elected, self.rule, self.name = elected, rule, f"by-hand-{rule}"

    def variant(self, rule):
        return ElectsByHand(self.elected, rule)

    def retrieve(self, query, k):
        from rag_lab.core.types import Chunk, Hit
        return Retrieval(query, [Hit(Chunk(c, "d", c, 0, 1), 1.0) for c in self.elected[query][self.rule][:k]])


def test_rule_agreement_counts_lists_and_sets():
    elected = {"q1": {"approval": ["a", "b"], "pav": ["a", "b"], "cc": ["a", "b"]},
               "q2": {"approval": ["a", "b"], "pav": ["b", "a"], "cc": ["a", "b"]},
               "q3": {"approval": ["a", "b"], "pav": ["a", "c"], "cc": ["a", "b"]}}
    questions = [SimpleNamespace(id=q, question=q) for q in elected]
    retriever = ElectsByHand(elected)
    assert rule_agreement(retriever, questions, 2, ["approval", "pav", "cc"]) == {"questions": 3, "same list": 1, "same set": 2}
    # at k = 1 only the first seat counts: q2's pav elects b, q3's every rule a
    assert rule_agreement(retriever, questions, 1, ["approval", "pav", "cc"]) == {"questions": 3, "same list": 2, "same set": 2}
    assert rule_agreement(retriever, questions, 2, ["approval", "cc"]) == {"questions": 3, "same list": 3, "same set": 3}


def test_agreement_sentence_draws_its_conclusion_from_the_counts():
    # by hand: 5 of 18 is not most, so the rows are not said to differ little (the contradiction)
    few = agreement_sentence("ml", {"questions": 18, "same list": 2, "same set": 5})
    assert few == ("on ml approval, PAV and CC elect the same set on only 5 of 18 questions and different sets on 13, "
                   "so their rows can differ")
    assert "differ little" not in few
    # exactly half is not most either
    assert "differ little" not in agreement_sentence("x", {"questions": 4, "same list": 0, "same set": 2})
    # 13 of 18 is most: differ little, with the 5 questions that differ named
    assert agreement_sentence("ml", {"questions": 18, "same list": 9, "same set": 13}) == (
        "on ml approval, PAV and CC elect the same set on 13 of 18 questions, so their rows differ little "
        "(a different set on 5)")
    # every set equal but not every order: recall and precision equal, rank scores may differ
    assert agreement_sentence("ic", {"questions": 2, "same list": 1, "same set": 2}) == (
        "on ic approval, PAV and CC elect the same set on 2 of 2 questions (the same ranked list on 1), so their "
        "recall and precision are equal and only order-sensitive scores such as MRR and nDCG can differ")
    assert agreement_sentence("ic", {"questions": 2, "same list": 2, "same set": 2}).endswith(
        "(the same ranked list on all 2), so their rows are identical")
    for bad in ({"questions": 2, "same list": 2, "same set": 1}, {"questions": 2, "same list": 0, "same set": 3},
                {"questions": 0, "same list": 0, "same set": 0}):
        with pytest.raises(ValueError, match="agreement for ic"):
            agreement_sentence("ic", bad)


def test_gold_passage_sentence_reads_each_passage_and_each_rules_recall():
    table = pd.DataFrame({"document": ["a", "b", "b"], "text": ["x", "y", "z"],
                          "approval": ["rank 1", "not elected", "rank 3"], "pav": ["rank 2", "rank 4", "not elected"],
                          "cc": ["rank 1", "not elected", "not elected"]}, index=pd.Index(["P1", "P2", "P3"], name="passage"))
    # by hand: P1 by all three; P2 by pav only; P3 by approval only; recall approval 2/3, pav 2/3, cc 1/3
    assert gold_passage_sentence(table, 5) == (
        "Of the 3 gold passages: P1 is elected by all of the 3 rules; P2 is elected by 1 (pav) of the 3 rules; "
        "P3 is elected by 1 (approval) of the 3 rules — context recall@5 on this question: approval 0.67, pav 0.67, "
        "cc 0.33.")
    one = table.iloc[:1]
    assert gold_passage_sentence(one, 5) == ("Of the 1 gold passage: P1 is elected by all of the 3 rules — every "
                                             "rule's context recall@5 on this question is 1.00.")
    assert gold_passage_sentence(table.iloc[:0], 5).startswith("This question lists no gold passages")


def tidy(by_method):
    return pd.DataFrame([{"method": m, "question_id": f"q{i}", "metric": metric, "k": 5, "value": v}
                         for m, metrics in by_method.items() for metric, values in metrics.items()
                         for i, v in enumerate(values)])


def test_three_questions_are_said_once_without_numbers_with_the_caveats():
    from rag_lab.evaluation.findings import finding_sentences

    results = tidy({"unweaver": {"ctx_recall": [1, 1, 1], "doc_mrr": [1, 1, 1]},
                    "naive": {"ctx_recall": [1, 1, 1], "doc_mrr": [0.5, 0.5, 0.5]}})
    family = claim_family(results, 5, 5, dataset="tiny")
    # three questions: p is at least 2/8 = 0.25, so nothing can be decided. ctx_recall: every difference 0, p = 1;
    # doc_mrr: +0.5 on 3, p = 2 * 1.5^-3 = 0.59; against the margin (-0.05) with every difference 0:
    # P(0.95 E0 >= 0.05 (E1 + E2 + E3)) = 0.95^3 = 0.857, p = 1
    why = "3 questions: no test at 0.05 is possible"
    # a design that cannot decide: every comparison (the claim among them) said once, with its reason, no numbers
    assert finding_sentences(family) == [
        f"3 comparisons {UNDECIDABLE} ({why}): unweaver - naive; ctx_recall@5, ctx_recall@5 (threshold -0.05), doc_mrr@5; "
        "no interval, MDE or verdict is shown for them."]
    assert set(family["family_size"]) == {3}
    # clustered by document: the reason names the documents
    clustered = claim_family(results, 5, 5, units={"q0": "a", "q1": "a", "q2": "b"}, dataset="tiny")
    assert "(2 documents: no test at 0.05 is possible)" in finding_sentences(clustered)[0]
    text = "\n".join(caveats({"tiny": family}, 5, "offline", False, agreement={"tiny": {"questions": 3, "same list": 3, "same set": 3}}))
    gap = paper_fc_gap().abs().max()
    assert f"at most {gap:.4f} in factual correctness, another metric" in text
    # 3 questions cannot decide: no interval width is quoted for them
    assert "no context-recall comparison here can be decided, so a difference the size" in text
    assert "could not be told from zero" in text
    assert "answers are extractive" in text and "needs a judge and was not computed" in text
    assert "On tiny approval, PAV and CC elect the same set on 3 of 3 questions (the same ranked list on all 3), so " \
           "their rows are identical" in text
    assert max(map(len, text.split("\n"))) <= 400
    # not both scored: no family, nothing to say
    assert claim_family(tidy({"unweaver": {"ctx_recall": [1, 1]}}), 5, 5, dataset="x").empty


def test_caveats_quote_the_width_of_the_context_recall_difference_that_can_decide():
    from rag_lab.evaluation.statistics import paired_difference

    # 20 questions: unweaver ahead by 0.5 on half of them. The superiority test can decide here (its floor is
    # 2/2^20), so its interval's width is quoted, even where the non-inferiority claim itself cannot be decided
    ours, theirs = [1.0] * 10 + [0.5] * 10, [0.5] * 20
    results = tidy({"unweaver": {"ctx_recall": ours, "doc_mrr": ours}, "naive": {"ctx_recall": theirs, "doc_mrr": theirs}})
    text = "\n".join(caveats({"mid": claim_family(results, 5, 5, dataset="mid")}, 5, "offline", False))
    d = paired_difference(ours, theirs)
    width = d.ci_high - d.ci_low
    assert f"the context-recall intervals here are {width:.2f} to {width:.2f} wide" in text
    assert "no context-recall comparison here can be decided" not in text
