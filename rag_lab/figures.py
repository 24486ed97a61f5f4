"""Save figures (PNG + interactive HTML) and tables (CSV + Markdown) atomically, one folder per notebook.

PNG export goes through kaleido, which needs a Chrome/Chromium on the machine
(`make setup` installs Debian's chromium when it can). kaleido's one-shot export starts a
browser per image (about 2.4 s each here), so after a process's first PNG, kaleido's persistent
server makes the rest (about 0.15 s an image); kaleido closes it at exit.
"""
from __future__ import annotations

import warnings
from pathlib import Path

import pandas as pd

from .atomic import atomic_path, write_text


def save_figure(fig, folder: str | Path, name: str, width: int = 1000, height: int = 650, png: bool = True) -> list[Path]:
    """Write ``name.html`` (self-contained) and ``name.png``; returns the paths written."""
    folder = Path(folder)
    html = folder / f"{name}.html"
    with atomic_path(html) as tmp:
        fig.write_html(str(tmp), include_plotlyjs=True, full_html=True)
    written = [html]
    if png:
        out = folder / f"{name}.png"
        try:
            data = _png_bytes(fig, width, height)
        except Exception as e:  # kaleido raises several types when no browser is found
            raise RuntimeError(f"could not export {out.name} as PNG ({type(e).__name__}: {e}). kaleido needs "
                               "Chrome/Chromium: on Debian/Ubuntu run `apt-get install chromium`, "
                               "or pass png=False to keep only the HTML") from e
        with atomic_path(out) as tmp:
            tmp.write_bytes(data)
        written.append(out)
    return written


_server_started = False     # kaleido's persistent server (one a process), started by _png_bytes


def _png_bytes(fig, width: int, height: int) -> bytes:
    """``fig`` as PNG. The first image of a process is a one-shot export, which raises clearly when
    no browser is found; it then starts kaleido's persistent server for the images that follow
    (a server whose browser fails to start would leave the caller waiting instead)."""
    global _server_started
    import kaleido

    if _server_started:
        with warnings.catch_warnings():  # plotly passes browser options, which a running server ignores
            warnings.filterwarnings("ignore", message="The kopts argument is ignored")
            return fig.to_image(format="png", width=width, height=height)
    data = fig.to_image(format="png", width=width, height=height)
    kaleido.start_sync_server(silence_warnings=True)
    _server_started = True
    return data


def save_table(df: pd.DataFrame, folder: str | Path, name: str, index: bool = True, caption: str = "") -> list[Path]:
    """Write ``name.csv`` and ``name.md`` (a caption line first, when given)."""
    folder = Path(folder)
    csv = folder / f"{name}.csv"
    with atomic_path(csv) as tmp:
        df.to_csv(tmp, index=index)
    md = (f"{caption}\n\n" if caption else "") + df.to_markdown(index=index, floatfmt=".3f") + "\n"
    return [csv, write_text(folder / f"{name}.md", md)]
