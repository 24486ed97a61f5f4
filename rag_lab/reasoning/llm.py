"""The LLM-backed reasoner: the papers' jobs sent to a chat model picked by a spec string
(backends and specs: ``backends.py``).

How a job runs: render the prompt (prompts.py) -> ask the cache, else the backend (bounded
retries with exponential back-off on transient errors) -> extract the JSON object -> normalize ->
validate against the job's schema (``jsonschema``) -> only a valid reply is cached -> on an
invalid reply ask the model once more, telling it what was wrong -> still invalid: the job's
documented fallback, logged and counted (``usage`` ``llm_fallbacks``, ``stats["fallbacks"]``).
A cached reply that no longer validates is discarded and asked afresh. A backend that stays
unreachable raises ``LLMUnavailableError`` rather than silently filling a whole index with fallbacks.

Many jobs may run at once (``batch.run_batch``, ``concurrency`` of them): counters are updated
under a lock, the reply cache is shared safely, and every request (a retry, or a request sent again
with an option the server refused, included) first passes the process's ``RateLimiter`` for the
backend (``rate_limit.shared_limiter``: calls in flight, a pause for all threads after HTTP 429, an
optional tokens-per-minute ceiling); retries wait with exponential back-off and jitter, or the
server's ``Retry-After`` up to ``max_retry_after`` (beyond it: ``LLMUnavailableError`` naming the
wait). Identical requests in flight at once are sent once (single flight per cache key) and the
first reply stored for a key is the one every caller gets, so a batch gives the same answers at
any concurrency and a rebuild from the cache gives them again. ``cancel_calls`` ends the calls in
flight (an interrupted batch). ``identity()`` (and so the fingerprint that keys indexes) holds the
backend, temperature, max_tokens and response format.

Usage counts the tokens each job needs whether the reply came from the API or the cache, so a
replayed run reports the same costs; ``stats`` says how many requests actually went out.
API keys are read from the environment only and never appear in a repr, log line, exception,
cache row or usage record.
"""
from __future__ import annotations

import logging
import os
import random
import threading
import time
from concurrent.futures import Future
from types import SimpleNamespace
from typing import Any, Callable, Sequence

from ..core.types import Cost
from .backends import (DUMMY_KEY, KINDS, Completion, InvalidReply, LLMBackendError, LLMSpec,  # noqa: F401
                       LLMUnavailableError, RequestAdjusted, TransientBackendError, make_backend, parse_spec)
from .base import Choice, Entity, Reasoner, Triple
from .llm_cache import CachedReply, LLMCache, cache_key
from .prompts import PROMPTS
from .replies import extract_json, validate  # noqa: F401  (re-exported)
from .rate_limit import (CONCURRENCY_ENV, CallCancelled, backoff_delay, env_number,  # noqa: F401
                         resolve_concurrency, shared_limiter)
from .tokens import count_message_tokens, count_text_tokens

log = logging.getLogger(__name__)
TPM_ENV = "RAG_LAB_LLM_TPM"                   # optional tokens-per-minute ceiling
MAX_RETRY_AFTER_ENV = "RAG_LAB_LLM_MAX_RETRY_AFTER"   # longest Retry-After honoured (seconds)
MAX_RETRY_AFTER = 300.0
MAX_ADJUSTMENTS = 4        # request options a server may refuse in one call (three formats, the token limit)


class CutOff(InvalidReply):
    """An invalid reply the server cut off at ``max_tokens`` (finish_reason "length"): not asked again
    with the same limit (it would be cut again); the message says to raise max_tokens."""


class LLMReasoner(Reasoner):
    """Reasoner jobs answered by a chat model.

    ``client_backend``: an ``OpenAIChatBackend`` / ``LlamaCppBackend`` (anything with
    ``complete(...)`` and ``identity(model)``); ``cache``: True (rag_lab's cache folder), a folder,
    an ``LLMCache``, or False/None for none. ``max_retries`` bounds transient-error retries per
    request; back-off is ``retry_base_delay * 2**attempt`` times a random factor in [0.5, 1] (or
    the server's Retry-After), capped at ``max_retry_delay``; a Retry-After is honoured up to
    ``max_retry_after`` seconds (None: ``$RAG_LAB_LLM_MAX_RETRY_AFTER``, else 300), a longer one
    fails the call with an error naming the wait. ``concurrency``: calls in flight at once, in a batch
    and in the whole process for this backend (None: ``$RAG_LAB_LLM_CONCURRENCY``, else the backend's
    default: 8 over HTTP, 1 for gguf, which never runs more); ``tokens_per_minute``: an optional
    ceiling for the process (None: ``$RAG_LAB_LLM_TPM``)."""

    def __init__(self, client_backend, model: str, cache: bool | str | os.PathLike | LLMCache | None = True,
                 temperature: float = 0.0, timeout: float = 60.0, max_retries: int = 3,
                 retry_base_delay: float = 1.0, max_retry_delay: float = 30.0, max_tokens: int = 1024,
                 name: str | None = None, concurrency: int | None = None, tokens_per_minute: float | None = None,
                 max_retry_after: float | None = None):
        super().__init__()
        if timeout <= 0 or max_retries < 0 or max_tokens <= 0:
            raise ValueError(f"LLMReasoner: need timeout > 0, max_retries >= 0, max_tokens > 0; got "
                             f"timeout={timeout}, max_retries={max_retries}, max_tokens={max_tokens}")
        self.concurrency = resolve_concurrency(concurrency, client_backend)
        self.tokens_per_minute = env_number(TPM_ENV, float) if tokens_per_minute is None else tokens_per_minute
        self.max_retry_after = float((env_number(MAX_RETRY_AFTER_ENV, float) or MAX_RETRY_AFTER)
                                     if max_retry_after is None else max_retry_after)
        if not self.max_retry_after > 0:
            raise ValueError(f"LLMReasoner: max_retry_after must be a positive number of seconds, got {max_retry_after!r}")
        self.limiter = shared_limiter(client_backend.identity(model), self.tokens_per_minute, self.concurrency)
        self._lock = threading.Lock()          # guards ``stats`` and ``_flights``
        self._flights: dict[str, Future] = {}  # cache key -> the reply a thread is fetching for it
        self._cancel = threading.Event()       # set by ``cancel_calls``
        self._stopped = threading.Event()      # set by ``stop_calls``: never cleared
        self._rng = random.Random()            # back-off jitter only; never touches a result
        self.backend = client_backend
        self.model = model
        self.name = name or f"{getattr(client_backend, 'kind', 'llm')}:{model}"
        if cache is True:
            cache = LLMCache()
        elif isinstance(cache, (str, os.PathLike)):
            cache = LLMCache(cache)
        if cache is not None and cache is not False and not isinstance(cache, LLMCache):
            raise ValueError(f"LLMReasoner: cache must be True/False/None, a folder or an LLMCache, got {cache!r}")
        self.cache: LLMCache | None = cache if isinstance(cache, LLMCache) else None  # (an empty cache is falsy)
        self.temperature = float(temperature)
        self.timeout = float(timeout)
        self.max_retries = int(max_retries)
        self.retry_base_delay = float(retry_base_delay)
        self.max_retry_delay = float(max_retry_delay)
        self.max_tokens = int(max_tokens)
        self.stats = {"requests": 0, "cache_hits": 0, "retries": 0, "invalid_replies": 0, "fallbacks": 0}
        # per job: [answered, fell back]; and the first reason a job fell back (``batch.run_batch`` and
        # the index store read them: a job whose every call fell back fails the run)
        self.outcomes: dict[str, list[int]] = {}
        self.first_fallback: dict[str, str] = {}

    @classmethod
    def from_spec(cls, spec: str, **kwargs) -> "LLMReasoner":
        """Build from a spec string. Backend options (``response_format`` for HTTP backends,
        ``n_ctx``/``n_threads``/``seed`` for gguf) go to the backend, the rest to the reasoner."""
        parsed = parse_spec(spec)
        backend_keys = ("response_format",) if parsed.kind != "gguf" else ("n_ctx", "n_threads", "seed")
        backend_kwargs = {k: kwargs.pop(k) for k in backend_keys if k in kwargs}
        backend = make_backend(parsed, **backend_kwargs)
        return cls(backend, parsed.model, name=parsed.name, **kwargs)

    def __repr__(self) -> str:
        return f"LLMReasoner(name={self.name!r}, backend={self.backend!r}, cache={self.cache!r})"

    def identity(self) -> dict:
        """What makes this reasoner's replies what they are: the backend (kind, model, endpoint or weights),
        temperature, max_tokens and the response format asked for; never a key or header."""
        return {"name": self.name, "backend": self.backend.identity(self.model), "temperature": self.temperature,
                "max_tokens": self.max_tokens, "response_format": getattr(self.backend, "requested_format", None)}

    def cancel_calls(self) -> None:
        """End the calls in flight and every wait for one (``CallCancelled`` in their threads): an
        interrupted batch returns at once instead of waiting for the server. ``resume_calls`` undoes it."""
        self._cancel.set()
        cancel = getattr(self.backend, "cancel", None)
        if cancel is not None:
            cancel()

    def resume_calls(self) -> None:
        self._cancel.clear()

    def stop_calls(self) -> None:
        """End the calls in flight and refuse every later one (``CallCancelled``) for good: a cancelled
        Dask partition (``cluster_worker``) must stop calling, and a batch's ``resume_calls`` does not undo it."""
        self._stopped.set()
        self.cancel_calls()

    def _bump(self, counter: str) -> None:
        with self._lock:
            self.stats[counter] += 1

    def _outcome(self, job: str, answered: bool, problem: str | None = None) -> None:
        with self._lock:
            counts = self.outcomes.setdefault(job, [0, 0])
            counts[0 if answered else 1] += 1
            if problem is not None:
                self.first_fallback.setdefault(job, problem)

    # -- the jobs --

    def entities(self, text: str) -> list[Entity]:
        _need_str("entities", "text", text)
        return self._run("entities", text=text) if text.strip() else []

    def triples(self, text: str) -> list[Triple]:
        _need_str("triples", "text", text)
        return self._run("triples", text=text) if text.strip() else []

    def query_entities(self, query: str) -> list[str]:
        _need_str("query_entities", "query", query)
        return self._run("query_entities", query=query) if query.strip() else []

    def themes(self, text: str, n: int = 5) -> list[str]:
        _need_str("themes", "text", text)
        if not isinstance(n, int) or n <= 0:
            raise ValueError(f"themes: n must be a positive integer, got {n!r}")
        return self._run("themes", text=text, n=n) if text.strip() else []

    def answer(self, question: str, contexts: Sequence[str]) -> str:
        _need_str("answer", "question", question)
        contexts = list(contexts)
        if not all(isinstance(c, str) for c in contexts):
            raise ValueError("answer: contexts must be a sequence of strings")
        return self._run("answer", question=question, contexts=contexts)

    def choose_next(self, query: str, gathered: Sequence[str], candidates: Sequence[str],
                    similarities: Sequence[float], candidate_ids: Sequence[str] | None = None) -> Choice:
        _need_str("choose_next", "query", query)
        if not candidates:
            if similarities:
                raise ValueError(f"choose_next: no candidates but {len(similarities)} similarities")
            return Choice("stop", None, "no candidates")
        return self._run("choose_next", query=query, gathered=list(gathered), candidates=list(candidates),
                         similarities=[float(s) for s in similarities],
                         candidate_ids=None if candidate_ids is None else [str(i) for i in candidate_ids])

    def summarize(self, texts: Sequence[str], max_words: int = 100) -> str:
        texts = [t for t in texts if isinstance(t, str) and t.strip()]
        if not isinstance(max_words, int) or max_words <= 0:
            raise ValueError(f"summarize: max_words must be a positive integer, got {max_words!r}")
        return self._run("summarize", texts=texts, max_words=max_words) if texts else ""

    # -- machinery --

    def complete_json(self, job: str, messages: list[dict], schema: dict, parse: Callable[[Any], Any] = None):
        """A job whose prompt lives outside ``prompts.py`` (SSG's question writing): the reply's
        JSON, validated against ``schema`` and passed through ``parse``, or None when it is still
        invalid after one retry (logged and counted as a fallback). Cached like every job: only
        valid replies are stored; usage is counted under ``job``."""
        adhoc = SimpleNamespace(normalize=lambda data: data, parse=parse or (lambda data: data),
                                fallback=lambda: None, fallback_doc="None (the caller skips the item)")
        return self._run_messages(job, adhoc, list(messages), schema, {})

    def _run(self, job: str, **inputs):
        prompt = PROMPTS[job]
        return self._run_messages(job, prompt, prompt.messages(**inputs), prompt.schema(**inputs), inputs)

    def _run_messages(self, job: str, prompt, messages: list[dict], schema: dict, inputs: dict):
        tally = {"calls": 0, "prompt": 0, "completion": 0}
        t0 = time.perf_counter()
        try:
            for attempt in range(2):
                ok, value, text = self._ask(job, prompt, messages, schema, inputs, tally)
                if ok:
                    self._outcome(job, True)
                    return value
                self._bump("invalid_replies")
                log.info("%s: invalid %s reply (attempt %d): %s", self.name, job, attempt + 1, value)
                if isinstance(value, CutOff):            # asking again at the same max_tokens is cut off again
                    break
                messages = messages + [
                    {"role": "assistant", "content": text},
                    {"role": "user", "content": f"That reply is not valid ({value}). Reply again with only the "
                                                "JSON object, in exactly the format asked for."}]
            why = "cut off" if isinstance(value, CutOff) else "still invalid after a retry"
            log.warning("%s: %s reply %s (%s); using the fallback: %s", self.name, job, why, value,
                        prompt.fallback_doc)
            self._bump("fallbacks")
            self._outcome(job, False, f"{value}; the reply began {text[:80]!r}")
            tally["fallbacks"] = 1
            return prompt.fallback(**inputs)
        finally:
            self.usage.add(job, Cost(llm_prompt_tokens=tally["prompt"], llm_completion_tokens=tally["completion"],
                                     llm_calls=tally["calls"], llm_fallbacks=tally.get("fallbacks", 0),
                                     seconds=time.perf_counter() - t0))

    def _ask(self, job: str, prompt, messages: list[dict], schema: dict, inputs: dict, tally: dict):
        """One reply, parsed: ``(True, result, text)`` or ``(False, error, text)``.

        A cached reply is used only if it still validates (else it is discarded and the model
        asked afresh); a fresh reply is cached only once it has validated, so an invalid one is
        never replayed as good and the retry after it always reaches the model. A request another
        thread is already sending is not sent again: this thread takes that reply (single flight)."""
        identity = self.backend.identity(self.model)
        key = cache_key(identity, messages, {"temperature": self.temperature, "max_tokens": self.max_tokens})
        hit = self.cache.get(key) if self.cache is not None else None
        if hit is not None:
            ok, value = self._parse(prompt, hit.text, schema, inputs)
            if ok:
                self._bump("cache_hits")
                self._count(hit, tally)
                return True, value, hit.text
            self.cache.discard(key, f"the cached {job} reply fails validation ({value})")
        with self._lock:
            flight = self._flights.get(key)
            mine = flight is None
            if mine:
                flight = self._flights[key] = Future()
        if not mine:                             # the same request is on its way: take its reply
            reply = flight.result()
            self._bump("cache_hits")
            self._count(reply, tally)
            ok, value = self._parse(prompt, reply.text, schema, inputs)
            return ok, value, reply.text
        try:
            ok, value, reply = self._fetch(key, identity, job, prompt, messages, schema, inputs, tally)
        except BaseException as e:
            flight.set_exception(e)
            raise
        else:
            flight.set_result(reply)
        finally:
            with self._lock:
                self._flights.pop(key, None)
        return ok, value, reply.text

    def _fetch(self, key, identity, job, prompt, messages, schema, inputs, tally):
        """Ask the model; store a valid reply unless one is stored already (first write wins: that one
        is then the reply, so every process and rebuild agrees on it)."""
        estimate = 0
        if self.limiter.tokens_per_minute:   # what the ceiling charges before the reply says
            estimate = count_message_tokens(messages) + getattr(prompt, "completion_allowance", self.max_tokens)
        completion = self._request(job, messages, schema, estimate)
        reply = CachedReply(
            completion.text,
            completion.prompt_tokens if completion.prompt_tokens is not None else count_message_tokens(messages),
            (completion.completion_tokens if completion.completion_tokens is not None
             else count_text_tokens(completion.text)))
        self._count(reply, tally)
        self.limiter.settle(estimate, reply.prompt_tokens + reply.completion_tokens)
        ok, value = self._parse(prompt, reply.text, schema, inputs)
        if not ok and completion.finish_reason == "length":
            value = CutOff(f"the reply was cut off at max_tokens={self.max_tokens} (finish_reason 'length'): "
                           f"raise max_tokens (LLMReasoner(max_tokens=...)); {value}")
        if ok and self.cache is not None:
            stored = self.cache.put(key, identity, reply)
            if stored.text != reply.text:
                ok, value = self._parse(prompt, stored.text, schema, inputs)
                reply = stored
        return ok, value, reply

    @staticmethod
    def _parse(prompt, text: str, schema: dict, inputs: dict):
        try:
            data = prompt.normalize(extract_json(text), **inputs)
            validate(data, schema)
            return True, prompt.parse(data, **inputs)
        except InvalidReply as e:
            return False, e

    @staticmethod
    def _count(reply: CachedReply, tally: dict) -> None:
        tally["calls"] += 1
        tally["prompt"] += reply.prompt_tokens
        tally["completion"] += reply.completion_tokens

    def _send(self, job: str, messages: list[dict], schema: dict, estimate: int) -> Completion:
        """One request, holding a slot of the process's limiter while it is out."""
        if self._cancel.is_set() or self._stopped.is_set():
            raise CallCancelled(f"{self.name}: {job}: cancelled")
        with self.limiter.request(estimate, self._cancel):
            self._bump("requests")
            try:
                return self.backend.complete(self.model, messages, job=job, schema=schema,
                                             temperature=self.temperature, max_tokens=self.max_tokens,
                                             timeout=self.timeout)
            except BaseException:
                self.limiter.settle(estimate, 0)        # a request with no reply used none of the ceiling
                raise

    def _request(self, job: str, messages: list[dict], schema: dict, estimate: int = 0) -> Completion:
        """One completion, retried on transient errors and sent again (not a retry) when the backend
        changed an option the server refused. A 429 pauses every thread of the process for this backend
        (``RateLimiter.pause``); other transient errors make only this thread wait."""
        attempt = adjusted = 0
        while True:
            try:
                return self._send(job, messages, schema, estimate)
            except RequestAdjusted as e:
                adjusted += 1
                if adjusted > MAX_ADJUSTMENTS:
                    raise LLMBackendError(f"{self.name}: {job}: the server kept refusing request options ({e})") from None
                continue
            except TransientBackendError as e:
                if self._cancel.is_set():
                    raise CallCancelled(f"{self.name}: {job}: cancelled") from None
                if attempt == self.max_retries:
                    raise LLMUnavailableError(f"{self.name}: {job} failed after {attempt + 1} attempts; "
                                              f"last error: {e}") from None
                delay = self._retry_delay(job, e, attempt)
                attempt += 1
                self._bump("retries")
                log.warning("%s: %s: %s; retrying in %.2f s (%d/%d)", self.name, job, e, delay, attempt,
                            self.max_retries)
                if e.status == 429:
                    self.limiter.pause(delay)           # the next request waits it out, with every other thread
                elif self._cancel.wait(delay):
                    raise CallCancelled(f"{self.name}: {job}: cancelled") from None

    def _retry_delay(self, job: str, error: TransientBackendError, attempt: int) -> float:
        """The server's Retry-After when it gave one (up to ``max_retry_after``), else jittered back-off."""
        if error.retry_after is None:
            return backoff_delay(attempt, self.retry_base_delay, self.max_retry_delay, self._rng)
        if error.retry_after > self.max_retry_after:
            raise LLMUnavailableError(
                f"{self.name}: {job}: the server asks to wait {error.retry_after:g} s before trying again "
                f"(Retry-After), longer than max_retry_after={self.max_retry_after:g} s; try later, or allow the "
                f"wait with LLMReasoner(max_retry_after=...) or ${MAX_RETRY_AFTER_ENV}") from None
        return error.retry_after


def _need_str(job: str, what: str, value) -> None:
    if not isinstance(value, str):
        raise ValueError(f"{job}: {what} must be a string, got {type(value).__name__}")
