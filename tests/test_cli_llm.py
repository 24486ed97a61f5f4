"""``python -m rag_lab doctor`` and ``estimate`` against the fake OpenAI server and the offline reasoner."""
from __future__ import annotations

import json
from dataclasses import dataclass

import pandas as pd
import pytest
from fake_openai_server import FakeOpenAIServer, Reply, fake_openai  # noqa: F401  (fake_openai is a fixture)

from rag_lab.cli import main
from rag_lab.core.configs import Config
from rag_lab.core.generic_form import write_dataset
from rag_lab.reasoning.llm import LLMReasoner
from rag_lab.reasoning.prompts import PROMPTS
from rag_lab.reasoning.tokens import count_message_tokens
from rag_lab.evaluation.retrievers import REGISTRY, Method
from rag_lab.core.types import Dataset, Document

GOOD = {
    "entities": {"entities": [{"name": "Marie Curie", "type": "person", "description": "A physicist."},
                              {"name": "polonium", "type": "element", "description": "An element."}]},
    "triples": {"triples": [{"subject": "Marie Curie", "subject_type": "person", "relation": "discovered",
                             "object": "polonium", "object_type": "element"}]},
    "query_entities": {"entities": ["Marie Curie"]},
    "themes": {"themes": ["radioactivity", "Nobel Prize", "chemistry", "Paris", "discovery"]},
    "answer": {"answer": "Polonium and radium."},
    "choose_next": {"choice": 1, "reasoning": "it names the elements"},
    "summarize": {"summary": "Curie discovered polonium and radium and shared a Nobel Prize."},
}


def job_of(request: dict) -> str:
    return request["response_format"]["json_schema"]["name"]


def spec_for(server) -> str:
    return f"openai-compatible:fake-model@{server.base_url}"


# --- doctor ----------------------------------------------------------------------------------

def test_doctor_passes_every_job_on_good_replies(fake_openai, capsys):
    fake_openai.responder = lambda req: GOOD[job_of(req)]
    assert main(["doctor", "--llm", spec_for(fake_openai)]) == 0
    out = capsys.readouterr().out
    lines = {line.split()[0]: line for line in out.splitlines() if line.split() and line.split()[0] in PROMPTS}
    assert set(lines) == set(PROMPTS)
    assert all(" PASS " in line and "valid JSON" in line for line in lines.values())
    assert "2 entities" in lines["entities"] and "1 triples" in lines["triples"] and "5 themes" in lines["themes"]
    assert "next -> s2" in lines["choose_next"]         # choice 1 = the most similar candidate, id s2
    assert "verdict: 7/7 jobs pass" in out
    assert len(fake_openai.requests) == 7               # cache off by default: every job really asked


def test_doctor_reports_a_fallback_and_exits_1(fake_openai, capsys):
    fake_openai.responder = lambda req: "I cannot do that" if job_of(req) == "triples" else GOOD[job_of(req)]
    assert main(["doctor", "--llm", spec_for(fake_openai)]) == 1
    out = capsys.readouterr().out
    triples = next(line for line in out.splitlines() if line.startswith("triples"))
    assert "FAIL" in triples and "fallback" in triples and "0 triples" in triples
    assert "verdict: 6/7 jobs pass" in out and "NOT ready" in out


def test_doctor_flags_an_empty_result(fake_openai, capsys):
    fake_openai.responder = lambda req: {"entities": []} if job_of(req) == "entities" else GOOD[job_of(req)]
    assert main(["doctor", "--llm", spec_for(fake_openai)]) == 1
    entities = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("entities"))
    assert "FAIL" in entities and "valid JSON" in entities and "empty result" in entities


def test_doctor_on_an_unreachable_server_stops_asking(capsys):
    with FakeOpenAIServer() as server:
        url = server.base_url                            # a port that is closed once the server stops
    assert main(["doctor", "--llm", f"openai-compatible:m@{url}", "--retries", "0", "--timeout", "2"]) == 1
    out = capsys.readouterr().out
    assert "entities failed after 1 attempts" in out and "connection failed" in out
    assert out.count("skipped: the backend failed on an earlier job") == 6


def test_doctor_with_a_bad_spec_exits_2(capsys):
    assert main(["doctor", "--llm", "gpt-4o"]) == 2
    assert "LLM spec 'gpt-4o'" in capsys.readouterr().err


def test_doctor_offline(capsys):
    assert main(["doctor", "--llm", "offline"]) == 0
    out = capsys.readouterr().out
    assert "reasoner: offline" in out and "verdict: 7/7 jobs pass" in out
    entities = next(line for line in out.splitlines() if line.startswith("entities"))
    assert "Marie Curie" in entities and "offline" in entities


# --- estimate --------------------------------------------------------------------------------

DOCS = [Document("d1", "Marie Curie discovered polonium and radium in Paris.", "Curie"),
        Document("d2", "Ada Lovelace wrote the first published algorithm for Babbage's Analytical Engine.",
                 "Lovelace")]


@dataclass(frozen=True)
class NoKnobs(Config):
    """A test method's config: it has no knobs."""


class PlanningRetriever(Method):
    """A test-only method whose build would ask for the entities and the themes of every document."""

    def __init__(self, config=None, *, reasoner=None, embedder=None):
        super().__init__()
        self.config = NoKnobs.resolve(config)

    def planned_llm_calls(self, documents):
        return ([("entities", d.text) for d in documents] + [("themes", d.text) for d in documents]
                + [("entities", "   ")])             # an empty text: the reasoner makes no call for it


class BadPlanRetriever(PlanningRetriever):
    def planned_llm_calls(self, documents):
        return [("translate", "x")]


@pytest.fixture
def planner(monkeypatch, tmp_path):
    monkeypatch.setitem(REGISTRY, "test-planner", (f"{__name__}:PlanningRetriever", NoKnobs(), "plans calls"))
    monkeypatch.setitem(REGISTRY, "test-bad-plan", (f"{__name__}:BadPlanRetriever", NoKnobs(), "plans a bad call"))
    folder = tmp_path / "tiny"
    write_dataset(Dataset("tiny", DOCS), folder)
    return folder


def test_estimate_counts_calls_and_tokens_without_calling(fake_openai, planner, tmp_path, capsys):
    out_csv = tmp_path / "estimate.csv"
    code = main(["estimate", "--data", str(planner), "--methods", "test-planner,naive", "--llm", spec_for(fake_openai),
                 "--price-in", "0.5", "--price-out", "1.5", "--out", str(out_csv)])
    assert code == 0
    assert fake_openai.requests == []                    # nothing was sent
    table = pd.read_csv(out_csv)
    planned = table[table.method == "test-planner"].set_index("job")
    prompt = {job: sum(count_message_tokens(PROMPTS[job].messages(**kw)) for kw in inputs) for job, inputs in {
        "entities": [{"text": d.text} for d in DOCS], "themes": [{"text": d.text, "n": 5} for d in DOCS]}.items()}
    # two documents -> two calls per job (the blank text is skipped); allowances 400 and 60 per call
    assert planned.loc["entities", "calls"] == 2 and planned.loc["themes", "calls"] == 2
    assert planned.loc["entities", "prompt_tokens"] == prompt["entities"]
    assert planned.loc["themes", "prompt_tokens"] == prompt["themes"]
    assert planned.loc["entities", "est_completion_tokens"] == 2 * 400
    assert planned.loc["themes", "est_completion_tokens"] == 2 * 60
    # prices per 1M tokens
    assert planned.loc["entities", "est_cost"] == pytest.approx((prompt["entities"] * 0.5 + 800 * 1.5) / 1_000_000)
    naive = table[table.method == "naive"]               # a method that calls no reasoner
    assert naive.job.tolist() == ["(none)"] and naive.calls.tolist() == [0]
    out = capsys.readouterr().out
    assert "no call was made" in out and f"total test-planner: 4 calls, {sum(prompt.values())} prompt" in out
    assert "planning the calls locally" in out and "planned locally in test-planner " in out


def test_estimate_matches_what_the_reasoner_then_counts(fake_openai, planner, capsys):
    """The estimate's prompt tokens equal the tokens the LLM reasoner counts when it runs the same calls
    (server replies carry no usage, so the reasoner counts with the same tokenizer)."""
    assert main(["estimate", "--data", str(planner), "--methods", "test-planner", "--llm", spec_for(fake_openai)]) == 0
    out = capsys.readouterr().out
    fake_openai.responder = lambda req: Reply(json.dumps(GOOD[job_of(req)]), usage=None)
    r = LLMReasoner.from_spec(spec_for(fake_openai), cache=False)
    for d in DOCS:
        r.entities(d.text)
        r.themes(d.text, n=5)
    total = r.usage.total()
    assert total.llm_calls == 4
    assert f"total test-planner: 4 calls, {total.llm_prompt_tokens} prompt" in out


def test_estimate_needs_no_api_key_and_reports_offline(planner, monkeypatch, capsys):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert main(["estimate", "--data", str(planner), "--methods", "test-planner", "--llm", "openai:gpt-4o-mini"]) == 0
    out = capsys.readouterr().out
    assert "reasoner: openai:gpt-4o-mini" in out and "est_cost" not in out   # no prices, no cost column
    assert main(["estimate", "--data", str(planner), "--methods", "test-planner", "--llm", "offline"]) == 0
    assert "offline reasoner does these jobs locally" in capsys.readouterr().out


@pytest.mark.parametrize("argv,message", [
    (["--methods", "no-such-method"], "unknown method 'no-such-method'"),
    (["--methods", "test-bad-plan"], "unknown reasoner job 'translate'"),
    (["--methods", "test-planner", "--price-in", "-1"], "--price-in must be a non-negative price"),
    (["--methods", "test-planner", "--llm", "claude:x"], "LLM spec 'claude:x'"),
])
def test_estimate_bad_input_is_named(planner, capsys, argv, message):
    assert main(["estimate", "--data", str(planner), *argv]) == 2
    assert message in capsys.readouterr().err


# --- estimate: wall time for a concurrency ------------------------------------------------------

def test_wall_seconds_by_hand():
    from rag_lab.reasoning.estimate import wall_seconds
    assert wall_seconds(17, 8, 1.5) == 4.5                  # ceil(17 / 8) = 3 rounds of 1.5 s
    assert wall_seconds(17, 1, 1.5) == 25.5
    assert wall_seconds(0, 8, 1.5) == 0
    # 30,000 tokens under 10,000 a minute: the first minute's 10,000 go at once, the rest take 2 minutes
    assert wall_seconds(17, 8, 1.5, tokens=30_000, tokens_per_minute=10_000) == 120.0
    with pytest.raises(ValueError, match="concurrency >= 1"):
        wall_seconds(3, 0, 1.0)


def test_estimate_prints_wall_time_for_a_stated_latency_and_concurrency(planner, tmp_path, capsys):
    out_csv = tmp_path / "e.csv"
    for concurrency, per_job, total in (("1", 3.0, "6 s"), ("8", 1.5, "3 s")):
        assert main(["estimate", "--data", str(planner), "--methods", "test-planner", "--llm",
                     "openai-compatible:m@http://127.0.0.1:9/v1", "--latency", "1.5", "--concurrency", concurrency,
                     "--out", str(out_csv)]) == 0
        table = pd.read_csv(out_csv).set_index("job")
        assert table["est_wall_seconds"].tolist() == [per_job, per_job]     # two calls a job, 1.5 s each
        out = capsys.readouterr().out
        assert f"~{total} wall time" in out and f"wall time: {concurrency} call(s) at once" in out


def test_estimate_measures_latency_with_real_calls(fake_openai, planner, tmp_path, capsys, monkeypatch):
    from rag_lab.reasoning import estimate

    fake_openai.responder = lambda req: json.dumps(GOOD[job_of(req)])
    ticks = iter(range(100))                                # a fake clock: every reading is 0.25 s after the last
    monkeypatch.setattr(estimate, "clock", lambda: 0.25 * next(ticks))
    out_csv = tmp_path / "e.csv"
    assert main(["estimate", "--data", str(planner), "--methods", "test-planner", "--llm", spec_for(fake_openai),
                 "--measure-latency", "1", "--out", str(out_csv)]) == 0
    assert len(fake_openai.requests) == 2                   # one timed call per job, uncached
    out = capsys.readouterr().out
    assert "2 timed call(s) were made" in out and "latency measured: entities 0.25" in out
    # each job's call read the clock twice (0.25 s apart); two calls a job fit in one round at concurrency 8
    assert pd.read_csv(out_csv)["est_wall_seconds"].tolist() == [0.25, 0.25]


def test_estimate_without_latency_says_how_to_get_wall_time(planner, capsys):
    assert main(["estimate", "--data", str(planner), "--methods", "test-planner", "--llm", "offline",
                 "--concurrency", "4"]) == 0
    out = capsys.readouterr().out
    assert "runs one job at a time" in out and "give --latency SECONDS" in out and "keep 1 call(s) in flight" in out
    assert main(["estimate", "--data", str(planner), "--methods", "test-planner", "--latency", "1",
                 "--measure-latency", "2"]) == 2
    assert "not both" in capsys.readouterr().err
