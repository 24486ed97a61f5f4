"""Wikipedia articles by topic (the SSG paper's WikiEngine): topics -> article titles -> clean text.

For each topic the MediaWiki search API (``list=search``) gives article titles; for each title
the TextExtracts API (``prop=extracts&explaintext=1&exsectionformat=wiki``) gives the plain text
with ``== Heading ==`` lines. Cleaning drops the back matter (See also, References, Notes,
Further reading, External links …), leftover ``{\\displaystyle …}`` math markup, invisible
characters (zero-width spaces, soft hyphens) and empty lines,
and keeps the headings as ``Section`` offsets instead of text. Every raw API response is saved
(``search/<topic>-<n>.json``, ``pages/<title>.json``) in a folder, so a later run reads the same
articles offline; with ``online=False`` or no network, a missing response raises
``WikipediaUnavailableError`` saying what to fetch and where to put it.

Folder: ``path``, else ``$RAG_LAB_DATA_WIKIPEDIA``, else ``<data cache>/wikipedia`` (which
``python -m rag_lab download wikipedia`` fills, politely rate-limited).
Both ``formatversion=1`` (pages keyed by id) and ``2`` (pages as a list) responses are read.
Own code: the cleaning is a few regular expressions; no maintained library does the
extract-to-sections step for this API.
"""
from __future__ import annotations

import json
import logging
import re
import urllib.parse
from functools import lru_cache
from pathlib import Path
from typing import Sequence

from ...caching.atomic import write_text
from ...core.types import Dataset, Document, Section
from .. import register_loader
from ..text_clean import strip_invisible

DEFAULT_API = "https://en.wikipedia.org/w/api.php"
DEFAULT_TOPICS = ("Machine learning", "Artificial intelligence")
ENV_VAR = "RAG_LAB_DATA_WIKIPEDIA"
log = logging.getLogger(__name__)
BACK_MATTER = {"see also", "references", "notes", "further reading", "external links", "sources", "bibliography",
               "citations", "footnotes", "works cited", "notes and references", "general and cited sources"}
REQUEST_INTERVAL, BACKOFF = 1.0, 1.0   # seconds between requests; first retry's wait (doubling after)
EXTRA_RESULTS = 5   # search results beyond articles_per_topic, to replace duplicates and empty pages

_HEADING = re.compile(r"^(={2,6})\s*(.*?)\s*\1\s*$")
_DISPLAYSTYLE = re.compile(r"\{\\displaystyle(?:[^{}]|\{(?:[^{}]|\{[^{}]*\})*\})*\}")


class WikipediaUnavailableError(FileNotFoundError):
    """A response is neither saved locally nor fetchable (offline, or the API failed)."""


@lru_cache(maxsize=1)
def _ask_for_contact() -> None:
    """Said once per process: Wikimedia asks every client for contact details in its user agent."""
    log.warning("Wikimedia asks every API client to say how to reach its operator: set RAG_LAB_CONTACT to your "
                "e-mail address or a URL (it goes into the User-Agent of every request)")


def slug(text: str) -> str:
    s = re.sub(r"[^a-z0-9]+", "-", text.casefold()).strip("-")
    if not s:
        raise ValueError(f"cannot make a file name from {text!r}")
    return s


# -- the API's response format ------------------------------------------------------------------
def search_params(topic: str, limit: int) -> dict[str, str]:
    return {"action": "query", "list": "search", "srsearch": topic, "srlimit": str(limit), "srnamespace": "0",
            "format": "json", "formatversion": "2"}


def extract_params(title: str) -> dict[str, str]:
    # full-page extracts come one page per request (TextExtracts returns several only with exintro)
    return {"action": "query", "prop": "extracts", "explaintext": "1", "exsectionformat": "wiki", "redirects": "1",
            "titles": title, "format": "json", "formatversion": "2"}


def _api_error(response: dict, what: str) -> None:
    if not isinstance(response, dict):
        raise ValueError(f"{what}: expected a JSON object from the MediaWiki API, got {type(response).__name__}")
    if "error" in response:
        err = response["error"]
        raise ValueError(f"{what}: the MediaWiki API answered with error {err.get('code')!r}: {err.get('info')}")


def parse_search(response: dict, what: str = "search") -> list[str]:
    """Titles from a ``list=search`` response, in rank order."""
    _api_error(response, what)
    try:
        return [hit["title"] for hit in response["query"]["search"]]
    except (KeyError, TypeError) as e:
        raise ValueError(f"{what}: not a list=search response (missing {e})") from None


def parse_extract(response: dict, what: str = "extract") -> dict | None:
    """``{"title", "pageid", "extract"}`` of the page in a ``prop=extracts`` response; None if missing."""
    _api_error(response, what)
    try:
        pages = response["query"]["pages"]
    except (KeyError, TypeError) as e:
        raise ValueError(f"{what}: not a prop=extracts response (missing {e})") from None
    pages = list(pages.values()) if isinstance(pages, dict) else list(pages)
    for page in pages:
        if "missing" in page or "invalid" in page or int(page.get("pageid", -1)) < 0:
            continue
        return {"title": page["title"], "pageid": int(page["pageid"]), "extract": page.get("extract") or ""}
    return None


def clean_extract(extract: str) -> tuple[str, list[Section]]:
    """Plain paragraphs joined by blank lines, and the headings as sections (char offsets).

    Back-matter sections and everything under them are dropped; so are headings with no text."""
    paragraphs: list[str] = []
    offset = 0
    open_sections: list[dict] = []   # stack of {"title", "level", "start"}
    sections: list[Section] = []
    skip_level: int | None = None

    def close(level: int) -> None:
        end = max(offset - 2, 0) if paragraphs else 0   # before the "\n\n" that follows the last paragraph
        while open_sections and open_sections[-1]["level"] >= level:
            s = open_sections.pop()
            if end > s["start"]:
                kind = "section" if s["level"] == 1 else "subsection"
                sections.append(Section(f"s{len(sections) + 1}", s["title"], kind, s["start"], end, s["level"]))

    for line in extract.splitlines():
        m = _HEADING.match(strip_invisible(line).strip())
        if m:
            level = len(m.group(1)) - 1
            if skip_level is not None and level > skip_level:
                continue
            skip_level = None
            close(level)
            if m.group(2).casefold() in BACK_MATTER:
                skip_level = level
                continue
            open_sections.append({"title": m.group(2), "level": level, "start": offset})
            continue
        if skip_level is not None:
            continue
        text = " ".join(strip_invisible(_DISPLAYSTYLE.sub("", line)).split())
        if text:
            paragraphs.append(text)
            offset += len(text) + 2
    close(0)
    sections.sort(key=lambda s: (s.start, -s.end))
    return "\n\n".join(paragraphs), [Section(f"s{i}", s.title, s.kind, s.start, s.end, s.level)
                                     for i, s in enumerate(sections, 1)]


# -- fetching with a folder of saved responses ---------------------------------------------------
class WikiEngine:
    """Topics -> titles -> cleaned articles, reading saved responses first and saving what it fetches.

    Requests go through ``transport`` (retries with back-off on 429 and 5xx, ``Retry-After`` honoured,
    a user agent naming ``$RAG_LAB_CONTACT`` as Wikimedia's policy asks), at most one per
    ``limiter`` interval (default ``REQUEST_INTERVAL``)."""

    def __init__(self, folder: str | Path | None = None, api_url: str = DEFAULT_API, online: bool = True,
                 timeout: float = 20.0, transport=None, limiter=None):
        from ..cache import dataset_dir
        from ..transport import RateLimiter, Transport

        self.folder = Path(folder) if folder is not None else dataset_dir("wikipedia", ENV_VAR)
        self.api_url = api_url
        self.online = online
        self.timeout = timeout
        self.transport = transport or Transport(timeout=timeout, progress=False, backoff=BACKOFF)
        self.limiter = limiter or RateLimiter(REQUEST_INTERVAL)

    def _get(self, params: dict[str, str], saved: Path, what: str) -> dict:
        if saved.exists():
            try:
                return json.loads(saved.read_text(encoding="utf-8"))
            except json.JSONDecodeError as e:
                raise ValueError(f"{saved}: not valid JSON ({e.msg}); delete it to fetch {what} again") from None
        hint = (f"Connect to the network and run again (responses are saved to {self.folder} for offline use), or "
                f"put the MediaWiki API response for {what} at {saved} (folder from the path argument or "
                f"${ENV_VAR}).")
        if not self.online:
            raise WikipediaUnavailableError(f"no saved response for {what} at {saved} and online=False. {hint}")
        from ..transport import DownloadError, contact

        if not contact():
            _ask_for_contact()
        try:
            body = self.transport.get(self.api_url, params, self.limiter).decode("utf-8", errors="replace")
        except DownloadError as e:
            raise WikipediaUnavailableError(f"could not fetch {what} from {self.api_url} ({e}). {hint}") from None
        try:
            data = json.loads(body)
        except json.JSONDecodeError as e:
            raise ValueError(f"{what}: {self.api_url} did not return JSON ({e.msg})") from None
        _api_error(data, what)
        write_text(saved, json.dumps(data, ensure_ascii=False))
        return data

    def titles(self, topic: str, limit: int) -> list[str]:
        saved = self.folder / "search" / f"{slug(topic)}-{limit}.json"
        return parse_search(self._get(search_params(topic, limit), saved, f"the search for {topic!r}"),
                            f"search for {topic!r}")

    def article(self, title: str, topic: str = "") -> Document | None:
        saved = self.folder / "pages" / f"{slug(title)}.json"
        page = parse_extract(self._get(extract_params(title), saved, f"the article {title!r}"), f"article {title!r}")
        if page is None:
            return None
        text, sections = clean_extract(page["extract"])
        if not text:
            return None
        return Document(f"wiki-{slug(page['title'])}", text, page["title"], sections,
                        {"topic": topic, "pageid": page["pageid"], "source": "Wikipedia (CC BY-SA 4.0)",
                         "url": "https://en.wikipedia.org/wiki/" + urllib.parse.quote(page["title"].replace(" ", "_"))})

    def documents(self, topics: Sequence[str], articles_per_topic: int) -> list[Document]:
        """Up to ``articles_per_topic`` distinct non-empty articles per topic, in search rank order."""
        if articles_per_topic <= 0:
            raise ValueError(f"articles_per_topic must be positive, got {articles_per_topic}")
        docs: dict[str, Document] = {}
        for topic in topics:
            taken = 0
            for title in self.titles(topic, articles_per_topic + EXTRA_RESULTS):
                if taken == articles_per_topic:
                    break
                doc = self.article(title, topic)
                if doc is None or doc.id in docs:
                    continue
                docs[doc.id] = doc
                taken += 1
        return list(docs.values())


@register_loader("wikipedia", "Wikipedia articles by topic via the MediaWiki API (default: machine learning, "
                              "artificial intelligence; 5 each); responses saved for offline reuse")
def load_wikipedia(topics: Sequence[str] = DEFAULT_TOPICS, articles_per_topic: int = 5, path: str | Path | None = None,
                   api_url: str = DEFAULT_API, online: bool = True, timeout: float = 20.0) -> Dataset:
    if isinstance(topics, str):
        topics = [topics]
    if not topics:
        raise ValueError("wikipedia: give at least one topic")
    engine = WikiEngine(path, api_url, online, timeout)
    docs = engine.documents(list(topics), articles_per_topic)
    if not docs:
        raise ValueError(f"wikipedia: no articles found for topics {list(topics)}")
    return Dataset("wikipedia", docs, [], {"topics": list(topics), "articles_per_topic": articles_per_topic,
                                           "folder": str(engine.folder)})
