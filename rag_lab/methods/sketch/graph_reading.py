"""What SKETCH's graph half holds when a given reasoner built it, and what reached the worked answer.

``triple_profile`` measures the relations of a built graph (shares of all relations):

- ``verb lemma``: the relation is a verb's dictionary form, alone or with its particle or preposition
  joined by "_" ("grow_after"); the offline reasoner writes nothing else, an LLM names relations
  ("was_created_in_honour_of");
- ``two named entities``: both ends have a named-entity type (not CONCEPT);
- ``a bare common noun at an end``: one end is a single lower-case word ("fall", "dish");
- ``nodes in one relation only``: nodes the graph can reach through one relation and no other.

``graph_sentence`` says what that lets the graph half do and what it cannot; ``answer_sentence`` says how
much of an extractive answer is graph facts pasted back (``answer_sources`` counts them).
"""
from __future__ import annotations

from collections import Counter
from typing import Callable, Iterable, Sequence

import pandas as pd

from .graph_stores import Edge, Node
from .knowledge_graph import GENERIC_TYPES


def spacy_verb_lemma(words: Sequence[str]) -> list[bool]:
    """For each head word, whether spaCy tags it a verb in its dictionary form (in "they <word>")."""
    from ...reasoning.linguistics import nlp

    docs = nlp().pipe(f"they {w}" for w in words)
    return [len(d) > 1 and d[1].pos_ in ("VERB", "AUX") and d[1].lemma_.lower() == d[1].lower_ for d in docs]


def head_word(relation: str) -> str:
    """The verb of a relation label: its first word after a leading "not" ("not_grow_after" -> "grow")."""
    words = [w for w in relation.replace("-", "_").replace(" ", "_").split("_") if w]
    if words and words[0].lower() == "not":
        words = words[1:]
    return words[0].lower() if words else ""


def _is_verb_lemma_shape(relation: str, verb_lemma: dict[str, bool], prepositions: set[str]) -> bool:
    words = [w.lower() for w in relation.replace("-", "_").replace(" ", "_").split("_") if w]
    if words and words[0] == "not":
        words = words[1:]
    return bool(words) and verb_lemma.get(words[0], False) and all(w in prepositions for w in words[1:])


PREPOSITIONS = frozenset(("about", "above", "across", "after", "against", "along", "among", "around", "as", "at",
                          "away", "back", "before", "behind", "below", "beside", "between", "beyond", "by", "down",
                          "during", "for", "from", "in", "inside", "into", "like", "near", "of", "off", "on", "onto",
                          "out", "outside", "over", "past", "since", "through", "throughout", "to", "toward",
                          "towards", "under", "until", "up", "upon", "with", "within", "without", "via", "per", "amid",
                          "amongst", "despite", "than", "beneath", "unlike", "besides", "except", "alongside",
                          "throughout", "underneath", "versus", "into", "together", "apart", "forth"))


def triple_profile(nodes: Iterable[Node], edges: Sequence[Edge],
                   verb_lemma: Callable[[Sequence[str]], list[bool]] = spacy_verb_lemma) -> pd.Series:
    """Counts and shares describing the relations of a graph (see the module docstring)."""
    nodes = {n.key: n for n in nodes}
    if not edges:
        return pd.Series({"relations": 0, "nodes": len(nodes)}, dtype=float)
    heads = sorted({head_word(e.relation) for e in edges})
    lemma = dict(zip(heads, verb_lemma(heads)))
    named = lambda k: k in nodes and (nodes[k].type or "") not in GENERIC_TYPES  # noqa: E731
    bare = lambda k: k in nodes and " " not in nodes[k].name.strip() and nodes[k].name.islower()  # noqa: E731
    degree = Counter(k for e in edges for k in (e.source, e.target))
    labels = Counter(e.relation for e in edges)
    n = len(edges)
    return pd.Series({
        "relations": n,
        "nodes": len(nodes),
        "distinct relation labels": len(labels),
        "verb lemma": sum(_is_verb_lemma_shape(e.relation, lemma, PREPOSITIONS) for e in edges) / n,
        "two named entities": sum(named(e.source) and named(e.target) for e in edges) / n,
        "a bare common noun at an end": sum(bare(e.source) or bare(e.target) for e in edges) / n,
        "nodes in one relation only": sum(1 for k in nodes if degree.get(k, 0) == 1) / len(nodes) if nodes else 0.0,
    })


def example_relation(edges: Sequence[Edge], nodes: Iterable[Node]) -> str:
    """One relation with a bare common noun at an end, as a fact line (the first in sorted order), or ""."""
    nodes = {n.key: n for n in nodes}
    for e in sorted(edges):
        ends = [nodes.get(e.source), nodes.get(e.target)]
        if any(x is not None and " " not in x.name.strip() and x.name.islower() for x in ends):
            return f"{ends[0].name if ends[0] else e.source} -[{e.relation}]-> {ends[1].name if ends[1] else e.target}"
    return ""


def graph_sentence(profile: pd.Series, reasoner: str, edges: Sequence[Edge] = (), nodes: Iterable[Node] = ()) -> str:
    """What the graph half can and cannot do with relations like these (``triple_profile`` of ``nodes`` and
    ``edges``), with one relation of the graph as an example (``example_relation``)."""
    example = example_relation(edges, nodes)
    if not profile.get("relations"):
        return f"The {reasoner} reasoner found no relation, so the graph half has nothing to add."
    shares = (f"{profile['verb lemma']:.0%} of its {int(profile['relations'])} relations are a verb lemma (with "
              f"its preposition), {profile['two named entities']:.0%} link two named entities, "
              f"{profile['a bare common noun at an end']:.0%} have a bare common noun at an end"
              + (f" (e.g. `{example}`)" if example else "")
              + f", and {profile['nodes in one relation only']:.0%} of the {int(profile['nodes'])} nodes are in one "
              "relation only")
    if reasoner == "offline":
        return (f"What the graph half is here: {shares}.\nThe offline reasoner reads one sentence at a time by "
                "dependency rules: it can give the graph the corpus's own names and verbs, so a question that names "
                "an entity reaches the chunks that mention it and their neighbours;\nit cannot resolve pronouns, "
                "merge synonyms, name a relation beyond the sentence's verb or type most nodes, so the facts rarely "
                "chain into an answer over two hops.\nAn LLM extractor, as in the paper, would name relations and "
                "entities, which is what the multi-hop claims rest on.")
    return f"What the graph half is here ({reasoner} extracted it): {shares}."


def graph_profile(store, reasoner: str) -> tuple[pd.Series, str]:
    """``triple_profile`` of a built graph ``store`` and ``graph_sentence`` of it, as notebook 01 shows them."""
    profile = triple_profile(store.nodes(), store.edges())
    return profile, graph_sentence(profile, reasoner, store.edges(), store.nodes())


def answer_sources(answer: str, facts: Sequence[str]) -> dict[str, int]:
    """How many of the handed-over facts appear word for word in ``answer``, and how many of the answer's
    characters they cover (``answer chars``)."""
    pasted = [f for f in dict.fromkeys(facts) if f and f in answer]
    return {"facts handed over": len(list(dict.fromkeys(facts))), "facts in answer": len(pasted),
            "fact chars": sum(len(f) for f in pasted), "answer chars": len(answer)}


def answer_sentence(answer: str, facts: Sequence[str], reasoner: str) -> str:
    """The worked answer, read: the graph ``facts`` handed over pasted back or not (``answer_sources``), and what
    an extractive reasoner can do."""
    sources = answer_sources(answer, facts)
    if not sources["answer chars"]:
        return f"The {reasoner} reasoner gave no answer: nothing in the context was close enough to extract."
    share = sources["fact chars"] / sources["answer chars"]
    head = (f"{sources['facts in answer']} of the {sources['facts handed over']} graph facts handed over appear word "
            f"for word in this answer ({share:.0%} of its characters)")
    if reasoner != "offline":
        return head + "."
    return (head + ": the offline reasoner answers extractively, copying the context sentences (facts lines "
            "included) nearest the question, so it shows what reached the answering model, not an answer "
            "composed from the graph; an LLM would write one from the same context.")
