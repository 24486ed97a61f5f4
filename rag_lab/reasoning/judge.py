"""A ragas judge (LLM + embeddings) from the same spec strings the LLM reasoner takes.

ragas drives the judge through LangChain, so HTTP specs become a ``ChatOpenAI`` pointed at
the right endpoint; embeddings for answer relevancy are our cached MiniLM embedder. The API
key is read from the environment and handed to the client only.

Every judge reply is cached on disk (``JudgeCache``, in ``<rag_lab cache dir>/judge.sqlite``)
through ragas' own cache hook on its LLM wrapper, so a re-run sends no request and replays the
same replies: it scores exactly the same and costs nothing. ragas keys a call by its prompt, the
number of completions and the temperature (exact, whatever order ragas runs its jobs in); we add
the judge's identity (kind, model, endpoint). LangChain's LLM cache was the other candidate:
its key holds the model's settings as first serialised, but ragas changes ``n`` and the
temperature on the model between calls, so that key would depend on which job ran first.
Stored: the reply texts and their finish metadata as JSON, never a header or an API key; only
replies ragas parsed. ragas' cache hook stores a reply as soon as it arrives, before its output
parser read it, and has no hook after parsing; so ``set`` only holds the reply in memory, and the
reply is written once ragas' parser (``RagasOutputParser``, replaced by a subclass that reports each
parsed text: ``confirm_parsed_replies``) has parsed every completion of it. A reply that is not JSON,
or is JSON of the wrong shape (RagasOutputParserException), is never written and is asked again next
time. The file heals like every keyed cache (``KeyedCache``).

Failures: the judge's chat model reports every call's end and error to ``JudgeCalls`` (a LangChain
callback); a scoring pass in which every judge call failed and nothing was scored raises
``JudgeFailed`` (``check_answered``) instead of a table of NaN. The judge's key is registered with the
process's scrubber (``core.redact``), so an error a server echoes it in (ragas logs them) shows ``***``.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..caching.sqlite_cache import KeyedCache
from ..core.redact import install_scrubber, register_secret, scrub

log = logging.getLogger(__name__)

KEY_ENV = {"openai": "OPENAI_API_KEY", "ollama": None, "openai-compatible": "RAG_LAB_LLM_API_KEY"}
CACHE_FILE = "judge.sqlite"


def _encode(result) -> str:
    """An LLMResult as JSON: per completion its text, generation info and response metadata."""
    return json.dumps({"generations": [[{"text": g.text, "info": g.generation_info,
                                          "meta": getattr(getattr(g, "message", None), "response_metadata", None)}
                                         for g in gens] for gens in result.generations]}, default=str)


def _decode(text: str):
    from langchain_core.messages import AIMessage
    from langchain_core.outputs import ChatGeneration, LLMResult

    def generation(g: dict):
        return ChatGeneration(message=AIMessage(content=g["text"], response_metadata=g["meta"] or {}),
                              generation_info=g["info"])

    return LLMResult(generations=[[generation(g) for g in gens] for gens in json.loads(text)["generations"]])


def unparseable(result) -> str | None:
    """Why ragas could not read a judge reply (each completion must hold JSON, found the way ragas
    finds it), or None. Such a reply is never stored, so a re-run asks the judge again instead of
    replaying a reply that can only fail."""
    from ragas.prompt.utils import extract_json

    for i, gens in enumerate(result.generations):
        for g in gens:
            try:
                value = json.loads(extract_json(g.text))
            except (TypeError, ValueError):
                value = None
            if not isinstance(value, (dict, list)):
                return f"completion {i} is not JSON: {str(g.text)[:60]!r}"
    return None


MAX_PENDING = 10_000      # replies waiting for ragas' parser, per process (the oldest are forgotten)
_PENDING: "OrderedDict[tuple[int, str], tuple[JudgeCache, str, Any, set]]" = OrderedDict()
_PENDING_LOCK = threading.Lock()
_PARSER_PATCHED = False


def confirm_parsed(text: str) -> None:
    """ragas parsed ``text``: write every held reply whose completions are now all parsed."""
    ready = []
    with _PENDING_LOCK:
        for slot, (cache, key, value, waiting) in list(_PENDING.items()):
            if text in waiting:
                waiting.discard(text)
                if not waiting:
                    del _PENDING[slot]
                    ready.append((cache, key, value))
    for cache, key, value in ready:
        cache.store_reply(key, value)


def confirm_parsed_replies() -> None:
    """Make ragas report every reply text its output parser parsed (``confirm_parsed``), once per process:
    ragas builds its parser from the module's ``RagasOutputParser`` name on each call, so a subclass
    put under that name sees every parse; there is no public hook after parsing (module docstring)."""
    global _PARSER_PATCHED
    if _PARSER_PATCHED:
        return
    import ragas.prompt.pydantic_prompt as pp

    base = pp.RagasOutputParser

    class ConfirmingParser(base):
        async def parse_output_string(self, output_string: str, *args, **kwargs):
            result = await super().parse_output_string(output_string, *args, **kwargs)
            confirm_parsed(output_string)
            return result

    ConfirmingParser.__name__ = ConfirmingParser.__qualname__ = base.__name__
    pp.RagasOutputParser = ConfirmingParser
    _PARSER_PATCHED = True


class JudgeCache(KeyedCache):
    """ragas' cache interface (``get``, ``set``, ``has_key``; duck-typed, so importing this module
    does not import ragas) over one SQLite file shared by every judge; ``judge`` (the judge's
    identity) is part of every key. On the shared cache base (``rag_lab.caching.sqlite_cache``): safe
    to share between threads and processes, a damaged file is moved aside and rebuilt, and a stored
    reply that does not decode or that ragas could not parse is moved to the ``rejected`` table with
    a warning and asked again."""

    SCHEMA = ("CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, judge TEXT, value TEXT, created REAL)",)
    FILENAME, TABLE, WHAT, AGAIN = CACHE_FILE, "replies", "judge cache", "asking the judge again"

    def __init__(self, judge: str, directory: str | Path | None = None):
        super().__init__(directory)
        self.judge = judge

    def __repr__(self) -> str:
        return f"JudgeCache({self.judge!r}, {str(self.path)!r})"

    def _key(self, key: str) -> str:
        return hashlib.sha256(f"{self.judge}\n{key}".encode("utf-8")).hexdigest()

    def get(self, key: str):
        stored = self._key(key)
        row = self.store.run(lambda db: db.execute("SELECT value FROM replies WHERE key=?", (stored,)).fetchone())
        if row is None:
            return None
        try:
            result = _decode(row[0])
            problem = unparseable(result)
        except (TypeError, ValueError, KeyError, AttributeError) as e:   # not the JSON _encode writes
            problem = f"unreadable entry ({type(e).__name__}: {str(e)[:80]})"
        if problem:
            self.discard(stored, problem)
            return None
        return result

    def has_key(self, key: str) -> bool:
        return self.get(key) is not None

    def set(self, key: str, value) -> None:
        """Hold ``value`` until ragas parsed each of its completions (``confirm_parsed``), then write it;
        a reply with a completion that holds no JSON is not even held."""
        problem = unparseable(value)
        if problem:
            log.info("%s: not storing a reply ragas cannot parse (%s)", self.WHAT, problem)
            return
        waiting = {g.text for gens in value.generations for g in gens}
        with _PENDING_LOCK:
            _PENDING[(id(self), key)] = (self, key, value, waiting)
            _PENDING.move_to_end((id(self), key))
            while len(_PENDING) > MAX_PENDING:
                _PENDING.popitem(last=False)

    def store_reply(self, key: str, value) -> None:
        """Write ``value`` for ``key`` now (ragas parsed it)."""
        self.store.write(lambda db: db.execute("INSERT OR REPLACE INTO replies VALUES (?, ?, ?, ?)",
                                               (self._key(key), self.judge, _encode(value), time.time())))


class JudgeFailed(RuntimeError):
    """Every judge call of a scoring pass failed: the judged metrics would all be NaN."""


class JudgeCalls:
    """Counts the judge's chat calls that ended and that failed, and keeps the first failure (scrubbed);
    ``handler()`` is the LangChain callback that feeds it (made on demand: LangChain is imported then)."""

    def __init__(self):
        self.answered = self.failed = 0
        self.first_error: str | None = None
        self._lock = threading.Lock()

    def snapshot(self) -> tuple[int, int]:
        with self._lock:
            return self.answered, self.failed

    def ended(self) -> None:
        with self._lock:
            self.answered += 1

    def errored(self, error: BaseException) -> None:
        with self._lock:
            self.failed += 1
            if self.first_error is None:
                self.first_error = scrub(f"{type(error).__name__}: {error}").replace("\n", " ")[:400]

    def handler(self):
        from langchain_core.callbacks import BaseCallbackHandler

        calls = self

        class Counting(BaseCallbackHandler):
            def on_llm_end(self, response, **kwargs):
                calls.ended()

            def on_llm_error(self, error, **kwargs):
                calls.errored(error)

        return Counting()


JUDGE_CONCURRENCY = 16     # ragas' own default (RunConfig.max_workers)
JUDGE_TIMEOUT = 180.0      # ragas' own default (RunConfig.timeout): seconds one scoring job may take


@dataclass
class Judge:
    """A ragas judge: ``concurrency`` is how many scoring jobs ragas runs at once and ``timeout`` the
    seconds it gives each (its ``RunConfig``); both are recorded in a result's sidecar."""

    name: str
    llm: Any
    embeddings: Any
    chat: Any = None                        # the LangChain chat model behind ``llm`` (for repeats)
    cache: bool | str | Path = True         # as given to ``from_spec``
    concurrency: int = JUDGE_CONCURRENCY
    timeout: float = JUDGE_TIMEOUT
    calls: JudgeCalls | None = None         # fed by the chat model's callback (``from_spec``)

    def __post_init__(self):
        if not isinstance(self.concurrency, int) or isinstance(self.concurrency, bool) or self.concurrency < 1:
            raise ValueError(f"judge concurrency must be a positive integer, got {self.concurrency!r}")
        if not self.timeout > 0:
            raise ValueError(f"judge timeout must be a positive number of seconds, got {self.timeout!r}")

    def settings(self) -> dict[str, Any]:
        """What the sidecar records about how the judge ran."""
        return {"concurrency": self.concurrency, "timeout": self.timeout}

    def check_answered(self, before: tuple[int, int] | None, scored: dict[str, list]) -> None:
        """Raise ``JudgeFailed`` (the count and the first error) when the judge answered none of its calls
        since ``before`` (``calls.snapshot()``), at least one failed, and no judged value in ``scored``
        is a number: a table of NaN is not a result."""
        if self.calls is None or before is None:
            return
        answered, failed = self.calls.snapshot()
        values = [v for column in scored.values() for v in column if v is not None]
        if failed > before[1] and answered == before[0] and all(v != v for v in values):
            raise JudgeFailed(f"judge {self.name}: every one of its {failed - before[1]} calls failed and nothing "
                              f"was scored; first error: {self.calls.first_error}")

    def run_config(self):
        """ragas' RunConfig with this judge's concurrency and timeout (its other settings: ragas' defaults)."""
        from ragas.run_config import RunConfig
        return RunConfig(max_workers=self.concurrency, timeout=int(self.timeout) or 1)

    def repeat(self, r: int) -> "Judge":
        """The same judge asked again for repeat ``r``: repeat 0 is this judge; a later repeat keys its
        cache entries by ``name#repeat-r``, so its replies are new requests (and are cached in turn,
        so a re-run replays every repeat). The spread over repeats is the judge's own noise."""
        if r == 0:
            return self
        if self.chat is None:
            raise ValueError(f"judge {self.name}: no chat model to ask again (make it with Judge.from_spec)")
        from ragas.llms import LangchainLLMWrapper

        identity = f"{self.name}#repeat-{r}"
        replies = None if self.cache is False else JudgeCache(identity, None if self.cache is True else self.cache)
        return replace(self, llm=LangchainLLMWrapper(self.chat, cache=replies))

    @classmethod
    def from_spec(cls, spec: str, embedder=None, timeout: float = 120.0,
                  cache: bool | str | Path = True, concurrency: int = JUDGE_CONCURRENCY,
                  job_timeout: float = JUDGE_TIMEOUT) -> "Judge":
        """``cache``: True (rag_lab's cache folder), a folder, or False for no cache. ``timeout``: seconds
        one HTTP request may take; ``concurrency``/``job_timeout``: ragas' workers and per-job timeout."""
        from langchain_openai import ChatOpenAI
        from ragas.embeddings import LangchainEmbeddingsWrapper
        from ragas.llms import LangchainLLMWrapper

        from ..core.chunking import langchain_embeddings
        from ..core.embedding import shared_embedder
        from .backends import DUMMY_KEY, parse_spec

        parsed = parse_spec(spec)
        if parsed.kind not in KEY_ENV:
            raise ValueError(f"judge spec {spec!r}: ragas needs an HTTP chat model (openai:, ollama: or "
                             "openai-compatible:); serve a GGUF with llama.cpp's server and use openai-compatible:")
        env = KEY_ENV[parsed.kind]
        key = (os.environ.get(env) if env else None) or (None if parsed.kind == "openai" else DUMMY_KEY)
        if not key:
            raise ValueError(f"judge {parsed.name}: set the API key in the environment variable {env}")
        if key != DUMMY_KEY:
            register_secret(key)
        install_scrubber()
        confirm_parsed_replies()
        calls = JudgeCalls()
        chat = ChatOpenAI(model=parsed.model, base_url=parsed.base_url, api_key=key, temperature=0,
                          timeout=timeout, max_retries=2, callbacks=[calls.handler()])
        replies = None if cache is False else JudgeCache(parsed.name, None if cache is True else cache)
        emb = LangchainEmbeddingsWrapper(langchain_embeddings(embedder or shared_embedder()))
        return cls(parsed.name, LangchainLLMWrapper(chat, cache=replies), emb, chat, cache, concurrency, job_timeout,
                   calls)


def get_judge(spec: str | None, embedder=None, cache: bool | str | Path = True, concurrency: int = JUDGE_CONCURRENCY,
              timeout: float = JUDGE_TIMEOUT) -> Judge | None:
    """None (no LLM-judged metrics) unless a spec is given; ``concurrency`` and ``timeout`` go to ragas."""
    return Judge.from_spec(spec, embedder, cache=cache, concurrency=concurrency, job_timeout=timeout) if spec else None
