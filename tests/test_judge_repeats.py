"""--judge-repeats: the judge asked again per answer, each repeat under cache keys of its own, the
judged score the mean over repeats and the judge's spread reported per sample and in the summary."""
from __future__ import annotations

import json

import pytest

from fake_openai_server import FakeOpenAIServer
from rag_lab.cli import main
from rag_lab.core.generic_form import write_dataset
from rag_lab.core.types import Dataset, Document, Question
from rag_lab.evaluation.answer_metrics import AnswerSample, answer_scores
from rag_lab.reasoning.judge import Judge
from test_answer_metrics_partial import CONTEXTS, QUESTION, REFERENCE, RESPONSE, verbatim_judge


def moody(verdict_calls: list):
    """The verbatim judge, except that every second time it is asked whether statements are supported
    it says none is: a judge whose verdicts change between two asks of the same prompt."""
    def reply(request: dict) -> str:
        text = verbatim_judge(request)
        answer = json.loads(text)
        if "statements" in answer and answer["statements"] and isinstance(answer["statements"][0], dict):
            verdict_calls.append(1)
            if len(verdict_calls) % 2 == 0:
                answer["statements"] = [{**s, "verdict": 0} for s in answer["statements"]]
                return json.dumps(answer)
        return text
    return reply


def test_repeats_average_the_judge_and_report_its_spread(embedder, tmp_path):
    calls: list = []
    with FakeOpenAIServer() as server:
        server.responder = moody(calls)
        judge = Judge.from_spec(f"openai-compatible:moody@{server.base_url}", embedder, cache=tmp_path / "judge")
        sample = AnswerSample(QUESTION, RESPONSE, CONTEXTS, REFERENCE)
        once = answer_scores([sample], judge)
        twice = answer_scores([sample], judge, repeats=2)
        asked = len(calls)
        again = answer_scores([sample], judge, repeats=2)      # both repeats replayed from the cache
        assert len(calls) == asked
    # repeat 0: 3 of the 4 statements are in the contexts -> 0.75 (cached, so `twice` reuses it);
    # repeat 1: the judge says none is -> 0.0. Mean 0.375, sd of (0.75, 0) = 0.75 / sqrt(2) = 0.5303
    assert once["faithfulness"] == [pytest.approx(0.75)] and "faithfulness_judge_sd" not in once
    assert twice["faithfulness"] == [pytest.approx(0.375)]
    assert twice["faithfulness_judge_sd"] == [pytest.approx(0.75 / 2 ** 0.5)]
    assert again == twice
    # a metric the judge answers the same way both times has no spread
    assert twice["llm_context_recall_judge_sd"] == [pytest.approx(0.0)]
    with pytest.raises(ValueError, match="positive integer"):
        answer_scores([sample], judge, repeats=0)


def test_eval_judge_repeats_reaches_the_rows_the_summary_and_the_sidecar(embedder, tmp_path, capsys):
    docs = [Document("pesto", " ".join(CONTEXTS))]
    data = write_dataset(Dataset("t", docs, [Question("q1", QUESTION, REFERENCE, ["pesto"], [CONTEXTS[1]])]),
                         tmp_path / "data")
    with FakeOpenAIServer() as server:
        server.responder = moody([])
        out = tmp_path / "r.csv"
        assert main(["eval", "--data", str(data), "--methods", "naive", "--k", "1", "--reasoner", "offline",
                     "--judge", f"openai-compatible:moody@{server.base_url}", "--judge-repeats", "2",
                     "--out", str(out)]) == 0
    summary = out.with_name("r.summary.csv").read_text(encoding="utf-8")
    assert "faithfulness_judge_sd@5" in summary and "faithfulness@5" in summary
    assert json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))["judge_repeats"] == 2
    assert main(["eval", "--data", str(data), "--methods", "naive", "--judge-repeats", "2"]) == 2
    assert "give --judge SPEC too" in capsys.readouterr().err
