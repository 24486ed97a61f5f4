"""Chat-model backends of the LLM reasoner, and the spec strings that pick one.

Specs (see docs/llm.md):
- ``openai:MODEL``                          key from OPENAI_API_KEY; OPENAI_BASE_URL if set
- ``ollama:MODEL``                          Ollama's OpenAI-compatible endpoint (OLLAMA_HOST or localhost:11434)
- ``openai-compatible:MODEL@http://h:p/v1`` vLLM, llama.cpp server, LM Studio...; key from RAG_LAB_LLM_API_KEY
- ``gguf:/path/model.gguf``                 in-process llama-cpp-python, JSON-schema-constrained decoding

A backend sends one chat completion and reports transient failures (429, 5xx, timeouts,
dropped connections) as ``TransientBackendError`` so the reasoner applies one retry policy; the
openai client's own retries are off. API keys are read from the environment only and never
appear in a repr, log line or exception.
"""
from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

log = logging.getLogger(__name__)

KINDS = ("openai", "ollama", "openai-compatible", "gguf")
OLLAMA_DEFAULT = "http://localhost:11434"
DUMMY_KEY = "not-needed"   # local OpenAI-compatible servers ignore the key but the client wants one
RESPONSE_FORMATS = ("json_schema", "json_object", "none")

class LLMBackendError(RuntimeError):
    """A request the backend refused (bad model name, bad key, bad request): retrying won't help."""


class LLMUnavailableError(LLMBackendError):
    """The backend kept failing with transient errors (timeouts, 429, 5xx) after every retry."""


class TransientBackendError(Exception):
    """Raised by a backend for a failure worth retrying; ``retry_after`` in seconds if the server said,
    ``status`` the HTTP status when there was one (429: rate limited)."""

    def __init__(self, message: str, retry_after: float | None = None, status: int | None = None):
        super().__init__(message)
        self.retry_after = retry_after
        self.status = status


class InvalidReply(ValueError):
    """The reply is not a JSON object that satisfies the job's schema."""


@dataclass(frozen=True)
class Completion:
    text: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


# --- spec strings ----------------------------------------------------------------------------

@dataclass(frozen=True)
class LLMSpec:
    kind: str
    model: str
    base_url: str | None = None

    @property
    def name(self) -> str:
        """The spec without secrets, shown in every table."""
        if self.kind == "openai-compatible":
            return f"openai-compatible:{self.model}@{safe_url(self.base_url)}"
        return f"{self.kind}:{self.model}"


def safe_url(url: str | None) -> str:
    """``url`` without user info, query or fragment (where credentials could hide)."""
    if not url:
        return ""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", ""))


def _ollama_base_url() -> str:
    host = os.environ.get("OLLAMA_HOST", "").strip() or OLLAMA_DEFAULT
    if "://" not in host:
        host = "http://" + host
    host = host.rstrip("/")
    return host if host.endswith("/v1") else host + "/v1"


_COMPATIBLE = re.compile(r"^(?P<model>.+?)@(?P<url>https?://\S+)$")


def parse_spec(spec: str) -> LLMSpec:
    """Split a spec string into kind, model and base URL (reads OPENAI_BASE_URL / OLLAMA_HOST)."""
    expected = ("expected openai:MODEL, ollama:MODEL, openai-compatible:MODEL@http://host:port/v1 "
                "or gguf:/path/model.gguf")
    if not isinstance(spec, str) or ":" not in spec:
        raise ValueError(f"LLM spec {spec!r}: {expected}")
    kind, rest = spec.split(":", 1)
    kind, rest = kind.strip().lower(), rest.strip()
    if kind not in KINDS or not rest:
        raise ValueError(f"LLM spec {spec!r}: {expected}")
    if kind == "openai":
        return LLMSpec(kind, rest, os.environ.get("OPENAI_BASE_URL") or None)
    if kind == "ollama":
        return LLMSpec(kind, rest, _ollama_base_url())
    if kind == "openai-compatible":
        m = _COMPATIBLE.match(rest)
        if not m:
            raise ValueError(f"LLM spec {spec!r}: openai-compatible needs MODEL@URL with an http(s) URL, "
                             "e.g. openai-compatible:qwen2.5@http://localhost:8000/v1")
        if urlsplit(m["url"]).username or urlsplit(m["url"]).password:
            raise ValueError("LLM spec: do not put credentials in the URL; set RAG_LAB_LLM_API_KEY instead")
        return LLMSpec(kind, m["model"], m["url"].rstrip("/"))
    return LLMSpec(kind, rest)


# --- backends --------------------------------------------------------------------------------

class OpenAIChatBackend:
    """Any OpenAI-compatible chat-completions endpoint through the ``openai`` client.

    ``response_format``: "json_schema" (structured output with the job's schema, the default),
    "json_object" (JSON mode) or "none". A server that rejects the format with HTTP 400 is
    asked again with the next weaker one, and that one is kept for later calls. Safe to call from
    several threads (the openai client is); a batch sends ``default_concurrency`` requests at once."""

    default_concurrency = 8   # RAG_LAB_LLM_CONCURRENCY overrides it (docs/llm.md)

    def __init__(self, base_url: str | None, api_key_env: str | None, default_key: str | None = None,
                 response_format: str = "json_schema", kind: str = "openai-compatible"):
        if response_format not in RESPONSE_FORMATS:
            raise ValueError(f"response_format must be one of {RESPONSE_FORMATS}, got {response_format!r}")
        key = os.environ.get(api_key_env) if api_key_env else None
        key = key or default_key
        if not key:
            raise ValueError(f"{kind} backend needs an API key in the environment variable {api_key_env}")
        from openai import OpenAI
        self._client = OpenAI(api_key=key, base_url=base_url, max_retries=0)
        self.kind = kind
        self.base_url = str(self._client.base_url)
        self.api_key_env = api_key_env
        self.response_format = response_format
        self.token_limit_param = "max_tokens"

    def __repr__(self) -> str:
        return (f"OpenAIChatBackend(base_url={safe_url(self.base_url)!r}, api_key_env={self.api_key_env!r}, "
                f"response_format={self.response_format!r})")

    def identity(self, model: str) -> str:
        return f"{self.kind}:{model}@{safe_url(self.base_url)}"

    def _scrub(self, text: str) -> str:
        key = self._client.api_key or ""
        return text.replace(key, "***") if len(key) >= 4 else text

    def _format(self, job: str, schema: dict) -> dict | None:
        if self.response_format == "json_schema":
            return {"type": "json_schema", "json_schema": {"name": job, "schema": schema, "strict": False}}
        if self.response_format == "json_object":
            return {"type": "json_object"}
        return None

    def complete(self, model: str, messages: list[dict], *, job: str, schema: dict, temperature: float,
                 max_tokens: int, timeout: float) -> Completion:
        import openai

        while True:
            kwargs: dict[str, Any] = {self.token_limit_param: max_tokens}
            fmt = self._format(job, schema)
            if fmt is not None:
                kwargs["response_format"] = fmt
            try:
                resp = self._client.chat.completions.create(model=model, messages=messages, temperature=temperature,
                                                            timeout=timeout, **kwargs)
            except openai.APITimeoutError:
                raise TransientBackendError(f"no reply within {timeout:g} s") from None
            except openai.APIConnectionError as e:
                raise TransientBackendError(f"connection failed: {self._scrub(str(e))}") from None
            except openai.APIStatusError as e:
                status = e.status_code
                detail = self._scrub(str(e))[:500]
                if status in (408, 429) or status >= 500:
                    raise TransientBackendError(f"HTTP {status}: {detail}", _retry_after(e.response),
                                                status) from None
                if status == 400 and fmt is not None and re.search(r"response_format|json_schema|json_object",
                                                                   detail, re.I):
                    weaker = RESPONSE_FORMATS[RESPONSE_FORMATS.index(self.response_format) + 1]
                    log.warning("%s rejected response_format=%s; using %s from now on",
                                safe_url(self.base_url), self.response_format, weaker)
                    self.response_format = weaker
                    continue
                if status == 400 and self.token_limit_param == "max_tokens" and "max_tokens" in detail:
                    # newer OpenAI models refuse max_tokens and want max_completion_tokens
                    self.token_limit_param = "max_completion_tokens"
                    continue
                raise LLMBackendError(f"{self.identity(model)}: HTTP {status}: {detail}") from None
            if not resp.choices:
                raise TransientBackendError("the reply had no choices")
            text = resp.choices[0].message.content or ""
            usage = resp.usage
            return Completion(text, getattr(usage, "prompt_tokens", None), getattr(usage, "completion_tokens", None))


def _retry_after(response) -> float | None:
    try:
        return max(0.0, float(response.headers.get("retry-after")))
    except (TypeError, ValueError, AttributeError):
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
                          usage.get("completion_tokens"))


def make_backend(spec: LLMSpec, **backend_kwargs):
    if spec.kind == "openai":
        return OpenAIChatBackend(spec.base_url, "OPENAI_API_KEY", kind="openai", **backend_kwargs)
    if spec.kind == "ollama":
        return OpenAIChatBackend(spec.base_url, None, DUMMY_KEY, kind="ollama", **backend_kwargs)
    if spec.kind == "openai-compatible":
        return OpenAIChatBackend(spec.base_url, "RAG_LAB_LLM_API_KEY", DUMMY_KEY, kind="openai-compatible",
                                 **backend_kwargs)
    return LlamaCppBackend(spec.model, **backend_kwargs)
