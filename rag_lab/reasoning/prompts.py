"""Every prompt the LLM reasoner sends, one per job, each with its reply schema and fallback.

Why one module: the prompts are part of the method (a paper's numbers depend on them), so
they are read, reviewed and changed in one place. Each job is a ``JobPrompt``:

- ``system`` / ``template``: the system message and the user-message template;
- ``schema(**inputs)``: the JSON schema the reply must satisfy (also sent to backends that
  constrain decoding). Schemas use ``maxItems`` but never ``maxLength``: with constrained
  decoding ``maxLength`` cut strings mid-word and pushed small models off the rails
  (STACK.md); list lengths are bounded instead, and a reply that breaks the schema falls back;
- ``normalize(data, **inputs)``: forgiving fixes applied before validation (a bare list for a
  one-list object, ``"3"`` for ``3``, extra themes dropped), so a nearly right reply is not
  wasted;
- ``parse(data, **inputs)``: the validated reply turned into the reasoner's result type;
- ``fallback(**inputs)``: the documented result when the reply is still invalid after one
  retry (``fallback_doc`` says what it is and why);
- ``completion_allowance``: completion tokens ``estimate`` assumes per call (no call is made
  to learn it); roughly what a good reply to the built-in doctor sample takes, rounded up.

Inputs are the keyword arguments of the ``Reasoner`` method of the same name. Every reply is a
JSON *object* (OpenAI's JSON mode and llama.cpp's constrained decoding both want an object at
the top), so list-valued jobs wrap their list: ``{"entities": [...]}``.

Prompts are zero-shot on purpose: on small local models a worked example leaked into the
outputs (STACK.md).
"""
from __future__ import annotations

from ..core import ties

import re
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from .base import Choice, Entity, Triple, similarity_choice

MAX_ENTITIES = 40        # per chunk; a 100-200 token chunk rarely names more
MAX_TRIPLES = 40
MAX_QUERY_ENTITIES = 10
MAX_CANDIDATES = 5       # the SSG prompt shows at most five candidates
GATHERED_SHOWN = 5       # ... and the first five sentences already extracted
PREVIEW_CHARS = 200      # ... each candidate as a 200-character preview
ANSWER_FALLBACK_WORDS = 60

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True)
class JobPrompt:
    job: str
    system: str
    template: str
    fields: Callable[..., dict]            # inputs -> values for ``template``
    schema: Callable[..., dict]            # inputs -> JSON schema of the reply
    normalize: Callable[..., Any]          # (data, inputs) -> data, before validation
    parse: Callable[..., Any]              # (valid data, inputs) -> result
    fallback: Callable[..., Any]           # inputs -> result when the reply stays invalid
    fallback_doc: str
    completion_allowance: int

    def messages(self, **inputs) -> list[dict[str, str]]:
        """The chat messages for one call."""
        return [{"role": "system", "content": self.system},
                {"role": "user", "content": self.template.format(**self.fields(**inputs))}]


def _obj(properties: dict, required: Sequence[str] | None = None) -> dict:
    return {"type": "object", "properties": properties,
            "required": list(required if required is not None else properties)}


def _string_list(key: str, min_items: int = 0, max_items: int | None = None) -> dict:
    arr: dict[str, Any] = {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": min_items}
    if max_items is not None:
        arr["maxItems"] = max_items
    return _obj({key: arr})


def _wrap_list(key: str):
    """Accept a bare JSON list where ``{key: list}`` was asked for (a common small-model slip)."""
    def normalize(data, **_):
        return {key: data} if isinstance(data, list) else data
    return normalize


def _clean(s: str) -> str:
    return " ".join(str(s).split())


def first_sentences(text: str, max_words: int) -> str:
    """Leading whole sentences of ``text`` within ``max_words`` words (at least the first sentence,
    cut to ``max_words`` words if that one alone is longer)."""
    sentences = [s for s in _SENTENCE_END.split(_clean(text)) if s]
    out: list[str] = []
    words = 0
    for s in sentences:
        n = len(s.split())
        if out and words + n > max_words:
            break
        out.append(s)
        words += n
    joined = " ".join(out)
    return " ".join(joined.split()[:max_words])


def leading_words(texts: Sequence[str], max_words: int) -> str:
    return " ".join(" ".join(_clean(t) for t in texts).split()[:max_words])


# --- entities (UnWeaver: entities of a chunk, each with a description) ------------------------

ENTITIES = JobPrompt(
    job="entities",
    system="You extract entities from text for a knowledge base. You reply with JSON only.",
    template=(
        "List the entities in the passage below: named things (people, organisations, places, works, "
        "products, events) and the key concepts, methods or substances it talks about.\n"
        "For each entity give:\n"
        "- name: the entity as the passage writes it, without leading articles;\n"
        "- type: one or two words for its kind (for example person, organization, location, concept, method);\n"
        "- description: one sentence saying what the passage tells about it. Use only the passage.\n"
        f"List each entity once, at most {MAX_ENTITIES}. If there are none, return an empty list.\n\n"
        "PASSAGE:\n{text}\n\n"
        'Reply with a JSON object: {{"entities": [{{"name": "...", "type": "...", "description": "..."}}]}}'
    ),
    fields=lambda text: {"text": text},
    schema=lambda **_: _obj({"entities": {
        "type": "array", "maxItems": MAX_ENTITIES,
        "items": _obj({"name": {"type": "string", "minLength": 1}, "type": {"type": "string"},
                       "description": {"type": "string"}})}}),
    normalize=_wrap_list("entities"),
    parse=lambda data, **_: [Entity(_clean(e["name"]), _clean(e["type"]), _clean(e["description"]))
                             for e in data["entities"] if _clean(e["name"])],
    fallback=lambda **_: [],
    fallback_doc="no entities: an empty list (the chunk then joins no entity class)",
    completion_allowance=400,
)

# --- triples (SKETCH: typed subject-relation-object facts for the knowledge graph) -------------

TRIPLES = JobPrompt(
    job="triples",
    system="You extract knowledge-graph facts from text. You reply with JSON only.",
    template=(
        "Extract the facts stated in the passage below as (subject, relation, object) triples for a "
        "knowledge graph.\n"
        "- subject and object: short entity names as the passage writes them;\n"
        "- subject_type and object_type: one or two words for the kind of entity;\n"
        "- relation: a short verb phrase in lower case (for example 'discovered', 'is located in').\n"
        f"Only facts the passage states; at most {MAX_TRIPLES}. If there are none, return an empty list.\n\n"
        "PASSAGE:\n{text}\n\n"
        'Reply with a JSON object: {{"triples": [{{"subject": "...", "subject_type": "...", '
        '"relation": "...", "object": "...", "object_type": "..."}}]}}'
    ),
    fields=lambda text: {"text": text},
    schema=lambda **_: _obj({"triples": {
        "type": "array", "maxItems": MAX_TRIPLES,
        "items": _obj({"subject": {"type": "string", "minLength": 1}, "subject_type": {"type": "string"},
                       "relation": {"type": "string", "minLength": 1},
                       "object": {"type": "string", "minLength": 1}, "object_type": {"type": "string"}})}}),
    normalize=_wrap_list("triples"),
    parse=lambda data, **_: [Triple(_clean(t["subject"]), _clean(t["relation"]), _clean(t["object"]),
                                    _clean(t["subject_type"]), _clean(t["object_type"]))
                             for t in data["triples"]
                             if _clean(t["subject"]) and _clean(t["relation"]) and _clean(t["object"])],
    fallback=lambda **_: [],
    fallback_doc="no triples: an empty list (the chunk adds nothing to the graph)",
    completion_allowance=400,
)

# --- query entities (SKETCH: which graph nodes a question is about) ---------------------------

QUERY_ENTITIES = JobPrompt(
    job="query_entities",
    system="You find the entities a search question is about. You reply with JSON only.",
    template=(
        "List the entities (named things and key concepts) that the question below mentions, each as a "
        f"short name written as in the question; at most {MAX_QUERY_ENTITIES}. "
        "If it mentions none, return an empty list.\n\n"
        "QUESTION: {query}\n\n"
        'Reply with a JSON object: {{"entities": ["...", "..."]}}'
    ),
    fields=lambda query: {"query": query},
    schema=lambda **_: _string_list("entities", 0, MAX_QUERY_ENTITIES),
    normalize=_wrap_list("entities"),
    parse=lambda data, **_: list(dict.fromkeys(_clean(e) for e in data["entities"] if _clean(e))),
    fallback=lambda **_: [],
    fallback_doc="no query entities: an empty list (the graph part of the retrieval finds nothing)",
    completion_allowance=40,
)

# --- themes (SSG: a document's themes, used for theme bridges between documents) ---------------


def _themes_normalize(data, n: int = 5, **_):
    data = _wrap_list("themes")(data)
    if isinstance(data, dict) and isinstance(data.get("themes"), list) and len(data["themes"]) > n:
        data = {**data, "themes": data["themes"][:n]}   # more than asked: keep the first n
    return data


THEMES = JobPrompt(
    job="themes",
    system="You identify what documents are about. You reply with JSON only.",
    template=(
        "Give exactly {n} themes of the document below. A theme is a short noun phrase (two to five words) "
        "naming a topic the document covers; the themes should be distinct and together cover the document.\n\n"
        "DOCUMENT:\n{text}\n\n"
        'Reply with a JSON object: {{"themes": [{n} strings]}}'
    ),
    fields=lambda text, n=5: {"text": text, "n": n},
    schema=lambda n=5, **_: _string_list("themes", n, n),
    normalize=_themes_normalize,
    parse=lambda data, **_: [_clean(t) for t in data["themes"]],
    fallback=lambda **_: [],
    fallback_doc="no themes: an empty list (the document then takes part in no theme bridge)",
    completion_allowance=60,
)

# --- answer (all papers: an answer grounded in the retrieved contexts) ------------------------


def _answer_fields(question: str, contexts: Sequence[str]) -> dict:
    if contexts:
        listed = "\n\n".join(f"[{i}] {_clean(c)}" for i, c in enumerate(contexts, 1))
    else:
        listed = "(no contexts were retrieved)"
    return {"question": question, "contexts": listed}


ANSWER = JobPrompt(
    job="answer",
    system="You answer questions using only the context you are given. You reply with JSON only.",
    template=(
        "Answer the question using only the numbered contexts below. Be brief: one to three sentences. "
        "If the contexts do not contain the answer, say that they do not.\n\n"
        "CONTEXTS:\n{contexts}\n\n"
        "QUESTION: {question}\n\n"
        'Reply with a JSON object: {{"answer": "..."}}'
    ),
    fields=_answer_fields,
    schema=lambda **_: _obj({"answer": {"type": "string", "minLength": 1}}),
    normalize=lambda data, **_: data,
    parse=lambda data, **_: data["answer"].strip(),
    fallback=lambda question="", contexts=(), **_: first_sentences(contexts[0], ANSWER_FALLBACK_WORDS) if contexts else "",
    fallback_doc=(f"extractive: the first sentence(s) of the first (best-ranked) context, at most "
                  f"{ANSWER_FALLBACK_WORDS} words; empty when there is no context"),
    completion_allowance=120,
)

# --- choose_next (SSG llm-guided traversal: pick a candidate or stop) -------------------------
# Structure from the SSG paper: the query, how many sentences are already gathered with the first
# five of them, then up to five candidates each with its id, its query similarity and a 200-char
# preview, and a reply {"choice": 1-5 or "stop", "reasoning": ...}. Worded here independently.


def shown_candidates(similarities: Sequence[float]) -> list[int]:
    """Indices of the candidates the prompt shows, most query-similar first (at most five)."""
    return ties.order(similarities, k=MAX_CANDIDATES, what="")


def _preview(text: str) -> str:
    text = _clean(text)
    return text if len(text) <= PREVIEW_CHARS else text[:PREVIEW_CHARS] + "..."


def _choose_fields(query, gathered, candidates, similarities, candidate_ids=None) -> dict:
    if len(candidates) != len(similarities):
        raise ValueError(f"choose_next: {len(candidates)} candidates but {len(similarities)} similarities; "
                         "expected one similarity per candidate")
    if candidate_ids is not None and len(candidate_ids) != len(candidates):
        raise ValueError(f"choose_next: {len(candidates)} candidates but {len(candidate_ids)} candidate_ids")
    shown = shown_candidates(similarities)
    ids = list(candidate_ids) if candidate_ids is not None else [f"c{i}" for i in range(len(candidates))]
    lines = []
    for number, i in enumerate(shown, 1):
        lines.append(f"{number}. [{ids[i]}] (similarity {similarities[i]:.2f})\n   {_preview(candidates[i])}")
    if gathered:
        got = "\n".join(f"- {_preview(s)}" for s in list(gathered)[:GATHERED_SHOWN])
        if len(gathered) > GATHERED_SHOWN:
            got += f"\n- ... and {len(gathered) - GATHERED_SHOWN} more"
    else:
        got = "(nothing yet)"
    return {"query": query, "n_gathered": len(gathered), "gathered": got, "candidates": "\n".join(lines),
            "n_shown": len(shown)}


def _choose_schema(similarities=(), **_) -> dict:
    m = max(1, min(MAX_CANDIDATES, len(similarities)))
    return _obj({"choice": {"anyOf": [{"type": "integer", "minimum": 1, "maximum": m},
                                      {"type": "string", "enum": ["stop"]}]},
                 "reasoning": {"type": "string"}}, required=["choice"])


def _choose_normalize(data, **_):
    if isinstance(data, dict) and isinstance(data.get("choice"), str):
        c = data["choice"].strip().strip(".").lower()
        if c.isdigit():
            c = int(c)
        data = {**data, "choice": c}
    return data


def _choose_parse(data, similarities=(), **_) -> Choice:
    reason = _clean(data.get("reasoning", ""))
    if data["choice"] == "stop":
        return Choice("stop", None, reason)
    return Choice("next", shown_candidates(similarities)[data["choice"] - 1], reason)


CHOOSE_NEXT = JobPrompt(
    job="choose_next",
    system="You steer a search through a graph of sentences. You reply with JSON only.",
    template=(
        "We walk a graph of sentences, one hop at a time, collecting text that answers a question. "
        "Pick the candidate that adds the most useful new information, or stop when the gathered text "
        "already answers the question.\n\n"
        "QUESTION: {query}\n\n"
        "GATHERED SO FAR ({n_gathered} sentences; the first ones):\n{gathered}\n\n"
        "CANDIDATES (id, similarity to the question, start of the text):\n{candidates}\n\n"
        "Weigh what is already gathered against what each candidate would add.\n"
        'Reply with a JSON object: {{"choice": <a candidate number 1-{n_shown}, or "stop">, '
        '"reasoning": "<one short sentence>"}}'
    ),
    fields=_choose_fields,
    schema=_choose_schema,
    normalize=_choose_normalize,
    parse=_choose_parse,
    fallback=lambda similarities=(), **_: similarity_choice(list(similarities), fallback=True),
    fallback_doc=("the highest-similarity candidate (the SSG paper: an invalid reply falls back to the most "
                  "query-similar candidate to keep the traversal moving); Choice.fallback is True"),
    completion_allowance=50,
)

# --- summarize (RAPTOR cluster summaries; UnWeaver's over-long descriptions) ------------------

SUMMARIZE = JobPrompt(
    job="summarize",
    system="You write faithful, compact summaries. You reply with JSON only.",
    template=(
        "Summarize the texts below in at most {max_words} words. Keep the specific facts, names and "
        "numbers that matter; add nothing that the texts do not say.\n\n"
        "TEXTS:\n{texts}\n\n"
        'Reply with a JSON object: {{"summary": "..."}}'
    ),
    fields=lambda texts, max_words=100: {"texts": "\n\n".join(f"- {_clean(t)}" for t in texts),
                                         "max_words": max_words},
    schema=lambda **_: _obj({"summary": {"type": "string", "minLength": 1}}),
    normalize=lambda data, **_: data,
    parse=lambda data, **_: _clean(data["summary"]),
    fallback=lambda texts=(), max_words=100, **_: leading_words(texts, max_words),
    fallback_doc="extractive: the first max_words words of the texts joined in order",
    completion_allowance=140,
)

PROMPTS: dict[str, JobPrompt] = {p.job: p for p in
                                 (ENTITIES, TRIPLES, QUERY_ENTITIES, THEMES, ANSWER, CHOOSE_NEXT, SUMMARIZE)}


def planned_inputs(job: str, input_text: str) -> dict:
    """The inputs of one planned call from ``PlannedCalls.planned_llm_calls``' (job, input text) pair.

    ``input_text`` fills the job's main slot: the text (entities, triples, themes with n=5), the
    query (query_entities), the one text to summarize (summarize, 100 words), the one context
    (answer, empty question) or the one candidate (choose_next, empty query)."""
    if job in ("entities", "triples"):
        return {"text": input_text}
    if job == "themes":
        return {"text": input_text, "n": 5}
    if job == "query_entities":
        return {"query": input_text}
    if job == "summarize":
        return {"texts": [input_text], "max_words": 100}
    if job == "answer":
        return {"question": "", "contexts": [input_text]}
    if job == "choose_next":
        return {"query": "", "gathered": [], "candidates": [input_text], "similarities": [1.0]}
    raise ValueError(f"unknown reasoner job {job!r}; expected one of {', '.join(PROMPTS)}")
