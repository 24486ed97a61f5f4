"""o200k_base (GPT-4o-mini's tokenizer) offline: the vocabulary quicktok ships is OpenAI's file (its
sha256 in tiktoken's format is the one tiktoken publishes), and quicktok's ids equal those of a
tiktoken Encoding built from that vocabulary with tiktoken's own o200k_base pattern."""
from __future__ import annotations

import base64
import hashlib
import struct
from pathlib import Path

import pytest

from rag_lab.reasoning.tokens import count_encoding_tokens

TEXTS = ["hello world", "Metformin slowed the decline of eGFR in CKD (HR 0.82; 95% CI 0.71–0.94).",
         "<|endoftext|> is plain text here", "Ünïcödé, 日本語 and emoji 🎉 too", "   spaces\n\nand\tbreaks  "]


def vocabulary() -> dict[bytes, int]:
    """quicktok's o200k.vocab: a little-endian u32 count, then (u16 length, bytes, u32 rank) per token."""
    import quicktok

    raw = (Path(quicktok.__file__).parent / "data" / "o200k.vocab").read_bytes()
    (n,), at, ranks = struct.unpack_from("<I", raw, 0), 4, {}
    for _ in range(n):
        (length,) = struct.unpack_from("<H", raw, at)
        token = raw[at + 2:at + 2 + length]
        (rank,) = struct.unpack_from("<I", raw, at + 2 + length)
        ranks[token], at = rank, at + 6 + length
    assert at == len(raw)
    return ranks


def test_the_shipped_vocabulary_is_openais_o200k_base():
    ranks = vocabulary()
    as_tiktoken_file = "".join(f"{base64.b64encode(t).decode()} {r}\n" for t, r in sorted(ranks.items(), key=lambda x: x[1]))
    # the expected_hash tiktoken_ext.openai_public gives for o200k_base.tiktoken
    assert hashlib.sha256(as_tiktoken_file.encode()).hexdigest() == \
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"


def test_counts_match_tiktoken_with_that_vocabulary(monkeypatch):
    import tiktoken
    from tiktoken_ext import openai_public

    ranks = vocabulary()
    monkeypatch.setattr(openai_public, "load_tiktoken_bpe", lambda *a, **kw: ranks)   # no download: the checked file
    reference = tiktoken.Encoding(**openai_public.o200k_base())
    for text in TEXTS:
        assert count_encoding_tokens(text) == len(reference.encode_ordinary(text)), text
    assert count_encoding_tokens(TEXTS) == sum(len(reference.encode_ordinary(t)) for t in TEXTS)
    assert count_encoding_tokens("hello world") == 2 and count_encoding_tokens([]) == 0


def test_unknown_encoding_is_refused():
    with pytest.raises(Exception, match="nope"):
        count_encoding_tokens("x", encoding="nope")
