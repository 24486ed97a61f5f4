"""Chat-model backends of the LLM reasoner, and the spec strings that pick one.

Specs (see docs/llm.md):
- ``openai:MODEL``                          key from OPENAI_API_KEY; OPENAI_BASE_URL if set
- ``ollama:MODEL``                          Ollama's OpenAI-compatible endpoint (OLLAMA_HOST or localhost:11434)
- ``openai-compatible:MODEL@http://h:p/v1`` vLLM, llama.cpp server, LM Studio...; key from RAG_LAB_LLM_API_KEY
- ``gguf:/path/model.gguf``                 in-process llama-cpp-python, JSON-schema-constrained decoding

A backend sends one chat completion and reports transient failures (429, 5xx, timeouts,
dropped connections) as ``TransientBackendError`` so the reasoner applies one retry policy; the
openai client's own retries are off. A request option the server refuses (the response format,
``max_tokens``) is changed for every later call and reported as ``RequestAdjusted``: the reasoner
sends again, through its rate limiter, and counts it. API keys are read from the environment
only and never appear in a repr, log line or exception (a key a server echoes is masked by the
process's scrubber, ``core.redact.scrub``); a URL that could carry one (user info, a query, a
fragment, ``;params`` or a key-like path segment: in a spec, ``OPENAI_BASE_URL`` or ``OLLAMA_HOST``)
is refused, and a spec is shown and recorded by ``spec_name``. ``timeout`` is a deadline for the
whole call (httpx's applies per read); replies over ``RAG_LAB_LLM_MAX_REPLY_BYTES`` are refused. ``cancel()`` shuts the sockets of the calls in flight, so an
interrupted batch does not wait for the server (``batch.py``).
"""
from __future__ import annotations

import datetime as dt
import email.utils
import logging
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.environment import env_number
from ..core.redact import install_scrubber, register_secret, scrub
from .call_deadline import _Call, _OpenSockets
from .model_specs import (KINDS, OLLAMA_DEFAULT, LLMSpec, checked_url, parse_spec, safe_url,  # noqa: F401 (re-exported)
                    spec_name)

log = logging.getLogger(__name__)

DUMMY_KEY = "not-needed"   # local OpenAI-compatible servers ignore the key but the client wants one
RESPONSE_FORMATS = ("json_schema", "json_object", "none")


class LLMBackendError(RuntimeError):
    """A request the backend refused (bad model name, bad key, bad request): retrying won't help."""


class LLMUnavailableError(LLMBackendError):
    """The backend kept failing with transient errors (timeouts, 429, 5xx) after every retry, or asked
    to wait longer than the reasoner may."""


class TransientBackendError(Exception):
    """Raised by a backend for a failure worth retrying; ``retry_after`` in seconds if the server said,
    ``status`` the HTTP status when there was one (429: rate limited)."""

    def __init__(self, message: str, retry_after: float | None = None, status: int | None = None):
        super().__init__(message)
        self.retry_after = retry_after
        self.status = status


class RequestAdjusted(Exception):
    """The server refused a request option and the backend changed it for every later call: send again."""


class InvalidReply(ValueError):
    """The reply is not a JSON object that satisfies the job's schema."""


@dataclass(frozen=True)
class Completion:
    text: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    finish_reason: str | None = None      # "length": cut off at max_tokens


MAX_REPLY_BYTES_ENV = "RAG_LAB_LLM_MAX_REPLY_BYTES"
MAX_REPLY_BYTES = 1 << 20    # 1 MiB: a chat reply of max_tokens tokens is far smaller; more is a broken server
_OPTION_NAME_REFUSED = re.compile(r"max_completion_tokens|unsupported parameter|not supported|unrecognized|"
                                  r"unknown (?:parameter|field|argument)|extra (?:fields|inputs)|not permitted", re.I)


def max_reply_bytes() -> int:
    """The largest reply body accepted (``$RAG_LAB_LLM_MAX_REPLY_BYTES``, default 1 MiB)."""
    return int(env_number(MAX_REPLY_BYTES_ENV, int) or MAX_REPLY_BYTES)


class OpenAIChatBackend:
    """Any OpenAI-compatible chat-completions endpoint through the ``openai`` client.

    ``response_format``: "json_schema" (structured output with the job's schema, the default),
    "json_object" (JSON mode) or "none". A server that rejects the format with HTTP 400 gets the next
    weaker one from then on: the thread whose request was refused steps down from the format *it sent*,
    under a lock, and only if no other thread stepped down already, so the format a run settles on
    does not depend on how many calls were in flight. ``requested_format`` stays what was asked for (it
    names the reasoner). Safe to call from several threads (the openai client is); a batch sends
    ``default_concurrency`` requests at once.

    ``timeout`` is a deadline for the whole call (connect, sending, every read): a timer shuts the
    call's sockets when it passes (``_Call``). The body is read by us, not the client, so that a
    reply over ``max_reply_bytes()`` is refused before it is read whole, and a 200 whose body is not a
    JSON chat completion (a proxy's HTML error page) is a clear transient error naming its content type."""

    default_concurrency = 8   # RAG_LAB_LLM_CONCURRENCY overrides it (docs/llm.md)

    def __init__(self, base_url: str | None, api_key_env: str | None, default_key: str | None = None,
                 response_format: str = "json_schema", kind: str = "openai-compatible"):
        if response_format not in RESPONSE_FORMATS:
            raise ValueError(f"response_format must be one of {RESPONSE_FORMATS}, got {response_format!r}")
        key = os.environ.get(api_key_env) if api_key_env else None
        key = key or default_key
        if not key:
            raise ValueError(f"{kind} backend needs an API key in the environment variable {api_key_env}")
        import openai

        if key != default_key:
            register_secret(key)
        install_scrubber()
        self._sockets = _OpenSockets()
        http = openai.DefaultHttpxClient(event_hooks={"request": [self._sockets.on_request],
                                                      "response": [self._sockets.on_response]})
        self._client = openai.OpenAI(api_key=key, base_url=base_url, max_retries=0, http_client=http)
        self.kind = kind
        self.base_url = str(self._client.base_url)
        self.api_key_env = api_key_env
        self.requested_format = self.response_format = response_format
        self.token_limit_param = "max_tokens"
        self._lock = threading.Lock()       # guards the two settings above when a server refuses one

    def __repr__(self) -> str:
        return (f"OpenAIChatBackend(base_url={safe_url(self.base_url)!r}, api_key_env={self.api_key_env!r}, "
                f"response_format={self.response_format!r})")

    def identity(self, model: str) -> str:
        return f"{self.kind}:{model}@{safe_url(self.base_url)}"

    def cancel(self) -> int:
        """End every call in flight now (their threads get a connection error); returns how many sockets."""
        return self._sockets.shutdown()

    @staticmethod
    def _format(response_format: str, job: str, schema: dict) -> dict | None:
        if response_format == "json_schema":
            return {"type": "json_schema", "json_schema": {"name": job, "schema": schema, "strict": False}}
        if response_format == "json_object":
            return {"type": "json_object"}
        return None

    def _step_down(self, setting: str, sent: str, weaker: str, why: str) -> None:
        """Switch ``setting`` from ``sent`` to ``weaker`` unless another thread already moved it on."""
        with self._lock:
            if getattr(self, setting) == sent:
                setattr(self, setting, weaker)
                log.warning("%s refused %s=%s; using %s from now on", safe_url(self.base_url), why, sent, weaker)

    def complete(self, model: str, messages: list[dict], *, job: str, schema: dict, temperature: float,
                 max_tokens: int, timeout: float) -> Completion:
        """One request, ended by its deadline ``timeout`` (class docstring). Raises ``TransientBackendError``
        (worth retrying), ``RequestAdjusted`` (send again with the changed option) or ``LLMBackendError``."""
        import httpx
        import openai

        sent_format, limit_param = self.response_format, self.token_limit_param
        kwargs: dict[str, Any] = {limit_param: max_tokens}
        fmt = self._format(sent_format, job, schema)
        if fmt is not None:
            kwargs["response_format"] = fmt
        call = self._sockets.current = _Call()
        timer = threading.Timer(timeout, call.expire)
        timer.daemon = True
        timer.start()
        late = f"no complete reply within {timeout:g} s (the deadline for the whole call)"
        try:
            with self._client.chat.completions.with_streaming_response.create(
                    model=model, messages=messages, temperature=temperature, timeout=timeout, **kwargs) as raw:
                content_type = raw.headers.get("content-type", "")
                body = self._read_body(raw.http_response, call, late)
                call.finish()       # before the connection goes back to the pool: the timer may not touch it
        except openai.APITimeoutError:
            raise TransientBackendError(late if call.expired else f"no reply within {timeout:g} s") from None
        except (openai.APIConnectionError, httpx.TransportError) as e:
            raise TransientBackendError(late if call.expired else f"connection failed: {scrub(str(e))}") from None
        except openai.APIStatusError as e:
            self._refused(e, model, fmt, sent_format, limit_param, max_tokens)
        finally:
            call.finish()
            timer.cancel()
            self._sockets.current = None
        return self._completion(body, content_type)

    def _refused(self, e, model: str, fmt, sent_format: str, limit_param: str, max_tokens: int):
        """Raise what an HTTP error status means (``complete``)."""
        status = e.status_code
        detail = scrub(str(e))[:500]
        if status in (408, 429) or status >= 500:
            raise TransientBackendError(f"HTTP {status}: {detail}", retry_after_seconds(e.response), status) from None
        if status == 400 and fmt is not None and re.search(r"response_format|json_schema|json_object", detail, re.I):
            weaker = RESPONSE_FORMATS[RESPONSE_FORMATS.index(sent_format) + 1]
            self._step_down("response_format", sent_format, weaker, "response_format")
            raise RequestAdjusted(f"response_format={sent_format} refused") from None
        if status == 400 and limit_param == "max_tokens" and "max_tokens" in detail:
            if _OPTION_NAME_REFUSED.search(detail):
                # newer OpenAI models refuse the name max_tokens and want max_completion_tokens
                self._step_down("token_limit_param", "max_tokens", "max_completion_tokens", "the parameter")
                raise RequestAdjusted("max_tokens refused") from None
            raise LLMBackendError(f"{self.identity(model)}: the server refused the value max_tokens={max_tokens} "
                                  f"(HTTP 400): lower max_tokens (LLMReasoner(max_tokens=...)); {detail}") from None
        raise LLMBackendError(f"{self.identity(model)}: HTTP {status}: {detail}") from None

    @staticmethod
    def _read_body(response, call: _Call, late: str) -> bytes:
        """The body, read chunk by chunk: refused past ``max_reply_bytes()`` (by its Content-Length before
        reading, else as it arrives), and ended when the call's deadline passed."""
        cap = max_reply_bytes()
        declared = response.headers.get("content-length", "")
        refuse = (f"the reply is larger than {cap} bytes ({MAX_REPLY_BYTES_ENV}); refused and not cached "
                  "(a broken server or proxy; raise the cap if the replies are really this long)")
        if declared.isdigit() and int(declared) > cap:
            raise LLMBackendError(f"{refuse}: Content-Length {declared}")
        chunks, size = [], 0
        for chunk in response.iter_bytes():
            size += len(chunk)
            if size > cap:
                raise LLMBackendError(refuse)
            if call.expired:
                raise TransientBackendError(late)
            chunks.append(chunk)
        return b"".join(chunks)

    def _completion(self, body: bytes, content_type: str) -> Completion:
        """A chat completion out of a 200's body; anything but a JSON completion is a transient error (a
        proxy's error page, a cut body) naming the content type and the body's start (scrubbed)."""
        import json

        start = scrub(body[:120].decode("utf-8", "replace")).replace("\n", " ")
        what = f"the server answered HTTP 200 with {content_type or 'no content type'}"
        if "json" not in content_type.lower():
            raise TransientBackendError(f"{what}, not a JSON chat completion (a proxy's error page?): {start!r}")
        try:
            data = json.loads(body)
        except ValueError:
            raise TransientBackendError(f"{what} but a body that is not JSON: {start!r}") from None
        choices = data.get("choices") if isinstance(data, dict) else None
        if not choices or not isinstance(choices, list) or not isinstance(choices[0], dict):
            raise TransientBackendError("the reply had no choices")
        message = choices[0].get("message") or {}
        text = message.get("content") if isinstance(message, dict) else None
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        tokens = [usage.get(k) if isinstance(usage.get(k), int) else None for k in ("prompt_tokens", "completion_tokens")]
        return Completion(text if isinstance(text, str) else "", *tokens, finish_reason=choices[0].get("finish_reason"))


def retry_after_seconds(response, now: dt.datetime | None = None) -> float | None:
    """The wait a response asks for: ``retry-after-ms`` (milliseconds, OpenAI's), else ``Retry-After`` as
    seconds or as an HTTP date (``now``: the current time, for tests); None when it names none."""
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        raw = (headers.get(name) or "").strip()
        if not raw:
            continue
        try:
            return max(0.0, float(raw) * scale)
        except ValueError:
            pass
        if scale == 1.0:
            try:
                when = email.utils.parsedate_to_datetime(raw)
            except (TypeError, ValueError):
                continue
            if when.tzinfo is None:        # an HTTP date is GMT
                when = when.replace(tzinfo=dt.timezone.utc)
            return max(0.0, (when - (now or dt.datetime.now(dt.timezone.utc))).total_seconds())
    return None


class LlamaCppBackend:
    """A GGUF model run in-process by llama-cpp-python (the optional ``local-llm`` extra), with
    decoding constrained to each job's JSON schema so every reply parses. One call at a time: a llama.cpp
    model is not safe to call from two threads, and it already uses every core it is given."""

    kind = "gguf"
    default_concurrency = max_concurrency = 1

    def __init__(self, model_path: str | os.PathLike, n_ctx: int = 4096, n_threads: int | None = None, seed: int = 0):
        try:
            import llama_cpp
        except ImportError:
            raise RuntimeError(f"gguf:{model_path} needs llama-cpp-python, an optional extra: "
                               "pip install .[local-llm]") from None
        path = Path(model_path)
        if not path.is_file():
            raise FileNotFoundError(f"gguf model file not found: {path} (expected a .gguf file)")
        self.model_path = str(path)
        self._llm = llama_cpp.Llama(model_path=self.model_path, n_ctx=n_ctx, n_threads=n_threads, seed=seed,
                                    verbose=False)

    def __repr__(self) -> str:
        return f"LlamaCppBackend({self.model_path!r})"

    def identity(self, model: str) -> str:
        """File name and size: the same weights share cached replies wherever the file lives."""
        return f"gguf:{Path(self.model_path).name}:{Path(self.model_path).stat().st_size}"

    def complete(self, model: str, messages: list[dict], *, job: str, schema: dict, temperature: float,
                 max_tokens: int, timeout: float) -> Completion:
        out = self._llm.create_chat_completion(messages=messages, temperature=temperature, max_tokens=max_tokens,
                                               response_format={"type": "json_object", "schema": schema})
        usage = out.get("usage") or {}
        return Completion(out["choices"][0]["message"]["content"] or "", usage.get("prompt_tokens"),
                          usage.get("completion_tokens"), out["choices"][0].get("finish_reason"))


def make_backend(spec: LLMSpec, **backend_kwargs):
    if spec.kind == "openai":
        return OpenAIChatBackend(spec.base_url, "OPENAI_API_KEY", kind="openai", **backend_kwargs)
    if spec.kind == "ollama":
        return OpenAIChatBackend(spec.base_url, None, DUMMY_KEY, kind="ollama", **backend_kwargs)
    if spec.kind == "openai-compatible":
        return OpenAIChatBackend(spec.base_url, "RAG_LAB_LLM_API_KEY", DUMMY_KEY, kind="openai-compatible",
                                 **backend_kwargs)
    return LlamaCppBackend(spec.model, **backend_kwargs)
