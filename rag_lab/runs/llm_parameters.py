"""LLM specs among a run's parameters: refused before anything runs when a URL in them could carry a
credential, and recorded by their redacted name.

Why: a spec such as ``openai-compatible:m@http://h/v1?api_key=K`` given as the ``reasoner`` parameter
would reach the executed notebook (papermill writes the parameters into it), ``manifest.json``, the
report page and ``rag_lab runs``. ``check_specs`` refuses it (``reasoning.backends.parse_spec`` holds
the rule, also for ``OPENAI_BASE_URL`` and ``OLLAMA_HOST``) before a folder is made; ``recorded`` and
``recorded_manifest`` show specs by ``spec_name`` (no user info, query or fragment), also for runs
recorded before the rule existed.
"""
from __future__ import annotations

import os
from typing import Any

from ..reasoning.backends import parse_spec, spec_name

SPEC_PARAMETERS = ("reasoner", "judge")   # notebook parameters that hold an LLM spec
SPEC_ENV = "RAG_LAB_LLM"                  # the reasoner a kernel falls back to


def check_specs(parameters: dict[str, Any], where: str = "parameter") -> None:
    """Raise ValueError (naming the parameter, never the secret) for a spec that is not valid or whose
    URL holds user info, a query or a fragment; also for ``$RAG_LAB_LLM``, which kernels inherit."""
    given = [(f"{where} {name}", parameters.get(name)) for name in SPEC_PARAMETERS]
    for label, value in given + [(SPEC_ENV, os.environ.get(SPEC_ENV))]:
        if isinstance(value, str) and value.strip() and value.strip() != "offline":
            try:
                parse_spec(value)
            except ValueError as e:
                raise ValueError(f"{label}: {e}") from None


def recorded(parameters: dict[str, Any]) -> dict[str, Any]:
    """``parameters`` as a record may hold them: every spec by its redacted name."""
    return {k: spec_name(v) if k in SPEC_PARAMETERS else v for k, v in parameters.items()}


def recorded_manifest(manifest: dict[str, Any]) -> dict[str, Any]:
    """A run's (or sweep's) manifest with every spec it holds by its redacted name."""
    out = dict(manifest)
    if isinstance(out.get("parameters"), dict):
        out["parameters"] = recorded(out["parameters"])
    if isinstance(out.get("per_notebook"), dict):
        out["per_notebook"] = {nb: recorded(p) if isinstance(p, dict) else p for nb, p in out["per_notebook"].items()}
    if isinstance(out.get("notebooks"), list):
        out["notebooks"] = [_entry(e) if isinstance(e, dict) else e for e in out["notebooks"]]
    if isinstance(out.get("tasks"), dict):
        out["tasks"] = {tid: _entry(t) if isinstance(t, dict) else t for tid, t in out["tasks"].items()}
    return out


def _entry(entry: dict[str, Any]) -> dict[str, Any]:
    entry = dict(entry)
    for key in ("parameters", "changed"):
        if isinstance(entry.get(key), dict):
            entry[key] = recorded(entry[key])
    for key in SPEC_PARAMETERS:
        if key in entry:
            entry[key] = spec_name(entry[key])
    return entry
