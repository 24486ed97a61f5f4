"""Answer metrics: token F1 / EM by hand, ragas non-LLM metrics, and ragas LLM-judged metrics
with the local fake OpenAI-compatible server as the judge."""
import json
import math

import pytest

from fake_openai_server import FakeOpenAIServer
from rag_lab.evaluation.answer_metrics import AnswerSample, answer_scores, exact_match, token_f1
from rag_lab.evaluation.harness import evaluate, nan_counts
from rag_lab.reasoning.judge import Judge
from rag_lab.core.types import Dataset, Document, Question


def test_token_f1_and_exact_match_by_hand():
    # "The saffron risotto" -> [saffron, risotto]; "saffron rice" -> [saffron, rice]: 1 common token,
    # precision 1/2, recall 1/2 -> F1 0.5.
    assert token_f1("The saffron risotto", "saffron rice") == 0.5
    assert token_f1("Genoa.", "genoa") == 1.0 and exact_match("The Genoa!", "genoa") == 1.0
    assert token_f1("basil", "pecorino") == 0.0 and exact_match("basil", "pecorino") == 0.0
    assert token_f1("", "") == 1.0 and token_f1("", "x") == 0.0


def test_ragas_non_llm_metrics():
    s = AnswerSample("Where is pesto from?", "Pesto is from Genoa", ["Pesto comes from Genoa.", "Pizza is baked."],
                     "Pesto is from Genoa", ["Pesto comes from Genoa."])
    scores = answer_scores([s])
    assert scores["exact_match"] == [1.0] and scores["token_f1"] == [1.0]
    assert scores["rouge_l"] == [pytest.approx(1.0)] and scores["string_similarity"] == [pytest.approx(1.0)]
    assert scores["nonllm_context_recall"] == [pytest.approx(1.0)]
    # the gold context is retrieved first, the second context matches nothing: precision@1 = 1 -> ragas gives ~1
    assert scores["nonllm_context_precision"][0] == pytest.approx(1.0, abs=1e-6)
    assert "faithfulness" not in scores  # no judge, no LLM metrics


SAMPLES = [   # partial matches, several sentences (BLEU's ". " split), repeated and missing ids, no retrieval
    AnswerSample("Where is pesto from?", "Pesto comes from Genoa in Liguria. It uses basil", ["Pesto comes from Genoa.",
                 "Pizza is baked in Naples."], "Pesto is from Genoa. It has basil and pine nuts",
                 ["Pesto comes from Genoa.", "Basil is its herb."], ["c1", "c2", "c1"], ["c1", "c9"]),
    AnswerSample("What is risotto?", "Rice.", ["Risotto is rice cooked slowly in broth until creamy."], "A rice dish",
                 ["Risotto is a rice dish cooked in broth.", "Saffron"], ["c3"], ["c3"]),
    AnswerSample("What colours it?", "Saffron colours risotto alla milanese", ["x", "Saffron colours it yellow."],
                 "Saffron", ["Saffron colours risotto yellow."], ["c4", "c5"], ["c5", "c6", "c7"]),
    AnswerSample("Nothing?", "", [], "Genoa", ["Pesto comes from Genoa."], [], ["c1"]),
]


def test_our_non_llm_scores_are_ragas_scores():
    """The scorers ragas calls, called directly (answer_metrics.SCORERS), give ragas.evaluate's floats."""
    from rag_lab.evaluation.answer_metrics import ID_METRICS, NON_LLM_METRICS, _families, _ragas_metric, _run_ragas

    ours = answer_scores(SAMPLES)
    for names, applies, contexts in _families(None):
        idx = [i for i, s in enumerate(SAMPLES) if applies(s)]
        theirs = _run_ragas([SAMPLES[i] for i in idx], {n: _ragas_metric(c) for n, c in names.items()}, None, False,
                            contexts)
        for name in names:
            expected = [0.0 if n == 3 and "context" in name else v for n, v in zip(idx, theirs[name])]  # EMPTY_IS_ZERO
            assert [ours[name][i] for i in idx] == expected, name
    assert set(ours) == {*NON_LLM_METRICS, *ID_METRICS, "token_f1", "exact_match"}
    # a few by hand: ids c1, c2 retrieved (c1 twice), c1 relevant -> precision 1/2, recall 1/2 (c9 missed)
    assert ours["id_context_precision"][0] == 0.5 and ours["id_context_recall"][0] == 0.5
    assert ours["string_similarity"][3] == 0.0 and ours["nonllm_context_recall"][3] == 0.0   # nothing retrieved


def _instance(schema, defs):
    """A minimal value valid for a JSON schema (what a perfectly agreeable judge would say)."""
    if "$ref" in schema:
        return _instance(defs[schema["$ref"].split("/")[-1]], defs)
    if "anyOf" in schema:
        return _instance(next(s for s in schema["anyOf"] if s.get("type") != "null"), defs)
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object":
        # a committal judge: "noncommittal" is the one flag where 0 is the agreeable answer
        return {k: 0 if k == "noncommittal" else _instance(v, defs) for k, v in schema.get("properties", {}).items()}
    if kind == "array":
        return [_instance(schema.get("items", {"type": "string"}), defs)]
    if kind in ("integer", "number"):
        return 1
    if kind == "boolean":
        return True
    return "Pesto comes from Genoa"


def agreeable_judge(request):
    """Answer any ragas prompt with a valid instance of the JSON schema the prompt embeds."""
    prompt = request["messages"][-1]["content"]
    if isinstance(prompt, list):
        prompt = " ".join(p.get("text", "") for p in prompt)
    start = prompt.index("{", prompt.index("JSON Schema"))
    schema, _ = json.JSONDecoder().raw_decode(prompt[start:])
    return json.dumps(_instance(schema, schema.get("$defs", {})))


def test_llm_judged_metrics_through_a_fake_server(embedder):
    with FakeOpenAIServer() as server:
        server.responder = agreeable_judge
        judge = Judge.from_spec(f"openai-compatible:judge-model@{server.base_url}", embedder)
        s = AnswerSample("Where is pesto from?", "Pesto comes from Genoa", ["Pesto comes from Genoa."],
                         "Pesto comes from Genoa", ["Pesto comes from Genoa."])
        scores = answer_scores([s], judge)
        assert server.requests, "the judge was never called"
    # every statement supported, every context useful, every claim verified by the agreeable judge
    assert scores["faithfulness"] == [pytest.approx(1.0)]
    assert scores["llm_context_precision"][0] == pytest.approx(1.0, abs=1e-6)
    assert scores["llm_context_recall"] == [pytest.approx(1.0)]
    assert scores["factual_correctness"] == [pytest.approx(1.0)]
    # answer relevancy = cosine(question, the question the judge generated back) with our embedder
    q, generated = embedder.encode(["Where is pesto from?", "Pesto comes from Genoa"])
    assert scores["answer_relevancy"][0] == pytest.approx(float(q @ generated), abs=1e-4)


def test_a_failing_judge_gives_counted_nans(embedder):
    ds = Dataset("t", [Document("p", "Pesto comes from Genoa. Pizza is baked in Naples.")],
                 [Question("q1", "Where is pesto from?", "Genoa", ["p"], ["Pesto comes from Genoa."])])
    with FakeOpenAIServer() as server:
        server.responder = lambda req: "this is not JSON"
        judge = Judge.from_spec(f"openai-compatible:judge-model@{server.base_url}", embedder)
        df = evaluate(["naive"], ds, [1], reasoner="offline", judge=judge, progress=False)
    faith = df[df.metric == "faithfulness"]["value"]
    assert len(faith) == 1 and math.isnan(faith.iloc[0])
    assert nan_counts(df).loc["naive", "faithfulness"] == 1
    assert df.attrs["reasoner"] == "offline" and df.attrs["judge"].startswith("openai-compatible:judge-model@")
    assert df[df.metric == "token_f1"]["value"].notna().all()


def test_samples_without_gold_are_left_out_not_scored():
    with_gold = AnswerSample("q1", "Genoa", ["Pesto comes from Genoa."], "Genoa", ["Pesto comes from Genoa."])
    without = AnswerSample("q2", "Naples", ["Pizza is from Naples."])  # no reference, no gold contexts
    scores = answer_scores([with_gold, without])
    assert scores["token_f1"] == [1.0, None] and scores["rouge_l"][1] is None
    assert scores["nonllm_context_recall"][0] == pytest.approx(1.0) and scores["nonllm_context_recall"][1] is None


QUEUED_AFTER_RAGAS = """
from rag_lab.evaluation.answer_metrics import AnswerSample, _ragas_metric, _run_ragas
scores = _run_ragas([AnswerSample(question="q", response="saffron", contexts=["saffron colours it"], reference="saffron")],
                    {"rouge_l": _ragas_metric("RougeScore")}, None, False)
print(scores["rouge_l"])
"""


def test_requests_queued_behind_ragas_in_a_kernel_still_run():
    """JupyterLab's Run All sends every cell at once; ragas' default nest_asyncio patch of the kernel's
    loop left the requests queued behind its cell unanswered for good (seen: no reply in 90 s).
    ragas (the LLM-judged metrics' path, ``_run_ragas``; here with a metric that needs no judge) now runs
    on a worker thread with its own loop, so all three requests are answered."""
    import time
    from queue import Empty

    from jupyter_client.manager import start_new_kernel

    km, kc = start_new_kernel(kernel_name="rag_lab")
    try:
        ids = [kc.execute(QUEUED_AFTER_RAGAS), kc.execute("1 + 1"), kc.execute("2 + 2")]
        replies, deadline = {}, time.monotonic() + 120
        while len(replies) < 3 and time.monotonic() < deadline:
            try:
                msg = kc.get_shell_msg(timeout=1)
            except Empty:
                continue
            replies[msg["parent_header"].get("msg_id")] = msg["content"]["status"]
        assert [replies.get(i, "no reply") for i in ids] == ["ok", "ok", "ok"]
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def test_ragas_warning_for_a_list_without_ids_is_said_once_in_the_docs_not_per_sample():
    import logging
    from rag_lab.evaluation.answer_metrics import _QUIET_IDS

    said = logging.LogRecord("ragas.metrics._context_precision", logging.WARNING, "x", 1,
                             "No retrieved context IDs provided, cannot calculate precision.", None, None)
    other = logging.LogRecord("ragas.metrics._context_precision", logging.WARNING, "x", 1, "something else", None, None)
    assert _QUIET_IDS.filter(said) is False and _QUIET_IDS.filter(other) is True


def test_two_recalls_sentence_tells_the_span_recall_from_the_id_recall():
    import pandas as pd
    from rag_lab.evaluation.answer_metrics import two_recalls_sentence

    rows = pd.DataFrame({"method": ["naive"] * 4, "question_id": ["a", "b", "a", "b"],
                         "metric": ["ctx_recall", "ctx_recall", "id_context_recall", "id_context_recall"],
                         "k": [5, 5, 3, 3], "value": [1.0, 0.5, 0.5, 0.5]})
    text = two_recalls_sentence(rows, "naive", 5, 3)
    assert "ctx_recall@5 = 0.750" in text and "id_context_recall@3 = 0.500" in text and "counts half" in text
    assert two_recalls_sentence(rows, "semantic", 5, 3) == ""        # not scored: nothing to say
