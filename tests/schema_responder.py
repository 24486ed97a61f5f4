"""A deterministic "model" for the fake OpenAI-compatible server: a valid reply to every reasoner job,
computed from the text in the prompt, so building an index through the LLM reasoner gives a real graph.

Written for the project's tests and benchmarks (no model runs here). The job is the name of the
request's ``json_schema`` response format; the input is read back out of the prompt:

- entities: the capitalised words of the passage (once each, at most 40), type "thing", the
  sentence of the first mention as description;
- triples: for each sentence, every consecutive pair of its capitalised words, relation
  "appears with" (at most 40);
- query_entities: the question's capitalised words after its first and its words of 5+ letters;
- themes: the n most frequent words of 6+ letters (ties: first seen), padded "theme i";
- summarize: the first min(max_words, 30) words of the texts; answer: the first context's first sentence;
- choose_next: the first candidate shown.

The same request always gets the same reply, whatever order requests arrive in, so an index built
at any concurrency must come out the same.
"""
from __future__ import annotations

import json
import re
from collections import Counter

WORD = re.compile(r"[A-Za-z][A-Za-z'-]+")
SENTENCE = re.compile(r"(?<=[.!?])\s+")
STOP = {"the", "a", "an", "and", "or", "of", "in", "on", "to", "for", "with", "by", "from", "is", "are", "was",
        "were", "it", "its", "this", "that", "these", "those", "what", "which", "who", "where", "when", "why",
        "how", "does", "did", "do", "there", "their", "they", "about"}


def _between(text: str, start: str, end: str) -> str:
    head = text.split(start, 1)[1] if start in text else text
    return head.split(end, 1)[0] if end in head else head


def _capitalised(text: str) -> list[str]:
    return list(dict.fromkeys(w for w in WORD.findall(text) if w[0].isupper() and w.lower() not in STOP))


def reply(request: dict) -> dict:
    """The JSON reply to one chat-completions request (see the module docstring)."""
    fmt = request.get("response_format") or {}
    job = (fmt.get("json_schema") or {}).get("name", "")
    prompt = request["messages"][-1]["content"]
    if job in ("entities", "triples"):
        passage = _between(prompt, "PASSAGE:\n", "\n\nReply with")
        sentences = [s for s in SENTENCE.split(passage) if s.strip()]
        if job == "entities":
            first = {}
            for s in sentences:
                for w in _capitalised(s):
                    first.setdefault(w, s.strip())
            return {"entities": [{"name": w, "type": "thing", "description": d} for w, d in list(first.items())[:40]]}
        triples = [{"subject": a, "subject_type": "thing", "relation": "appears with", "object": b,
                    "object_type": "thing"}
                   for s in sentences for a, b in zip(_capitalised(s), _capitalised(s)[1:])]
        return {"triples": triples[:40]}
    if job == "query_entities":
        question = _between(prompt, "QUESTION: ", "\n\n")
        words = WORD.findall(question)[1:]
        picked = [w for w in words if (w[0].isupper() or len(w) >= 5) and w.lower() not in STOP]
        return {"entities": list(dict.fromkeys(picked))[:10]}
    if job == "themes":
        n = fmt["json_schema"]["schema"]["properties"]["themes"]["minItems"]
        words = [w.lower() for w in WORD.findall(_between(prompt, "DOCUMENT:\n", "\n\nReply with")) if len(w) >= 6]
        counts = Counter(words)
        ranked = sorted(dict.fromkeys(words), key=lambda w: (-counts[w], words.index(w)))
        return {"themes": (ranked + [f"theme {i}" for i in range(n)])[:n]}
    if job == "summarize":
        limit = int(re.search(r"at most (\d+) words", prompt).group(1))
        words = _between(prompt, "TEXTS:\n", "\n\nReply with").replace("\n- ", " ").lstrip("- ").split()
        return {"summary": " ".join(words[:min(limit, 30)]) or "nothing"}
    if job == "answer":
        contexts = _between(prompt, "CONTEXTS:\n", "\n\nQUESTION:")
        first = re.sub(r"^\[\d+\]\s*", "", contexts.split("\n\n")[0])
        return {"answer": SENTENCE.split(first.strip())[0] or "no answer"}
    if job == "choose_next":
        return {"choice": 1, "reasoning": "the first candidate shown"}
    raise ValueError(f"schema_responder: no rule for job {job!r}")


def responder(request: dict) -> str:
    """For ``FakeOpenAIServer.responder``: the reply as the assistant message's JSON text."""
    return json.dumps(reply(request))
