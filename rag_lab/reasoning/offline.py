"""The offline reasoner: the six LLM jobs of the papers done by classical NLP, deterministic.

Why: every notebook must run with no API key and no network, and its results must replay
exactly. Tables made with it say ``reasoner: offline``.

How each job is done (details in docs/reasoners.md):
- ``entities``: spaCy named entities (type = NER label) and noun chunks (type "CONCEPT"),
  de-duplicated by normalised name, first mention kept; description = the sentence of the
  first mention.
- ``triples``: subject-verb-object rules over spaCy's dependency parse (see ``verb_triples``).
- ``query_entities``: NER spans and noun chunks of the query without stop words or wh-words.
- ``themes``: keyphrase candidates ranked by Maximal Marginal Relevance against the document
  embedding (LangChain's ``maximal_marginal_relevance``).
- ``answer`` / ``summarize``: extractive; the sentences most similar to the question (or to the
  centroid of all sentences) within a word budget, in their original order.
- ``choose_next``: relevance minus redundancy (Maximal Marginal Relevance) with a stop rule
  (``marginal_relevance_choice``): a decision of its own, not the query-similarity rule that
  ``query_traversal`` already follows (that rule stays the LLM reasoner's fallback).

The spaCy rules behind entities, triples and themes are in ``linguistics.py``.
"""
from __future__ import annotations

import os
import time
from typing import Any, Callable, Sequence

import numpy as np

from ..caching.code_version import code_fingerprint
from ..core.chunking import sentence_spans
from ..core.types import Cost
from ..core import ties
from .base import Choice, Entity, Reasoner, Triple
from .linguistics import (CONCEPT, MIN_NAME_CHARS, SPACY_MODEL, VERB_POS, content_tokens, is_number, keep_mention,
                          mentions, normalize_name, parse, require_text, require_texts, spacy_model_version,
                          strip_determiners, theme_candidate, verb_triples)
from ..caching.sqlite_cache import reuse_enabled
from .offline_cache import OfflineResultCache, result_key

CODE_FILES = ("reasoning/offline.py", "reasoning/linguistics.py", "reasoning/base.py", "core/chunking.py", "core/ties.py")

MMR_LAMBDA = 0.7            # weight of relevance vs redundancy: mostly central phrases, some diversity
ANSWER_WORDS = 60           # word budget of an extractive answer
MIN_SENTENCES = 8           # SSG: never stop before this many sentences are gathered (the paper's early-stop minimum)
CHOICE_LAMBDA = 0.5         # choose_next: relevance vs redundancy weighed evenly (MMR's balanced setting,
                            # LangChain's default lambda_mult); ours, the SSG paper gives the LLM no weights


# -- Maximal Marginal Relevance (LangChain's) --------------------------------------------------
def mmr_select(doc_vec: np.ndarray, cand_vecs: np.ndarray, n: int, lam: float = MMR_LAMBDA) -> list[int]:
    """Indices of ``n`` candidates chosen greedily by MMR (as ``langchain_core``'s
    ``maximal_marginal_relevance``): argmax  lam * sim(c, doc) - (1 - lam) * max_{chosen j} sim(c, j),
    the first pick the most relevant candidate. Own code because LangChain's argmax compares floats
    exactly, so two equally good candidates were chosen by the last bits of their vectors: here each
    argmax is ``ties.best`` (ties at the stated precision go to the earlier candidate; near-ties noted)."""
    if not 0.0 <= lam <= 1.0:
        raise ValueError(f"MMR lambda must be in [0, 1], got {lam}")
    cands = np.atleast_2d(np.asarray(cand_vecs, dtype=np.float64))
    n = min(n, len(cands)) if cands.size else 0
    if n <= 0:
        return []
    doc = np.asarray(doc_vec, dtype=np.float64).ravel()
    norms = np.linalg.norm(cands, axis=1)
    unit = cands / np.where(norms > 0, norms, 1.0)[:, None]
    relevance = unit @ (doc / (np.linalg.norm(doc) or 1.0))
    chosen = [ties.best(relevance, what="offline MMR choice")]
    while len(chosen) < n:
        redundancy = (unit @ unit[chosen].T).max(axis=1)
        scores = lam * relevance - (1.0 - lam) * redundancy
        rest = [i for i in range(len(unit)) if i not in chosen]
        chosen.append(rest[ties.best(scores[rest], keys=rest, what="offline MMR choice")])
    return chosen


def marginal_relevance_choice(similarities: Sequence[float], redundancies: Sequence[float], gathered_count: int,
                              min_sentences: int = MIN_SENTENCES, lam: float = CHOICE_LAMBDA) -> Choice:
    """The offline choose-next-or-stop: Maximal Marginal Relevance (Carbonell & Goldstein, 1998).

    Each candidate scores ``lam * similarity - (1 - lam) * redundancy`` (similarity: to the query;
    redundancy: its highest cosine to a gathered sentence). Take the best score (the earlier
    candidate on ties). Once ``min_sentences`` are gathered, stop when no candidate scores above
    zero: every one is, weighted, at least as close to what is gathered as to the query, so it
    would add little that is both new and relevant. This mirrors what the SSG prompt asks of the
    LLM (weigh what is gathered against what each candidate adds; stop when there is enough).
    Own code: LangChain's ``maximal_marginal_relevance`` starts from an empty selection, here the
    selection is what the traversal has already gathered.
    """
    if len(redundancies) != len(similarities):
        raise ValueError(f"choose_next: got {len(redundancies)} redundancies for {len(similarities)} similarities")
    if not 0.0 <= lam <= 1.0:
        raise ValueError(f"choose_next: lambda must be in [0, 1], got {lam}")
    if not similarities:
        return Choice("stop", None, "no candidates")
    scores = [lam * float(s) - (1.0 - lam) * float(r) for s, r in zip(similarities, redundancies)]
    best = ties.best(scores, what="offline next-sentence choice")
    if gathered_count >= min_sentences and not ties.above(scores[best], 0.0, what="offline stop rule"):
        return Choice("stop", None, f"no candidate adds new relevant content (best marginal relevance "
                                    f"{scores[best]:.3f} <= 0)")
    return Choice("next", best, f"highest marginal relevance {scores[best]:.3f} (query similarity "
                                f"{float(similarities[best]):.3f}, redundancy {float(redundancies[best]):.3f})")


def select_within_budget(sentences: Sequence[str], scores: np.ndarray, max_words: int) -> str:
    """The best-scoring sentences whose words fit ``max_words``, joined in their original order.

    Greedy by score (ties at ``core.ties``' precision go to the earlier sentence: two sentences are
    exactly as close to their own centroid, and noise must not choose); a sentence that would
    overflow the budget is skipped, the next one tried.
    The best sentence is always kept, even when it alone is longer than the budget, so a
    non-empty input never gives an empty answer.
    """
    picked, used = [], 0
    for i in ties.order(scores, what="offline sentence choice", names=lambda i: sentences[i][:40]):
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
                 mmr_lambda: float = MMR_LAMBDA, choice_lambda: float = CHOICE_LAMBDA, cache=True):
        super().__init__()
        if answer_words <= 0:
            raise ValueError(f"answer_words must be positive, got {answer_words}")
        for name, value in (("mmr_lambda", mmr_lambda), ("choice_lambda", choice_lambda)):
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {value}")
        self._embedder = embedder
        self.answer_words = answer_words
        self.min_sentences = min_sentences
        self.mmr_lambda = mmr_lambda
        self.choice_lambda = choice_lambda
        # choose_next: the current query and the texts its traversal has paid for
        self._choice_paid: tuple[str, set[str]] | None = None
        # results of the other jobs on disk (offline_cache.py): True = rag_lab's cache folder, a folder,
        # an OfflineResultCache, or False/None for none; opened on first use
        if cache is not None and not isinstance(cache, (bool, str, os.PathLike, OfflineResultCache)):
            raise ValueError(f"OfflineReasoner: cache must be True/False/None, a folder or an OfflineResultCache, "
                             f"got {cache!r}")
        self._cache_setting = cache
        self._fingerprint: str | None = None

    def identity(self) -> dict:
        """Knobs, the embedder's ``model_key``, the spaCy pipeline and the code of the jobs."""
        return {"answer_words": self.answer_words, "min_sentences": self.min_sentences,
                "mmr_lambda": self.mmr_lambda, "choice_lambda": self.choice_lambda,
                "embedder": self.embedder.model_key, "spacy": f"{SPACY_MODEL}=={spacy_model_version()}",
                "code": code_fingerprint(*CODE_FILES)}

    @property
    def result_cache(self) -> OfflineResultCache | None:
        """The persistent result cache, or None (turned off here or by ``RAG_LAB_REUSE=0``)."""
        setting = self._cache_setting
        if setting is None or setting is False or not reuse_enabled():
            return None
        if not isinstance(setting, OfflineResultCache):
            self._cache_setting = setting = OfflineResultCache(None if setting is True else setting)
        return setting

    def _job(self, job: str, payload, compute: Callable[[], tuple[Any, int]]):
        """The result of ``job`` on ``payload``: the stored one (its usage recorded with its stored tokens),
        else ``compute()``'s (result, embedding tokens), recorded and stored."""
        t0 = time.perf_counter()
        cache, key = self.result_cache, None
        if cache is not None:
            if self._fingerprint is None:
                self._fingerprint = self.fingerprint()
            key = result_key(self._fingerprint, job, payload)
            hit = cache.get(key, job)
            if hit is not None:
                self._record(job, t0, hit[1])
                return hit[0]
        result, tokens = compute()
        self._record(job, t0, tokens)
        if key is not None:
            cache.put(key, job, result, tokens)
        return result

    @property
    def embedder(self):
        if self._embedder is None:
            from ..core.embedding import shared_embedder
            self._embedder = shared_embedder()
        return self._embedder

    def _embed(self, texts: list[str]) -> tuple[np.ndarray, int]:
        """Unit vectors of ``texts`` and the word-piece tokens they cost."""
        return self.embedder.encode(texts), self.embedder.count_tokens(texts)

    def _record(self, job: str, t0: float, tokens: int = 0) -> None:
        self.usage.add(job, Cost(embedding_tokens=tokens, seconds=time.perf_counter() - t0))

    # -- entities, triples, query entities ------------------------------------------------
    def entities(self, text: str) -> list[Entity]:
        def compute():
            out: dict[str, Entity] = {}
            for span, label in mentions(parse(text)):
                span = strip_determiners(span)
                if not keep_mention(span, label):
                    continue
                key = normalize_name(span.text)
                if key and key not in out:
                    out[key] = Entity(span.text.strip(), label, span.sent.text.strip())
            return list(out.values()), 0
        return self._job("entities", require_text(text, "entities: text"), compute)

    def triples(self, text: str) -> list[Triple]:
        def compute():
            out = [t for token in parse(text) if token.pos_ in VERB_POS for t in verb_triples(token)]
            return list(dict.fromkeys(out)), 0
        return self._job("triples", require_text(text, "triples: text"), compute)

    def query_entities(self, query: str) -> list[str]:
        def compute():
            names = []
            for span, label in mentions(parse(query)):
                tokens = content_tokens(span)
                if not tokens or (label == CONCEPT and is_number(tokens)):
                    continue
                name = normalize_name("".join(t.text_with_ws for t in tokens))
                if len(name) >= MIN_NAME_CHARS:
                    names.append(name)
            return list(dict.fromkeys(names)), 0
        return self._job("query_entities", require_text(query, "query_entities: query"), compute)

    # -- themes ---------------------------------------------------------------------------
    def themes(self, text: str, n: int = 5) -> list[str]:
        """``n`` keyphrases ranked by MMR (lambda = ``mmr_lambda``) against the document vector.

        The document vector embeds the text itself; a text longer than the encoder reads is
        represented by the normalised mean of its sentence vectors instead (the encoder would
        silently truncate it)."""
        if not isinstance(n, int) or n <= 0:
            raise ValueError(f"themes: n must be a positive integer, got {n!r}")

        def compute():
            candidates = list(dict.fromkeys(c for span, _ in mentions(parse(text)) if (c := theme_candidate(span))))
            if not candidates:
                return [], 0
            cand_vecs, tokens = self._embed(candidates)
            doc_vec, doc_tokens = self._document_vector(text)
            return [candidates[i] for i in mmr_select(doc_vec, cand_vecs, n, self.mmr_lambda)], tokens + doc_tokens
        return self._job("themes", {"text": require_text(text, "themes: text"), "n": n}, compute)

    def _document_vector(self, text: str) -> tuple[np.ndarray, int]:
        tokens = self.embedder.count_tokens(text)
        if tokens <= self.embedder.max_tokens - 2:
            return self.embedder.encode([text])[0], tokens
        sentences = [text[s:e] for s, e in sentence_spans(text)]
        vecs, tokens = self._embed(sentences)
        mean = vecs.mean(axis=0)
        return mean / np.linalg.norm(mean), tokens

    # -- extractive answer and summary ----------------------------------------------------
    @staticmethod
    def _sentences(texts: Sequence[str]) -> list[str]:
        """Sentences of the texts in order, exact duplicates dropped."""
        return list(dict.fromkeys(t[s:e] for t in texts for s, e in sentence_spans(t)))

    def answer(self, question: str, contexts: Sequence[str], max_words: int | None = None) -> str:
        """The context sentences most similar to the question within ``max_words`` (default
        ``answer_words``), in their original order. No context text gives "" (nothing to extract)."""
        question = require_text(question, "answer: question")
        contexts = require_texts(contexts, "answer: contexts")
        budget = self.answer_words if max_words is None else max_words
        if budget <= 0:
            raise ValueError(f"answer: max_words must be positive, got {budget}")

        def compute():
            sentences = self._sentences(contexts)
            if not sentences:
                return "", 0
            vecs, tokens = self._embed([question, *sentences])
            return select_within_budget(sentences, vecs[1:] @ vecs[0], budget), tokens
        return self._job("answer", {"question": question, "contexts": list(contexts), "words": budget}, compute)

    def summarize(self, texts: Sequence[str], max_words: int = 100) -> str:
        """The sentences closest to the centroid of all sentence vectors (the texts' shared
        content), within ``max_words``, in original order. No text gives ""."""
        texts = require_texts(texts, "summarize: texts")
        if max_words <= 0:
            raise ValueError(f"summarize: max_words must be positive, got {max_words}")

        def compute():
            sentences = self._sentences(texts)
            if not sentences:
                return "", 0
            vecs, tokens = self._embed(sentences)
            return select_within_budget(sentences, vecs @ vecs.mean(axis=0), max_words), tokens
        return self._job("summarize", {"texts": list(texts), "words": max_words}, compute)

    # -- traversal step --------------------------------------------------------------------
    def choose_next(self, query: str, gathered: Sequence[str], candidates: Sequence[str],
                    similarities: Sequence[float], candidate_ids: Sequence[str] | None = None) -> Choice:
        """Relevance minus redundancy (``marginal_relevance_choice``, lambda = ``choice_lambda``):
        redundancy is a candidate's highest cosine to a gathered sentence; stop (after
        ``min_sentences``) when no candidate scores above zero. Nothing gathered: redundancy 0.

        ``similarities`` are the candidates' cosines to the query (from the same embedder, since
        they are weighed against ours). ``candidate_ids`` is accepted for interface parity only."""
        query = require_text(query, "choose_next: query")
        gathered = require_texts(gathered, "choose_next: gathered")
        candidates = require_texts(candidates, "choose_next: candidates")
        if len(similarities) != len(candidates):
            raise ValueError(f"choose_next: got {len(similarities)} similarities for {len(candidates)} candidates")
        if candidate_ids is not None and len(candidate_ids) != len(candidates):
            raise ValueError(f"choose_next: got {len(candidate_ids)} candidate_ids for {len(candidates)} candidates")
        t0 = time.perf_counter()
        redundancies, tokens = [0.0] * len(candidates), 0
        if candidates and gathered:
            texts = [*candidates, *gathered]
            vectors, tokens = self.embedder.encode(texts), self._choice_tokens(query, texts)
            redundancies = (vectors[:len(candidates)] @ vectors[len(candidates):].T).max(axis=1).tolist()
        self._record("choose_next", t0, tokens)
        return marginal_relevance_choice(list(similarities), redundancies, len(gathered), self.min_sentences,
                                         self.choice_lambda)

    def _choice_tokens(self, query: str, texts: list[str]) -> int:
        """Tokens of the texts new to the current query: a traversal pays for each window and sentence once."""
        if self._choice_paid is None or self._choice_paid[0] != query:
            self._choice_paid = (query, set())
        new = [t for t in dict.fromkeys(texts) if t not in self._choice_paid[1]]
        self._choice_paid[1].update(new)
        return self.embedder.count_tokens(new)
