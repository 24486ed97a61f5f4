"""Concept linking by longest-match dictionary lookup (GraLC-RAG's entity linking step).

All names and synonyms of a vocabulary go into Aho–Corasick automata (``pyahocorasick``),
which find every occurrence of every surface form in one pass. Matches that do not sit on
word boundaries are dropped, then the leftmost-longest rule picks non-overlapping mentions:
scanning left to right, the longest form starting at a position wins and the scan resumes
after it ("type 2 diabetes mellitus" beats "diabetes mellitus" inside it).

Case: a form is matched ignoring case unless it looks like an abbreviation or a mixed-case
term — some word has two capitals, a capital after its first letter, or is a single capital
(``CKD``, ``eGFR``, ``HbA1c``, ``syndrome X``). Those match exactly, so "DM" does not fire on
"dm". Char offsets are exact because lowercasing is done per character, keeping length.
"""
from __future__ import annotations

from dataclasses import dataclass

from .vocabulary import ConceptVocabulary

MIN_FORM_LENGTH = 2     # a one-character name or synonym would fire everywhere


@dataclass(frozen=True)
class Mention:
    start: int
    end: int
    concept_id: str
    surface: str


def is_case_sensitive(form: str) -> bool:
    for word in form.split():
        letters = [ch for ch in word if ch.isalpha()]
        uppers = [i for i, ch in enumerate(word) if ch.isupper()]
        if len(uppers) >= 2 or any(i > 0 for i in uppers) or (len(letters) == 1 and uppers):
            return True
    return False


def lower_keep_length(text: str) -> str:
    """Lowercase every character whose lowercase is one character (so offsets stay valid)."""
    return "".join(low if len(low := ch.lower()) == 1 else ch for ch in text)


def on_word_boundary(text: str, start: int, end: int) -> bool:
    before_ok = start == 0 or not text[start - 1].isalnum()
    after_ok = end == len(text) or not text[end].isalnum()
    return before_ok and after_ok


class ConceptLinker:
    """Find concept mentions in text. ``collisions`` lists forms claimed by more than one concept
    (the first concept in vocabulary order keeps the form)."""

    def __init__(self, vocabulary: ConceptVocabulary):
        import ahocorasick

        self.vocabulary = vocabulary
        self.collisions: list[tuple[str, str, str]] = []
        self._exact = ahocorasick.Automaton()
        self._folded = ahocorasick.Automaton()
        owner: dict[tuple[bool, str], str] = {}
        for concept in vocabulary.concepts.values():
            for form in concept.surface_forms:
                form = " ".join(form.split())
                if len(form) < MIN_FORM_LENGTH:
                    continue
                exact = is_case_sensitive(form)
                key = form if exact else lower_keep_length(form)
                if (exact, key) in owner:
                    if owner[(exact, key)] != concept.id:
                        self.collisions.append((form, owner[(exact, key)], concept.id))
                    continue
                owner[(exact, key)] = concept.id
                (self._exact if exact else self._folded).add_word(key, (concept.id, len(key)))
        self._has = {"exact": len(self._exact) > 0, "folded": len(self._folded) > 0}
        if self._has["exact"]:
            self._exact.make_automaton()
        if self._has["folded"]:
            self._folded.make_automaton()

    def _candidates(self, text: str) -> list[Mention]:
        found = []
        for automaton, haystack, has in ((self._exact, text, self._has["exact"]),
                                         (self._folded, lower_keep_length(text), self._has["folded"])):
            if not has:
                continue
            for last, (concept_id, length) in automaton.iter(haystack):
                start, end = last - length + 1, last + 1
                if on_word_boundary(text, start, end):
                    found.append(Mention(start, end, concept_id, text[start:end]))
        return found

    def link(self, text: str) -> list[Mention]:
        """Non-overlapping mentions, leftmost-longest, in text order."""
        chosen: list[Mention] = []
        cursor = 0
        for m in sorted(self._candidates(text), key=lambda m: (m.start, -(m.end - m.start))):
            if m.start >= cursor:
                chosen.append(m)
                cursor = m.end
        return chosen

    def concepts_in(self, text: str) -> list[str]:
        """Distinct linked concept ids in order of first mention."""
        return list(dict.fromkeys(m.concept_id for m in self.link(text)))
