"""The LLM reasoner driven through every job against a scripted OpenAI-compatible server on 127.0.0.1."""
from __future__ import annotations

import json
import time

import pytest
from fake_openai_server import Reply, fake_openai  # noqa: F401  (fake_openai is a fixture)

from rag_lab.reasoning import Choice, Entity, Triple, get_reasoner
from rag_lab.reasoning.llm import (LLMBackendError, LLMReasoner, LLMSpec, LLMUnavailableError, extract_json,
                                   parse_spec)
from rag_lab.reasoning.prompts import PROMPTS, first_sentences, leading_words
from rag_lab.reasoning.tokens import count_message_tokens, count_text_tokens

SECRET = "sk-test-SECRET-0123456789abcdef"


@pytest.fixture
def make_reasoner(fake_openai, tmp_path, monkeypatch):
    monkeypatch.delenv("RAG_LAB_LLM_API_KEY", raising=False)

    def make(**kw):
        kw.setdefault("cache", tmp_path / "llm_cache")
        kw.setdefault("retry_base_delay", 0.01)
        kw.setdefault("timeout", 5)
        return LLMReasoner.from_spec(f"openai-compatible:fake-model@{fake_openai.base_url}", **kw)
    return make


def words_in(request: dict) -> int:
    """The fake server's token rule: whitespace-separated words of every message."""
    return sum(len(m["content"].split()) for m in request["messages"])


# --- every job, valid replies -------------------------------------------------------------------

def test_every_job_parses_a_valid_reply(fake_openai, make_reasoner):
    r = make_reasoner()
    fake_openai.queue(
        {"entities": [{"name": "Marie Curie", "type": "person", "description": "A physicist."},
                      {"name": "  polonium ", "type": "element", "description": "Found by Curie."}]},
        {"triples": [{"subject": "Marie Curie", "subject_type": "person", "relation": "discovered",
                      "object": "polonium", "object_type": "element"}]},
        {"entities": ["Marie Curie", "polonium", "Marie Curie"]},
        {"themes": ["radioactivity", "Nobel Prize", "chemistry", "Paris", "women in science"]},
        {"answer": " Polonium and radium. "},
        {"choice": 1, "reasoning": "most relevant"},
        {"summary": "Curie   discovered two elements."},
    )
    assert r.entities("Marie Curie discovered polonium.") == [
        Entity("Marie Curie", "person", "A physicist."), Entity("polonium", "element", "Found by Curie.")]
    assert r.triples("Marie Curie discovered polonium.") == [
        Triple("Marie Curie", "discovered", "polonium", "person", "element")]
    assert r.query_entities("What did Marie Curie find besides polonium?") == ["Marie Curie", "polonium"]  # deduped
    assert r.themes("A document about Curie.", n=5) == ["radioactivity", "Nobel Prize", "chemistry", "Paris",
                                                        "women in science"]
    assert r.answer("What did she discover?", ["She discovered polonium and radium."]) == "Polonium and radium."
    # candidates are shown most-similar first: shown #1 is the one with similarity 0.9, i.e. index 1
    choice = r.choose_next("What did she discover?", ["s0"], ["cand A", "cand B"], [0.3, 0.9], ["a", "b"])
    assert choice == Choice("next", 1, "most relevant")
    assert r.summarize(["Curie discovered polonium.", "And radium."], max_words=20) == "Curie discovered two elements."

    assert len(fake_openai.requests) == 7
    for job, request in zip(PROMPTS, fake_openai.requests):
        assert request["response_format"]["json_schema"]["name"] == job
        assert request["temperature"] == 0
        cost = r.usage.per_job[job]
        assert (cost.llm_calls, cost.llm_fallbacks) == (1, 0)
        assert cost.llm_prompt_tokens == words_in(request)   # taken from the reply's usage, not counted by us
        assert cost.seconds > 0
    # the answer reply's content is the JSON text {"answer": " Polonium and radium. "}, whose
    # whitespace-separated pieces are: {"answer":  "  Polonium  and  radium.  "}  -> 6
    assert r.usage.per_job["answer"].llm_completion_tokens == 6
    assert r.stats["requests"] == 7 and r.stats["cache_hits"] == 0


def test_themes_sends_the_requested_count_and_trims_extras(fake_openai, make_reasoner):
    r = make_reasoner()
    fake_openai.queue({"themes": ["a", "b", "c", "d"]})
    assert r.themes("Some document.", n=3) == ["a", "b", "c"]          # a fourth theme is dropped
    schema = fake_openai.requests[0]["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["themes"]["minItems"] == 3 and schema["properties"]["themes"]["maxItems"] == 3
    assert "exactly 3 themes" in fake_openai.requests[0]["messages"][1]["content"]


def test_bare_list_and_fenced_replies_are_accepted(fake_openai, make_reasoner):
    r = make_reasoner()
    fake_openai.queue('Sure!\n```json\n["Ada Lovelace"]\n```', 'Here it is: {"choice": "STOP", "reasoning": "enough"}')
    assert r.query_entities("Who was Ada Lovelace?") == ["Ada Lovelace"]
    assert r.choose_next("q", [], ["x"], [0.5]) == Choice("stop", None, "enough")
    assert r.usage.total().llm_fallbacks == 0


def test_empty_inputs_make_no_call(fake_openai, make_reasoner):
    r = make_reasoner()
    assert r.entities("  ") == [] and r.triples("") == [] and r.query_entities(" ") == [] and r.themes("") == []
    assert r.summarize([]) == ""
    assert r.choose_next("q", ["a"], [], []) == Choice("stop", None, "no candidates")
    assert fake_openai.requests == []
    with pytest.raises(ValueError, match="text must be a string"):
        r.entities(None)
    with pytest.raises(ValueError, match="2 candidates but 1 similarities"):
        r.choose_next("q", [], ["a", "b"], [0.1])


def test_choose_next_prompt_follows_the_ssg_structure(fake_openai, make_reasoner):
    r = make_reasoner()
    sims = [0.10, 0.80, 0.30, 0.95, 0.50, 0.70, 0.20]
    candidates = [f"candidate {i} " + "x" * 300 for i in range(7)]
    gathered = [f"gathered sentence {i}." for i in range(7)]
    fake_openai.queue({"choice": 3, "reasoning": "r"})
    choice = r.choose_next("Which one?", gathered, candidates, sims, [f"id{i}" for i in range(7)])
    # by similarity: 0.95 (3), 0.80 (1), 0.70 (5), 0.50 (4), 0.30 (2) are shown; #3 is index 5
    assert choice.candidate == 5 and choice.action == "next"
    prompt = fake_openai.requests[0]["messages"][1]["content"]
    assert "QUESTION: Which one?" in prompt
    assert "GATHERED SO FAR (7 sentences" in prompt
    assert "gathered sentence 4." in prompt and "gathered sentence 5." not in prompt and "and 2 more" in prompt
    assert "1. [id3] (similarity 0.95)" in prompt and "5. [id2] (similarity 0.30)" in prompt
    assert "[id0]" not in prompt and "[id6]" not in prompt            # only the five best are shown
    preview = "candidate 3 " + "x" * 188 + "..."                      # the first 200 characters
    assert preview in prompt and "x" * 189 not in prompt
    schema = fake_openai.requests[0]["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["choice"]["anyOf"][0]["maximum"] == 5


# --- invalid replies: one retry, then the documented fallback -----------------------------------

FALLBACK_CASES = [
    ("entities", lambda r: r.entities("Marie Curie lived in Paris."), []),
    ("triples", lambda r: r.triples("Marie Curie lived in Paris."), []),
    ("query_entities", lambda r: r.query_entities("Where did Curie live?"), []),
    ("themes", lambda r: r.themes("Marie Curie lived in Paris.", n=5), []),
    # first context's leading sentences within 60 words: both of its sentences (5 + 3 words)
    ("answer", lambda r: r.answer("Where?", ["She lived in Paris. Then in Warsaw.", "Other context."]),
     "She lived in Paris. Then in Warsaw."),
    # the highest-similarity candidate: index 1 (0.7)
    ("choose_next", lambda r: r.choose_next("q", ["g"], ["a", "b", "c"], [0.2, 0.7, 0.4]),
     Choice("next", 1, "highest query similarity", fallback=True)),
    # the first 4 words of the texts joined
    ("summarize", lambda r: r.summarize(["one two three", "four five"], max_words=4), "one two three four"),
]


@pytest.mark.parametrize("job,call,expected", FALLBACK_CASES, ids=[c[0] for c in FALLBACK_CASES])
def test_invalid_json_is_retried_once_then_falls_back(fake_openai, make_reasoner, job, call, expected):
    r = make_reasoner()
    fake_openai.queue("this is not JSON", '{"still": "wrong shape"}', '{"unused": true}')
    assert call(r) == expected
    assert len(fake_openai.requests) == 2 and fake_openai.pending == 1
    retry = fake_openai.requests[1]["messages"]
    assert retry[-2] == {"role": "assistant", "content": "this is not JSON"}
    assert "not valid" in retry[-1]["content"]
    cost = r.usage.per_job[job]
    assert (cost.llm_calls, cost.llm_fallbacks) == (2, 1)
    assert r.usage.total().llm_fallbacks == 1


def test_an_invalid_reply_then_a_valid_one_is_no_fallback(fake_openai, make_reasoner):
    r = make_reasoner()
    # valid JSON but breaks the schema: 2 themes where exactly 3 were asked for
    fake_openai.queue({"themes": ["a", "b"]}, {"themes": ["a", "b", "c"]})
    assert r.themes("doc", n=3) == ["a", "b", "c"]
    assert "themes" in fake_openai.requests[1]["messages"][-1]["content"]  # the error names the field
    cost = r.usage.per_job["themes"]
    assert (cost.llm_calls, cost.llm_fallbacks) == (2, 0)


def test_choice_out_of_range_is_invalid(fake_openai, make_reasoner):
    r = make_reasoner()
    fake_openai.queue({"choice": 4, "reasoning": ""}, {"choice": 0})   # only 2 candidates were shown
    assert r.choose_next("q", [], ["a", "b"], [0.9, 0.1]).fallback
    assert r.usage.per_job["choose_next"].llm_fallbacks == 1


def test_the_choose_next_fallback_takes_the_most_query_similar_candidate_and_never_stops():
    from rag_lab.reasoning import similarity_choice

    # 0.9 and 0.9 + 1e-6 are tied at the stated precision: the earlier of the two (index 1) is taken
    assert similarity_choice([0.2, 0.9, 0.9 + 1e-6], fallback=True) == Choice("next", 1, "highest query similarity",
                                                                             True)
    assert similarity_choice([0.5]) == Choice("next", 0, "highest query similarity", False)
    assert similarity_choice([]) == Choice("stop", None, "no candidates", False)
    # the prompt's fallback: the highest of the candidates however much is gathered (30 sentences here)
    fallback = PROMPTS["choose_next"].fallback(query="q", gathered=["s"] * 30, candidates=["a", "b"],
                                               similarities=[0.1, 0.7])
    assert (fallback.action, fallback.candidate, fallback.fallback) == ("next", 1, True)


# --- transport failures: bounded retries with back-off -----------------------------------------

def test_timeout_then_success(fake_openai, make_reasoner):
    # 2 s for a reply the fake server sends at once (generous under any load), against one held back 60 s
    r = make_reasoner(timeout=2)
    fake_openai.queue(Reply('{"answer": "late"}', delay=60), {"answer": "on time"})
    assert r.answer("q", ["c"]) == "on time"
    assert r.stats["retries"] == 1 and r.stats["requests"] == 2
    assert r.usage.per_job["answer"].llm_calls == 1       # the timed-out request produced no completion


def test_timeouts_exhaust_the_retries(fake_openai, make_reasoner):
    r = make_reasoner(timeout=0.2, max_retries=1)
    fake_openai.queue(Reply("{}", delay=1.0), Reply("{}", delay=1.0), {"answer": "never asked"})
    with pytest.raises(LLMUnavailableError, match=r"answer failed after 2 attempts.*no (complete )?reply within 0.2 s"):
        r.answer("q", ["c"])
    assert fake_openai.pending == 1


@pytest.mark.parametrize("status", [429, 500, 503])
def test_rate_limit_or_server_error_then_success(fake_openai, make_reasoner, status):
    r = make_reasoner(retry_base_delay=0.05)
    fake_openai.queue(Reply(status=status), Reply(status=status), {"entities": ["Ada"]})
    t0 = time.perf_counter()
    assert r.query_entities("Who is Ada?") == ["Ada"]
    # back-off 0.05 * 2**0, then 0.05 * 2**1, each scaled by a random factor in [0.5, 1] (jitter)
    assert time.perf_counter() - t0 >= 0.5 * (0.05 + 0.10)
    assert r.stats["retries"] == 2 and len(fake_openai.requests) == 3


def test_retry_after_is_honoured_up_to_the_ceiling_then_a_clear_error(fake_openai, make_reasoner, monkeypatch):
    r = make_reasoner(retry_base_delay=0.0, max_retry_delay=0.3, max_retry_after=100)
    paused = []                                           # the pauses the 429s started (none really waited)
    monkeypatch.setattr(r.limiter, "pause", paused.append)
    fake_openai.queue(Reply(status=429, headers={"Retry-After": "0.2"}), Reply(status=429, headers={"Retry-After": "60"}),
                      {"answer": "ok"})
    assert r.answer("q", ["c"]) == "ok"
    assert paused == [0.2, 60.0]          # as asked: 60 s is not cut to max_retry_delay (0.3), under the 100 s ceiling
    fake_openai.queue(Reply(status=429, headers={"Retry-After": "120"}), {"answer": "never asked"})
    with pytest.raises(LLMUnavailableError, match=r"asks to wait 120 s .*longer than max_retry_after=100 s"):
        r.answer("q2", ["c"])
    assert fake_openai.pending == 1 and paused == [0.2, 60.0]


def test_retry_after_in_all_three_forms():
    import datetime as dt

    from rag_lab.reasoning.backends import retry_after_seconds

    class Response:
        def __init__(self, **headers):
            self.headers = {k.replace("_", "-"): v for k, v in headers.items()}

    now = dt.datetime(2026, 1, 1, 12, 0, 0, tzinfo=dt.timezone.utc)
    assert retry_after_seconds(Response(retry_after="120"), now) == 120.0
    assert retry_after_seconds(Response(retry_after_ms="1500"), now) == 1.5           # OpenAI's milliseconds
    # an HTTP date 90 s after ``now``
    assert retry_after_seconds(Response(retry_after="Thu, 01 Jan 2026 12:01:30 GMT"), now) == 90.0
    assert retry_after_seconds(Response(retry_after="Thu, 01 Jan 2026 11:00:00 GMT"), now) == 0.0   # past: now
    assert retry_after_seconds(Response(retry_after="soon"), now) is None
    assert retry_after_seconds(Response(), now) is None


def test_a_client_error_is_not_retried(fake_openai, make_reasoner):
    r = make_reasoner()
    fake_openai.queue(Reply("model 'fake-model' not found", status=404))
    with pytest.raises(LLMBackendError, match="HTTP 404.*not found") as info:
        r.answer("q", ["c"])
    assert not isinstance(info.value, LLMUnavailableError)
    assert len(fake_openai.requests) == 1


def test_rejected_json_schema_format_downgrades_to_json_mode(fake_openai, make_reasoner):
    r = make_reasoner()
    fake_openai.queue(Reply("response_format type json_schema is not supported", status=400), {"answer": "ok"},
                      {"answer": "again"})
    assert r.answer("q", ["c"]) == "ok"
    assert fake_openai.requests[1]["response_format"] == {"type": "json_object"}
    assert r.answer("q2", ["c"]) == "again"
    assert fake_openai.requests[2]["response_format"] == {"type": "json_object"}   # remembered


def test_max_tokens_refused_switches_to_max_completion_tokens(fake_openai, make_reasoner):
    r = make_reasoner(max_tokens=300)
    fake_openai.queue(Reply("Unsupported parameter: 'max_tokens' is not supported with this model.", status=400),
                      {"answer": "ok"})
    assert r.answer("q", ["c"]) == "ok"
    assert fake_openai.requests[0]["max_tokens"] == 300
    assert fake_openai.requests[1]["max_completion_tokens"] == 300 and "max_tokens" not in fake_openai.requests[1]


# --- cache and token counts ------------------------------------------------------------------

def test_second_identical_call_is_a_cache_hit(fake_openai, make_reasoner):
    fake_openai.queue(Reply('{"themes": ["a", "b"]}', usage=(50, 6)))
    first = make_reasoner()
    assert first.themes("doc", n=2) == ["a", "b"]
    second = make_reasoner()                              # a new run over the same cache folder
    assert second.themes("doc", n=2) == ["a", "b"]
    assert len(fake_openai.requests) == 1                 # the server saw one request
    assert second.stats == {"requests": 0, "cache_hits": 1, "retries": 0, "invalid_replies": 0,
                            "fallbacks": 0}
    # the replay reports the original call's tokens, so result tables are identical across runs
    for r in (first, second):
        c = r.usage.per_job["themes"]
        assert (c.llm_prompt_tokens, c.llm_completion_tokens, c.llm_calls) == (50, 6, 1)


def test_a_different_prompt_misses_the_cache(fake_openai, make_reasoner):
    fake_openai.queue({"answer": "one"}, {"answer": "two"}, {"answer": "three"})
    r = make_reasoner()
    assert r.answer("q", ["c"]) == "one"
    assert r.answer("q", ["c", "d"]) == "two"                        # other contexts
    assert make_reasoner(temperature=0.7).answer("q", ["c"]) == "three"  # other parameters
    assert len(fake_openai.requests) == 3


def test_no_cache(fake_openai, make_reasoner):
    fake_openai.queue({"answer": "one"}, {"answer": "two"})
    r = make_reasoner(cache=False)
    assert r.cache is None
    assert [r.answer("q", ["c"]), r.answer("q", ["c"])] == ["one", "two"]


def test_tokens_from_usage_or_counted_when_absent(fake_openai, make_reasoner):
    r = make_reasoner(cache=False)
    fake_openai.queue(Reply('{"answer": "Paris"}', usage=(123, 45)), Reply('{"answer": "Paris"}', usage=None))
    r.answer("Capital?", ["Paris is the capital."])
    c = r.usage.per_job["answer"]
    assert (c.llm_prompt_tokens, c.llm_completion_tokens) == (123, 45)
    r.answer("Capital?", ["Paris is the capital."])
    messages = PROMPTS["answer"].messages(question="Capital?", contexts=["Paris is the capital."])
    c = r.usage.per_job["answer"]
    assert c.llm_prompt_tokens == 123 + count_message_tokens(messages)
    assert c.llm_completion_tokens == 45 + count_text_tokens('{"answer": "Paris"}')


def test_token_counting_by_hand():
    # cl100k_base: "hello world" is two tokens ("hello", " world")
    assert count_text_tokens("hello world") == 2
    # one message: 3 priming + 3 per message + role "user" (1) + "hello world" (2)
    assert count_message_tokens([{"role": "user", "content": "hello world"}]) == 9


# --- secrets ---------------------------------------------------------------------------------

def test_the_api_key_never_leaks(fake_openai, tmp_path, monkeypatch):
    monkeypatch.setenv("RAG_LAB_LLM_API_KEY", SECRET)
    r = LLMReasoner.from_spec(f"openai-compatible:fake-model@{fake_openai.base_url}", cache=tmp_path / "c",
                              retry_base_delay=0.01)
    fake_openai.queue({"answer": "ok"}, Reply(f"Incorrect API key provided: {SECRET}", status=401))
    assert r.answer("q", ["c"]) == "ok"
    assert fake_openai.headers[0]["Authorization"] == f"Bearer {SECRET}"   # the key was used ...
    with pytest.raises(LLMBackendError) as info:
        r.answer("another", ["c"])
    assert SECRET not in str(info.value) and "***" in str(info.value)        # ... but never shown
    for text in (repr(r), repr(r.backend), repr(r.cache), r.name, json.dumps({j: c.as_dict() for j, c in
                                                                              r.usage.per_job.items()})):
        assert SECRET not in text
    r.cache.close()
    for f in (tmp_path / "c").iterdir():                                     # the db and any WAL file
        assert SECRET.encode() not in f.read_bytes()


def test_openai_spec_needs_its_key_from_the_environment(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ValueError, match="OPENAI_API_KEY"):
        LLMReasoner.from_spec("openai:gpt-4o-mini", cache=False)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    r = LLMReasoner.from_spec("openai:gpt-4o-mini", cache=False)
    assert r.name == "openai:gpt-4o-mini" and SECRET not in repr(r)


# --- spec strings ----------------------------------------------------------------------------

def test_parse_spec_for_all_four_kinds(monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    assert parse_spec("openai:gpt-4o-mini") == LLMSpec("openai", "gpt-4o-mini", None)
    assert parse_spec("ollama:llama3.1:8b") == LLMSpec("ollama", "llama3.1:8b", "http://localhost:11434/v1")
    assert parse_spec("openai-compatible:Qwen/Qwen2.5-1.5B@http://10.0.0.5:8000/v1/") == \
        LLMSpec("openai-compatible", "Qwen/Qwen2.5-1.5B", "http://10.0.0.5:8000/v1")
    assert parse_spec("gguf:/models/qwen.gguf") == LLMSpec("gguf", "/models/qwen.gguf")
    assert parse_spec("ollama:llama3.1:8b").name == "ollama:llama3.1:8b"
    assert parse_spec("openai-compatible:m@http://h:1/v1").name == "openai-compatible:m@http://h:1/v1"

    monkeypatch.setenv("OPENAI_BASE_URL", "https://proxy.example/v1")
    monkeypatch.setenv("OLLAMA_HOST", "gpu-box:11434")
    assert parse_spec("openai:gpt-4o").base_url == "https://proxy.example/v1"
    assert parse_spec("ollama:qwen2.5").base_url == "http://gpu-box:11434/v1"
    monkeypatch.setenv("OLLAMA_HOST", "https://gpu-box:443/v1")
    assert parse_spec("ollama:qwen2.5").base_url == "https://gpu-box:443/v1"


@pytest.mark.parametrize("bad", ["gpt-4o", "claude:x", "openai:", "openai-compatible:model-without-url",
                                 "openai-compatible:m@ftp://host/v1"])
def test_bad_specs_say_what_is_expected(bad):
    with pytest.raises(ValueError, match="LLM spec"):
        parse_spec(bad)


def test_credentials_in_a_url_are_refused():
    with pytest.raises(ValueError, match="RAG_LAB_LLM_API_KEY"):
        parse_spec("openai-compatible:m@http://user:pw@host:8000/v1")


def test_get_reasoner_dispatches_llm_specs(fake_openai, monkeypatch, tmp_path):
    monkeypatch.setenv("RAG_LAB_LLM", f"openai-compatible:fake-model@{fake_openai.base_url}")
    r = get_reasoner(cache=tmp_path)
    assert isinstance(r, LLMReasoner) and r.model == "fake-model"


def test_gguf_without_llama_cpp_says_how_to_install():
    try:
        import llama_cpp  # noqa: F401
        pytest.skip("llama-cpp-python is installed; the missing-runtime message cannot be shown")
    except ImportError:
        pass
    with pytest.raises(RuntimeError, match=r"pip install \.\[local-llm\]"):
        LLMReasoner.from_spec("gguf:/nowhere/model.gguf", cache=False)


def test_gguf_model_runs_every_job(tmp_path):
    pytest.importorskip("llama_cpp", reason="llama-cpp-python (the local-llm extra) is not installed")
    import os
    path = os.environ.get("RAG_LAB_TEST_GGUF")
    if not path:
        pytest.skip("set RAG_LAB_TEST_GGUF to a chat-tuned .gguf file to run the in-process backend")
    r = LLMReasoner.from_spec(f"gguf:{path}", cache=tmp_path, max_tokens=256)
    text = "Marie Curie discovered polonium in Paris."
    assert isinstance(r.entities(text), list) and isinstance(r.triples(text), list)
    assert isinstance(r.answer("What did Curie discover?", [text]), str)
    assert r.usage.total().llm_calls >= 3


# --- helpers ---------------------------------------------------------------------------------

def test_extract_json_tolerates_fences_and_prose():
    assert extract_json('{"a": 1}') == {"a": 1}
    assert extract_json('```json\n{"a": 1}\n```') == {"a": 1}
    assert extract_json('Answer: {"a": {"b": [1, 2]}} hope that helps') == {"a": {"b": [1, 2]}}
    assert extract_json("[1, 2]") == [1, 2]
    from rag_lab.reasoning.llm import InvalidReply
    with pytest.raises(InvalidReply):
        extract_json("no json at all {")


def test_fallback_text_helpers_by_hand():
    # 3 + 3 words fit in 6; the third sentence would make 9
    assert first_sentences("A b c. D e f. G h i.", 6) == "A b c. D e f."
    # a first sentence longer than the budget is cut to it
    assert first_sentences("one two three four five.", 3) == "one two three"
    assert leading_words(["  a  b ", "c d"], 3) == "a b c"
