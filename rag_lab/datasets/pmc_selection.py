"""Which PMC Open Access articles to fetch when no list is given: a seeded random sample of an
E-utilities search, written down so it can be fetched again exactly.

Why: the GraLC-RAG paper downloaded 4,992 PMC Open Access articles and kept the IMRaD ones, but
published no list, so ``download pmc_oa`` could not run without ``--ids``. A selection is: a search
term (default ``open access[filter]``) over a publication-date window (``datetype=pdat``), every
matching id collected page by page (``retstart``/``retmax``), sorted numerically, and ``count`` of
them drawn with ``random.Random(seed)``. The search, the seed, the number matched and the chosen
PMCIDs go to the folder's ``manifest.json`` (``selection``); ``--ids-from manifest.json`` fetches
exactly that list again (on another machine, or after the search results have grown), and a second
run with the same selection reuses the recorded list without searching. The IMRaD filter is the
loader's (``imrad_only``), applied when the articles are read, as in the paper.
"""
from __future__ import annotations

import json
import random
import xml.etree.ElementTree as ET
from dataclasses import asdict, dataclass
from pathlib import Path

from .transport import DownloadError

ESEARCH = "https://eutils.ncbi.nlm.nih.gov/entrez/eutils/esearch.fcgi"
DEFAULT_QUERY = "open access[filter]"
DEFAULT_DATES = ("2023/01/01", "2023/01/31")   # one month of publications: a pool of a manageable size
PAGE = 10_000                                  # ids per esearch request (NCBI's documented maximum retmax)
MAX_POOL = 200_000                             # more matches than this: narrow the search instead


@dataclass(frozen=True)
class Selection:
    count: int
    seed: int = 0
    query: str = DEFAULT_QUERY
    mindate: str = DEFAULT_DATES[0]
    maxdate: str = DEFAULT_DATES[1]

    def __post_init__(self):
        if self.count <= 0:
            raise ValueError(f"pmc_oa: --count must be a positive number of articles, got {self.count}")
        for value in (self.mindate, self.maxdate):
            parts = value.split("/")
            if not (1 <= len(parts) <= 3 and all(p.isdigit() for p in parts) and len(parts[0]) == 4):
                raise ValueError(f"pmc_oa: dates are YYYY, YYYY/MM or YYYY/MM/DD, got {value!r}")

    def same_search(self, record: dict) -> bool:
        """True when ``record`` (a manifest's ``selection``) was made with these parameters."""
        return all(record.get(k) == v for k, v in asdict(self).items())


def parse_dates(text: str) -> tuple[str, str]:
    """``"2023/01/01:2023/01/31"`` -> the two dates."""
    parts = text.split(":")
    if len(parts) != 2 or not all(parts):
        raise ValueError(f"pmc_oa: --dates is FROM:TO (e.g. 2023/01/01:2023/01/31), got {text!r}")
    return parts[0].strip(), parts[1].strip()


def parse_esearch(body: bytes) -> tuple[int, list[str]]:
    """(how many records match, the ids on this page) from an esearch XML answer."""
    try:
        root = ET.fromstring(body)
    except ET.ParseError as e:
        raise DownloadError(f"esearch answer is not XML ({e})") from None
    error = root.find("ERROR")
    if error is not None:
        raise DownloadError(f"esearch refused the search: {' '.join((error.text or '').split())}")
    count = root.findtext("Count")
    if count is None or not count.strip().isdigit():
        raise DownloadError("esearch answer has no <Count>")
    return int(count), [el.text.strip() for el in root.iterfind("IdList/Id") if el.text and el.text.strip()]


def search_pool(ncbi, selection: Selection, hint: str = "") -> tuple[int, list[str]]:
    """Every PMCID the search matches (sorted by number), and the number esearch reported."""
    ids: set[str] = set()
    start, matched = 0, None
    while matched is None or start < matched:
        count, page = parse_esearch(ncbi.esearch(selection.query, selection.mindate, selection.maxdate, start, PAGE,
                                                 hint))
        if matched is None and count > MAX_POOL:
            raise ValueError(f"pmc_oa: the search {selection.query!r} from {selection.mindate} to {selection.maxdate} "
                             f"matches {count:,} articles, more than {MAX_POOL:,} to draw from; narrow it with "
                             "--dates FROM:TO or --query")
        matched = count if matched is None else matched
        if not page:
            break
        ids.update(page)
        start += PAGE
    return matched or 0, sorted((f"PMC{i}" for i in ids), key=lambda p: int(p[3:]))


def draw(pool: list[str], count: int, seed: int) -> list[str]:
    """``count`` PMCIDs drawn from ``pool`` with ``random.Random(seed)`` (all of them if fewer), in pool order."""
    if count >= len(pool):
        return list(pool)
    chosen = set(random.Random(seed).sample(pool, count))
    return [p for p in pool if p in chosen]


def select(ncbi, selection: Selection, recorded: dict | None, log=print, hint: str = "") -> dict:
    """The selection record: reused from ``recorded`` when made with the same parameters, else searched."""
    if recorded and selection.same_search(recorded) and isinstance(recorded.get("pmcids"), list):
        log(f"  selection: the {len(recorded['pmcids'])} articles recorded on {recorded.get('made', '?')} "
            f"(same search and seed)")
        return recorded
    from datetime import datetime, timezone

    matched, pool = search_pool(ncbi, selection, hint)
    chosen = draw(pool, selection.count, selection.seed)
    log(f"  selection: {selection.query!r}, published {selection.mindate}-{selection.maxdate}: {matched:,} match, "
        f"{len(chosen):,} drawn with seed {selection.seed}" + (" (all of them)" if len(chosen) < selection.count
                                                               else ""))
    return {**asdict(selection), "datetype": "pdat", "matched": matched, "pool": len(pool), "pmcids": chosen,
            "made": datetime.now(timezone.utc).isoformat(timespec="seconds"), "source": ESEARCH}


def ids_from(path: str | Path) -> list[str]:
    """PMCIDs listed in ``path``: a ``manifest.json`` (its selection, else its articles) or one PMCID a line."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"--ids-from {path} does not exist")
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise ValueError(f"--ids-from {path}: not valid JSON ({e.msg})") from None
        ids = (data.get("selection") or {}).get("pmcids") if isinstance(data, dict) else None
        if ids is None and isinstance(data, dict) and isinstance(data.get("articles"), dict):
            ids = list(data["articles"])
        if not isinstance(ids, list) or not ids:
            raise ValueError(f"--ids-from {path}: expected a pmc_oa manifest.json with a 'selection' (pmcids) or "
                             "'articles'")
        return [str(i) for i in ids]
    return text.split()
