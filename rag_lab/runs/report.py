"""One HTML page per run: ``papermill_runs/<run-id>/index.html``, readable without Jupyter.

For every notebook of the run the page shows its status and duration (and the failing cell),
its parameters (the changed ones marked), reasoner and judge, thumbnails of its figures linking
to their interactive HTML, its tables rendered (with their captions), what changed between
methods (the questions that flip between a paper's method and its baseline, ``changes.py``),
the per-cell timings, and
links to the executed notebook (``.ipynb``), to that notebook rendered as HTML by nbconvert and to its
TREC runs and qrels (``trec/<notebook>/``, when it evaluated methods);
the run's git revision, Python, kernel and package versions head the page.

Everything a link points to lives inside the run folder, so the folder can be copied or served
as it is: the figure files a notebook wrote are hard-linked into ``figures/<notebook>/`` (copied
when a hard link is not possible). A hard link keeps this run's version: ``rag_lab.core.figures``
replaces a figure by renaming a new file over it, which leaves the linked one untouched. Tables
are read from the copies the runner keeps in ``tables/<notebook>/``.

Executed notebooks hold plotly figures only as plotly's own JSON mimetype, which nbconvert does
not draw; before converting, each such output gets an HTML rendering that loads ``figures/plotly.min.js``,
the run folder's one copy of plotly.js, which the figures' own HTML load as ``../plotly.min.js``
(``rag_lab.core.figures``): the rendered notebooks and figures stay small and work offline. A widget
output that also carries HTML (the explorer's saved view) is rendered as that HTML: nbconvert would
otherwise prefer the widget, which needs a live kernel and a widget script from the network.

Why our own page instead of a library: the page is a few tables and image links over the manifest;
pandas renders the tables, nbconvert the notebooks, and the rest is escaped string formatting.
"""
from __future__ import annotations

import datetime as dt
import html
import json
import logging
import os
import shutil
from pathlib import Path
from typing import Any

from ..caching.atomic import atomic_path, write_text
from ..core.redact import scrub
from .changes import changes, per_question_table
from .llm_parameters import recorded_manifest

log = logging.getLogger(__name__)
PAGE = "index.html"
PLOTLY_JS = "figures/plotly.min.js"   # the run folder's one copy: figures' HTML load it too (core/figures.py)
PLOTLY_MIME = "application/vnd.plotly.v1+json"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
TABLE_ROWS = 30          # rows shown per table; the CSV link has them all
FIGURE_SUFFIXES = (".png", ".html", ".svg", ".jpg", ".jpeg")
CSS = """
body{font:15px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1200px;padding:1rem 2rem;color:#1d1d1f}
h1{font-size:1.5rem}h2{margin-top:2.5rem;border-bottom:2px solid #ddd;padding-bottom:.3rem}
code{font-size:.9em}table{border-collapse:collapse;margin:.5rem 0 1rem;font-size:.85rem}
th,td{border:1px solid #ddd;padding:.2rem .5rem;text-align:right;vertical-align:top}
th{background:#f4f4f6}td.l,th.l{text-align:left}.status{padding:.1rem .5rem;border-radius:.3rem;color:#fff;
font-size:.8rem;vertical-align:middle}.ok{background:#2e7d32}.failed,.running{background:#c62828}
.changed{font-weight:bold;background:#fff8e1}.figures{display:flex;flex-wrap:wrap;gap:1rem}
figure{margin:0;width:360px}figure img{width:100%;border:1px solid #ddd}figcaption{font-size:.85rem}
.error{background:#ffebee;border-left:4px solid #c62828;padding:.5rem 1rem;white-space:pre-wrap;overflow:auto}
.caption{color:#555;margin-bottom:0}.note{color:#666;font-size:.85rem}
"""


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _href(rel: str | Path) -> str:
    """A relative link with each path part quoted for a URL."""
    from urllib.parse import quote
    return quote(Path(rel).as_posix())


def link_file(src: Path, dest: Path) -> Path:
    """``dest`` as a hard link to ``src`` (a copy when linking fails), replacing ``dest`` atomically."""
    with atomic_path(dest) as tmp:
        tmp.unlink()
        try:
            os.link(src, tmp)
        except OSError:
            shutil.copyfile(src, tmp)
    return dest


def link_outputs(entry: dict[str, Any], run_dir: Path) -> list[str]:
    """Link the non-CSV files a notebook wrote into ``figures/<notebook>/`` of the run; relative paths.
    (CSV tables are already copied to ``tables/<notebook>/`` by the runner.) Files deleted since the
    run are left out."""
    figures_dir = Path(entry.get("figures_dir", ""))
    out = []
    for name in entry.get("files", []):
        src = Path(name)
        if src.suffix.lower() == ".csv" or not src.is_file():
            continue
        try:
            rel = Path("figures") / entry["notebook"] / src.relative_to(figures_dir)
        except ValueError:   # not under the notebook's figures folder
            rel = Path("figures") / entry["notebook"] / src.name
        link_file(src, run_dir / rel)
        out.append(rel.as_posix())
    script = figures_dir.parent / Path(PLOTLY_JS).name      # the figures' HTML load ../plotly.min.js
    if any(r.endswith(".html") for r in out) and script.is_file() and not (run_dir / PLOTLY_JS).exists():
        link_file(script, run_dir / PLOTLY_JS)
    return sorted(out)


def render_notebook(executed: Path, dest: Path, plotly_js: str = PLOTLY_JS) -> Path:
    """The executed notebook as an HTML page (nbconvert's lab template); plotly outputs drawn with
    the ``plotly_js`` script next to ``dest`` (see the module docstring)."""
    import nbformat
    import plotly.io as pio
    from nbconvert import HTMLExporter

    nb = nbformat.read(str(executed), as_version=4)
    plots = 0
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if PLOTLY_MIME in data and "text/html" not in data:
                data["text/html"] = pio.to_html(data[PLOTLY_MIME], include_plotlyjs=plotly_js, full_html=False,
                                                validate=False)
                plots += 1
            if WIDGET_MIME in data and "text/html" in data:   # no kernel here: the widget's saved view
                del data[WIDGET_MIME]
    if plots:
        from ..core.figures import shared_plotly_js
        shared_plotly_js(dest.parent / plotly_js)
    body, _ = HTMLExporter(template_name="lab").from_notebook_node(nb)
    return write_text(dest, scrub(body, urls=False))


def _caption(md_path: Path) -> str:
    """The caption ``rag_lab.core.figures.save_table`` wrote above the Markdown table ('' if none)."""
    if not md_path.is_file():
        return ""
    head = md_path.read_text(encoding="utf-8").split("\n\n", 1)[0].strip()
    return "" if head.startswith("|") else head


def table_html(csv_path: Path, max_rows: int = TABLE_ROWS) -> tuple[str, int]:
    """A CSV the notebook wrote as an HTML table (its first ``max_rows`` rows, numbers to 4
    significant digits and right-aligned, text left-aligned) and the CSV's number of rows."""
    import pandas as pd

    df = pd.read_csv(csv_path)
    names = ["" if str(c).startswith("Unnamed: ") else str(c) for c in df.columns]
    numeric = [pd.api.types.is_numeric_dtype(df[c]) for c in df.columns]

    def cell(value, is_number: bool) -> str:
        if pd.isna(value):
            return "<td></td>"
        text = f"{value:.4g}" if is_number and isinstance(value, float) else str(value)
        return f'<td{"" if is_number else " class=l"}>{_e(text)}</td>'

    head = "".join(f'<th{"" if n else " class=l"}>{_e(c)}</th>' for c, n in zip(names, numeric))
    body = "".join("<tr>" + "".join(cell(v, n) for v, n in zip(row, numeric)) + "</tr>"
                   for row in df.head(max_rows).itertuples(index=False))
    out = f"<table><tr>{head}</tr>{body}</table>"
    if len(df) > max_rows:
        out += f'<p class="note">first {max_rows} of {len(df)} rows</p>'
    return out, len(df)


def _dl(rows: list[tuple[str, str]]) -> str:
    """A two-column table of (label, already-escaped HTML value)."""
    return "<table>" + "".join(f'<tr><th class="l">{_e(k)}</th><td class="l">{v}</td></tr>' for k, v in rows) + "</table>"


def _seconds(value: Any, digits: int = 1) -> str:
    return "" if value is None else f"{float(value):.{digits}f}"


def _value(v: Any) -> str:
    return _e(json.dumps(v, ensure_ascii=False) if not isinstance(v, str) else v)


def _figures_html(rels: list[str], notebook: str) -> str:
    by_stem: dict[str, dict[str, str]] = {}
    for rel in rels:
        p = Path(rel)
        if p.suffix.lower() in FIGURE_SUFFIXES:
            by_stem.setdefault(str(p.with_suffix("")), {})[p.suffix.lower()] = rel
    if not by_stem:
        return '<p class="note">no figures</p>'
    items = []
    for stem, files in sorted(by_stem.items()):
        name = Path(stem).name
        target = files.get(".html") or next(iter(files.values()))
        image = next((files[s] for s in (".png", ".svg", ".jpg", ".jpeg") if s in files), None)
        thumb = (f'<img src="{_href(image)}" alt="{_e(name)}">' if image else f"<span>{_e(name)} (interactive)</span>")
        items.append(f'<figure><a href="{_href(target)}">{thumb}</a><figcaption><a href="{_href(target)}">'
                     f"{_e(name)}</a>{' (interactive)' if '.html' in files else ''}</figcaption></figure>")
    return f'<div class="figures" id="figures-{_e(notebook)}">' + "".join(items) + "</div>"


def _tables_html(entry: dict[str, Any], run_dir: Path, figure_rels: list[str]) -> str:
    mds = {Path(r).stem: run_dir / r for r in figure_rels if r.endswith(".md")}
    parts = []
    for rel in entry.get("tables", []):
        path = run_dir / rel
        if not path.is_file():
            continue
        caption = _caption(mds.get(path.stem, Path("/nonexistent")))
        try:
            body, rows = table_html(path)
        except Exception as e:   # an unreadable CSV should not hide the rest of the run
            body, rows = f'<p class="error">could not read {_e(rel)}: {_e(e)}</p>', 0
        block = ((f'<p class="caption">{_e(caption)}</p>' if caption else "") + body
                 + f'<p class="note"><a href="{_href(rel)}">{_e(rel)}</a></p>')
        if rows > TABLE_ROWS:   # a long (per-question) table: folded
            block = f"<details><summary>{_e(path.stem)} ({rows} rows)</summary>{block}</details>"
        else:
            block = f"<h4>{_e(path.stem)}</h4>{block}"
        parts.append(block)
    return "".join(parts) or '<p class="note">no tables</p>'


def _changes_html(entry: dict[str, Any], run_dir: Path) -> str:
    """"What changed between methods" (``changes.py``) for each per-question table of the notebook."""
    parts = []
    for rel in entry.get("tables", []):
        df = per_question_table(run_dir / rel)
        if df is None:
            continue
        table = changes(df)
        if table.empty:
            continue
        body = table.to_html(index=False, escape=True, border=0, na_rep="")
        parts.append(f'<p class="note">from <a href="{_href(rel)}">{_e(rel)}</a>: questions a paper\'s method gets '
                     f"right at k (gold in its top k) and its baseline does not (wins), and the reverse</p>{body}")
    return "".join(parts) or '<p class="note">no per-question table with two methods of one family in this notebook</p>'


def _cells_html(cells: list[dict[str, Any]]) -> str:
    rows = "".join(f'<tr><td>{c["index"]}</td><td class="l"><code>{_e(c["first_line"])}</code></td>'
                   f'<td>{_seconds(c.get("seconds"), 2)}</td><td class="l">{_e(c["status"])}</td></tr>' for c in cells)
    return ("<details><summary>Cell timings</summary><table><tr><th>cell</th><th class=\"l\">first line</th>"
            f"<th>seconds</th><th class=\"l\">status</th></tr>{rows}</table></details>")


def _notebook_section(entry: dict[str, Any], run_dir: Path, rendered: str | None, note: str) -> str:
    name, status = entry["notebook"], entry.get("status", "?")
    figure_rels = entry.get("_linked", [])
    links = []
    if rendered:
        links.append(f'<a href="{_href(rendered)}">executed notebook (HTML)</a>')
    if (run_dir / entry.get("output", "")).is_file() and entry.get("output"):
        links.append(f'<a href="{_href(entry["output"])}">{_e(entry["output"])}</a>')
    if entry.get("trec"):
        links.append(f'<a href="{_href(Path(entry["trec"][0]).parent)}/">TREC runs and qrels '
                     f'({len(entry["trec"])} files)</a>')
    changed = entry.get("changed", {})
    params = "".join(f'<tr{" class=changed" if k in changed else ""}><th class="l">{_e(k)}</th>'
                     f'<td class="l"><code>{_value(v)}</code></td></tr>' for k, v in entry.get("parameters", {}).items())
    failure = entry.get("failure")
    failed = (f'<div class="error">cell {_e(failure.get("cell"))} (<code>{_e(failure.get("first_line"))}</code>): '
              f'{_e(failure.get("error"))}</div>') if failure else ""
    return (f'<section id="nb-{_e(name)}"><h2>{_e(name)} <span class="status {_e(status)}">{_e(status)}</span> '
            f'<small>{_seconds(entry.get("seconds"))} s</small></h2>'
            f'<p>{" · ".join(links)} · reasoner <code>{_e(entry.get("reasoner"))}</code> · judge '
            f'<code>{_e(entry.get("judge"))}</code> · parameter hash <code>{_e(entry.get("param_hash"))}</code></p>'
            + (f'<p class="note">{_e(note)}</p>' if note else "") + failed
            + f"<h3>Figures</h3>{_figures_html(figure_rels, name)}"
            + f"<h3>Tables</h3>{_tables_html(entry, run_dir, figure_rels)}"
            + f"<h3>What changed between methods</h3>{_changes_html(entry, run_dir)}"
            + ("<details open><summary>Parameters (changed ones marked)</summary><table>" + params + "</table></details>")
            + _cells_html(entry.get("cells", [])) + "</section>")


def _header(manifest: dict[str, Any]) -> str:
    git = manifest.get("git") or {}
    commit = git.get("commit")
    revision = f"<code>{_e(commit)}</code>" + (" (uncommitted changes)" if git.get("dirty") else "") if commit else "unknown"
    rows = [("status", f'<span class="status {_e(manifest.get("status"))}">{_e(manifest.get("status"))}</span>'),
            ("started", _e(manifest.get("started"))), ("finished", _e(manifest.get("finished"))),
            ("seconds", _e(manifest.get("seconds"))), ("git revision", revision),
            ("python / kernel", f"{_e(manifest.get('python'))} / <code>{_e(manifest.get('kernel'))}</code>"),
            ("cell timeout", _e(manifest.get("cell_timeout"))),
            ("parameters given", f"<code>{_value(manifest.get('parameters', {}))}</code>")]
    if manifest.get("per_notebook"):
        rows.append(("per notebook", f"<code>{_value(manifest['per_notebook'])}</code>"))
    packages = "".join(f'<tr><th class="l">{_e(k)}</th><td class="l">{_e(v)}</td></tr>'
                       for k, v in (manifest.get("packages") or {}).items())
    summary = "".join(
        f'<tr><td class="l"><a href="#nb-{_e(e["notebook"])}">{_e(e["notebook"])}</a></td>'
        f'<td class="l"><span class="status {_e(e.get("status"))}">{_e(e.get("status"))}</span></td>'
        f'<td>{_seconds(e.get("seconds"))}</td><td class="l"><code>{_e(e.get("reasoner"))}</code></td>'
        f'<td class="l"><code>{_value(e.get("changed", {}))}</code></td></tr>' for e in manifest.get("notebooks", []))
    return (f"<h1>rag_lab run <code>{_e(manifest.get('run_id'))}</code></h1>{_dl(rows)}"
            f'<details><summary>Package versions</summary><table>{packages}</table></details>'
            f'<p><a href="manifest.json">manifest.json</a></p>{_ledger_html(manifest)}<table><tr><th class="l">notebook</th>'
            f'<th class="l">status</th><th>seconds</th><th class="l">reasoner</th><th class="l">changed parameters</th>'
            f"</tr>{summary}</table>")


def _ledger_html(manifest: dict[str, Any]) -> str:
    """The link to the run's ledger of decided comparisons, with its conflicts (a failed run)."""
    book = manifest.get("ledger")
    if not book:
        return ""
    found = book.get("conflicts", [])
    said = (f' · <span class="status failed">{len(found)} comparison(s) given two answers</span>' if found
            else " · no comparison given two answers")
    items = "".join(f"<li>{_e(c['comparison'])}: {_e(c['detail'])}</li>" for c in found)
    return (f'<p>Ledger: <a href="{_href(book["path"])}">{_e(book["path"])}</a> ({_e(book["rows"])} comparisons '
            f"decided){said}</p>" + (f"<ul>{items}</ul>" if items else ""))


def write_report(run_dir: str | Path, manifest: dict[str, Any] | None = None) -> Path:
    """Write ``run_dir/index.html`` (and what it links to) from the run's manifest; returns its path.

    A notebook that cannot be rendered is still listed, with the reason in place of the link."""
    run_dir = Path(run_dir)
    if manifest is None:
        manifest_path = run_dir / "manifest.json"
        if not manifest_path.is_file():
            raise FileNotFoundError(f"no manifest.json in {run_dir}: not a run folder")
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    manifest = recorded_manifest(manifest)     # specs by their redacted names, also in old runs
    sections = []
    for entry in manifest.get("notebooks", []):
        entry = dict(entry, _linked=link_outputs(entry, run_dir))
        rendered, note = None, ""
        executed = run_dir / entry.get("output", f"{entry['notebook']}.ipynb")
        try:
            rendered = render_notebook(executed, executed.with_suffix(".html")).name
        except Exception as e:   # e.g. the run failed before papermill wrote a notebook
            note = f"the executed notebook could not be rendered as HTML ({type(e).__name__}: {e})"
            log.warning("%s: %s", entry["notebook"], note)
        sections.append(_notebook_section(entry, run_dir, rendered, note))
    stamp = dt.datetime.now().isoformat(timespec="seconds")
    page = (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>rag_lab run '
            f"{_e(manifest.get('run_id'))}</title><style>{CSS}</style></head><body>{_header(manifest)}"
            + "".join(sections) + f'<p class="note">Written by rag_lab.runs.report at {_e(stamp)}.</p></body></html>\n')
    return write_text(run_dir / PAGE, scrub(page, urls=False))
