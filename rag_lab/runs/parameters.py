"""Notebook parameters checked and made place-independent before anything runs.

papermill injects any name it is given and only warns ("Passed unknown parameter") when the notebook's
``parameters`` cell does not assign it, so a misspelled ``-p limt 5`` would run the whole notebook with
its defaults. ``check_names`` refuses such names, naming the closest real ones (difflib), in the time
it takes to read the notebook's JSON.

A notebook runs in its own folder (``notebooks/``), so a relative path typed on the command line would
be read from there; ``typed_paths`` makes such values absolute from the folder they were typed in.
"""
from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any, Callable, Sequence

# parameter names whose string value is a file or folder (a dataset may also be a name: see path_like)
PATH_NAMES = ("path", "dir", "folder", "file", "dataset", "data")


def check_names(notebook: str, given: dict[str, Any], defaults: dict[str, Any]) -> None:
    """Refuse ``given`` names that the ``parameters`` cell of ``notebook`` (a name for the message) does not
    assign (``defaults``)."""
    unknown = sorted(set(given) - set(defaults))
    if not unknown:
        return
    if not defaults:
        raise ValueError(f"{notebook} has no parameters cell (a code cell tagged 'parameters'), so it "
                         f"takes no parameters; got {', '.join(unknown)}")
    hints = []
    for name in unknown:
        near = difflib.get_close_matches(name, list(defaults), n=3, cutoff=0.6)
        hints.append(f"{name!r} (did you mean {' or '.join(repr(n) for n in near)}?)" if near else repr(name))
    raise ValueError(f"{notebook}: unknown parameter {', '.join(hints)}; the parameters it takes: "
                     f"{', '.join(sorted(defaults))}")


def path_like(name: str, value: Any, cwd: Path) -> bool:
    """Whether a command-line value names a file or folder: a relative path that exists from ``cwd``, or
    one written as a path (``./x``, ``../x``, ``a/b``, ``~``) in a parameter named like a path or a data set.
    URLs and LLM specs (``openai:gpt-4o-mini``, ``http://...``) never are."""
    if not isinstance(value, str) or not value or "://" in value or Path(value).is_absolute():
        return False
    if (cwd / value).exists():
        return True
    named = name.lower().endswith(PATH_NAMES)
    return named and (value.startswith(("~", ".")) or "/" in value or "\\" in value)


def typed_paths(parameters: dict[str, Any], cwd: str | Path | None = None) -> dict[str, Any]:
    """``parameters`` with every value that names a file or folder made absolute from ``cwd`` (default: the
    current folder); mappings (``loader_params``) are walked one level, their keys naming the value."""
    cwd = Path(cwd or Path.cwd())
    out = {}
    for name, value in parameters.items():
        if isinstance(value, dict):
            value = {k: _absolute(k, v, cwd) for k, v in value.items()}
        out[name] = _absolute(name, value, cwd)
    return out


def _absolute(name: str, value: Any, cwd: Path) -> Any:
    if not path_like(str(name), value, cwd):
        return value
    return str((cwd / Path(value).expanduser()).resolve())   # an expanded ~ is absolute: cwd / it is itself


def check_all(notebooks: Sequence[Path], given: dict[Path, dict[str, Any]],
              defaults_of: Callable[[Path], dict[str, Any]]) -> None:
    """``check_names`` for a run, before the first notebook starts (``defaults_of``: a notebook's parameters
    cell, ``runner.notebook_defaults``). With several notebooks a name is refused only when none of them
    takes it (``-p limit 5`` for every notebook is fine where one has no ``limit``)."""
    defaults = {nb: defaults_of(nb) for nb in notebooks}
    taken = {name: value for d in defaults.values() for name, value in d.items()}
    for nb in notebooks:
        label = nb.stem if len(notebooks) == 1 else "+".join(n.stem for n in notebooks)
        check_names(label, given[nb], defaults[nb] if len(notebooks) == 1 else taken)


def cell_timeout(cell: dict, timeout: float | None, parameters: dict[str, Any]) -> int | None:
    """Seconds a cell may run: ``timeout``, times the number of ``datasets`` for a cell tagged
    ``per_dataset`` (its work is one unit per data set: notebook 10 builds every method on each)."""
    units = len(parameters.get("datasets") or []) if "per_dataset" in cell.get("metadata", {}).get("tags", []) else 1
    return None if timeout is None else int(timeout * max(units, 1))
