"""A re-run with an LLM judge sends no request and replays exactly (the judge cache), checked
against the local fake OpenAI-compatible server, which counts the requests it receives."""
import sqlite3

import pandas as pd
import pytest

from fake_openai_server import FakeOpenAIServer
from rag_lab.evaluation.harness import evaluate
from rag_lab.reasoning.judge import CACHE_FILE, Judge, JudgeCache, confirm_parsed
from rag_lab.core.types import Dataset, Document, Question
from test_answer_metrics import agreeable_judge

JUDGED = ["faithfulness", "answer_relevancy", "llm_context_precision", "llm_context_recall", "factual_correctness"]


def pesto():
    return Dataset("t", [Document("p", "Pesto comes from Genoa. Pizza is baked in Naples.")],
                   [Question("q1", "Where is pesto from?", "Genoa", ["p"], ["Pesto comes from Genoa."]),
                    Question("q2", "Where is pizza baked?", "Naples", ["p"], ["Pizza is baked in Naples."])])


def judged(df: pd.DataFrame) -> pd.Series:
    d = df[df.metric.isin(JUDGED)]
    return d.set_index(["question_id", "metric"])["value"].sort_index()


def test_a_second_run_with_the_judge_costs_nothing_and_replays_exactly(embedder, tmp_path, monkeypatch):
    monkeypatch.setenv("RAG_LAB_LLM_API_KEY", "sk-test-secret-0123")
    with FakeOpenAIServer() as server:
        server.responder = agreeable_judge
        spec = f"openai-compatible:judge-model@{server.base_url}"
        first = evaluate(["naive"], pesto(), [1], reasoner="offline", progress=False,
                         judge=Judge.from_spec(spec, embedder, cache=tmp_path))
        sent = len(server.requests)
        assert sent > 0
        second = evaluate(["naive"], pesto(), [1], reasoner="offline", progress=False,
                          judge=Judge.from_spec(spec, embedder, cache=tmp_path))
        assert len(server.requests) == sent                      # nothing sent the second time
        uncached = evaluate(["naive"], pesto(), [1], reasoner="offline", progress=False,
                            judge=Judge.from_spec(spec, embedder, cache=False))
        # without the cache every call goes out again (a prompt ragas repeats within one run, e.g. the
        # claims of an answer equal to its reference, is answered from the cache the first time too)
        assert len(server.requests) - sent >= sent
    assert set(judged(first).index.get_level_values("metric")) == set(JUDGED)
    pd.testing.assert_series_equal(judged(first), judged(second))
    pd.testing.assert_series_equal(judged(first), judged(uncached))
    # what is stored: reply texts keyed by hashes, never the API key
    raw = (tmp_path / CACHE_FILE).read_bytes()
    assert b"sk-test-secret-0123" not in raw
    rows = sqlite3.connect(tmp_path / CACHE_FILE).execute("SELECT judge FROM replies").fetchall()
    assert rows and {r[0] for r in rows} == {first.attrs["judge"]}


def test_replies_are_kept_apart_per_judge(tmp_path):
    from langchain_core.messages import AIMessage
    from langchain_core.outputs import ChatGeneration, LLMResult

    a, b = JudgeCache("openai:model-a", tmp_path), JudgeCache("openai:model-b", tmp_path)
    reply = LLMResult(generations=[[ChatGeneration(message=AIMessage(content='{"x": 1}',
                                                                     response_metadata={"finish_reason": "stop"}),
                                                   generation_info={"finish_reason": "stop"})]])
    a.set("same ragas key", reply)
    assert not a.has_key("same ragas key")              # held until ragas parsed it
    confirm_parsed('{"x": 1}')
    assert a.has_key("same ragas key") and not b.has_key("same ragas key")
    back = a.get("same ragas key")
    assert back.generations[0][0].text == '{"x": 1}'
    assert back.generations[0][0].generation_info == {"finish_reason": "stop"}
    assert back.generations[0][0].message.response_metadata == {"finish_reason": "stop"}
    with pytest.raises(ValueError, match="not a folder"):
        JudgeCache("x", tmp_path / CACHE_FILE)


def _reply(text: str):
    from langchain_core.messages import AIMessage
    from langchain_core.outputs import ChatGeneration, LLMResult

    return LLMResult(generations=[[ChatGeneration(message=AIMessage(content=text), generation_info={})]])


def test_a_reply_ragas_cannot_parse_is_not_kept(tmp_path, caplog):
    cache = JudgeCache("openai:m", tmp_path)
    cache.set("prompt a", _reply("I think the answer is yes."))                  # no JSON: ragas would fail
    cache.set("prompt b", _reply('Sure! ```json\n{"verdict": 1}\n```'))           # ragas finds this JSON
    confirm_parsed('Sure! ```json\n{"verdict": 1}\n```')                         # ... and parsed it
    assert not cache.has_key("prompt a") and cache.get("prompt a") is None
    assert cache.get("prompt b").generations[0][0].text.endswith("```") and len(cache) == 1


@pytest.mark.parametrize("stored, reason", [('{"generations": [[{"text": "no json here", "info": {}, "meta": {}}]]}',
                                             "completion 0 is not JSON"),
                                            ("{not json", "unreadable entry (JSONDecodeError"),
                                            ('{"other": 1}', "unreadable entry (KeyError")])
def test_a_bad_stored_reply_is_moved_aside_and_asked_again(tmp_path, caplog, stored, reason):
    cache = JudgeCache("openai:m", tmp_path)
    cache.set("prompt", _reply('{"verdict": 1}'))
    confirm_parsed('{"verdict": 1}')
    db = sqlite3.connect(tmp_path / CACHE_FILE)
    with db:
        db.execute("UPDATE replies SET value=?", (stored,))
    db.close()
    with caplog.at_level("WARNING", logger="rag_lab.caching.sqlite_cache"):
        assert cache.has_key("prompt") is False          # ragas asks has_key first: a miss, so it calls the judge
    assert any(reason in r.getMessage() and "asking the judge again" in r.getMessage() for r in caplog.records)
    rejected = sqlite3.connect(tmp_path / CACHE_FILE).execute("SELECT tbl, reason FROM rejected").fetchall()
    assert len(rejected) == 1 and rejected[0][0] == "replies" and reason in rejected[0][1]
    cache.set("prompt", _reply('{"verdict": 0}'))        # the fresh reply is kept
    confirm_parsed('{"verdict": 0}')
    assert cache.get("prompt").generations[0][0].text == '{"verdict": 0}'


def test_a_damaged_judge_cache_is_moved_aside_and_rebuilt(tmp_path, caplog):
    first = JudgeCache("openai:m", tmp_path)
    for i in range(100):
        first.set(f"prompt {i}", _reply('{"verdict": 1}'))
    confirm_parsed('{"verdict": 1}')
    first.close()
    with open(tmp_path / CACHE_FILE, "r+b") as fh:       # truncated: SQLite reports it damaged
        fh.truncate(5000)
    with caplog.at_level("WARNING", logger="rag_lab.caching.sqlite_cache"):
        cache = JudgeCache("openai:m", tmp_path)
        assert not cache.has_key("prompt 1")
    assert any("judge cache" in r.getMessage() and "moved it aside" in r.getMessage() for r in caplog.records)
    assert list(tmp_path.glob(CACHE_FILE + ".corrupt-*"))
    cache.set("prompt 1", _reply('{"verdict": 1}'))
    confirm_parsed('{"verdict": 1}')
    assert cache.has_key("prompt 1")
