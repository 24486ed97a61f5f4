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

import os
import threading
import warnings
from pathlib import Path

import pandas as pd

from ..caching.atomic import atomic_path, write_text


PLOTLY_JS = "../plotly.min.js"   # where a figure's HTML finds plotly.js, relative to the HTML


def save_figure(fig, folder: str | Path, name: str, width: int = 1000, height: int = 650, png: bool = True,
                static=None, plotly_js: str = PLOTLY_JS) -> list[Path]:
    """Write ``name.html`` and ``name.png``; returns the paths written. The HTML loads plotly.js from
    ``plotly_js``, a path relative to it (written there when missing; module docstring). ``static``:
    another figure drawn as the PNG (a 3-D figure's readable projection: a picture cannot be rotated)."""
    folder = Path(folder)
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


def save_table(df: pd.DataFrame, folder: str | Path, name: str, index: bool = True, caption: str = "",
               shown: pd.DataFrame | None = None) -> list[Path]:
    """Write ``name.csv`` (the numbers) and ``name.md`` (a caption line first, when given). ``shown``:
    the same numbers as a reader sees them in the Markdown (e.g. ``0.61 [0.48, 0.74]`` cells); multi-level
    column headers read ``MRR · ours`` there."""
    folder = Path(folder)
    csv = folder / f"{name}.csv"
    with atomic_path(csv) as tmp:
        df.to_csv(tmp, index=index)
    md = (f"{caption}\n\n" if caption else "") + readable_headers(df if shown is None else shown).to_markdown(
        index=index if shown is None else True, floatfmt=".3f") + "\n"
    return [csv, write_text(folder / f"{name}.md", md)]


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
    """Multi-level column headers joined by `` · `` (Markdown has one header row; a tuple is unreadable)."""
    if not isinstance(df.columns, pd.MultiIndex):
        return df
    return df.set_axis([" · ".join(str(part) for part in col if str(part)) for col in df.columns], axis=1)
