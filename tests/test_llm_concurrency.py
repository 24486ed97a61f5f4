"""Concurrent reasoner calls: run_batch keeps input order and its bound, retries a failed input after the
others, stops a systematic failure early; the rate limiter's arithmetic; the LLM reasoner's concurrency
settings; SKETCH built through a fake OpenAI-compatible server gives the same triples and graph at
concurrency 1 and 8, the server never sees more requests at once than the setting, and a 429 pauses
every thread. No test asserts a speed-up (benchmarks/llm_concurrency.py measures it)."""
from __future__ import annotations

import random
import threading
import time

import pytest
from fake_openai_server import Reply, fake_openai  # noqa: F401  (fixture)
from schema_responder import responder

from rag_lab.evaluation import harness
from rag_lab.core.types import Cost, Document
from rag_lab.reasoning.base import Reasoner
from rag_lab.reasoning.batch import BatchError, batch_concurrency, run_batch
from rag_lab.reasoning.backends import LlamaCppBackend, OpenAIChatBackend
from rag_lab.reasoning.llm import LLMReasoner, resolve_concurrency
from rag_lab.reasoning.rate_limit import RateLimiter, backoff_delay


class InFlight:
    """Counts calls running at once; call i sleeps longer the earlier it is, so later ones finish first."""

    def __init__(self, n: int):
        self.n, self.now, self.peak, self.threads = n, 0, 0, set()
        self.lock = threading.Lock()

    def __call__(self, i: int) -> int:
        with self.lock:
            self.now += 1
            self.peak = max(self.peak, self.now)
            self.threads.add(threading.get_ident())
        time.sleep(0.004 * (self.n - i))
        with self.lock:
            self.now -= 1
        return i * i


def test_results_come_back_in_input_order_within_the_bound():
    work = InFlight(12)
    assert run_batch(work, range(12), "squares", concurrency=4, progress=False) == [i * i for i in range(12)]
    assert 2 <= work.peak <= 4


def test_concurrency_one_is_a_plain_loop_in_the_calling_thread():
    work = InFlight(5)
    assert run_batch(work, range(5), "squares", concurrency=1, progress=False) == [0, 1, 4, 9, 16]
    assert work.peak == 1 and work.threads == {threading.get_ident()}


def test_a_failed_input_is_retried_after_the_others_and_the_rest_finish():
    calls, lock = [], threading.Lock()

    def flaky(i):
        with lock:
            calls.append(i)
            first = calls.count(i) == 1
        if i == 3 and first:
            raise TimeoutError("no reply")
        return -i

    assert run_batch(flaky, range(8), "flaky", concurrency=3, progress=False) == [0, -1, -2, -3, -4, -5, -6, -7]
    assert calls.count(3) == 2 and sorted(calls[:-1]) == list(range(8))   # the retry comes last
    assert calls[-1] == 3


def test_an_input_that_keeps_failing_is_named_after_the_others_are_done():
    done = []

    def broken(i):
        if i == 2:
            raise ValueError("bad input")
        done.append(i)
        return i

    with pytest.raises(BatchError, match=r"items: 1 of 5 inputs failed: input 2: ValueError: bad input") as info:
        run_batch(broken, range(5), "items", concurrency=2, retries=1, progress=False)
    assert sorted(done) == [0, 1, 3, 4] and list(info.value.failures) == [2]


@pytest.mark.parametrize("concurrency", [1, 3])
def test_a_systematic_failure_stops_starting_new_inputs(concurrency):
    started = []

    def refused(i):
        started.append(i)
        raise PermissionError("HTTP 401: bad key")

    with pytest.raises(BatchError, match="stopped early"):
        run_batch(refused, range(100), "keys", concurrency=concurrency, max_failures=4, progress=False)
    assert 4 <= len(started) <= 4 + concurrency - 1      # what was already in flight finishes; nothing new starts


class CostingReasoner(Reasoner):
    """answer(question) costs len(question) prompt tokens; calls from many threads at once."""

    name = "fake:costing"
    concurrency = 4

    def answer(self, question, contexts=()):
        time.sleep(random.uniform(0, 0.01))
        self.usage.add("answer", Cost(llm_prompt_tokens=len(question), llm_calls=1))
        return question.upper()

    entities = triples = query_entities = themes = choose_next = summarize = None


def test_each_result_gets_the_cost_of_its_own_calls_while_others_run():
    r = CostingReasoner()
    questions = ["a" * n for n in range(1, 21)]
    out = run_batch(r.answer, questions, "answers", reasoner=r, with_costs=True, progress=False)
    assert [answer for answer, _ in out] == [q.upper() for q in questions]
    assert [cost.llm_prompt_tokens for _, cost in out] == list(range(1, 21))
    assert r.usage.total().llm_prompt_tokens == sum(range(1, 21)) and r.usage.total().llm_calls == 20
    assert batch_concurrency(r) == 4 and batch_concurrency(r, 2) == 2 and batch_concurrency(None) == 1


# --- rate limits -------------------------------------------------------------------------------------

class FakeClock:
    def __init__(self):
        self.now, self.slept = 0.0, []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def test_tokens_per_minute_bucket():
    """600 tokens a minute = 10 a second, at most 600 held (worked by hand)."""
    clock = FakeClock()
    limiter = RateLimiter(600, clock=clock, sleep=clock.sleep)
    assert limiter.acquire(500) == 0                  # a full bucket: 600 -> 100
    assert limiter.acquire(300) == pytest.approx(20)  # needs 200 more at 10/s; then 0 left
    limiter.settle(estimated=300, actual=100)         # the reply used 100: 200 come back
    assert limiter.acquire(200) == 0                  # -> 0
    clock.now += 60                                   # refilled, but never above 600
    assert limiter.acquire(1000) == 0                 # larger than a minute: goes on a full bucket -> -400
    assert limiter.acquire(100) == pytest.approx(50)  # (100 + 400) / 10


class Draws:
    """A random source that returns ``a + u * (b - a)`` for its scripted fractions ``u``, and records (a, b)."""

    def __init__(self, *fractions):
        self.fractions, self.asked = list(fractions), []

    def uniform(self, a, b):
        self.asked.append((a, b))
        return a + self.fractions.pop(0) * (b - a)


def test_a_pause_holds_every_request_until_it_ends():
    clock = FakeClock()
    limiter = RateLimiter(None, clock=clock, sleep=clock.sleep, rng=Draws(0.0))
    limiter.pause(5)
    limiter.pause(2)                                  # an earlier end never shortens the pause
    assert limiter.acquire() == pytest.approx(5) and limiter.acquire() == 0
    with pytest.raises(ValueError, match="tokens_per_minute must be a positive number"):
        RateLimiter(0)


def test_threads_resume_spread_over_a_fifth_of_the_pause():
    """Each waiter draws its own end in [pause end, pause end + 0.2 * pause] (worked by hand: a 10 s pause
    spreads the resumes over 2 s)."""
    clock = FakeClock()
    draws = Draws(0.5, 0.0, 1.0)
    limiter = RateLimiter(None, clock=clock, sleep=clock.sleep, rng=draws)
    limiter.pause(10)
    assert limiter.acquire() == pytest.approx(11)     # 10 + 0.5 * 2
    limiter.pause(10)                                 # now = 11: a new pause to 21
    assert limiter.acquire() == pytest.approx(10)     # its own draw: 0
    limiter.pause(10)
    assert limiter.acquire() == pytest.approx(12)     # 10 + 1.0 * 2
    assert draws.asked == [(0.0, 2.0)] * 3


def test_backoff_doubles_and_is_jittered_within_half_and_full():
    class Edge:
        def __init__(self, u):
            self.u = u

        def uniform(self, a, b):
            return a if self.u == "low" else b
    assert backoff_delay(0, 1.0, 30.0, Edge("high")) == 1.0 and backoff_delay(3, 1.0, 30.0, Edge("high")) == 8.0
    assert backoff_delay(3, 1.0, 30.0, Edge("low")) == 4.0 and backoff_delay(9, 1.0, 30.0, Edge("high")) == 30.0


def test_concurrency_settings(monkeypatch):
    monkeypatch.delenv("RAG_LAB_LLM_CONCURRENCY", raising=False)
    assert resolve_concurrency(None, OpenAIChatBackend) == 8 and resolve_concurrency(None, LlamaCppBackend) == 1
    assert resolve_concurrency(16, LlamaCppBackend) == 1          # a local GGUF never runs two calls at once
    monkeypatch.setenv("RAG_LAB_LLM_CONCURRENCY", "3")
    assert resolve_concurrency(None, OpenAIChatBackend) == 3 and resolve_concurrency(5, OpenAIChatBackend) == 5
    monkeypatch.setenv("RAG_LAB_LLM_CONCURRENCY", "many")
    with pytest.raises(ValueError, match="RAG_LAB_LLM_CONCURRENCY='many': expected a positive integer"):
        resolve_concurrency(None, OpenAIChatBackend)
    with pytest.raises(ValueError, match="concurrency must be a positive integer"):
        resolve_concurrency(0, OpenAIChatBackend)


# --- through the fake server ----------------------------------------------------------------------------

DOCS = [Document("d1", "Parmigiano Reggiano comes from Parma and Reggio Emilia. Farmers in Emilia sell milk to "
                       "dairies. The Consorzio checks every wheel. Wheels age in Modena for twelve months."),
        Document("d2", "Pesto comes from Genoa in Liguria. Basil from Pra is ground with Pecorino and Parmigiano. "
                       "Sailors from Genoa carried pesto to Sardinia and Corsica."),
        Document("d3", "Risotto alla Milanese is cooked in Milan with saffron from Abruzzo. Arborio and Carnaroli "
                       "rice grow in Piedmont and Lombardy near Vercelli and Pavia.")]


def llm(server, tmp_path, concurrency, cache="cache"):
    return LLMReasoner.from_spec(f"openai-compatible:fake-model@{server.base_url}", concurrency=concurrency,
                                 cache=tmp_path / cache if cache else False, retry_base_delay=0.01, timeout=10)


def sketch_over(reasoner, embedder):
    from rag_lab.methods import get_retriever
    return harness.build(get_retriever("sketch", reasoner=reasoner, embedder=embedder), DOCS, reuse=False)


def graph_of(retriever) -> tuple:
    store = retriever.graph.store
    return sorted(map(repr, store.nodes())), sorted(map(repr, store.edges()))


def test_sketch_graph_is_the_same_at_concurrency_1_and_8(fake_openai, tmp_path, embedder):
    fake_openai.responder, fake_openai.delay = responder, 0.02
    one = sketch_over(llm(fake_openai, tmp_path, 1, cache=None), embedder)
    assert fake_openai.peak_in_flight == 1
    calls = len(fake_openai.requests)
    fake_openai.peak_in_flight = 0
    eight_reasoner = llm(fake_openai, tmp_path, 8)
    eight = sketch_over(eight_reasoner, embedder)
    assert len(fake_openai.requests) == 2 * calls > 8
    assert 2 <= fake_openai.peak_in_flight <= 8
    assert [c.id for c in eight.chunks] == [c.id for c in one.chunks]
    assert graph_of(eight) == graph_of(one) and len(eight.graph) == len(one.graph) > 5
    assert eight.build_cost.llm_calls == one.build_cost.llm_calls == calls
    # the reply cache was written from eight threads: a rebuild replays every reply and sends nothing
    again = sketch_over(llm(fake_openai, tmp_path, 8), embedder)
    assert len(fake_openai.requests) == 2 * calls and graph_of(again) == graph_of(one)


def test_answers_and_query_entities_keep_their_questions(fake_openai, tmp_path, embedder):
    from rag_lab.core.types import Dataset, Question
    from rag_lab.evaluation.harness import evaluate

    fake_openai.responder, fake_openai.delay = responder, 0.01
    questions = [Question(f"q{i}", f"Where does {word} come from?", word, ["d1"])
                 for i, word in enumerate(["Parmigiano", "Pesto", "Risotto", "Basil", "Saffron", "Pecorino"])]
    data = Dataset("tiny", DOCS, questions)
    tables = {}
    for c in (1, 6):
        reasoner = llm(fake_openai, tmp_path, c, cache=None)
        from rag_lab.methods import get_retriever
        sketch = harness.build(get_retriever("sketch", reasoner=reasoner, embedder=embedder), DOCS, reuse=False)
        df = evaluate([sketch], data, ks=[1, 3], reasoner=reasoner, progress=False)
        tables[c] = df.drop(columns="value")[df.metric != "latency_seconds"].assign(
            value=df.loc[df.metric != "latency_seconds", "value"].round(9)).reset_index(drop=True)
    assert tables[1].equals(tables[6])
    assert 2 <= fake_openai.peak_in_flight <= 6


def test_a_429_pauses_every_thread_for_its_retry_after(fake_openai, tmp_path):
    """On a fake clock (the limiter's and the server's): after the 429 (Retry-After 0.4) no request leaves
    before the pause ends, whichever thread sends it; only the four already let through go earlier."""
    clock, lock = FakeClock(), threading.Lock()
    arrivals, first = [], {"done": False}

    def scripted(request):
        with lock:
            arrivals.append(clock.now)
            if not first["done"]:
                first["done"] = True
                return Reply(status=429, headers={"Retry-After": "0.4"})
            slow = len(arrivals) <= 4      # the first replies come back well after the 429 has
        return Reply(responder(request), delay=0.3 if slow else 0.01)

    fake_openai.responder = scripted
    r = llm(fake_openai, tmp_path, 4, cache=None)
    r.limiter.use_clock(clock, lambda seconds: setattr(clock, "now", clock.now + seconds))
    names = [(f"Alpha{x}", f"Beta{x}") for x in "abcdefghijkl"]
    out = run_batch(r.entities, [f"{a} meets {b}." for a, b in names], "entities", reasoner=r, progress=False)
    assert [tuple(e.name for e in ents) for ents in out] == names
    assert len(arrivals) == 13 and arrivals[0] == 0.0
    early = [t for t in arrivals if t < 0.4]
    assert len(early) <= 4 and all(t == 0.0 for t in early)   # let through before the 429 came back
    assert len(arrivals) - len(early) >= 9                      # the retry and the eight not yet started
    assert r.stats["retries"] == 1 and r.stats["requests"] == 13
