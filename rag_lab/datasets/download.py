"""``download(NAME)``: fetch a public data set into the data cache, check it, unpack it.

For a source of static files (``sources.py``) each file is transferred to ``<file>.part``
(resumable), its SHA-256 is checked — against the pinned value, against the value recorded
on the first download, or only recorded when the file changes upstream — and only then
renamed into place; archives are unpacked member by member (each written atomically). A file
already in place is checked and reused without the network, which is also how a file put
there by hand gets verified and unpacked. API sources go through ``api_sources.py``.
"""
from __future__ import annotations

import logging
import os
import shutil
import tarfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from ..caching.atomic import atomic_path, sha256_file
from ..core.redact import redact_url
from .cache import ChecksumStore, data_root
from .sources import RemoteFile, Source, get_sources
from .transport import ChecksumError, DownloadError, RateLimiter, Transport, discard_part, part_record

_log = logging.getLogger(__name__)


@dataclass
class FileReport:
    path: Path
    sha256: str = ""
    check: str = ""            # what the checksum check concluded
    fetched: bool = False      # False: the file was already there


@dataclass
class DownloadReport:
    source: Source
    folder: Path
    files: list[FileReport] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def manual_hint(command: str, url: str, target: Path, others: Sequence[tuple[str, Path]] = ()) -> str:
    unpack = " and unpacks it" if target.suffix in (".tgz", ".zip") else ""
    more = "".join(f" Also needed: {u} -> {t}." for u, t in others)
    return (f"To place it by hand: download {url} on a machine with a connection, save it as {target}, then run "
            f"`{command}` here again: it checks the file{unpack} without the network.{more}")


def _select(source: Source, splits: Sequence[str] | None) -> list[RemoteFile]:
    chosen = list(splits) if splits else list(source.default_splits)
    if "all" in chosen:
        chosen = list(source.splits)
    unknown = [s for s in chosen if s not in source.splits]
    if unknown:
        choose = f"choose from {', '.join(source.splits)} or 'all'" if source.splits else "it has no splits"
        raise ValueError(f"{source.name}: unknown split(s) {unknown}; {choose}")
    return [f for f in source.files if not f.splits or set(f.splits) & set(chosen)]


def verify(file: RemoteFile, url: str, path: Path, store: ChecksumStore, remove_on_mismatch: bool,
           override: str | None = None) -> tuple[str, str]:
    """Check ``path`` as ``file`` says; returns (sha256, what the check concluded). ``override``: the
    host the file came from when it was not the official one; nothing is recorded from it."""
    sha = sha256_file(path)
    fail = None
    if file.sha256:
        if sha != file.sha256:
            fail = f"its SHA-256 is {sha}, the published value is {file.sha256} ({file.sha256_from})"
        check = f"pinned SHA-256 matches ({sha})"
    elif file.changes and override:
        check = f"SHA-256 {sha}, not recorded (fetched from {override}, not the official host)"
    elif file.changes:
        store.record(url, sha, path.stat().st_size, path.name)
        check = f"SHA-256 {sha} recorded (the file changes upstream, so it is not compared)"
    else:
        seen = store.get(url)
        if seen and seen["sha256"] != sha:
            fail = (f"its SHA-256 is {sha}, but the first download on {seen.get('recorded', '?')} had "
                    f"{seen['sha256']} (recorded in {store.path}); if the upstream file really changed, remove its "
                    f"entry from that file and run again")
        elif seen:
            check = f"matches the SHA-256 recorded on {seen.get('recorded', '?')} ({sha})"
        elif override:
            check = (f"no published checksum and none recorded: SHA-256 {sha} NOT recorded, because the file came "
                     f"from {override}, not the official host; download it from the official host once to record "
                     "a checksum to trust")
        else:
            store.record(url, sha, path.stat().st_size, path.name)
            check = f"no published checksum: SHA-256 {sha} recorded on first use in {store.path}"
    if fail:
        if remove_on_mismatch:
            discard_part(path)
            raise ChecksumError(f"{url}: checksum mismatch, the download was deleted: {fail}")
        raise ChecksumError(f"{path}: checksum mismatch: {fail}. Delete the file (or run with --force) to "
                            "download it again")
    return sha, check


def unpack(archive: Path, folder: Path, members: Sequence[str]) -> list[Path]:
    """Write the archive entries whose base names are ``members`` into ``folder`` (nothing else)."""
    wanted, out = set(members), []
    try:
        with zipfile.ZipFile(archive) if archive.suffix == ".zip" else tarfile.open(archive, "r:*") as box:
            if archive.suffix == ".zip":
                entries, read = {Path(i.filename).name: i for i in box.infolist() if not i.is_dir()}, box.open
            else:
                entries, read = {Path(m.name).name: m for m in box.getmembers() if m.isfile()}, box.extractfile
            for name in members:
                if name in entries:
                    with atomic_path(folder / name) as tmp, read(entries[name]) as src, open(tmp, "wb") as dst:
                        shutil.copyfileobj(src, dst, 1 << 20)
                    out.append(folder / name)
    except (zipfile.BadZipFile, tarfile.TarError, NotImplementedError, EOFError) as e:
        raise DownloadError(f"{archive}: cannot unpack ({type(e).__name__}: {e}); unpack it by hand with another "
                            f"tool and put {', '.join(members)} into {folder}") from None
    missing = sorted(wanted - {p.name for p in out})
    if missing:
        raise DownloadError(f"{archive}: has no member named {missing}; it holds {sorted(entries)[:20]}")
    return out


def _static(source: Source, folder: Path, transport: Transport, store: ChecksumStore, splits, params: dict,
            force: bool, command: str, log) -> DownloadReport:
    report = DownloadReport(source, folder)
    chosen = [(f, f.url.format(**params), folder / f.name.format(**params)) for f in _select(source, splits)]
    for file, url, target in chosen:
        if file.members and not force and all((folder / m).exists() for m in file.members):
            report.files += [FileReport(folder / m, check="already unpacked") for m in file.members]
            log(f"  {file.name}: already unpacked ({', '.join(file.members)})")
            continue
        fetched = force or not target.exists()
        if fetched:
            log(f"  {url} -> {target}")
            others = [(u, t) for _, u, t in chosen if u != url and not t.exists()]
            part = transport.fetch(url, target, manual_hint(command, url, target, others))
            override = redact_url(transport.base_url) if transport.override else None
            sha, check = verify(file, url, part, store, remove_on_mismatch=True, override=override)
            os.replace(part, target)
            part_record(part).unlink(missing_ok=True)
        else:
            sha, check = verify(file, url, target, store, remove_on_mismatch=False)
        report.files.append(FileReport(target, sha, check, fetched))
        log(f"  {target.name}: {'downloaded' if fetched else 'already present'}, {check}")
        for path in unpack(target, folder, file.members) if file.members else []:
            report.files.append(FileReport(path, check=f"unpacked from {target.name}", fetched=fetched))
    return report


def download(name: str, dest: str | os.PathLike | None = None, base_url: str | None = None,
             splits: Sequence[str] | None = None, year: str | None = None, ids: Sequence[str] | None = None,
             topics: Sequence[str] | None = None, articles_per_topic: int | None = None, force: bool = False,
             transport: Transport | None = None, limiter: RateLimiter | None = None, log=print,
             selection=None, stories: Sequence[str] | None = None) -> list[DownloadReport]:
    """Fetch the data set ``name`` (or a group such as ``ragbench``) into ``dest`` (default: the data cache).
    ``selection`` (``pmc_selection.Selection``): draw pmc_oa articles from a search instead of ``ids``;
    ``stories``: the NarrativeQA splits whose full stories to fetch too."""
    from .api_sources import NCBI, SSG_ARTICLES_PER_TOPIC, SSG_TOPICS, fetch_wikipedia

    root = Path(dest).expanduser() if dest is not None else data_root()
    transport = transport or Transport(base_url)
    if transport.override:
        _log.warning("%s", transport.override_warning())
    store = ChecksumStore(root)
    reports = []
    for source in get_sources(name):
        _reject_options(source, splits=splits, year=year, ids=ids, topics=topics,
                        articles_per_topic=articles_per_topic, selection=selection, stories=stories)
        folder = root / source.dir_name
        folder.mkdir(parents=True, exist_ok=True)
        log(f"{source.name}: {source.title} — licence: {source.licence}")
        if source.api == "pmc_oa":
            report = _pmc(folder, source, NCBI(transport, limiter=limiter), ids or [], selection, force, log)
        elif source.api == "wikipedia":
            manifest = fetch_wikipedia(topics or SSG_TOPICS, articles_per_topic or SSG_ARTICLES_PER_TOPIC, folder,
                                       transport, limiter, log)
            report = DownloadReport(source, folder, notes=[f"{len(manifest['documents'])} articles"])
        else:
            params = {**source.params, **({"year": str(year)} if year else {})}
            command = f"python -m rag_lab download {source.name}" + (f" --dest {root}" if dest is not None else "")
            report = _static(source, folder, transport, store, splits, params, force, command, log)
            if stories:
                from .stories import SPLITS, fetch_stories

                chosen = list(SPLITS) if "all" in stories else list(stories)
                manifest = fetch_stories(folder, chosen, transport, force, log)
                failed = [k for k, v in manifest.items() if "error" in v]
                report.notes += [f"{len(failed)} stories could not be fetched (listed in "
                                 f"{folder / 'tmp' / 'stories.json'})"] if failed else []
        reports.append(report)
    return reports


def _pmc(folder: Path, source: Source, ncbi, ids: Sequence[str], selection, force: bool, log) -> DownloadReport:
    """pmc_oa: the articles named, or drawn by ``selection`` (recorded in the manifest), fetched."""
    from ..caching.locked_json import read_object
    from .api_sources import MANIFEST_FIX, fetch_pmc_articles, normalise_pmcids
    from .pmc_selection import select

    chosen = None
    if selection is not None:
        recorded = read_object(folder / "manifest.json", MANIFEST_FIX).get("selection")
        chosen = select(ncbi, selection, recorded, log)
        ids = chosen["pmcids"]
    manifest = fetch_pmc_articles(normalise_pmcids(ids), folder, ncbi, force, log, selection=chosen)
    report = DownloadReport(source, folder, [FileReport(folder / a["file"], a["sha256"], a["licence"])
                                             for a in manifest["articles"].values()])
    report.notes += [f"{k} skipped: {v}" for k, v in manifest["skipped"].items()]
    failed = sorted(manifest.get("failed", {}))
    if failed:
        report.notes.append(f"{len(failed)} failed ({', '.join(failed[:5])}{', …' if len(failed) > 5 else ''}): "
                            f"why is recorded in {folder / 'manifest.json'} under 'failed'; run again to retry")
    return report


def _reject_options(source: Source, **options) -> None:
    allowed = {"splits": bool(source.splits), "year": "year" in source.params, "ids": source.api == "pmc_oa",
               "topics": source.api == "wikipedia", "articles_per_topic": source.api == "wikipedia",
               "selection": source.api == "pmc_oa", "stories": source.name == "narrativeqa"}
    flags = {"splits": "--split", "year": "--year", "ids": "--ids", "topics": "--topics",
             "articles_per_topic": "--articles-per-topic", "selection": "--count", "stories": "--stories"}
    wrong = [flags[k] for k, v in options.items() if v and not allowed[k]]
    if wrong:
        raise ValueError(f"{source.name}: {', '.join(wrong)} do(es) not apply to this source")
    if options.get("ids") and options.get("selection"):
        raise ValueError(f"{source.name}: give either the articles (--ids, --ids-file, --ids-from) or --count to draw "
                         "them, not both")
    if options.get("year") and not str(options["year"]).isdigit():
        raise ValueError(f"--year must be a year such as 2026, got {options['year']!r}")
