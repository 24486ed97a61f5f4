"""Save figures (PNG + interactive HTML) and tables (CSV + Markdown) atomically, one folder per notebook.

PNG export goes through kaleido, which needs a Chrome/Chromium on the machine
(`make setup` installs Debian's chromium when it can).
"""
from __future__ import annotations

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
            data = fig.to_image(format="png", width=width, height=height)
        except Exception as e:  # kaleido raises several types when no browser is found
            raise RuntimeError(f"could not export {out.name} as PNG ({type(e).__name__}: {e}). kaleido needs "
                               "Chrome/Chromium: on Debian/Ubuntu run `apt-get install chromium`, "
                               "or pass png=False to keep only the HTML") from e
        with atomic_path(out) as tmp:
            tmp.write_bytes(data)
        written.append(out)
    return written


def save_table(df: pd.DataFrame, folder: str | Path, name: str, index: bool = True, caption: str = "") -> list[Path]:
    """Write ``name.csv`` and ``name.md`` (a caption line first, when given)."""
    folder = Path(folder)
    csv = folder / f"{name}.csv"
    with atomic_path(csv) as tmp:
        df.to_csv(tmp, index=index)
    md = (f"{caption}\n\n" if caption else "") + df.to_markdown(index=index, floatfmt=".3f") + "\n"
    return [csv, write_text(folder / f"{name}.md", md)]
