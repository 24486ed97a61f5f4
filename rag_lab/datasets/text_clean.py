"""Text fields as real dataset files hold them -> plain text the loaders can index.

Upstream files carry what fixtures written by hand rarely do: ``None`` or numbers where text
is expected, HTML entities (``&amp;``, ``&#8211;``), inline markup (``<i>``, ``<sup>``,
``<br/>``) copied from a web page, whole HTML pages (movie scripts, QuALITY's raw release),
byte-order marks, and labels written in any case. Own code: ``html`` (entities) and
``html.parser`` (pages) from the standard library do the work; the rest is a few rules.
A ``<`` that does not open a known tag (``p < 0.05``) is left alone.
"""
from __future__ import annotations

import html
import re
from html.parser import HTMLParser
from typing import Iterable

INLINE_TAGS = ("a", "abbr", "acronym", "b", "big", "cite", "code", "del", "dfn", "em", "font", "i", "ins", "kbd",
               "mark", "q", "s", "samp", "small", "span", "strike", "strong", "sub", "sup", "tt", "u", "var", "wbr")
BLOCK_TAGS = ("br", "p", "div", "hr", "li", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre")
_ATTR = r"""(?:\s+[A-Za-z_:][\w:.-]*\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'<>=`]+))*"""   # name="value" pairs only
_TAG = re.compile(rf"</?(?:{'|'.join(INLINE_TAGS)}){_ATTR}\s*/?>", re.I)
_BLOCK_TAG = re.compile(rf"</?(?:{'|'.join(BLOCK_TAGS)}){_ATTR}\s*/?>", re.I)
_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"))
BLOCKS = {"p", "div", "br", "hr", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre", "title",
          "table", "ul", "ol", "section", "article", "header", "footer"}


def clean_text(value) -> str:
    """One line of plain text: entities decoded, inline markup dropped, whitespace collapsed.

    ``None`` gives ""; numbers give their decimal form."""
    if value is None:
        return ""
    text = value if isinstance(value, str) else str(value)
    if "<" in text:
        text = _TAG.sub("", _BLOCK_TAG.sub(" ", text))
    if "&" in text:
        text = html.unescape(text)
    return " ".join(text.translate(_INVISIBLE).split())


def strip_invisible(text: str) -> str:
    """Zero-width spaces and joiners, word joiners, byte-order marks and soft hyphens removed."""
    return text.translate(_INVISIBLE)


def clean_block(value) -> str:
    """Like ``clean_text`` but paragraphs (blank-line separated) are kept apart."""
    text = "" if value is None else str(value)
    text = re.sub(r"(?i)<\s*(br|/p|p|/div|div|hr)\b[^<>]*>", "\n\n", text)
    paragraphs = (clean_text(p) for p in re.split(r"\n\s*\n", text.replace("\r\n", "\n")))
    return "\n\n".join(p for p in paragraphs if p)


class _PageText(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style", "head"):
            self._skip += 1
        elif tag in BLOCKS:
            self.parts.append("\n\n")

    def handle_endtag(self, tag):
        if tag in ("script", "style", "head") and self._skip:
            self._skip -= 1
        elif tag in BLOCKS:
            self.parts.append("\n\n")

    def handle_data(self, data):
        if not self._skip:
            self.parts.append(data)


def looks_like_html(text: str) -> bool:
    head = text[:2000].lower()
    return "<html" in head or "<!doctype html" in head or "<body" in head or len(_BLOCK_TAG.findall(head)) >= 3


def html_page_text(page: str, keep_lines: bool = False) -> str:
    """A whole HTML page as paragraphs of plain text (scripts, styles and the head dropped).

    ``keep_lines`` keeps single line breaks inside a paragraph (screenplays in ``<pre>``)."""
    parser = _PageText()
    parser.feed(page)
    parser.close()
    text = "".join(parser.parts).translate(_INVISIBLE).replace("\r\n", "\n")
    out = []
    for para in re.split(r"\n\s*\n", text):
        if keep_lines:
            lines = [" ".join(line.split()) for line in para.split("\n")]
            para = "\n".join(line for line in lines if line)
        else:
            para = " ".join(para.split())
        if para:
            out.append(para)
    return "\n\n".join(out)


def normalise_label(value, allowed: Iterable[str], where: str, field: str) -> str | None:
    """A label in the case the dataset documents (``"YES"`` -> ``"yes"``); None when absent.

    A list of single characters (the Hugging Face copy of PubMedQA stores ``"yes"`` as
    ``["y", "e", "s"]``) is joined first; anything else outside ``allowed`` is an error."""
    if value is None or (isinstance(value, float) and value != value):
        return None
    if isinstance(value, (list, tuple)) and all(isinstance(c, str) and len(c) <= 1 for c in value):
        value = "".join(value)
    text = clean_text(value)
    if not text:
        return None
    options = {a.casefold(): a for a in allowed}
    if text.casefold() not in options:
        raise ValueError(f"{where}: {field} must be one of {sorted(options.values())} (any case), got {value!r}")
    return options[text.casefold()]


def read_text_file(path, encodings: tuple[str, ...] = ("utf-8-sig", "cp1252", "latin-1")) -> tuple[str, str]:
    """A text file decoded with the first encoding that works, and that encoding's name."""
    from pathlib import Path

    data = Path(path).read_bytes()
    for enc in encodings:
        try:
            return data.decode(enc), enc
        except UnicodeDecodeError:
            continue
    raise ValueError(f"{path}: could not decode as any of {encodings}")
