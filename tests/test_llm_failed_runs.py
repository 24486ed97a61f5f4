"""A failed LLM run never poisons what comes after (issue 48), against the local fake OpenAI-compatible
server: an index built with fallbacks is not stored and the next run asks again for exactly those inputs;
a job whose every call fell back fails the run; the judge keeps only replies ragas parsed; a key a server
echoes reaches no log, exception or printed line; a call's timeout is a deadline for the whole call; a
200 that is not a JSON completion, a cut-off reply, a refused max_tokens value and an oversized reply
are each reported for what they are. Each test fails on the code before the fix."""
from __future__ import annotations

import json
import re
import logging
import time

import pandas as pd
import pytest
from fake_openai_server import FakeOpenAIServer, Reply, fake_openai  # noqa: F401  (fixture)
from schema_responder import responder as good_model

from rag_lab.evaluation import harness
from rag_lab.core.types import Dataset, Document, Question
from rag_lab.evaluation import index_store
from rag_lab.evaluation.index_reuse import build_or_reuse
from rag_lab.evaluation.index_store import IndexStore
from rag_lab.reasoning.backends import parse_spec
from rag_lab.reasoning.batch import AllFellBack, run_batch
from rag_lab.reasoning.llm import LLMBackendError, LLMReasoner, LLMUnavailableError
from rag_lab.reasoning.llm_cache import LLMCache

SECRET = "sk-echoed-SECRET-7f3a9c0d2b"
DOCS = [Document("d1", "Parmigiano Reggiano comes from Parma and Reggio Emilia. The Consorzio checks every wheel."),
        Document("d2", "Pesto comes from Genoa in Liguria. Basil from Pra is ground with Pecorino."),
        Document("d3", "Risotto alla Milanese is cooked in Milan with saffron from Abruzzo.")]


def llm(server, cache, **kw):
    kw.setdefault("retry_base_delay", 0.01)
    kw.setdefault("timeout", 10)
    return LLMReasoner.from_spec(f"openai-compatible:fake-model@{server.base_url}", concurrency=kw.pop("concurrency", 2),
                                 cache=cache, **kw)


def job_text(request) -> str:
    return request["messages"][-1]["content"]


def bad_json_for(word: str | None):
    """The schema responder, except that every request whose prompt holds ``word`` (None: every request)
    gets a reply that is not JSON."""
    def reply(request):
        if word is None or any(word in str(m.get("content")) for m in request["messages"]):
            return "Sorry, I am unable to produce JSON today."
        return good_model(request)
    return reply


def sketch(reasoner, embedder):
    from rag_lab.methods import get_retriever
    return get_retriever("sketch", reasoner=reasoner, embedder=embedder)


def graph_of(retriever) -> tuple:
    store = retriever.graph.store
    return sorted(map(repr, store.nodes())), sorted(map(repr, store.edges()))


# --- 1. an index built with fallbacks is not stored; all fell back fails the run ---------------------------

def test_an_index_built_with_fallbacks_is_not_stored_and_the_next_run_asks_again_for_exactly_those(
        fake_openai, tmp_path, embedder):
    store = IndexStore(tmp_path / "indexes")
    fresh_server = FakeOpenAIServer(good_model).start()
    try:
        fresh = harness.build(sketch(llm(fresh_server, tmp_path / "fresh"), embedder), DOCS, reuse=False)
    finally:
        fresh_server.stop()
    index_store.clear_memo()
    fake_openai.responder = bad_json_for("Pesto")                      # d2's passages get no JSON
    first = sketch(llm(fake_openai, tmp_path / "c"), embedder)
    assert build_or_reuse(first, DOCS, reuse=True, store=store) is False
    assert "fell back" in first.index_reuse["not_stored"] and not list(store.root.rglob("COMPLETE"))
    fell_back = {job_text(q) for q in fake_openai.requests if "Pesto" in job_text(q)}   # first asks, not the retries
    assert fell_back and first.reasoner.stats["fallbacks"] >= 1
    # the server is fixed; the same cache: only the inputs that fell back are asked again
    fake_openai.requests.clear()
    fake_openai.responder = good_model
    second = sketch(llm(fake_openai, tmp_path / "c"), embedder)
    assert build_or_reuse(second, DOCS, reuse=True, store=store) is False      # built, not reused
    assert {job_text(q) for q in fake_openai.requests} == fell_back
    assert graph_of(second) == graph_of(fresh) and len(fresh.graph) > 3
    assert list(store.root.rglob("COMPLETE"))                                   # a clean build is stored
    third = sketch(llm(fake_openai, tmp_path / "c"), embedder)
    assert build_or_reuse(third, DOCS, reuse=True, store=store) is True and graph_of(third) == graph_of(fresh)


def test_a_job_whose_every_call_fell_back_fails_the_run_with_the_count_and_the_first_problem(
        fake_openai, tmp_path, embedder):
    store = IndexStore(tmp_path / "indexes")
    fake_openai.responder = bad_json_for(None)
    r = llm(fake_openai, tmp_path / "c")
    with pytest.raises(AllFellBack, match=r"every one of the \d+ triples calls .* fell back.*First problem: the reply "
                                          r"is not JSON; the reply began 'Sorry") as info:
        build_or_reuse(sketch(r, embedder), DOCS, reuse=True, store=store)
    assert "\n" not in str(info.value) and not list(store.root.rglob("COMPLETE"))
    assert len(LLMCache(tmp_path / "c")) == 0                                 # no invalid reply was kept
    # fixed server, same cache: the same index as a fresh cache gives
    fake_openai.responder = good_model
    again = sketch(llm(fake_openai, tmp_path / "c"), embedder)
    build_or_reuse(again, DOCS, reuse=True, store=store)
    fresh = harness.build(sketch(llm(fake_openai, tmp_path / "fresh"), embedder), DOCS, reuse=False)
    assert graph_of(again) == graph_of(fresh) and len(fresh.graph) > 3


def test_the_bad_json_then_fixed_sequence_gives_the_rows_of_a_fresh_cache(fake_openai, tmp_path, embedder,
                                                                           monkeypatch):
    from rag_lab.evaluation.harness import evaluate

    monkeypatch.setenv("RAG_LAB_CACHE", str(tmp_path / "run-cache"))
    questions = [Question("q1", "Where does Pesto come from?", "Genoa", ["d2"], ["Pesto comes from Genoa in Liguria."]),
                 Question("q2", "Where is Risotto alla Milanese cooked?", "Milan", ["d3"],
                          ["Risotto alla Milanese is cooked in Milan with saffron from Abruzzo."])]
    data = Dataset("tiny", DOCS, questions)

    def rows(reasoner):
        index_store.clear_memo()
        df = evaluate([sketch(reasoner, embedder)], data, [1, 3], progress=False)
        scored = df[~df.metric.str.contains("seconds|tokens|calls|fallbacks|cost", regex=True)]
        return scored.set_index(["question_id", "metric", "k"])["value"].sort_index()

    fake_openai.responder = bad_json_for("Pesto")
    rows(llm(fake_openai, tmp_path / "one"))                                  # a run with fallbacks
    fake_openai.responder = good_model
    after = rows(llm(fake_openai, tmp_path / "one"))                          # fixed, the same cache
    monkeypatch.setenv("RAG_LAB_REUSE", "0")
    fresh = rows(llm(fake_openai, tmp_path / "fresh"))                        # fixed, a fresh cache, no index
    pd.testing.assert_series_equal(after, fresh)
    assert len(after) > 10


# --- 2. the judge keeps only replies ragas parsed ----------------------------------------------------------

def test_a_judge_reply_ragas_could_not_parse_is_asked_again_next_time(embedder, tmp_path, monkeypatch):
    from test_answer_metrics import agreeable_judge
    from test_judge_cache import JUDGED, judged, pesto

    from rag_lab.evaluation.harness import evaluate
    from rag_lab.reasoning.judge import Judge

    monkeypatch.setenv("RAG_LAB_REUSE", "0")
    with FakeOpenAIServer() as server:
        spec = f"openai-compatible:judge-model@{server.base_url}"
        server.responder = lambda request: json.dumps({"unexpected": "shape"})     # JSON, the wrong schema
        wrong = evaluate(["naive"], pesto(), [1], reasoner="offline", progress=False,
                         judge=Judge.from_spec(spec, embedder, cache=tmp_path))
        assert judged(wrong).isna().sum() >= 4
        server.responder = agreeable_judge                                         # fixed; the same cache
        sent = len(server.requests)
        fixed = evaluate(["naive"], pesto(), [1], reasoner="offline", progress=False,
                         judge=Judge.from_spec(spec, embedder, cache=tmp_path))
        assert len(server.requests) > sent                                         # asked again
        fresh = evaluate(["naive"], pesto(), [1], reasoner="offline", progress=False,
                         judge=Judge.from_spec(spec, embedder, cache=tmp_path / "fresh"))
    pd.testing.assert_series_equal(judged(fixed), judged(fresh))
    assert set(judged(fixed).index.get_level_values("metric")) == set(JUDGED) and not judged(fixed).isna().all()


# --- 3. an echoed key reaches nothing printed or raised -------------------------------------------------------

@pytest.mark.parametrize("status", [401, 429, 500])
def test_a_key_the_server_echoes_is_in_no_error_log_line_or_output(fake_openai, tmp_path, monkeypatch, caplog,
                                                                    capsys, status):
    monkeypatch.setenv("RAG_LAB_LLM_API_KEY", SECRET)
    fake_openai.responder = lambda request: Reply("Invalid key", status=status, echo_key=True)
    r = llm(fake_openai, tmp_path / "c", max_retries=1, concurrency=1)
    with caplog.at_level(logging.DEBUG), pytest.raises(Exception) as info:
        run_batch(lambda q: r.answer(q, ["c"]), ["q1", "q2"], "answers", reasoner=r, retries=0)
    assert fake_openai.headers[0]["Authorization"] == f"Bearer {SECRET}"        # the key was sent and echoed
    said = str(info.value) + caplog.text + "".join(capsys.readouterr())
    assert "you sent" in said and "***" in said and SECRET not in said
    assert all(SECRET.encode() not in p.read_bytes() for p in (tmp_path / "c").rglob("*") if p.is_file())


def test_every_judge_call_failing_raises_with_the_count_and_no_key(embedder, tmp_path, monkeypatch, caplog, capsys):
    from test_judge_cache import pesto

    from rag_lab.evaluation.harness import evaluate
    from rag_lab.reasoning.judge import Judge, JudgeFailed

    monkeypatch.setenv("RAG_LAB_LLM_API_KEY", SECRET)
    monkeypatch.setenv("RAG_LAB_REUSE", "0")
    with FakeOpenAIServer() as server:
        server.responder = lambda request: Reply("Incorrect API key", status=401, echo_key=True)
        judge = Judge.from_spec(f"openai-compatible:judge-model@{server.base_url}", embedder, cache=tmp_path)
        with caplog.at_level(logging.DEBUG), pytest.raises(JudgeFailed, match=r"every one of its \d+ calls failed"
                                                                               r".*AuthenticationError") as info:
            evaluate(["naive"], pesto(), [1], reasoner="offline", progress=False, judge=judge)
        assert server.requests and server.headers[0]["Authorization"] == f"Bearer {SECRET}"
    said = str(info.value) + caplog.text + "".join(capsys.readouterr())
    assert "you sent" in said and SECRET not in said
    assert SECRET.encode() not in (tmp_path / "judge.sqlite").read_bytes()


# --- 4. a whole-call deadline and the replies that are not what they seem ----------------------------------

def test_a_trickling_server_is_cut_off_at_the_whole_call_deadline(fake_openai, tmp_path):
    body = json.dumps({"choices": [{"message": {"content": json.dumps({"answer": "slow " * 40})},
                                    "finish_reason": "stop"}]})
    fake_openai.responder = lambda request: Reply(raw=body, trickle=8)        # 8 bytes a second
    r = llm(fake_openai, False, timeout=1, max_retries=0)
    t0 = time.monotonic()
    with pytest.raises(LLMUnavailableError, match="no complete reply within 1 s .the deadline for the whole call"):
        r.answer("q", ["c"])
    assert time.monotonic() - t0 < 2.5                                        # not the 40 s the body needs


@pytest.mark.parametrize("raw, content_type, said", [
    ("<html><body>502 Bad Gateway</body></html>", "text/html; charset=utf-8", "not a JSON chat completion"),
    ('{"choices": [{"message": {"content": "{\\"ans', "application/json", "not JSON")])
def test_a_200_that_is_no_json_completion_is_retried_then_reported_naming_its_content_type(
        fake_openai, tmp_path, raw, content_type, said):
    fake_openai.queue(Reply(raw=raw, content_type=content_type), {"answer": "ok"})
    r = llm(fake_openai, False, max_retries=1)
    assert r.answer("q", ["c"]) == "ok" and r.stats["retries"] == 1           # transient: retried
    fake_openai.responder = lambda request: Reply(raw=raw, content_type=content_type)
    with pytest.raises(LLMUnavailableError, match=f"HTTP 200 with {content_type.split(';')[0]}.*{said}"):
        r.answer("q2", ["c"])


def test_a_reply_cut_off_at_max_tokens_says_to_raise_max_tokens_and_is_not_asked_again(fake_openai, tmp_path,
                                                                                     caplog):
    fake_openai.responder = lambda request: Reply('{"answer": "the start of a long', finish_reason="length")
    r = llm(fake_openai, tmp_path / "c", max_tokens=8)
    with caplog.at_level(logging.WARNING):
        fallback = r.answer("q", ["Genoa is in Liguria. More."])
    assert fallback.startswith("Genoa is in Liguria.") and len(fake_openai.requests) == 1   # the fallback, asked once
    warning = next(m for m in caplog.messages if "fallback" in m)
    assert "cut off at max_tokens=8" in warning and "raise max_tokens" in warning and "not JSON" not in warning.split(";")[0]


def test_a_refused_max_tokens_value_keeps_the_parameter_name(fake_openai, tmp_path):
    r = llm(fake_openai, False)
    fake_openai.queue(Reply("max_tokens is too large: 1024. This model supports at most 512 completion tokens",
                            status=400))
    with pytest.raises(LLMBackendError, match="refused the value max_tokens=1024.*lower max_tokens"):
        r.answer("q", ["c"])
    assert r.backend.token_limit_param == "max_tokens" and len(fake_openai.requests) == 1
    fake_openai.queue(Reply("Unsupported parameter: 'max_tokens' is not supported with this model. Use "
                            "'max_completion_tokens' instead.", status=400), {"answer": "ok"})
    assert r.answer("q", ["c"]) == "ok" and r.backend.token_limit_param == "max_completion_tokens"
    assert "max_completion_tokens" in fake_openai.requests[-1] and "max_tokens" not in fake_openai.requests[-1]


def test_a_reply_over_the_cap_is_refused_and_not_cached(fake_openai, tmp_path, monkeypatch):
    monkeypatch.setenv("RAG_LAB_LLM_MAX_REPLY_BYTES", "4000")
    fake_openai.responder = lambda request: {"answer": "word " * 2000}         # ~10 kB
    r = llm(fake_openai, tmp_path / "c", max_retries=0)
    with pytest.raises(LLMBackendError, match=r"larger than 4000 bytes \(RAG_LAB_LLM_MAX_REPLY_BYTES\); refused and "
                                              r"not cached.*Content-Length"):
        r.answer("q", ["c"])
    assert len(LLMCache(tmp_path / "c")) == 0
    fake_openai.responder = lambda request: {"answer": "short"}
    assert r.answer("q", ["c"]) == "short"


@pytest.mark.parametrize("url, what", [
    (f"http://h:8000/{SECRET}/v1", "a key-like path segment"),
    ("http://h:8000/proxy/0123456789abcdef0123456789abcdef01234567/v1", "a key-like path segment"),
    (f"http://h:8000/v1;key={SECRET}", "parameters")])
def test_a_key_in_the_url_path_or_its_parameters_is_refused_without_showing_it(url, what):
    with pytest.raises(ValueError, match=f"carries {what}") as info:
        parse_spec(f"openai-compatible:m@{url}")
    assert SECRET not in str(info.value) and "0123456789abcdef0123" not in str(info.value)
    assert "http://h:8000/" in str(info.value)
    assert parse_spec("openai-compatible:m@http://h:8000/openai/deployments/gpt-4o-mini-2024-07-18/v1").base_url


# --- the command line: a run that produced nothing usable exits non-zero, its last line says why -------------

def tiny_data(tmp_path):
    from rag_lab.core.generic_form import write_dataset
    from test_judge_cache import pesto

    folder = tmp_path / "tiny"
    write_dataset(pesto(), folder)
    return folder


def test_eval_exits_non_zero_when_every_call_of_a_job_fell_back(fake_openai, tmp_path, monkeypatch, capsys):
    from rag_lab.cli import main

    monkeypatch.setenv("RAG_LAB_LLM", f"openai-compatible:fake-model@{fake_openai.base_url}")
    monkeypatch.setenv("RAG_LAB_LLM_CONCURRENCY", "2")
    fake_openai.responder = bad_json_for(None)
    code = main(["eval", "--data", str(tiny_data(tmp_path)), "--methods", "sketch", "--k", "1"])
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert code != 0
    assert re.search(r"^error: .*every one of the \d+ (triples|entities) calls .* fell back.*First problem: the reply "
                     r"is not JSON", last), last


def test_eval_with_a_judge_that_always_fails_exits_non_zero_without_the_key(tmp_path, monkeypatch, capsys, caplog):
    from rag_lab.cli import main

    monkeypatch.setenv("RAG_LAB_LLM_API_KEY", SECRET)
    monkeypatch.setenv("RAG_LAB_REUSE", "0")
    with FakeOpenAIServer() as server, caplog.at_level(logging.INFO):
        server.responder = lambda request: Reply("Incorrect API key", status=401, echo_key=True)
        code = main(["eval", "--data", str(tiny_data(tmp_path)), "--methods", "naive", "--k", "1",
                     "--reasoner", "offline", "--judge", f"openai-compatible:judge-model@{server.base_url}"])
        assert server.requests
    out = capsys.readouterr()
    last = out.err.strip().splitlines()[-1]
    assert code != 0 and re.search(r"^error: judge .*every one of its \d+ calls failed.*first error: "
                                   r"AuthenticationError", last), last
    assert "***" in last and SECRET not in out.out + out.err + caplog.text
