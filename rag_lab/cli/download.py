"""``python -m rag_lab download NAME``: fetch a public data set into the data cache (``--list``: every name,
its licence, its URLs and how its files are checked)."""
from __future__ import annotations

from pathlib import Path


def add_arguments(parser):
    parser.add_argument("name", nargs="?", help="data set to fetch (see --list)")
    parser.add_argument("--list", action="store_true", help="list the names, licences, URLs and checksum status")
    parser.add_argument("--dest", type=Path, default=None,
                        help="root folder to write to (default: $RAG_LAB_DATA or ~/.cache/rag_lab/data)")
    parser.add_argument("--base-url", default=None,
                        help="send every request to this host instead (same paths; a mirror or a test server)")
    parser.add_argument("--split", default=None, help="comma-separated splits to fetch, or 'all' (where a source has "
                                                      "splits)")
    parser.add_argument("--year", default=None, help="MeSH vocabulary year (default: the source's)")
    parser.add_argument("--ids", default=None, help="pmc_oa: comma-separated PMCIDs")
    parser.add_argument("--ids-file", type=Path, default=None, help="pmc_oa: a file with one PMCID per line")
    parser.add_argument("--ids-from", type=Path, default=None,
                        help="pmc_oa: the articles of an earlier selection (its manifest.json) or a PMCID list")
    parser.add_argument("--count", type=int, default=None,
                        help="pmc_oa: draw this many Open Access articles at random from an E-utilities search "
                             "(the list is written to manifest.json)")
    parser.add_argument("--seed", type=int, default=0, help="pmc_oa --count: the random seed of the draw (default 0)")
    parser.add_argument("--query", default=None, help="pmc_oa --count: the search term (default: open access[filter])")
    parser.add_argument("--dates", default=None,
                        help="pmc_oa --count: publication dates FROM:TO (default 2023/01/01:2023/01/31)")
    parser.add_argument("--stories", default=None,
                        help="narrativeqa: also fetch the full stories of these splits (train, valid, test or all; "
                             "comma-separated) from the URLs in documents.csv")
    parser.add_argument("--topics", nargs="+", default=None, help="wikipedia: search topics")
    parser.add_argument("--articles-per-topic", type=int, default=None, help="wikipedia: articles per topic")
    parser.add_argument("--force", action="store_true", help="download again even when the files are present")
    parser.add_argument("--retries", type=int, default=3, help="retries per request on 5xx and dropped connections")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")


def list_sources() -> None:
    from ..datasets.sources import GROUPS, SOURCES

    for s in SOURCES.values():
        print(f"{s.name}\t{s.title}\n    licence: {s.licence}\n    home: {s.homepage}")
        if s.api:
            print(f"    API: {', '.join(s.urls())} (responses recorded in manifest.json)")
        if s.splits:
            print(f"    splits: {', '.join(s.splits)} (default: {', '.join(s.default_splits)}; "
                  "--split all for every one)")
        for f in s.files:
            print(f"    {f.url.format(**s.params)}  [{f.check}{': ' + f.sha256[:12] + '…' if f.sha256 else ''}]")
        if s.note:
            print(f"    note: {s.note}")
    for group, members in GROUPS.items():
        print(f"{group}\tall of: {', '.join(members)}")


def _ids(args) -> list[str] | None:
    from ..datasets.pmc_selection import ids_from

    ids = [i for i in (args.ids or "").split(",") if i.strip()]
    if args.ids_file:
        if not args.ids_file.is_file():
            raise FileNotFoundError(f"--ids-file {args.ids_file} does not exist")
        ids += args.ids_file.read_text(encoding="utf-8").split()
    if args.ids_from:
        ids += ids_from(args.ids_from)
    return ids or None


def _selection(args):
    from ..datasets.pmc_selection import DEFAULT_DATES, DEFAULT_QUERY, Selection, parse_dates

    if args.count is None:
        if args.query or args.dates:
            raise ValueError("--query and --dates shape a pmc_oa selection: give --count N too")
        return None
    mindate, maxdate = parse_dates(args.dates) if args.dates else DEFAULT_DATES
    return Selection(args.count, args.seed, args.query or DEFAULT_QUERY, mindate, maxdate)


def run(args) -> int:
    from ..datasets.cache import data_root
    from ..datasets.download import download
    from ..datasets.transport import Transport

    if args.list:
        list_sources()
        return 0
    if not args.name:
        raise ValueError("name the data set to download (python -m rag_lab download --list shows the names)")
    splits = [s.strip() for s in args.split.split(",") if s.strip()] if args.split else None
    transport = Transport(args.base_url, retries=args.retries, progress=not args.no_progress)
    stories = [s.strip() for s in args.stories.split(",") if s.strip()] if args.stories else None
    reports = download(args.name, args.dest, splits=splits, year=args.year, ids=_ids(args), topics=args.topics,
                       articles_per_topic=args.articles_per_topic, force=args.force, transport=transport,
                       selection=_selection(args), stories=stories)
    for report in reports:
        for note in report.notes:
            print(f"  note: {note}")
        where = report.folder
        if args.dest is None or Path(args.dest).expanduser().resolve() == data_root().resolve():
            print(f"{report.source.name}: ready in {where}; {report.source.how_to_load} finds it")
        else:
            print(f"{report.source.name}: ready in {where}; load it with path={str(where)!r} or set "
                  f"RAG_LAB_DATA={Path(args.dest).expanduser()}")
    return 0
