"""Notebook 10's computed sentences about the run (compare/descriptions.py): questions scored per dataset, and
why GraLC strategies score alike (hand-made tables and a fake concept linker)."""
from types import SimpleNamespace

import pandas as pd

from rag_lab.compare.descriptions import gralc_twins_sentence, questions_sentences
from rag_lab.core.types import Dataset, Document, Question


def tidy(scores: dict) -> pd.DataFrame:
    return pd.DataFrame([(m, q, metric, 5.0, v) for (m, q, metric), v in scores.items()],
                        columns=["method", "question_id", "metric", "k", "value"])


def test_questions_sentences_count_scored_questions():
    a = tidy({("naive", "q1", "ctx_recall"): 1.0, ("naive", "q2", "ctx_recall"): 0.0, ("naive", "q3", "context_budget"): 9})
    b = tidy({("naive", "x1", "doc_recall"): 1.0})
    runs = {"a": SimpleNamespace(dataset=Dataset("a", [Document("d", "text")], [
                Question("q1", "?", gold_doc_ids=["d"]), Question("q2", "?", gold_doc_ids=["d"]), Question("q3", "?")])),
            "b": SimpleNamespace(dataset=Dataset("b", [Document("e", "text")], [Question("x1", "?", gold_doc_ids=["e"])]))}
    said = questions_sentences({"a": a, "b": b}, runs, 5)
    # by hand: a scores q1, q2 of its three questions (q3 has no gold: only its tokens); b scores x1
    assert said[0] == "Questions scored at k=5: a 2 of 3, b 1 of 1 (a question without gold is not scored)."
    # then each data set's estimand: a's two questions with gold come from one document, b's one question from one
    assert said[1] == ("a: Every interval below is a 95% interval for the mean over questions like these, with the 1 "
                       "document as the sampled units (n = 2 questions).")
    assert said[2].startswith("b: Every interval below") and "(n = 1 question)" in said[2]
    # then the leaderboard metrics each lacks (a: no document rows; b: no passage rows, so ranked by doc_recall)
    assert said[3] == ("a: no doc_mrr@5, doc_recall@5, ctx_mrr@5, ctx_precision@5, section_coverage_source@5 (not shown "
                       "in its tables).")           # still ranked by ctx_recall: no "ranked by" clause
    assert said[4] == ("b: no doc_mrr@5, ctx_mrr@5, ctx_recall@5, ctx_precision@5, section_coverage_source@5, "
                       "context_budget@5 (not shown in its tables); its questions carry gold documents but no gold "
                       "passages, so its tables are ranked by doc_recall@5, not ctx_recall@5.")
    assert len(said) == 5


class Linker:
    """Links the word "aspirin" (a stand-in for the vocabulary)."""
    def link(self, text):
        return [w for w in text.split() if w == "aspirin"]

    def concepts_in(self, text):
        return ["D001241"] if "aspirin" in text.split() else []


def test_gralc_twins_sentence_says_why_only_when_the_cause_holds():
    data = Dataset("t", [Document("d1", "aspirin and pasta"), Document("d2", "pasta")],
                   [Question("q1", "which pasta?"), Question("q2", "how long?")])
    same = {(m, q, "ctx_recall"): v for m in ("gralc-structure", "gralc-kg", "gralc-graph") for q, v in (("q1", 1.0), ("q2", 0.0))}
    retrievers = {"gralc-kg": SimpleNamespace(linker=Linker())}
    timed = pd.concat([tidy(same), pd.DataFrame([(m, "q1", "latency_seconds", float("nan"), t) for m, t in
                                                  (("gralc-structure", 0.1), ("gralc-kg", 0.2), ("gralc-graph", 0.3))],
                                                 columns=["method", "question_id", "metric", "k", "value"])])
    text = gralc_twins_sentence(data, timed, retrievers)      # latency (no k) differs run to run: not a score
    # by hand: both later strategies equal gralc-structure on every score; no question says "aspirin"; one mention in d1
    assert text == ("t: gralc-graph scores as gralc-structure: none of the 2 questions mentions a concept of the "
                    "vocabulary, so its graph term kg_prox is 0 for every chunk and only the cosine ranks; gralc-kg scores "
                    "as gralc-structure: KG infusion moves only the token vectors of linked concept mentions, the 2 "
                    "documents hold only 1, and here that moves no hit scored (every per-question score is equal).")
    # a question that mentions a concept: the graph term is not 0, so that cause is not claimed
    asked = Dataset("t", data.documents, [Question("q1", "aspirin dose?"), Question("q2", "how long?")])
    assert "kg_prox" not in gralc_twins_sentence(asked, tidy(same), retrievers)
    differ = dict(same)
    differ[("gralc-kg", "q1", "ctx_recall")] = 0.0
    differ[("gralc-graph", "q1", "ctx_recall")] = 0.5
    assert gralc_twins_sentence(data, tidy(differ), retrievers) == ""


def test_alike_sentence_adds_the_gralc_cause_to_the_twins_line():
    from rag_lab.compare.descriptions import alike_sentence

    data = Dataset("t", [Document("d1", "pasta")], [Question("q1", "which pasta?")])
    scores = tidy({(m, "q1", "ctx_recall"): 1.0 for m in ("gralc-structure", "gralc-kg")})
    run = SimpleNamespace(dataset=data, same={}, retrievers={"gralc-kg": SimpleNamespace(linker=Linker())})
    assert alike_sentence(run, scores) == ("t: no two methods return the same chunks, but some score the same on every "
                                           "question:\nt: gralc-kg scores as "
                                           "gralc-structure: KG infusion moves only the token vectors of linked concept "
                                           "mentions, the 1 document holds none, and here that moves no hit scored "
                                           "(every per-question score is equal).")
    assert alike_sentence(run, tidy({("gralc-kg", "q1", "ctx_recall"): 1.0})) == "t: no two methods retrieve exactly alike."
