"""Settings read from, and set in, environment variables: one parser for the positive numbers users set
(``RAG_LAB_THREADS``, the LLM limits, the Dask time-outs), so each refuses a bad value the same way,
naming the variable; and one block that sets variables and puts the old values back (a notebook kernel
or worker started inside inherits them). Standard library only: nothing else does this small job."""
from __future__ import annotations

import contextlib
import os
from typing import Iterator, Mapping


def env_number(name: str, kind: type, expected: str | None = None):
    """A positive number (``kind``: int or float) from the environment variable ``name``, None when unset
    or empty; anything else raises naming the variable, its value and ``expected`` (by default "a
    positive integer" / "a positive number")."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return None
    try:
        value = kind(raw)
    except ValueError:
        value = None
    if value is None or value <= 0:
        expected = expected or f"a positive {'integer' if kind is int else 'number'}"
        raise ValueError(f"{name}={raw!r}: expected {expected}")
    return value


@contextlib.contextmanager
def environment(values: Mapping[str, str]) -> Iterator[None]:
    """``os.environ`` holds ``values`` inside the block; each variable's old value (or its absence) is back
    after it."""
    before = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in before.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
