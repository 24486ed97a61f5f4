"""UnWeaver's name normalisation and equivalence classes, on hand-made entity lists."""
from __future__ import annotations

import numpy as np
import pytest

from rag_lab.methods.unweaver.classes import (class_descriptions, class_text, form_classes, mentions_from_entities,
                                              merge_similar_classes, normalize_name, suffix_singular)
from rag_lab.reasoning import Entity


@pytest.mark.parametrize("name, key", [
    ("Parmigiano-Reggiano", "parmigiano reggiano"),   # hyphen -> space, case-folded
    ("the Roman Empire", "roman empire"),             # leading article dropped
    ("The", "the"),                                   # ... unless it is the only word
    ("U.S.A.", "usa"),                                # dots deleted, not spaced
    ("A.I.", "ai"),
    ("Abruzzo's", "abruzzo"),                         # possessive
    ("farmers'", "farmer"),                           # plural possessive, then singular
    ("Berries", "berry"),                             # -ies -> -y
    ("glasses", "glass"),                             # -sses -> -ss
    ("tomatoes", "tomato"),                           # -oes -> -o
    ("cheeses", "cheese"),                            # final s
    ("virus", "virus"), ("analysis", "analysis"), ("Paris", "paris"),   # known singulars kept
    ("gas", "gas"),                                   # three letters: untouched
    ("Gruyère", "gruyere"),                           # accent dropped
    ("  Neural   Networks ", "neural network"),       # spaces collapsed, last word singular
    ("—", ""),                                        # nothing left
])
def test_normalize_name(name, key):
    assert normalize_name(name) == key


# Words our suffix rule alone (``suffix_singular``, now only for words the lemmatiser's tables do not
# know) gets wrong, and their key now: irregular plurals, singulars it strips, acronyms.
@pytest.mark.parametrize("name, suffix_rule, key", [
    ("analyses", "analyse", "analysis"),        # spaCy's irregular nouns
    ("mice", "mice", "mouse"),
    ("children", "children", "child"),
    ("criteria", "criteria", "criterion"),
    ("diagnoses", "diagnose", "diagnosis"),
    ("leaves", "leave", "leaf"),
    ("species", "specy", "species"),            # KEEP_AS_IS ("specie" is a different noun)
    ("series", "sery", "series"),               # a known noun no rule reduces: already singular
    ("news", "new", "news"),
    ("physics", "physic", "physics"),           # KEEP_AS_IS: a field, not the plural of "physic"
    ("Athens", "athen", "athens"),
    ("MERS", "mer", "mers"),                    # written in capitals: an acronym
    ("AIDS", "aid", "aids"),
    ("GPUs", "gpus", "gpu"),                    # capitals + lower-case "s": an acronym's plural
])
def test_lemmatiser_fixes_what_the_suffix_rule_got_wrong(name, suffix_rule, key):
    assert suffix_singular(name.casefold()) == suffix_rule
    assert normalize_name(name) == key


@pytest.mark.parametrize("plural, singular", [
    ("cheeses", "cheese"), ("analyses", "analysis"), ("viruses", "virus"), ("mice", "mouse"),
    ("Berries", "berry"), ("tomatoes", "tomato"), ("Neural Networks", "neural network"), ("years", "year"),
    ("hearing aids", "hearing aid"), ("boxes", "box"), ("women", "woman"), ("bronze dies", "bronze die"),
    ("uses", "use"), ("automatic metrics", "automatic metric"), ("leaves", "leaf"),
    ("LLMs", "LLM"), ("coronaviruses", "coronavirus"),   # unknown to the tables: our suffix rule
])
def test_plain_plurals_still_merge(plural, singular):
    assert normalize_name(plural) == normalize_name(singular)


@pytest.mark.parametrize("word", ["virus", "species", "Paris", "analysis", "boss", "SARS", "series", "gas",
                                  "crisis", "status", "coronavirus", "news", "data", "Naples", "Christmas"])
def test_singulars_ending_in_s_stay(word):
    assert normalize_name(word) == word.casefold()


def test_normalize_name_rejects_non_strings():
    with pytest.raises(TypeError, match="entity name must be a string"):
        normalize_name(None)


# Hand-made extraction of three chunks. Mentions are numbered in chunk order:
#   m0 Saffron (c0)  m1 risotto (c0)  m2 saffron (c1)  m3 Abruzzo (c1)  m4 Risottos (c2)
#   m5 Saffron (c2)  m6 "—" is dropped (empty key)
PER_CHUNK = [
    [Entity("Saffron", "spice", "A red spice."), Entity("risotto", "dish", "A creamy rice dish.")],
    [Entity("saffron", "spice", "A costly spice."), Entity("Abruzzo", "region", "A mountain region.")],
    [Entity("Risottos", "dish", "Stirred slowly."), Entity("Saffron", "spice", "A red spice."), Entity("—", "", "")],
]


def test_classes_from_hand_made_entities():
    mentions, dropped = mentions_from_entities(PER_CHUNK)
    assert dropped == 1 and [m.key for m in mentions] == ["saffron", "risotto", "saffron", "abruzzo", "risotto", "saffron"]
    classes = form_classes(mentions)
    # classes numbered by first mention: saffron (m0), risotto (m1), abruzzo (m3)
    assert [(c.key, c.mentions, c.chunks) for c in classes] == [
        ("saffron", [0, 2, 5], [0, 1, 2]), ("risotto", [1, 4], [0, 2]), ("abruzzo", [3], [1])]
    # display name = most frequent surface form ("Saffron" twice, "saffron" once); tie -> first seen
    assert [c.name for c in classes] == ["Saffron", "risotto", "Abruzzo"]
    # descriptions in chunk order, the repeated "A red spice." (c0 and c2) kept once
    assert class_descriptions(classes[0], mentions) == ["A red spice.", "A costly spice."]


def test_semantic_merge_is_transitive_and_thresholded():
    mentions, _ = mentions_from_entities([[Entity(n, "", n) for n in ("alpha", "beta", "gamma", "delta")]])
    classes = form_classes(mentions)
    # cos(a,b) = 0.8, cos(b,c) = 0.6, cos(a,c) = 0, d opposite to a
    vecs = np.array([[1, 0], [0.8, 0.6], [0, 1], [-1, 0]], dtype=float)
    at_075 = merge_similar_classes(classes, mentions, vecs, 0.75)
    assert [c.mentions for c in at_075] == [[0, 1], [2], [3]]
    at_055 = merge_similar_classes(classes, mentions, vecs, 0.55)      # a-b and b-c join a, b and c
    assert [c.mentions for c in at_055] == [[0, 1, 2], [3]] and at_055[0].key == "alpha"
    with pytest.raises(ValueError, match="one name vector per class"):
        merge_similar_classes(classes, mentions, vecs[:2], 0.5)
    with pytest.raises(ValueError, match=r"cosine in \[-1, 1\]"):
        merge_similar_classes(classes, mentions, vecs, 1.5)


class ShortSummary:
    """Fake reasoner: the first ``max_words`` words of the texts; records the call."""

    def __init__(self):
        self.calls = []

    def summarize(self, texts, max_words=100):
        self.calls.append((list(texts), max_words))
        return " ".join(" ".join(texts).split()[:max_words])


def test_class_text_cap_summarizes_only_over_the_cap():
    fake = ShortSummary()
    # 6 words > cap 4 -> summarized to the first 4 words
    assert class_text("Saffron", ["A red spice.", "A costly spice."], 4, fake) == ("Saffron: A red spice. A", True)
    # 3 words <= cap 4 -> unchanged, no call
    assert class_text("Abruzzo", ["A mountain region."], 4, fake) == ("Abruzzo: A mountain region.", False)
    assert fake.calls == [(["A red spice.", "A costly spice."], 4)]
    # no cap, no name; no descriptions -> the name stands for itself
    assert class_text("X", ["a b c d e f"], None, include_name=False) == ("a b c d e f", False)
    assert class_text("Lonely", [], 4) == ("Lonely: Lonely", False)
    with pytest.raises(ValueError, match="no reasoner"):
        class_text("Saffron", ["one two three four five"], 2, None)
    with pytest.raises(ValueError, match="positive number of words"):
        class_text("Saffron", ["x"], 0, fake)
