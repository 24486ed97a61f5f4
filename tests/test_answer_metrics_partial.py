"""ragas answer metrics at partial, hand-computed values (tests/test_answer_metrics.py checks the
all-agreeing case, where every score is 1.0 and a metric that ignored its inputs would pass too).

Non-LLM: ROUGE-L, string similarity and non-LLM context recall on strings chosen so the value can
be worked out by hand. LLM-judged: a scripted judge on the local fake OpenAI-compatible server that
splits texts into sentences and says a sentence is supported only when its context holds it word
for word, so it disagrees with a known share of the statements."""
from __future__ import annotations

import json
import re

import pytest

from fake_openai_server import FakeOpenAIServer
from rag_lab.evaluation.answer_metrics import AnswerSample, answer_scores
from rag_lab.reasoning.judge import Judge

QUESTION = "Where is pesto from and what is in it?"
RESPONSE = "Pesto comes from Genoa. Pesto uses basil. Pesto uses olive oil. Pesto is blue."
CONTEXTS = ["Pizza is baked in Naples.", "Pesto comes from Genoa. Pesto uses basil. Pesto uses olive oil."]
REFERENCE = "Pesto comes from Genoa. Pesto uses pine nuts. Pesto uses cheese."


def test_rouge_l_string_similarity_and_context_recall_by_hand():
    # ROUGE-L (ragas: rouge_score's rougeL F-measure, Porter stemmer; reference = target):
    #   response  "Pesto comes from Genoa in Liguria" -> pesto come from genoa in liguria (6 tokens)
    #   reference "Pesto is from Genoa"               -> pesto is from genoa (4 tokens)
    #   LCS = pesto from genoa = 3; precision 3/6, recall 3/4; F = 2 * .5 * .75 / 1.25 = 0.6
    rouge = AnswerSample("q", "Pesto comes from Genoa in Liguria", ["c"], "Pesto is from Genoa")
    # string similarity = 1 - Levenshtein / longer length: "Genoa" -> "Genova" is one insertion, 1 - 1/6
    similar = AnswerSample("q", "Genoa", ["c"], "Genova")
    # non-LLM context recall: a reference context counts when some retrieved context is > 0.5 similar.
    # "Pesto comes from Genoa." is retrieved verbatim (1.0); "Saffron" (7 chars) is at most 7/23 similar to
    # either retrieved text (the distance is at least the difference in length): 1 of 2 recalled
    recall = AnswerSample("q", "x", ["Pesto comes from Genoa.", "Pizza is baked in Naples."], None,
                          ["Pesto comes from Genoa.", "Saffron"])
    scores = answer_scores([rouge, similar, recall])
    assert scores["rouge_l"][:2] == [pytest.approx(0.6), 0.0]      # "genoa" and "genova" share no token
    assert scores["string_similarity"][1] == pytest.approx(5 / 6)
    assert scores["nonllm_context_recall"][2] == pytest.approx(0.5)
    assert scores["rouge_l"][2] is None and scores["nonllm_context_recall"][:2] == [None, None]


def sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=\.)\s+", text.strip()) if s]


def verbatim_judge(request: dict) -> str:
    """Reads the input ragas put at the end of its prompt and answers by the output schema's title."""
    prompt = request["messages"][-1]["content"]
    if isinstance(prompt, list):
        prompt = " ".join(p.get("text", "") for p in prompt)
    schema, _ = json.JSONDecoder().raw_decode(prompt[prompt.index("{", prompt.index("JSON Schema")):])
    data = json.loads(prompt[prompt.rindex("\ninput: ") + len("\ninput: "):prompt.rindex("\nOutput: ")])
    kind = schema["title"]
    if kind == "StatementGeneratorOutput":                       # faithfulness: the answer's statements
        return json.dumps({"statements": sentences(data["answer"])})
    if kind == "ClaimDecompositionOutput":                       # factual correctness: a text's claims
        return json.dumps({"claims": sentences(data["response"])})
    if kind == "NLIStatementOutput":                             # supported only if the context holds it
        return json.dumps({"statements": [{"statement": s, "reason": "verbatim?", "verdict": int(s in data["context"])}
                                          for s in data["statements"]]})
    if kind == "ContextRecallClassifications":                   # reference sentences found in the context
        return json.dumps({"classifications": [{"statement": s, "reason": "verbatim?", "attributed": int(s in data["context"])}
                                               for s in sentences(data["answer"])]})
    if kind == "Verification":                                   # a context is useful if it states the reference
        return json.dumps({"reason": "verbatim?", "verdict": int(any(s in data["answer"] for s in sentences(data["context"])))})
    if kind == "ResponseRelevanceOutput":                        # the question asked, committal
        return json.dumps({"question": QUESTION, "noncommittal": 0})
    raise AssertionError(f"the scripted judge was sent a prompt it does not know: {kind}")


def test_llm_judged_metrics_with_a_judge_that_disagrees_on_a_known_share(embedder):
    with FakeOpenAIServer() as server:
        server.responder = verbatim_judge
        judge = Judge.from_spec(f"openai-compatible:verbatim-judge@{server.base_url}", embedder, cache=False)
        scores = answer_scores([AnswerSample(QUESTION, RESPONSE, CONTEXTS, REFERENCE)], judge)
        assert server.requests, "the judge was never called"
    # faithfulness: the response's 4 statements, 3 of them word for word in the contexts ("Pesto is blue." not)
    assert scores["faithfulness"] == [pytest.approx(0.75)]
    # LLM context recall: the reference's 3 sentences, only "Pesto comes from Genoa." in the contexts
    assert scores["llm_context_recall"] == [pytest.approx(1 / 3)]
    # LLM context precision: verdicts (0, 1) in retrieval order; average precision = (1/2 * 1) / 1 = 0.5
    assert scores["llm_context_precision"] == [pytest.approx(0.5, abs=1e-6)]
    # factual correctness (F1): of the response's 4 claims 1 is in the reference (tp 1, fp 3); of the
    # reference's 3 claims 2 are not in the response (fn 2); F1 = 2 * 1 / (2 * 1 + 3 + 2) = 2/7, rounded by ragas
    assert scores["factual_correctness"] == [pytest.approx(0.29)]
    # answer relevancy: the judge gives the question back, so the cosine is 1, and it is committal
    assert scores["answer_relevancy"] == [pytest.approx(1.0, abs=1e-4)]
