"""The judge's concurrency and per-job timeout reach ragas (its RunConfig) and are recorded in a result's
sidecar by ``eval --judge-concurrency``."""
import json

import pytest
from fake_openai_server import FakeOpenAIServer
from test_answer_metrics import agreeable_judge

from rag_lab.cli import main
from rag_lab.core.generic_form import write_dataset
from rag_lab.core.types import Dataset, Document, Question
from rag_lab.evaluation.answer_metrics import AnswerSample, answer_scores
from rag_lab.reasoning.judge import Judge

SAMPLES = [AnswerSample(f"Where is dish {i} from?", f"Dish {i} comes from Genoa", [f"Dish {i} comes from Genoa."],
                        f"Dish {i} comes from Genoa", [f"Dish {i} comes from Genoa."]) for i in range(4)]


def test_the_judge_settings_reach_ragas(embedder, monkeypatch):
    """ragas runs at most ``concurrency`` scoring jobs at once (a job may itself send a few requests)
    and gives each ``timeout`` seconds: both go to ``ragas.evaluate`` as its RunConfig."""
    import ragas

    seen = []
    real = ragas.evaluate

    def spy(*args, **kwargs):
        seen.append(kwargs.get("run_config"))
        return real(*args, **kwargs)
    monkeypatch.setattr(ragas, "evaluate", spy)
    with FakeOpenAIServer() as server:
        server.responder = agreeable_judge
        judge = Judge.from_spec(f"openai-compatible:judge-model@{server.base_url}", embedder, cache=False,
                                concurrency=2, job_timeout=30)
        assert judge.settings() == {"concurrency": 2, "timeout": 30}
        scores = answer_scores(SAMPLES, judge)
        assert len(server.requests) > 4
    judged = [c for c in seen if c is not None]
    assert judged and all((c.max_workers, c.timeout) == (2, 30) for c in judged)
    assert scores["faithfulness"] == [pytest.approx(1.0)] * 4


def test_bad_judge_settings_are_named(embedder):
    with pytest.raises(ValueError, match="judge concurrency must be a positive integer, got 0"):
        Judge("j", None, None, concurrency=0)
    with pytest.raises(ValueError, match="judge timeout must be a positive number of seconds"):
        Judge("j", None, None, timeout=-1)


def test_eval_records_the_judge_settings_in_the_sidecar(tmp_path, capsys):
    folder = tmp_path / "tiny"
    write_dataset(Dataset("tiny", [Document("p", "Pesto comes from Genoa. Pizza is baked in Naples.")],
                          [Question("q1", "Where is pesto from?", "Genoa", ["p"], ["Pesto comes from Genoa."])]),
                  folder)
    with FakeOpenAIServer() as server:
        server.responder = agreeable_judge
        spec = f"openai-compatible:judge-model@{server.base_url}"
        assert main(["eval", "--data", str(folder), "--methods", "naive", "--k", "1", "--reasoner", "offline",
                     "--judge", spec, "--judge-concurrency", "3", "--judge-timeout", "45",
                     "--out", str(tmp_path / "r.csv")]) == 0
    sidecar = json.loads((tmp_path / "r.json").read_text())
    assert sidecar["judge"] == spec and sidecar["judge_settings"] == {"concurrency": 3, "timeout": 45.0}
    assert main(["eval", "--data", str(folder), "--judge-concurrency", "3"]) == 2
    assert "give --judge SPEC too" in capsys.readouterr().err
