"""What a reader should never meet in an executed notebook's output: a Python warning, a traceback, a
log warning, a progress-bar fragment, a table pandas cut to its display limits, a number with five or more
decimals outside scientific notation, or an interval of [-1, 1] printed as if it said something.

Why: an executed notebook is read, not watched. A warning a reader cannot act on reads as a bug; a
bar saved mid-run is a stack of ``\\r`` fragments (or a stale widget). Library warnings are filtered
where they arise, bars are off in headless kernels (rag_lab/core/progress.py), and our own warnings
are kept for what a reader must act on. ``output_problems`` lists what slipped through, so every
notebook test fails on it (tests/conftest.py::run_notebook_smoke); it lives with the tests, the only code
that reads it.

Our own logged warnings (``WARNING:rag_lab...``) are allowed: each says something the reader must know
or act on; a library's logged warning is not. What is read: stream outputs (stdout and stderr), error outputs, and the ``text/plain`` of display
data and results (a saved bar widget keeps its bar as text there). HTML and images are not read.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Iterator, Mapping

# (kind, pattern): the first match per output line is reported
PATTERNS = (
    ("warning", re.compile(r"\b[A-Z]\w*Warning\b: |\bwarnings\.warn\(")),                 # UserWarning: ...
    # a library's logged warning (logging's default format); rag_lab's own are kept for what a reader must
    # know or act on (e.g. k above an index's size: the metrics count the empty ranks as misses)
    ("log warning", re.compile(r"^(?:WARNING|ERROR|CRITICAL):(?!rag_lab\.)", re.MULTILINE)),
    ("traceback", re.compile(r"Traceback \(most recent call last\)")),
    ("progress bar", re.compile(r"\r|\d%\||\w/s\]|\ds/\w+\]")),   # tqdm: \r, 40%|, 3.1it/s], 2.5s/it]
    # pandas prints its "[162 rows x 9 columns]" footer only under a table it cut to display.max_rows/_columns
    ("cut table", re.compile(r"^\[\d+ rows x \d+ columns\]$", re.MULTILINE)),
    # a number as a machine prints it: five or more decimals outside scientific notation (0.017241, 2.666667);
    # a reader gets three significant digits or the exact fraction the text uses (core.figures.reading_display)
    ("long decimals", re.compile(r"(?<![\w.])-?\d+\.\d{5,}(?![\d.]|e[-+]?\d)")),
    # an interval spanning the whole range of a difference of [0, 1] scores says nothing: such a comparison is
    # "cannot be decided" with its reason, never drawn or printed as [-1, 1]
    ("whole-range interval", re.compile(r"\[-1\.0+, 1\.0+\]")),
)
SHOWN_CHARS = 160


def _text(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value or "")


def _outputs(nb: Mapping[str, Any]) -> Iterator[tuple[int, str, str]]:
    """(cell index, where, text) for every readable output of every code cell."""
    for i, cell in enumerate(nb.get("cells", [])):
        if cell.get("cell_type") != "code":
            continue
        for out in cell.get("outputs", []):
            kind = out.get("output_type")
            if kind == "stream":
                yield i, out.get("name", "stream"), _text(out.get("text"))
            elif kind == "error":
                yield i, "error", f"{out.get('ename')}: {out.get('evalue')}\nTraceback (most recent call last)"
            elif kind in ("display_data", "execute_result"):
                yield i, kind, _text(out.get("data", {}).get("text/plain"))


def output_problems(notebook: str | Path | Mapping[str, Any]) -> list[str]:
    """Every output of ``notebook`` (a path to an ``.ipynb`` or its parsed JSON) holding a warning, a log
    warning, a traceback, a progress-bar fragment or a cut table, as ``"cell 7 (stderr): progress bar: '…'"``;
    empty when the notebook reads clean."""
    if isinstance(notebook, (str, Path)):
        path = Path(notebook)
        if not path.is_file():
            raise FileNotFoundError(f"no executed notebook at {path}")
        notebook = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(notebook, Mapping) or not isinstance(notebook.get("cells"), list):
        raise ValueError("output_problems expects a notebook: a .ipynb path or its JSON with a 'cells' list")
    problems = []
    for cell, where, text in _outputs(notebook):
        for kind, pattern in PATTERNS:
            match = pattern.search(text)
            if match:
                start = max(0, text.rfind("\n", 0, match.start()) + 1)
                line = text[start:start + SHOWN_CHARS]
                problems.append(f"cell {cell} ({where}): {kind}: {line!r}")
                break
    return problems


MAX_TABLE_ROWS, MAX_TABLE_CELL = 60, 200    # what core.figures.save_table keeps in a Markdown copy


def table_problems(path: str | Path) -> list[str]:
    """A Markdown table (``name.md``, as ``core.figures.save_table`` writes it) a reader cannot take in: more
    than ``MAX_TABLE_ROWS`` rows, a cell longer than ``MAX_TABLE_CELL`` characters, or a column with no
    value in any row ("nan" or empty), as ``"t.md: 75 rows"``; empty when it reads."""
    path = Path(path)
    rows = [line for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("|")]
    if len(rows) < 2:
        return []
    cells = [[c.strip() for c in line.strip().strip("|").split("|")] for line in rows]
    header, body = cells[0], cells[2:]
    problems = []
    if len(body) > MAX_TABLE_ROWS:
        problems.append(f"{path.name}: {len(body)} rows (at most {MAX_TABLE_ROWS})")
    longest = max((len(c) for row in body for c in row), default=0)
    if longest > MAX_TABLE_CELL:
        problems.append(f"{path.name}: a cell of {longest} characters (at most {MAX_TABLE_CELL})")
    for j, name in enumerate(header):
        if j and body and all(j < len(row) and row[j] in ("", "nan") for row in body):
            problems.append(f"{path.name}: column {name!r} has no value")
    return problems
