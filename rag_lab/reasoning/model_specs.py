"""The spec strings that pick a chat model (``openai:MODEL``, ``ollama:MODEL``, ``openai-compatible:MODEL@URL``,
``gguf:PATH``; docs/llm.md) and the URL checks that keep a key out of them: a URL that could carry one (user
info, a query, a fragment, ``;params`` or a key-like path segment) is refused, and a spec is shown and
recorded by ``spec_name``. Split from ``backends`` (which re-exports these names), whose job is the call.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

KINDS = ("openai", "ollama", "openai-compatible", "gguf")
OLLAMA_DEFAULT = "http://localhost:11434"


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


# a path segment that looks like a credential: ``sk-...``/``key-...``/``token_...`` or 32+ letters and digits
# (a key pasted into the path, as some proxies take it)
_KEYLIKE_SEGMENT = re.compile(r"^(?:sk|pk|rk|key|api[-_]?key|token|secret)[-_]\S{6,}$|^(?=\S*\d)(?=\S*[A-Za-z])[A-Za-z0-9_\-]{32,}$",
                              re.I)


def _path_without_secrets(path: str) -> tuple[str, list[str]]:
    """``path`` with ``;params`` dropped and key-like segments shown as ``***``, and what was found."""
    found = []
    segments = []
    for segment in path.split("/"):
        if ";" in segment:
            segment = segment.split(";", 1)[0]
            if "parameters (;...)" not in found:
                found.append("parameters (;...)")
        if _KEYLIKE_SEGMENT.match(segment):
            segment = "***"
            if "a key-like path segment" not in found:
                found.append("a key-like path segment")
        segments.append(segment)
    return "/".join(segments), found


def safe_url(url: str | None) -> str:
    """``url`` without user info, query, fragment or ``;params``, and key-like path segments shown as
    ``***`` (where credentials could hide)."""
    if not url:
        return ""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        if parts.port:
            host = f"{host}:{parts.port}"
    except ValueError:              # a malformed port or address: show nothing of it
        return "<unreadable URL>"
    return urlunsplit((parts.scheme, host, _path_without_secrets(parts.path)[0].rstrip("/"), "", ""))


_URL_IN_TEXT = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://\S+")


def spec_name(spec: Any) -> Any:
    """A spec as it may be shown or recorded (manifests, report pages, ``rag_lab runs``): every URL in it
    without user info, query or fragment. Anything but a string is returned as it is."""
    if not isinstance(spec, str):
        return spec
    return _URL_IN_TEXT.sub(lambda m: safe_url(m.group(0)), spec)


def checked_url(url: str, where: str, key_hint: str) -> str:
    """``url`` (trailing slash dropped) if it carries no user info, query, fragment, ``;params`` or key-like
    path segment, else a ValueError naming ``where`` and the URL without them: credentials hide there and
    would reach every record."""
    try:
        parts = urlsplit(url)
        parts.port                                  # noqa: B018 - raises on a malformed port
    except ValueError:
        raise ValueError(f"{where}: {safe_url(url)} is not a valid URL; expected http(s)://host:port/path") from None
    found = [what for what, present in (("user info", parts.username is not None or parts.password is not None),
                                        ("a query", bool(parts.query)), ("a fragment", bool(parts.fragment)))
             if present] + _path_without_secrets(parts.path)[1]
    if found:
        raise ValueError(f"{where}: the URL {safe_url(url)} carries {' and '.join(found)}; a URL must not hold "
                         f"credentials (they would reach logs and run records): {key_hint}")
    return url.rstrip("/")


def _ollama_base_url() -> str:
    host = os.environ.get("OLLAMA_HOST", "").strip() or OLLAMA_DEFAULT
    if "://" not in host:
        host = "http://" + host
    host = checked_url(host, "OLLAMA_HOST", "Ollama needs no key; give host:port or http(s)://host:port")
    return host if host.endswith("/v1") else host + "/v1"


_COMPATIBLE = re.compile(r"^(?P<model>.+?)@(?P<url>https?://\S+)$")


def parse_spec(spec: str) -> LLMSpec:
    """Split a spec string into kind, model and base URL (reads OPENAI_BASE_URL / OLLAMA_HOST); a URL
    with user info, a query or a fragment is refused (``checked_url``)."""
    expected = ("expected openai:MODEL, ollama:MODEL, openai-compatible:MODEL@http://host:port/v1 "
                "or gguf:/path/model.gguf")
    if not isinstance(spec, str) or ":" not in spec:
        raise ValueError(f"LLM spec {spec_name(spec)!r}: {expected}")
    kind, rest = spec.split(":", 1)
    kind, rest = kind.strip().lower(), rest.strip()
    if kind not in KINDS or not rest:
        raise ValueError(f"LLM spec {spec_name(spec)!r}: {expected}")
    if kind == "openai":
        base = os.environ.get("OPENAI_BASE_URL") or None
        if base is not None:
            base = checked_url(base, "OPENAI_BASE_URL", "set the key in OPENAI_API_KEY instead")
        return LLMSpec(kind, rest, base)
    if kind == "ollama":
        return LLMSpec(kind, rest, _ollama_base_url())
    if kind == "openai-compatible":
        m = _COMPATIBLE.match(rest)
        if not m:
            raise ValueError(f"LLM spec {spec_name(spec)!r}: openai-compatible needs MODEL@URL with an http(s) URL, "
                             "e.g. openai-compatible:qwen2.5@http://localhost:8000/v1")
        url = checked_url(m["url"], f"LLM spec {spec_name(spec)!r}", "set RAG_LAB_LLM_API_KEY instead")
        return LLMSpec(kind, m["model"], url)
    return LLMSpec(kind, rest)
