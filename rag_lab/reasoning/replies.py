"""Reading a chat model's reply: the JSON value in it (whole, fenced or embedded in prose) and whether it
satisfies the job's schema (``jsonschema``). Apart from ``llm.py`` so the reasoner holds only the calls."""
from __future__ import annotations

import json
import re
from typing import Any

import jsonschema  # imported here, not per call: its first import takes ~1.5 s (would skew doctor's latency)

from .backends import InvalidReply

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.S)


def extract_json(text: str) -> Any:
    """The JSON value in a reply: the whole text, a ```json fenced block, or the first object/list in it."""
    text = (text or "").strip()
    candidates = [text] + [m.group(1).strip() for m in _FENCE.finditer(text)]
    for c in candidates:
        try:
            return json.loads(c)
        except json.JSONDecodeError:
            pass
    decoder = json.JSONDecoder()
    for i, ch in enumerate(text):
        if ch in "{[":
            try:
                return decoder.raw_decode(text, i)[0]
            except json.JSONDecodeError:
                continue
    raise InvalidReply("the reply is not JSON")


def validate(data: Any, schema: dict) -> None:
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema).iter_errors(data))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "the top level"
        raise InvalidReply(f"at {where}: {error.message}")
