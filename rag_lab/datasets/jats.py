"""JATS XML (PubMed Central's full-text format) -> ``Document`` with exact section offsets.

Own code over ``xml.etree``: no maintained library returns JATS as char-offset sections.
The text is laid out as blocks separated by one blank line: a heading block for every
titled section, then its paragraphs; figure and table captions become paragraphs of their
own ("Figure 1. …"). The abstract comes first as a section titled "Abstract", then the body.
Table cells, supplementary material (and sections that hold only that) and back matter other
than the reference list are left out (retrieval reads prose).

What real PMC files hold is read as it comes: ``<article>`` alone or inside a
``<pmc-articleset>`` (every article of a set becomes a Document), DOCTYPE declarations,
namespaced elements (``mml:``, ``xlink:``), sections with no ``<title>`` (they start at their
first paragraph), sections nested to any depth, boxed text (a subsection titled by its
caption), lists, definition lists, quotes, figure and table groups, tables and formulas inside
paragraphs (formulas written once, see ``jats_inline``) and articles with no ``<body>`` (the
abstract alone; ``meta["has_body"]`` says so). Elements the layout has no place for are counted
in ``meta["skipped"]``. Reading problems are reported by ``jats_xml`` with file, line and what
was expected.

Sections (kinds ``section`` for top-level ``<sec>``, ``subsection`` for nested ones,
``paragraph`` for ``<p>`` and captions) carry document-qualified ids (``"<doc>:s2-1"``) so a
question's ``gold_section_ids`` name sections across a corpus. ``Document.meta`` keeps what
the structure graph needs: bibliography citations (``citations``), figure/table
cross-references (``xrefs``), each with char spans, and the reference list (``references``).
"""
from __future__ import annotations

import logging
import re
from collections import Counter
from pathlib import Path

from ..core.types import Document, Section
from .jats_inline import first, first_child, plain, render_inline, tag
from .jats_xml import parse_bytes, source_bytes
from .text_blocks import TextBlocks

log = logging.getLogger(__name__)

FLOATS = ("fig", "table-wrap")
FLOAT_GROUPS = ("fig-group", "table-wrap-group")
PARAGRAPH_HOLDERS = ("list", "disp-quote", "statement", "verse-group", "caption", "glossary")
SINGLE_BLOCKS = ("disp-formula", "preformat", "code", "speech", "def-item")
QUIET = {"title", "label", "sec-meta", "object-id", "kwd-group", "x"}
SUPPLEMENTARY_TITLE = re.compile(r"^(supplementary|supporting|additional)\s+(material|information|data|files?)s?\b",
                                 re.I)


def _is_supplementary(sec) -> bool:
    if "supplement" in (sec.get("sec-type") or "").lower():
        return True
    if SUPPLEMENTARY_TITLE.match(plain(first_child(sec, "title"))):
        return True
    content = [c for c in sec if tag(c) not in QUIET]
    return bool(content) and all(tag(c) == "supplementary-material" for c in content)


def _top_paragraphs(el) -> list:
    """The outermost ``<p>`` (or, for a list item without one, the item itself) inside ``el``."""
    out = []
    for c in el:
        name = tag(c)
        if name == "p":
            out.append(c)
        elif name == "list-item" and not any(tag(x) == "p" for x in c.iter()):
            out.append(c)
        elif name == "def-item":
            out.append(c)
        elif name not in FLOATS + FLOAT_GROUPS + ("supplementary-material", "title", "label"):
            out += _top_paragraphs(c)
    return out


class _Builder:
    def __init__(self, doc_id: str):
        self.doc_id = doc_id
        self.blocks = TextBlocks()
        self.sections: list[Section | None] = []
        self.citations: list[dict] = []
        self.xrefs: list[dict] = []
        self.sec_types: dict[str, str] = {}
        self.roles_hint: dict[str, str] = {}
        self.skipped: Counter = Counter()
        self._ids: set[str] = set()

    def unique_id(self, local: str) -> str:
        base = f"{self.doc_id}:{local}"
        out, n = base, 2
        while out in self._ids:
            out, n = f"{base}-{n}", n + 1
        self._ids.add(out)
        return out

    def block(self, text: str) -> tuple[int, int]:
        return self.blocks.add(text)

    def _spans(self, xrefs: list[dict], offset: int, sid: str) -> None:
        for x in xrefs:
            entry = {"rid": x["rid"], "start": offset + x["start"], "end": offset + x["end"], "paragraph": sid}
            if x["ref_type"] == "bibr":
                self.citations.append(entry)
            else:
                self.xrefs.append({"ref_type": x["ref_type"], **entry})

    def paragraph(self, el, parent_level: int, local_id: str) -> None:
        text, xrefs = render_inline(el)
        floats = [c for c in el.iter() if c is not el and tag(c) in FLOATS]
        if text:
            start, end = self.block(text)
            sid = self.unique_id(el.get("id") or local_id)
            self.sections.append(Section(sid, "", "paragraph", start, end, parent_level + 1))
            self._spans(xrefs, start, sid)
        for f in floats:
            self.floating(f, parent_level)

    def floating(self, el, parent_level: int) -> None:
        """A figure or table: its label and caption as one paragraph (the target of cross-references)."""
        label = plain(first(el, ["label"]))
        caption_el = first(el, ["caption"])
        caption, xrefs = render_inline(caption_el) if caption_el is not None else ("", [])
        if not (label or caption):
            return
        text = f"{label}{'' if not label or label.endswith('.') else '.'} {caption}".strip() if caption else label
        start, end = self.block(text)
        sid = self.unique_id(el.get("id") or f"float{len(self.sections)}")
        self.sections.append(Section(sid, label, "paragraph", start, end, parent_level + 1))
        self._spans(xrefs, start + (len(text) - len(caption) if caption else 0), sid)

    def content(self, el, level: int, par_prefix: str, sec_prefix: str) -> None:
        """The children of a section, an abstract, a box or the body, in document order."""
        n_par = n_sub = 0
        for child in el:
            name = tag(child)
            if name in ("sec", "boxed-text"):
                if name == "sec" and _is_supplementary(child):
                    self.skipped["supplementary section"] += 1
                    continue
                n_sub += 1
                title = self._box_title(child) if name == "boxed-text" else None
                self.container(child, level + 1, f"{sec_prefix}{n_sub}", title)
            elif name == "p":
                n_par += 1
                self.paragraph(child, level, f"{par_prefix}.p{n_par}")
            elif name in FLOATS:
                self.floating(child, level)
            elif name in FLOAT_GROUPS:
                for f in (c for c in child if tag(c) in FLOATS):
                    self.floating(f, level)
            elif name in PARAGRAPH_HOLDERS + ("def-list",) or name in SINGLE_BLOCKS:
                for item in (_top_paragraphs(child) if name not in SINGLE_BLOCKS else [child]):
                    n_par += 1
                    self.paragraph(item, level, f"{par_prefix}.p{n_par}")
            elif name not in QUIET:
                self.skipped[name] += 1

    @staticmethod
    def _box_title(box) -> str:
        caption = first_child(box, "caption")
        title = plain(first_child(caption, "title")) if caption is not None else ""
        return " ".join(x for x in (plain(first_child(box, "label")), title) if x)

    def container(self, el, level: int, local_id: str, title: str | None = None) -> None:
        """A ``<sec>``, box or abstract: heading block (when titled), then its content."""
        if title is None:
            title = " ".join(x for x in (plain(first_child(el, "label")), plain(first_child(el, "title"))) if x)
        start = self.block(title)[0] if title else None
        index = len(self.sections)
        sid = self.unique_id(el.get("id") or local_id)
        local = sid.split(":", 1)[1]
        self.sections.append(None)  # placeholder keeps parents before children
        self.content(el, level, local, f"{local}-")
        if start is None:  # untitled: the section starts at its first block
            start = next((s.start for s in self.sections[index + 1:] if s is not None), None)
        if start is None:  # an empty, untitled section: leave it out
            self.sections.pop(index)
            self._ids.discard(sid)
            return
        kind = "section" if level == 1 else "subsection"
        self.sections[index] = Section(sid, title, kind, start, self.blocks.length, level)
        if el.get("sec-type"):
            self.sec_types[sid] = el.get("sec-type")


def _article_id(ids: dict[str, str], fallback: str | None, name: str) -> str:
    for key in ("pmc", "pmcid"):
        if ids.get(key):
            v = ids[key]
            return v if v.upper().startswith("PMC") else f"PMC{v}"
    for key in ("pmid", "other", "publisher-id", "doi"):
        if ids.get(key):
            return ids[key]
    if fallback:
        return fallback
    raise ValueError(f"{name}: the JATS article has no <article-id> (expected one in <front>/<article-meta>) "
                     "and no document id was given")


def _references(article) -> dict[str, dict]:
    refs = {}
    back = first_child(article, "back")
    for ref in (back.iter() if back is not None else []):
        if tag(ref) != "ref" or not ref.get("id"):
            continue
        refs[ref.get("id")] = {"title": plain(first(ref, ["article-title"])), "source": plain(first(ref, ["source"])),
                               "year": plain(first(ref, ["year"])), "citation": plain(ref)}
    return refs


def _articles(root, name: str) -> list:
    if tag(root) == "article":
        return [root]
    found = [el for el in root.iter() if tag(el) == "article"]
    if not found:
        raise ValueError(f"{name}: expected a JATS <article> element (alone or inside <pmc-articleset>), "
                         f"found <{tag(root)}> with no <article> inside")
    return found


def article_document(article, name: str, doc_id: str | None = None, repairs: list[str] | None = None) -> Document:
    """One ``<article>`` element as a Document (abstract + body, sections with exact offsets)."""
    front = first_child(article, "front")
    meta_el = first(front, ["article-meta"]) if front is not None else None
    scope = meta_el if meta_el is not None else article
    ids = {a.get("pub-id-type", ""): plain(a) for a in scope.iter() if tag(a) == "article-id"}
    doc_id = doc_id or _article_id(ids, None if name == "<string>" else Path(name).stem, name)
    b = _Builder(doc_id)
    abstracts = [a for a in scope.iter() if tag(a) == "abstract"]
    abstract = next((a for a in abstracts if not a.get("abstract-type")), abstracts[0] if abstracts else None)
    if abstract is not None:
        b.container(abstract, 1, "abstract", title="Abstract")
        b.roles_hint[f"{doc_id}:abstract"] = "abstract"
    body = first_child(article, "body")
    if body is not None:
        b.content(body, 0, "body", "sec")
    text = b.blocks.text
    if not text.strip():
        raise ValueError(f"{name}: article {doc_id} has no text (expected an <abstract> or a <body> with <sec> or <p>)")
    if body is None:
        log.info("%s: article %s has no <body>; the abstract alone is read", name, doc_id)
    referenced = {s.id.split(":", 1)[1]: s.id for s in b.sections if s is not None}
    for x in b.xrefs:
        x["target"] = referenced.get(x["rid"])
    meta = {"format": "jats", "source": name, "article_id": _article_id(ids, doc_id, name),
            "article_type": article.get("article-type", ""), "has_body": body is not None,
            "keywords": [plain(k) for k in scope.iter() if tag(k) == "kwd"],
            "sec_types": b.sec_types, "roles": b.roles_hint, "citations": b.citations, "xrefs": b.xrefs,
            "references": _references(article), "skipped": dict(b.skipped), "repairs": list(repairs or [])}
    sections = sorted((s for s in b.sections if s is not None), key=lambda s: (s.start, -s.end, s.level))
    title = plain(first(scope, ["title-group", "article-title"]))
    return Document(id=doc_id, text=text, title=title, sections=sections, meta=meta)


def parse_jats_articles(source: str | Path | bytes) -> list[Document]:
    """Every article of a file: one for ``<article>``, all of them for a ``<pmc-articleset>``."""
    data, name = source_bytes(source)
    root, repairs = parse_bytes(data, name)
    articles = _articles(root, name)
    stem = Path(name).stem if name != "<string>" else None
    docs = []
    for i, article in enumerate(articles, 1):
        front = first_child(article, "front")
        has_id = front is not None and any(tag(a) == "article-id" for a in front.iter())
        own = None if has_id or stem is None else (stem if len(articles) == 1 else f"{stem}-{i}")
        docs.append(article_document(article, name, own, repairs))
    return docs


def parse_jats(source: str | Path | bytes, doc_id: str | None = None) -> Document:
    """One JATS ``<article>`` as a Document (the first one when the file holds a set)."""
    data, name = source_bytes(source)
    root, repairs = parse_bytes(data, name)
    return article_document(_articles(root, name)[0], name, doc_id, repairs)


def jats_files(folder: str | Path) -> list[Path]:
    """The ``*.xml`` / ``*.nxml`` files of a folder and its sub-folders, sorted by path."""
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"JATS folder {folder} does not exist")
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix.lower() in (".xml", ".nxml"))
    if not files:
        raise FileNotFoundError(f"{folder}: no *.xml or *.nxml JATS files found")
    return files


DUPLICATES = ("skip", "refuse")


def iter_jats_folder(folder: str | Path, duplicates: str = "skip", skipped: list[dict] | None = None):
    """Documents of a folder one file at a time. A document id met again (two files holding one article)
    keeps the first: the later one is skipped with a warning naming both files and appended to
    ``skipped``; ``duplicates="refuse"`` makes it an error instead (docs/data.md)."""
    if duplicates not in DUPLICATES:
        raise ValueError(f"duplicates must be one of {DUPLICATES}, got {duplicates!r}")
    seen: dict[str, str] = {}
    for p in jats_files(folder):
        for d in parse_jats_articles(p):
            if d.id in seen:
                if duplicates == "refuse":
                    raise ValueError(f"{p}: document id {d.id!r} already used by {seen[d.id]} (duplicates='skip' "
                                     "keeps the first and loads the rest)")
                log.warning("%s: document id %r already used by %s: skipped, the first is kept", p, d.id, seen[d.id])
                if skipped is not None:
                    skipped.append({"id": d.id, "file": str(p), "kept": seen[d.id]})
                continue
            seen[d.id] = str(p)
            yield d

