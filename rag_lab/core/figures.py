"""Save figures (PNG + interactive HTML) and tables (CSV + Markdown) atomically, one folder per notebook.

PNG export goes through kaleido, which needs a Chrome/Chromium on the machine
(`make setup` installs Debian's chromium when it can). kaleido's one-shot export starts a
browser per image (about 2.4 s each here), so the first PNG of a process starts kaleido's
persistent server, which makes every PNG after it in about 0.15 s; kaleido closes it at exit.

The interactive HTML does not embed plotly.js (4.8 MB a figure): it loads ``plotly.min.js`` by a relative
path, by default ``../plotly.min.js``, one copy for every notebook's folder under ``figures/`` (and so one
per run folder, where the report links ``figures/<notebook>/`` and that copy). The script is written
there when missing or of another plotly version.
"""
from __future__ import annotations

import math
import os
import threading
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from ..caching.atomic import atomic_path, write_text


class UntitledAxisWarning(UserWarning):
    """A saved figure has a value axis without a title: a reader cannot tell what its numbers measure."""


def _numeric(values) -> bool:
    if values is None:
        return False
    try:
        arr = np.asarray(values)
    except (TypeError, ValueError):
        return False
    return arr.size > 0 and arr.dtype.kind in "iuf"


def untitled_value_axes(fig) -> list[str]:
    """The 2-D value axes of ``fig`` (a plotly figure) that carry numbers and show them, yet have no title:
    ``["xaxis2"]``. An axis is a value axis when a trace on it plots numbers along it (a bar's length, a
    point's position); categorical axes (method names) and hidden or tick-less axes (shared panels, 3-D
    scenes) need none."""
    layout = fig.layout
    value_axes = []
    for trace in fig.data:
        if trace.type not in ("scatter", "scattergl", "bar", "box", "violin", "histogram"):
            continue
        for letter in ("x", "y"):
            if _numeric(getattr(trace, letter, None)):
                ref = getattr(trace, f"{letter}axis", None) or letter
                value_axes.append(f"{letter}axis{ref[1:]}")
    missing = []
    for name in dict.fromkeys(value_axes):
        axis = layout[name] if name in layout else None
        if axis is not None and (axis.visible is False or axis.showticklabels is False):
            continue
        title = axis.title.text if axis is not None and axis.title is not None else None
        if not (title or "").strip():
            missing.append(name)
    return missing


PLOTLY_JS = "../plotly.min.js"   # where a figure's HTML finds plotly.js, relative to the HTML


def save_figure(fig, folder: str | Path, name: str, width: int = 1000, height: int = 650, png: bool = True,
                static=None, plotly_js: str = PLOTLY_JS) -> list[Path]:
    """Write ``name.html`` and ``name.png``; returns the paths written. The HTML loads plotly.js from
    ``plotly_js``, a path relative to it (written there when missing; module docstring). ``static``:
    another figure drawn as the PNG (a 3-D figure's readable projection: a picture cannot be rotated). A
    value axis without a title is warned about (``UntitledAxisWarning``), so an executed notebook shows it
    and its test fails (tests/output_checks.py reads warnings)."""
    folder = Path(folder)
    untitled = untitled_value_axes(fig if static is None else static)
    if untitled:
        warnings.warn(f"figure {name!r}: value axes without a title: {', '.join(untitled)} (say what the numbers "
                      "measure, with the unit)", UntitledAxisWarning, stacklevel=2)
    html = folder / f"{name}.html"
    with atomic_path(html) as tmp:
        fig.write_html(str(tmp), include_plotlyjs=plotly_js, full_html=True)
    shared_plotly_js(folder / plotly_js)
    written = [html]
    if png:
        out = folder / f"{name}.png"
        try:
            data = _png_bytes(fig if static is None else static, width, height)
        except Exception as e:  # kaleido raises several types when no browser is found
            raise RuntimeError(f"could not export {out.name} as PNG ({type(e).__name__}: {e}). kaleido needs "
                               "Chrome/Chromium: on Debian/Ubuntu run `apt-get install chromium`, "
                               "or pass png=False to keep only the HTML") from e
        with atomic_path(out) as tmp:
            tmp.write_bytes(data)
        written.append(out)
    return written


def shared_plotly_js(path: Path) -> Path:
    """``path`` holding this plotly's ``plotly.min.js`` (written, atomically, when missing or of another version)."""
    from plotly.offline import get_plotlyjs, get_plotlyjs_version

    path = Path(os.path.normpath(path))
    banner = f"plotly.js v{get_plotlyjs_version()}\n"
    if path.is_file():
        with open(path, encoding="utf-8", errors="replace") as fh:
            if banner in fh.read(200):
                return path
    return write_text(path, get_plotlyjs())


SERVER_START_S = 90.0   # how long the first image may take while kaleido's server starts its browser
IMAGE_S = 90.0          # how long any later image may take (kaleido's own render timeout is 90 s too)
_server = "off"         # kaleido's persistent server in this process: "off", "on" or "broken"


def _served_png(fig, width: int, height: int) -> bytes:
    with warnings.catch_warnings():  # plotly passes browser options, which a running server ignores
        warnings.filterwarnings("ignore", message="The kopts argument is ignored")
        return fig.to_image(format="png", width=width, height=height)


def _png_bytes(fig, width: int, height: int) -> bytes:
    """``fig`` as PNG, through kaleido's persistent server (started on the first image).

    A server whose browser cannot start, or whose thread has died, never answers: kaleido's
    caller waits on its task queue for ever. So: with no browser found, a one-shot export raises
    kaleido's own error; and every served image is waited for at most ``SERVER_START_S`` (the
    first) or ``IMAGE_S`` seconds, after which this process says so instead of hanging."""
    global _server
    import kaleido
    from choreographer.browsers.chromium import Chromium

    if _server == "broken":
        raise RuntimeError(f"kaleido's browser stopped answering earlier in this process (no image within "
                           f"{IMAGE_S:.0f} s); restart the kernel or process to export PNGs again")
    first = _server == "off"
    if first:
        if not os.environ.get("BROWSER_PATH") and Chromium.find_browser(skip_local=False) is None:
            return fig.to_image(format="png", width=width, height=height)     # raises: no Chrome/Chromium
        kaleido.start_sync_server(silence_warnings=True)
    result: dict = {}

    def image():
        try:
            result["png"] = _served_png(fig, width, height)
        except Exception as e:  # handed to the caller below
            result["error"] = e

    worker = threading.Thread(target=image, daemon=True)
    worker.start()
    wait = SERVER_START_S if first else IMAGE_S
    worker.join(wait)
    if worker.is_alive():
        _server = "broken"
        raise RuntimeError(f"kaleido's browser gave no image within {wait:.0f} s")
    _server = "on"
    if "error" in result:
        raise result["error"]
    return result["png"]


MAX_ROWS = 60      # a Markdown table a reader is shown: at most this many rows (the CSV keeps them all)
MAX_CELL = 200     # and no cell longer than this many characters


def save_table(df: pd.DataFrame, folder: str | Path, name: str, index: bool = True, caption: str = "",
               shown: pd.DataFrame | None = None) -> list[Path]:
    """Write ``name.csv`` (the numbers) and ``name.md`` (a caption line first, when given). ``shown``:
    the same numbers as a reader sees them in the Markdown (e.g. ``0.61 [0.48, 0.74]`` cells); multi-level
    column headers read ``MRR · ours`` there. The Markdown is for reading: it shows at most ``MAX_ROWS``
    rows and cuts cells at ``MAX_CELL`` characters, saying so under the table (``markdown_view``); the
    CSV holds everything."""
    folder = Path(folder)
    csv = folder / f"{name}.csv"
    with atomic_path(csv) as tmp:
        df.to_csv(tmp, index=index)
    view, note = markdown_view(readable_headers(df if shown is None else shown), f"{name}.csv")
    md = (f"{caption}\n\n" if caption else "") + view.to_markdown(
        index=index if shown is None else True, floatfmt=".3f") + "\n" + (f"\n{note}\n" if note else "")
    return [csv, write_text(folder / f"{name}.md", md)]


def _empty(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or (isinstance(value, str) and not value.strip())


def _zero(value) -> bool:
    return isinstance(value, (int, float, np.number)) and not isinstance(value, bool) and value == 0


def _blank(cells: pd.Series) -> str | None:
    """Why a row or column says nothing: "no value" (every cell empty or NaN), "all 0" (every cell a zero
    number, or empty), else None."""
    values = [v.item() if hasattr(v, "item") else v for v in cells]
    if all(_empty(v) for v in values):
        return "no value"
    if all(_zero(v) or _empty(v) for v in values):
        return "all 0"
    return None


def markdown_view(table: pd.DataFrame, whole: str, max_rows: int = MAX_ROWS,
                  max_cell: int = MAX_CELL) -> tuple[pd.DataFrame, str]:
    """``table`` as a reader can take it in: columns and rows that say nothing (no value, or all 0) left out
    and named, its first ``max_rows`` rows, text cells longer than ``max_cell`` characters cut (ending "…"),
    and the sentence that says what was left out and that ``whole`` (the CSV beside it) has everything; ""
    when nothing was left out."""
    said = []
    if len(table) and len(table.columns) > 1:
        blank = {c: why for c in table.columns if (why := _blank(table[c])) is not None}
        if blank and len(blank) < len(table.columns):
            table = table.drop(columns=list(blank))
            said.append("columns left out: " + ", ".join(f"{c} ({why})" for c, why in blank.items()))
    if len(table) > 1:
        blank_rows = {i: why for i, (_, row) in zip(table.index, table.iterrows()) if (why := _blank(row)) is not None}
        if blank_rows and len(blank_rows) < len(table):
            table = table.drop(index=list(blank_rows))
            said.append("rows left out: " + ", ".join(f"{i} ({why})" for i, why in list(blank_rows.items())[:10])
                        + (f" and {len(blank_rows) - 10} more" if len(blank_rows) > 10 else ""))
    if len(table) > max_rows:
        said.append(f"The first {max_rows} of {len(table)} rows are shown")
        table = table.head(max_rows)
    long = table.map(lambda v: isinstance(v, str) and len(v) > max_cell)
    if long.to_numpy().any():
        table = table.mask(long, table.map(lambda v: v[:max_cell - 1] + "…" if isinstance(v, str) else v))
        cut = int(long.to_numpy().sum())
        said.append(f"{cut} {'cell is' if cut == 1 else 'cells are'} cut at {max_cell} characters")
    if not said:
        return table, ""
    text = "; ".join(said)
    return table, text[0].upper() + text[1:] + f"; {whole} holds the whole table."


def reading_display(digits: int = 3) -> None:
    """pandas' display set for a reader of an executed notebook: floats to ``digits`` decimals (its default of
    six prints 0.017241 and KKT residuals as 0.000000) and text cells up to ``MAX_CELL`` characters (its
    default of 50 cuts labels to "no paper ro..."). Each notebook calls it once, in its first code cell."""
    pd.set_option("display.precision", digits)
    pd.set_option("display.max_colwidth", MAX_CELL)


def readable_numbers(table: pd.DataFrame | pd.Series, digits: int = 3) -> pd.DataFrame:
    """The same numbers as text a reader meets: whole numbers (counts) as integers, ``12`` not
    ``12.000000``, others rounded to ``digits`` places, NaN as an empty cell. A column that mixes counts
    with a mean (an index's statistics) cannot keep both readable as one float dtype, hence text."""
    frame = table.to_frame() if isinstance(table, pd.Series) else table

    def text(value):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or pd.isna(value):
            return "" if value is None or (isinstance(value, float) and pd.isna(value)) else value
        return f"{int(value)}" if float(value).is_integer() else f"{value:.{digits}f}"

    return frame.map(lambda v: text(v.item() if hasattr(v, "item") else v))


def readable_headers(df: pd.DataFrame) -> pd.DataFrame:
    """Multi-level column headers and row labels joined by `` · `` (Markdown has one header row and one label
    column; a tuple such as ``('italian_cuisine (20 questions)', 'naive')`` is unreadable)."""
    if isinstance(df.columns, pd.MultiIndex):
        df = df.set_axis([" · ".join(str(part) for part in col if str(part)) for col in df.columns], axis=1)
    if isinstance(df.index, pd.MultiIndex):
        df = df.set_axis([" · ".join(str(part) for part in row if str(part)) for row in df.index], axis=0)
    return df
