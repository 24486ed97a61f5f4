"""A document's text laid out block by block, one blank line between blocks, with each block's span.

Why: the loaders that keep sections (JATS, QASPER, PubMedQA, SQuAD) all lay their text out this way, and a
section's offsets are only right when every one of them counts the separator the same way."""
from __future__ import annotations

SEPARATOR = "\n\n"


class TextBlocks:
    """Appends blocks and says where each one starts and ends in ``text``."""

    def __init__(self):
        self.parts: list[str] = []
        self.length = 0

    def add(self, block: str) -> tuple[int, int]:
        if self.parts:
            self.parts.append(SEPARATOR)
            self.length += len(SEPARATOR)
        start = self.length
        self.parts.append(block)
        self.length += len(block)
        return start, self.length

    @property
    def text(self) -> str:
        return "".join(self.parts)
