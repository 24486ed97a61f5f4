"""The downloader's transport and checks against the local mirror: resuming a truncated transfer,
HTTP errors and retries, checksum mismatches (pinned and recorded on first use), the offline
message, files placed by hand, the rate limiter, and the command line."""
from __future__ import annotations

import json
from dataclasses import replace

import pytest
from download_server import data_cache, mirror, served_here  # noqa: F401  (pytest fixtures)

from rag_lab.cli import main
from rag_lab.datasets import sources as src
from rag_lab.datasets.api_sources import NCBI
from rag_lab.datasets.download import download
from rag_lab.caching.atomic import sha256_file
from rag_lab.datasets.transport import ChecksumError, DownloadError, OfflineError, RateLimiter, Transport, rebase

PUBMEDQA = f"/pubmedqa/pubmedqa/{src.GITHUB_COMMITS['pubmedqa/pubmedqa']}/data/ori_pqal.json"
QUIET = dict(log=lambda *a: None)


def sleeps_of_this_thread(waited: list, real_sleep):
    """A ``time.sleep`` that records this test's own waits and lets other threads (a session's Dask
    cluster, a cache's file lock) sleep for real: ``time`` is one module for the whole process."""
    import threading

    mine = threading.get_ident()
    return lambda seconds: waited.append(seconds) if threading.get_ident() == mine else real_sleep(seconds)


def transport(server, retries=3):
    return Transport(server.url, retries=retries, backoff=0, progress=False)


def test_rebase_keeps_path_and_query():
    assert rebase("https://huggingface.co/datasets/a/resolve/r/x.parquet", "http://127.0.0.1:8000/") == \
        "http://127.0.0.1:8000/datasets/a/resolve/r/x.parquet"
    assert rebase("https://en.wikipedia.org/w/api.php?action=query", "http://h:1") == \
        "http://h:1/w/api.php?action=query"
    assert rebase("https://example.org/x", None) == "https://example.org/x"


def test_base_url_from_the_environment(monkeypatch):
    monkeypatch.setenv("RAG_LAB_DOWNLOAD_BASE_URL", "http://127.0.0.1:9")
    assert Transport().url("https://nlmpubs.nlm.nih.gov/projects/mesh/x.xml") == \
        "http://127.0.0.1:9/projects/mesh/x.xml"
    assert Transport("http://mirror.test").url("https://a.org/b") == "http://mirror.test/b"     # the argument wins


def test_a_truncated_transfer_is_resumed_with_a_range_request(mirror, tmp_path):
    mirror.faults[PUBMEDQA] = ["truncate"]
    body = mirror.files[PUBMEDQA]
    with_bar = Transport(mirror.url, backoff=0, progress=True)      # the tqdm path (it hides itself off a terminal)
    part = with_bar.fetch(f"https://raw.githubusercontent.com{PUBMEDQA}", tmp_path / "ori_pqal.json")
    assert part.name == "ori_pqal.json.part" and part.read_bytes() == body
    # first request: whole file, half sent; second: the rest, from byte len(body) // 2
    assert [r["range"] for r in mirror.requests] == [None, f"bytes={len(body) // 2}-"]
    assert mirror.requests[0]["agent"].startswith("rag_lab/")


def test_without_retries_the_part_file_stays_and_the_next_run_resumes(mirror, tmp_path):
    mirror.faults[PUBMEDQA] = ["truncate"]
    url, dest = f"https://raw.githubusercontent.com{PUBMEDQA}", tmp_path / "ori_pqal.json"
    with pytest.raises(DownloadError) as e:
        transport(mirror, retries=0).fetch(url, dest)
    half = len(mirror.files[PUBMEDQA]) // 2
    assert "stopped after" in str(e.value) and "run again to resume" in str(e.value)
    assert (tmp_path / "ori_pqal.json.part").stat().st_size == half
    part = transport(mirror, retries=0).fetch(url, dest)
    assert part.read_bytes() == mirror.files[PUBMEDQA] and mirror.requests[-1]["range"] == f"bytes={half}-"


def test_a_server_that_ignores_ranges_restarts_the_file(mirror, tmp_path):
    (tmp_path / "ori_pqal.json.part").write_bytes(b"stale bytes from another file")
    mirror.honour_ranges = False
    part = transport(mirror).fetch(f"https://raw.githubusercontent.com{PUBMEDQA}", tmp_path / "ori_pqal.json")
    assert part.read_bytes() == mirror.files[PUBMEDQA]


def test_http_errors(mirror, tmp_path):
    t = transport(mirror)
    with pytest.raises(DownloadError, match=r"not found \(HTTP 404\)"):
        t.fetch("https://raw.githubusercontent.com/no/such/file.json", tmp_path / "x.json")
    assert mirror.count("/no/such/file.json") == 1 and not list(tmp_path.iterdir())     # 404: no retry, no file
    mirror.faults[PUBMEDQA] = ["500", "503"]
    assert t.fetch(f"https://x.org{PUBMEDQA}", tmp_path / "a.json").read_bytes() == mirror.files[PUBMEDQA]
    assert mirror.count(PUBMEDQA) == 3                                                   # two 5xx, then success
    mirror.faults[PUBMEDQA] = ["500"] * 5
    with pytest.raises(DownloadError, match=r"gave up after 2 attempts \(HTTP 500\)"):
        transport(mirror, retries=1).fetch(f"https://x.org{PUBMEDQA}", tmp_path / "b.json")
    with pytest.raises(DownloadError, match="HTTP 404"):
        t.get("https://x.org/w/api.php", {"action": "query", "list": "search", "srsearch": "no such topic"})


def test_pinned_checksum_mismatch_leaves_no_file(mirror, data_cache, monkeypatch):
    s = src.SOURCES["pubmedqa"]
    monkeypatch.setitem(src.SOURCES, "pubmedqa", replace(s, files=(replace(s.files[0], sha256="0" * 64,
                                                                            sha256_from="a test"),)))
    with pytest.raises(ChecksumError) as e:
        download("pubmedqa", transport=transport(mirror), **QUIET)
    assert "checksum mismatch, the download was deleted" in str(e.value) and "0" * 64 in str(e.value)
    assert not list((data_cache / "pubmedqa").iterdir())


def test_first_use_checksum_is_recorded_and_enforced(mirror, data_cache, monkeypatch):
    served_here(monkeypatch, mirror, "pubmedqa")            # the mirror as the official host, no override
    t = Transport(None, backoff=0, progress=False)
    download("pubmedqa", transport=t, **QUIET)
    first = sha256_file(data_cache / "pubmedqa" / "ori_pqal.json")
    mirror.files[PUBMEDQA] = mirror.files[PUBMEDQA].replace(b"invented town", b"invented city")
    with pytest.raises(ChecksumError, match="first download on .* had " + first):
        download("pubmedqa", transport=t, force=True, **QUIET)
    # the earlier, verified file is untouched and no .part (nor its record) is left
    assert sha256_file(data_cache / "pubmedqa" / "ori_pqal.json") == first
    assert [p.name for p in (data_cache / "pubmedqa").iterdir()] == ["ori_pqal.json"]
    record = json.loads((data_cache / "checksums.json").read_text())[src.SOURCES["pubmedqa"].files[0].url]
    assert record["sha256"] == first and record["size"] > 0


def test_offline_message_names_the_url_and_where_to_put_the_file(data_cache, refused_port):
    t = Transport(f"http://127.0.0.1:{refused_port}", retries=1, backoff=0, progress=False)
    with pytest.raises(OfflineError) as e:
        download("pubmedqa", transport=t, **QUIET)
    message = str(e.value)
    assert "could not reach http://127.0.0.1:" in message and "may be offline" in message
    assert f"https://raw.githubusercontent.com{PUBMEDQA}" in message
    assert str(data_cache / "pubmedqa" / "ori_pqal.json") in message
    assert "python -m rag_lab download pubmedqa" in message
    # a source of several files names all of them, and the --dest of the run
    elsewhere = data_cache.parent / "elsewhere"
    with pytest.raises(OfflineError) as e:
        download("narrativeqa", dest=elsewhere, transport=t, **QUIET)
    message = str(e.value)
    assert f"python -m rag_lab download narrativeqa --dest {elsewhere}" in message
    assert f"Also needed: {src.SOURCES['narrativeqa'].files[1].url} -> " \
           f"{elsewhere / 'narrativeqa' / 'qaps.csv'}" in message


def test_files_placed_by_hand_are_checked_and_unpacked_offline(mirror, data_cache, refused_port):
    offline = Transport(f"http://127.0.0.1:{refused_port}", retries=0, backoff=0, progress=False)
    (data_cache / "qasper").mkdir(parents=True)
    (data_cache / "qasper" / "qasper-test-and-evaluator-v0.3.tgz").write_bytes(
        mirror.files["/qasper-test-and-evaluator-v0.3.tgz"])
    [report] = download("qasper", splits=["test"], transport=offline, **QUIET)
    assert report.files[0].fetched is False and "recorded on first use" in report.files[0].check
    assert (data_cache / "qasper" / "qasper-test-v0.3.json").is_file()
    # a file placed by hand that differs from a pinned value is refused, and kept for the user to inspect
    (data_cache / "ragbench" / "covidqa").mkdir(parents=True)
    placed = data_cache / "ragbench" / "covidqa" / "test-00000-of-00001.parquet"
    placed.write_bytes(b"not the parquet file")
    with pytest.raises(ChecksumError, match="--force"):
        download("ragbench_covidqa", transport=offline, **QUIET)
    assert placed.exists()


def test_an_archive_without_the_expected_member(mirror, data_cache, monkeypatch):
    s = src.SOURCES["qasper"]
    f = replace(s.files[1], members=("qasper-test-v9.9.json",))
    monkeypatch.setitem(src.SOURCES, "qasper", replace(s, files=(s.files[0], f)))
    with pytest.raises(DownloadError, match=r"no member named \['qasper-test-v9.9.json'\]"):
        download("qasper", splits=["test"], transport=transport(mirror), **QUIET)


def test_rate_limiter_spaces_calls():
    # a fake clock that sleeping advances: calls at t=0, 0.1 and 1.0 with a 0.34 s interval;
    # the second waits until 0.34 (a 0.24 s sleep), the third is already past 0.68 and does not wait
    now, sleeps = [0.0], []

    def sleep(d):
        sleeps.append(round(d, 6))
        now[0] += d
    limiter = RateLimiter(0.34, clock=lambda: now[0], sleep=sleep)
    limiter.wait()
    now[0] = 0.1
    limiter.wait()
    assert now[0] == pytest.approx(0.34)
    now[0] = 1.0
    limiter.wait()
    assert sleeps == [0.24]
    with pytest.raises(ValueError):
        RateLimiter(-1)


def test_ncbi_stays_under_its_documented_rates(monkeypatch):
    monkeypatch.delenv("NCBI_API_KEY", raising=False)
    assert NCBI(Transport()).limiter.interval >= 1 / 3          # <= 3 requests/s without a key
    assert 0.1 <= NCBI(Transport(), api_key="k").limiter.interval < 1 / 3   # <= 10 requests/s with one


def test_command_line(mirror, data_cache, capsys):
    assert main(["download", "--list"]) == 0
    listing = capsys.readouterr().out
    for name in ["pubmedqa", "qasper", "quality", "narrativeqa", "ragbench_covidqa", "ragbench_emanual",
                 "ragbench_techqa", "pmc_oa", "mesh", "wikipedia", "covidqa", "squad"]:
        assert f"\n{name}\t" in "\n" + listing
    assert "[pinned: 25bc50f064a0…]" in listing and "[recorded on first use]" in listing
    assert "licence: CC BY 4.0" in listing and "splits: test, validation, train (default: test" in listing
    assert main(["download", "pubmedqa", "--base-url", mirror.url, "--no-progress", "--retries", "0"]) == 0
    out = capsys.readouterr().out
    assert "licence: MIT" in out and "load_dataset('pubmedqa') finds it" in out
    assert main(["download", "pubmedqa", "--ids", "PMC1", "--base-url", mirror.url]) == 2
    assert "--ids do(es) not apply" in capsys.readouterr().err
    assert main(["download", "nosuchset"]) == 2 and "no download source named 'nosuchset'" in capsys.readouterr().err
    other = data_cache.parent / "elsewhere"
    assert main(["download", "covidqa", "--dest", str(other), "--base-url", mirror.url, "--no-progress"]) == 0
    assert (other / "covidqa" / "COVID-QA.json").is_file() and "RAG_LAB_DATA=" in capsys.readouterr().out


# -- secrets, overrides, resumes that must not splice, local disk errors --------------------------------

def test_redact_url_and_text():
    from rag_lab.core.redact import redact_text, redact_url

    url = ("https://eutils.ncbi.nlm.nih.gov/entrez/eutils/efetch.fcgi?db=pmc&id=1&tool=rag_lab&email=a%40b.org"
           "&api_key=s3cr3t")
    assert redact_url(url) == ("https://eutils.ncbi.nlm.nih.gov/entrez/eutils/efetch.fcgi?db=pmc&id=1&tool=rag_lab"
                               "&email=REDACTED&api_key=REDACTED")
    assert redact_url("https://user:pw@mirror.test/x?Access-Token=t&X-Amz-Signature=abc&page=2") == \
        "https://REDACTED@mirror.test/x?Access-Token=REDACTED&X-Amz-Signature=REDACTED&page=2"
    assert redact_url("https://example.org/plain?q=lantern") == "https://example.org/plain?q=lantern"
    assert redact_text(f"could not reach {url} (refused); also token=abc and page=3") == (
        f"could not reach {redact_url(url)} (refused); also token=REDACTED and page=3")


def test_an_error_never_shows_the_ncbi_key_or_email(mirror):
    efetch = "/entrez/eutils/efetch.fcgi"
    mirror.faults[efetch] = ["500", "500"]
    ncbi = NCBI(transport(mirror, retries=1), api_key="ncbi-key-0123456789", email="someone@example.org",
                limiter=RateLimiter(0))
    with pytest.raises(DownloadError) as e:
        ncbi.jats("PMC9000001", hint="")
    message = str(e.value)
    assert "HTTP 500" in message and "api_key=REDACTED" in message and mirror.count(efetch) == 2
    assert "email=REDACTED" in message and "id=9000001" in message
    assert "ncbi-key-0123456789" not in message and "someone" not in message
    assert mirror.requests[-1]["query"]["api_key"] == "ncbi-key-0123456789"     # the key was really sent


def test_a_base_url_override_is_announced_and_records_no_checksum(mirror, data_cache, monkeypatch, caplog):
    monkeypatch.setenv("RAG_LAB_DOWNLOAD_BASE_URL", mirror.url)
    said = []
    with caplog.at_level("WARNING", logger="rag_lab.datasets.download"):
        [report] = download("pubmedqa", transport=Transport(backoff=0, progress=False), log=said.append)
    warning = caplog.records[0].getMessage()
    assert f"every download goes to {mirror.url} instead of the official hosts over plain http" in warning
    assert "$RAG_LAB_DOWNLOAD_BASE_URL is set" in warning and "no new checksum is recorded" in warning
    sha = sha256_file(data_cache / "pubmedqa" / "ori_pqal.json")
    assert f"SHA-256 {sha} NOT recorded" in report.files[0].check and any(sha in line for line in said)
    assert not (data_cache / "checksums.json").exists()
    # a checksum recorded from the official host is still enforced through an override
    (data_cache / "checksums.json").write_text(json.dumps({src.SOURCES["pubmedqa"].files[0].url: {
        "sha256": "0" * 64, "recorded": "2026-01-01"}}))
    with pytest.raises(ChecksumError, match="first download on 2026-01-01 had 0000"):
        download("pubmedqa", transport=Transport(backoff=0, progress=False), force=True, **QUIET)


def test_a_part_of_a_file_replaced_upstream_is_fetched_whole_not_spliced(mirror, tmp_path):
    url, dest = f"https://raw.githubusercontent.com{PUBMEDQA}", tmp_path / "ori_pqal.json"
    mirror.faults[PUBMEDQA] = ["truncate"]
    with pytest.raises(DownloadError):
        transport(mirror, retries=0).fetch(url, dest)
    old_etag = json.loads((tmp_path / "ori_pqal.json.part.json").read_text())["etag"]
    newer = mirror.files[PUBMEDQA].replace(b"invented town", b"invented city")      # regenerated upstream
    mirror.files[PUBMEDQA] = newer
    part = transport(mirror, retries=0).fetch(url, dest)
    assert part.read_bytes() == newer                          # the new file whole, not old half + new tail
    assert mirror.requests[-1]["range"] is not None and mirror.requests[-1]["if_range"] == old_etag
    # a .part with no record of where it came from is never resumed: it starts again
    (tmp_path / "x.json.part").write_bytes(newer[:50])
    assert transport(mirror).fetch(url, tmp_path / "x.json").read_bytes() == newer
    assert mirror.requests[-1]["range"] is None


def test_a_complete_part_is_verified_not_fetched_again(mirror, data_cache):
    t = transport(mirror)
    url, dest = f"https://raw.githubusercontent.com{PUBMEDQA}", data_cache / "pubmedqa" / "ori_pqal.json"
    part = t.fetch(url, dest)                                  # complete; a killed run never renamed it
    sent = len(mirror.requests)
    assert t.fetch(url, dest) == part and len(mirror.requests) == sent     # its record says it is whole
    record = json.loads((data_cache / "pubmedqa" / "ori_pqal.json.part.json").read_text())
    record["length"] = None                                    # a server that gave no length: it asks
    (data_cache / "pubmedqa" / "ori_pqal.json.part.json").write_text(json.dumps(record))
    assert t.fetch(url, dest).read_bytes() == mirror.files[PUBMEDQA]
    assert mirror.requests[-1]["range"] == f"bytes={len(mirror.files[PUBMEDQA])}-"     # answered 416 */size
    [report] = download("pubmedqa", transport=t, **QUIET)      # verified and moved into place
    assert report.files[0].fetched and dest.read_bytes() == mirror.files[PUBMEDQA]
    assert sorted(p.name for p in dest.parent.iterdir()) == ["ori_pqal.json"]


def test_a_full_disk_is_reported_at_once_not_retried(mirror, tmp_path):
    (tmp_path / "ori_pqal.json.part").symlink_to("/dev/full")        # every write fails with ENOSPC
    t = transport(mirror, retries=3)
    with pytest.raises(OSError) as e:
        t.fetch(f"https://raw.githubusercontent.com{PUBMEDQA}", tmp_path / "ori_pqal.json")
    assert e.value.errno == 28 and "No space left on device while writing the download" in str(e.value)
    assert "free space on that disk" in str(e.value) and str(tmp_path / "ori_pqal.json.part") in str(e.value)
    assert not isinstance(e.value, DownloadError) and mirror.count(PUBMEDQA) == 1     # one request, no retry


def test_429_waits_as_long_as_the_server_asks(mirror, monkeypatch):
    import rag_lab.datasets.transport as tr

    waited = []
    monkeypatch.setattr(tr.time, "sleep", sleeps_of_this_thread(waited, tr.time.sleep))
    mirror.faults["/w/api.php"] = ["429"]
    body = transport(mirror).get("https://en.wikipedia.org/w/api.php", {"action": "query", "list": "search",
                                                                        "srsearch": "Machine learning"})
    assert b"Supervised learning" in body and waited == [1.0] and mirror.count("/w/api.php") == 2


def test_wikipedia_requests_name_a_contact_and_wait_out_429(mirror, data_cache, monkeypatch, caplog):
    import rag_lab.datasets.loaders.wikipedia as wiki
    import rag_lab.datasets.transport as tr

    waited = []
    monkeypatch.setattr(tr.time, "sleep", sleeps_of_this_thread(waited, tr.time.sleep))
    wiki._ask_for_contact.cache_clear()
    with caplog.at_level("WARNING", logger="rag_lab.datasets.loaders.wikipedia"):
        download("wikipedia", articles_per_topic=1, transport=transport(mirror), limiter=RateLimiter(0), **QUIET)
    assert "set RAG_LAB_CONTACT to your e-mail address or a URL" in caplog.text
    assert mirror.requests[0]["agent"] == "rag_lab/0.1 (research data downloader) python-urllib"
    monkeypatch.setenv("RAG_LAB_CONTACT", "keeper@example.org")
    mirror.faults["/w/api.php"] = ["429"]
    download("wikipedia", dest=data_cache.parent / "again", articles_per_topic=1, transport=transport(mirror),
             limiter=RateLimiter(0), **QUIET)
    wiki_requests = [r for r in mirror.requests if r["path"] == "/w/api.php"]
    assert wiki_requests[-1]["agent"] == "rag_lab/0.1 (research data downloader; keeper@example.org) python-urllib"
    assert waited == [1.0]                                   # the 429 asked for one second, then it went on


def test_a_download_reads_retry_after_as_the_llm_client_does():
    """The download's HTTP errors go through reasoning.backends.retry_after_seconds (one reading of the
    header): seconds as given, an HTTP date 90 s ahead as 90 s, no header as None."""
    import datetime as dt
    import email.message
    import urllib.error

    from rag_lab.reasoning.backends import retry_after_seconds

    def error(value):
        headers = email.message.Message()
        if value:
            headers["Retry-After"] = value
        return urllib.error.HTTPError("https://example.org/x", 429, "Too Many Requests", headers, None)

    now = dt.datetime(2026, 1, 1, 12, 0, tzinfo=dt.timezone.utc)
    assert retry_after_seconds(error("7"), now) == 7.0
    assert retry_after_seconds(error("Thu, 01 Jan 2026 12:01:30 GMT"), now) == 90.0
    assert retry_after_seconds(error(None), now) is None
