"""JATS XML (PubMed Central's full-text format) -> ``Document`` with exact section offsets.

Own code over ``xml.etree``: no maintained library returns JATS as char-offset sections.
The text is laid out as blocks separated by one blank line: a heading block for every
titled section, then its paragraphs; figure and table captions become paragraphs of their
own ("Figure 1. …"). The abstract comes first as a section titled "Abstract", then the body.
Table cells, supplementary material and back matter other than the reference list are left
out (retrieval reads prose).

Sections (kinds ``section`` for top-level ``<sec>``, ``subsection`` for nested ones,
``paragraph`` for ``<p>`` and captions) carry document-qualified ids (``"<doc>:s2-1"``) so a
question's ``gold_section_ids`` name sections across a corpus. ``Document.meta`` keeps what
the structure graph needs: bibliography citations (``citations``), figure/table
cross-references (``xrefs``), each with char spans, and the reference list (``references``).
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from ..types import Document, Section

BLOCK_SEP = "\n\n"
SKIP_INLINE = {"fig", "table-wrap", "table", "graphic", "inline-graphic", "media", "alternatives",
               "supplementary-material", "fn", "object-id"}
SPACED = {"list-item", "td", "th", "tr", "p", "title", "label", "disp-formula", "def-item"}
BRACKETED = re.compile(r"^[\d\s,\u2013\u2014\-–]+$")


def _tag(el) -> str:
    t = el.tag if isinstance(el.tag, str) else ""
    return t.rsplit("}", 1)[-1]


def _children(el, name: str):
    return [c for c in el if _tag(c) == name]


def _first(el, path: list[str]):
    """First descendant along a chain of tag names (namespace-agnostic)."""
    cur = [el]
    for name in path:
        nxt = [c for e in cur for c in e.iter() if c is not e and _tag(c) == name]
        if not nxt:
            return None
        cur = nxt[:1]
    return cur[0]


def _plain(el) -> str:
    return " ".join("".join(el.itertext()).split()) if el is not None else ""


class _Inline:
    """Render an element's mixed content to one line, tracking each ``<xref>``'s span exactly.

    Characters are collected with a tag (the xref they belong to, or None); whitespace is
    then collapsed over the tagged characters, so the spans survive normalisation."""

    def __init__(self):
        self.chars: list[tuple[str, int | None]] = []
        self.xrefs: list[dict] = []

    def _put(self, text: str | None, tag: int | None) -> None:
        if text:
            self.chars.extend((ch, tag) for ch in text)

    def walk(self, el, tag: int | None = None, top: bool = True) -> None:
        if not top:
            name = _tag(el)
            if name in SKIP_INLINE:
                self._put(el.tail, tag)
                return
            if name == "xref" and tag is None:
                self._xref(el)
                self._put(el.tail, tag)
                return
            if name in SPACED:
                self._put(" ", tag)
        self._put(el.text, tag)
        for child in el:
            self.walk(child, tag, top=False)
        if not top:
            if _tag(el) in SPACED:
                self._put(" ", tag)
            self._put(el.tail, tag)

    def _xref(self, el) -> None:
        idx = len(self.xrefs)
        ref_type = el.get("ref-type", "")
        label = _plain(el)
        self.xrefs.append({"ref_type": ref_type, "rid": el.get("rid", "")})
        prev = next((ch for ch, _ in reversed(self.chars) if not ch.isspace()), "")
        if ref_type == "bibr" and label and BRACKETED.match(label) and prev not in "[(":
            label = f"[{label}]"
        if not label:  # an empty <xref/> (the renderer would draw a marker): show its target id
            label = f"[{el.get('rid', '?')}]"
        self._put(label, idx)

    def result(self) -> tuple[str, list[dict]]:
        out: list[str] = []
        spans: dict[int, list[int]] = {}
        pending_space = False
        for ch, tag in self.chars:
            if ch.isspace():
                pending_space = bool(out)
                continue
            if pending_space:
                out.append(" ")
                pending_space = False
            if tag is not None:
                spans.setdefault(tag, [len(out), len(out)])
                spans[tag][1] = len(out) + 1
            out.append(ch)
        xrefs = []
        for i, x in enumerate(self.xrefs):
            if i in spans:
                xrefs.append({**x, "start": spans[i][0], "end": spans[i][1]})
        return "".join(out), xrefs


def render_inline(el) -> tuple[str, list[dict]]:
    r = _Inline()
    r.walk(el)
    return r.result()


class _Builder:
    def __init__(self, doc_id: str):
        self.doc_id = doc_id
        self.parts: list[str] = []
        self.pos = 0
        self.sections: list[Section] = []
        self.citations: list[dict] = []
        self.xrefs: list[dict] = []
        self.sec_types: dict[str, str] = {}
        self.roles_hint: dict[str, str] = {}
        self._ids: set[str] = set()

    def unique_id(self, local: str) -> str:
        base = f"{self.doc_id}:{local}"
        out, n = base, 2
        while out in self._ids:
            out, n = f"{base}-{n}", n + 1
        self._ids.add(out)
        return out

    def block(self, text: str) -> tuple[int, int]:
        if self.parts:
            self.parts.append(BLOCK_SEP)
            self.pos += len(BLOCK_SEP)
        start = self.pos
        self.parts.append(text)
        self.pos += len(text)
        return start, self.pos

    def paragraph(self, el, parent_level: int, local_id: str) -> None:
        text, xrefs = render_inline(el)
        floats = [c for c in el.iter() if c is not el and _tag(c) in ("fig", "table-wrap")]
        if text:
            start, end = self.block(text)
            sid = self.unique_id(el.get("id") or local_id)
            self.sections.append(Section(sid, "", "paragraph", start, end, parent_level + 1))
            for x in xrefs:
                entry = {"rid": x["rid"], "start": start + x["start"], "end": start + x["end"], "paragraph": sid}
                if x["ref_type"] == "bibr":
                    self.citations.append(entry)
                else:
                    self.xrefs.append({"ref_type": x["ref_type"], **entry})
        for f in floats:
            self.floating(f, parent_level)

    def floating(self, el, parent_level: int) -> None:
        """A figure or table: its label and caption as one paragraph (the target of cross-references)."""
        label = _plain(_first(el, ["label"]))
        caption_el = _first(el, ["caption"])
        caption, xrefs = render_inline(caption_el) if caption_el is not None else ("", [])
        if not (label or caption):
            return
        text = f"{label}{'' if not label or label.endswith('.') else '.'} {caption}".strip() if caption else label
        start, end = self.block(text)
        offset = start + (len(text) - len(caption) if caption else 0)
        sid = self.unique_id(el.get("id") or f"float{len(self.sections)}")
        self.sections.append(Section(sid, label, "paragraph", start, end, parent_level + 1))
        for x in xrefs:
            entry = {"rid": x["rid"], "start": offset + x["start"], "end": offset + x["end"], "paragraph": sid}
            (self.citations if x["ref_type"] == "bibr" else self.xrefs).append(
                entry if x["ref_type"] == "bibr" else {"ref_type": x["ref_type"], **entry})

    def container(self, el, level: int, local_id: str, title: str | None = None) -> None:
        """A ``<sec>`` (or the abstract): heading block, then children in document order."""
        if title is None:
            label = _plain(_first_child(el, "label"))
            title_el = _first_child(el, "title")
            title = " ".join(x for x in (label, _plain(title_el)) if x)
        start = None
        if title:
            start, _ = self.block(title)
        index = len(self.sections)
        sid = self.unique_id(el.get("id") or local_id)
        local = sid.split(":", 1)[1]
        self.sections.append(None)  # placeholder keeps parents before children
        n_par = n_sub = 0
        for child in el:
            name = _tag(child)
            before = self.pos
            if name == "sec":
                n_sub += 1
                self.container(child, level + 1, f"{local}-{n_sub}")
            elif name == "p":
                n_par += 1
                self.paragraph(child, level, f"{local}.p{n_par}")
            elif name in ("fig", "table-wrap"):
                self.floating(child, level)
            elif name in ("list", "disp-quote", "boxed-text"):
                for item in child.iter():
                    if _tag(item) == "p":
                        n_par += 1
                        self.paragraph(item, level, f"{local}.p{n_par}")
            if start is None and self.pos != before:
                start = next(s.start for s in self.sections[index + 1:] if s is not None)
        if start is None:  # an empty, untitled section: leave it out
            self.sections.pop(index)
            self._ids.discard(sid)
            return
        kind = "section" if level == 1 else "subsection"
        self.sections[index] = Section(sid, title, kind, start, self.pos, level)
        if el.get("sec-type"):
            self.sec_types[sid] = el.get("sec-type")


def _first_child(el, name: str):
    found = _children(el, name)
    return found[0] if found else None


def _article_id(root, fallback: str | None) -> str:
    ids = {a.get("pub-id-type", ""): _plain(a) for a in root.iter() if _tag(a) == "article-id"}
    if ids.get("pmc"):
        v = ids["pmc"]
        return v if v.upper().startswith("PMC") else f"PMC{v}"
    for key in ("pmid", "other", "publisher-id", "doi"):
        if ids.get(key):
            return ids[key]
    if fallback:
        return fallback
    raise ValueError("JATS article has no <article-id> and no document id was given")


def _references(root) -> dict[str, dict]:
    refs = {}
    for ref in root.iter():
        if _tag(ref) != "ref" or not ref.get("id"):
            continue
        refs[ref.get("id")] = {"title": _plain(_first(ref, ["article-title"])),
                               "source": _plain(_first(ref, ["source"])),
                               "year": _plain(_first(ref, ["year"])),
                               "citation": _plain(ref)}
    return refs


def read_xml(source: str | Path | bytes) -> tuple[ET.Element, str]:
    """Parse XML from a path, bytes or a string; says which input failed and why."""
    name = "<string>"
    if isinstance(source, Path) or (isinstance(source, str) and not source.lstrip().startswith("<")):
        path = Path(source)
        if not path.exists():
            raise FileNotFoundError(f"JATS file {path} does not exist")
        name, data = str(path), path.read_bytes()
    else:
        data = source.encode("utf-8") if isinstance(source, str) else source
    try:
        return ET.fromstring(data), name
    except ET.ParseError as e:
        raise ValueError(f"{name}: not well-formed XML ({e})") from None


def parse_jats(source: str | Path | bytes, doc_id: str | None = None) -> Document:
    """One JATS ``<article>`` as a Document (abstract + body, sections with exact offsets)."""
    root, name = read_xml(source)
    if _tag(root) != "article":
        article = next((el for el in root.iter() if _tag(el) == "article"), None)
        if article is None:
            raise ValueError(f"{name}: expected a JATS <article> element, found <{_tag(root)}>")
        root = article
    fallback = Path(name).stem if name != "<string>" else None
    doc_id = doc_id or _article_id(root, fallback)
    title = _plain(_first(root, ["article-meta", "title-group", "article-title"]))
    b = _Builder(doc_id)
    abstracts = [a for a in root.iter() if _tag(a) == "abstract"]
    abstract = next((a for a in abstracts if not a.get("abstract-type")), abstracts[0] if abstracts else None)
    if abstract is not None:
        b.container(abstract, 1, "abstract", title="Abstract")
        b.roles_hint[f"{doc_id}:abstract"] = "abstract"
    body = _first(root, ["body"])
    if body is not None:
        n_sec = n_par = 0
        for child in body:
            name_ = _tag(child)
            if name_ == "sec":
                n_sec += 1
                b.container(child, 1, f"sec{n_sec}")
            elif name_ == "p":
                n_par += 1
                b.paragraph(child, 0, f"body.p{n_par}")
            elif name_ in ("fig", "table-wrap"):
                b.floating(child, 0)
    text = "".join(b.parts)
    if not text.strip():
        raise ValueError(f"{name}: the article has no abstract or body text")
    referenced = {s.id.split(":", 1)[1]: s.id for s in b.sections if s is not None}
    for x in b.xrefs:
        x["target"] = referenced.get(x["rid"])
    meta = {"format": "jats", "source": name, "article_id": _article_id(root, doc_id),
            "keywords": [_plain(k) for k in root.iter() if _tag(k) == "kwd"],
            "sec_types": b.sec_types, "roles": b.roles_hint, "citations": b.citations, "xrefs": b.xrefs,
            "references": _references(root)}
    sections = sorted((s for s in b.sections if s is not None), key=lambda s: (s.start, -s.end, s.level))
    return Document(id=doc_id, text=text, title=title, sections=sections, meta=meta)


def parse_jats_folder(folder: str | Path, limit: int | None = None) -> list[Document]:
    """Every ``*.xml`` / ``*.nxml`` file of a folder (sorted by name), one Document each."""
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"JATS folder {folder} does not exist")
    files = sorted(p for p in folder.rglob("*") if p.suffix.lower() in (".xml", ".nxml"))
    if not files:
        raise FileNotFoundError(f"{folder}: no *.xml or *.nxml JATS files found")
    docs = [parse_jats(p) for p in files[:limit]]
    seen: dict[str, str] = {}
    for d, p in zip(docs, files):
        if d.id in seen:
            raise ValueError(f"{p}: document id {d.id!r} already used by {seen[d.id]}")
        seen[d.id] = str(p)
    return docs
