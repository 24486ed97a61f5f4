"""pmc_oa against the local mirror: a reproducible selection drawn from an E-utilities search (recorded in the
manifest, fetched again with --ids-from), a record written with each article so an interruption loses no
licence, one failing article recorded while the rest go on, and a re-run that completes the records of
articles already on disk."""
from __future__ import annotations

import json
import random

import pytest
from download_server import data_cache, mirror  # noqa: F401  (pytest fixtures)

from rag_lab.cli import main
from rag_lab.datasets import pmc_selection
from rag_lab.datasets.api_sources import NCBI, fetch_pmc_articles
from rag_lab.datasets.download import download
from rag_lab.datasets.pmc_selection import Selection, draw
from rag_lab.datasets.transport import RateLimiter, Transport

ESEARCH, EFETCH, OA = "/entrez/eutils/esearch.fcgi", "/entrez/eutils/efetch.fcgi", "/pmc/utils/oa/oa.fcgi"
POOL = ["PMC9000001", "PMC9000002", "PMC9000003", "PMC9000004"]      # the fixture search, sorted by number


def fetch(server, dest=None, retries=2, **kw):
    return download("pmc_oa", dest=dest, transport=Transport(server.url, retries=retries, backoff=0, progress=False),
                    limiter=RateLimiter(0), log=lambda *a: None, **kw)


def test_draw_is_the_seeded_sample_in_pool_order():
    assert draw(POOL, 3, 1) == [p for p in POOL if p in random.Random(1).sample(POOL, 3)]
    assert draw(POOL, 3, 1) == draw(POOL, 3, 1) and len(set(draw(POOL, 3, 1))) == 3
    assert {tuple(draw(POOL, 2, seed)) for seed in range(6)} != {tuple(draw(POOL, 2, 0))}    # seeds differ
    assert draw(POOL, 9, 0) == POOL                                                        # fewer than asked: all


def test_a_selection_is_recorded_and_fetched_again_exactly(mirror, data_cache, monkeypatch, tmp_path):
    monkeypatch.setattr(pmc_selection, "PAGE", 3)                 # the 4 matches come in two pages
    [report] = fetch(mirror, selection=Selection(3, seed=1))
    manifest = json.loads((data_cache / "pmc_oa" / "manifest.json").read_text())
    selection = manifest["selection"]
    assert selection["pmcids"] == draw(POOL, 3, 1) and selection["matched"] == 4 and selection["seed"] == 1
    assert selection["query"] == "open access[filter]" and (selection["mindate"], selection["maxdate"]) == (
        "2023/01/01", "2023/01/31")
    searches = [r["query"] for r in mirror.requests if r["path"] == ESEARCH]
    assert [(q["retstart"], q["retmax"], q["datetype"]) for q in searches] == [("0", "3", "pdat"), ("3", "3", "pdat")]
    drawn_open = [p for p in selection["pmcids"] if p != "PMC9000003"]                # 9000003 is not Open Access
    assert sorted(manifest["articles"]) == sorted(drawn_open)
    if "PMC9000003" in selection["pmcids"]:
        assert "idIsNotOpenAccess" in manifest["skipped"]["PMC9000003"]
    # the same selection again: the recorded list, no search
    fetch(mirror, selection=Selection(3, seed=1))
    assert len([r for r in mirror.requests if r["path"] == ESEARCH]) == 2
    # elsewhere, from the manifest: exactly the same articles, no search at all
    other = tmp_path / "other"
    assert main(["download", "pmc_oa", "--ids-from", str(data_cache / "pmc_oa" / "manifest.json"), "--dest",
                 str(other), "--base-url", mirror.url, "--no-progress"]) == 0
    assert sorted(p.stem for p in (other / "pmc_oa").glob("PMC*.xml")) == sorted(drawn_open)
    assert len([r for r in mirror.requests if r["path"] == ESEARCH]) == 2
    monkeypatch.setattr(pmc_selection, "MAX_POOL", 3)
    with pytest.raises(ValueError, match=r"matches 4 articles, more than 3 to draw from; narrow it with --dates"):
        fetch(mirror, selection=Selection(2, seed=5))


def test_one_failing_article_is_recorded_and_the_others_go_on(mirror, data_cache):
    mirror.faults[EFETCH] = ["500", "500", "500"]                   # the first article's efetch fails every retry
    said = []
    [report] = download("pmc_oa", ids=["PMC9000001", "PMC9000002", "PMC9000004"], log=said.append,
                        transport=Transport(mirror.url, retries=2, backoff=0, progress=False), limiter=RateLimiter(0))
    manifest = json.loads((data_cache / "pmc_oa" / "manifest.json").read_text())
    assert sorted(manifest["articles"]) == ["PMC9000002", "PMC9000004"]
    assert "HTTP 500" in manifest["failed"]["PMC9000001"]["error"]
    assert any(n.startswith("1 failed (PMC9000001): why is recorded in") for n in report.notes)
    assert said[-1].startswith("pmc_oa: 3 articles asked: 1 failed, 2 saved; 1 failed (listed in")
    fetch(mirror, ids=["PMC9000001", "PMC9000002", "PMC9000004"])     # a re-run retries the failed one only
    manifest = json.loads((data_cache / "pmc_oa" / "manifest.json").read_text())
    assert sorted(manifest["articles"]) == ["PMC9000001", "PMC9000002", "PMC9000004"] and not manifest["failed"]
    assert [r["query"]["id"] for r in mirror.requests if r["path"] == EFETCH][-1] == "9000001"


def test_an_interrupted_run_keeps_the_records_of_what_it_saved(mirror, data_cache):
    ncbi = NCBI(Transport(mirror.url, retries=0, backoff=0, progress=False), limiter=RateLimiter(0))
    folder = data_cache / "pmc_oa"
    folder.mkdir(parents=True)
    real, calls = ncbi.jats, []

    def jats_then_killed(pmcid, hint):
        calls.append(pmcid)
        if len(calls) == 2:
            raise KeyboardInterrupt                                   # the user presses Ctrl-C mid-batch
        return real(pmcid, hint)

    ncbi.jats = jats_then_killed
    with pytest.raises(KeyboardInterrupt):
        fetch_pmc_articles(["PMC9000001", "PMC9000002", "PMC9000004"], folder, ncbi, log=lambda *a: None)
    manifest = json.loads((folder / "manifest.json").read_text())
    assert list(manifest["articles"]) == ["PMC9000001"] and manifest["articles"]["PMC9000001"]["licence"] == "CC BY"


def test_a_rerun_completes_the_records_of_articles_already_on_disk(mirror, data_cache):
    fetch(mirror, ids=["PMC9000001", "PMC9000002"])
    folder = data_cache / "pmc_oa"
    for leftover in [folder / "manifest.json", *folder.glob("records/*.json")]:
        leftover.unlink()                                 # as an older rag_lab left it: files, no licence records
    efetches = len([r for r in mirror.requests if r["path"] == EFETCH])
    fetch(mirror, ids=["PMC9000001", "PMC9000002"])
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["articles"]["PMC9000002"]["licence"] == "CC BY-NC"
    assert manifest["articles"]["PMC9000001"]["sha256"] and manifest["articles"]["PMC9000001"]["full_text"] is True
    assert len([r for r in mirror.requests if r["path"] == EFETCH]) == efetches      # no article fetched again
    oas = len([r for r in mirror.requests if r["path"] == OA])
    fetch(mirror, ids=["PMC9000001", "PMC9000002"])                                 # complete: no request at all
    assert len([r for r in mirror.requests if r["path"] == OA]) == oas


def test_the_command_line_says_which_articles_to_give(mirror, data_cache, capsys):
    assert main(["download", "pmc_oa", "--base-url", mirror.url]) == 2
    assert "--count N [--seed S] draws N Open Access articles" in capsys.readouterr().err
    assert main(["download", "pmc_oa", "--count", "2", "--ids", "PMC1", "--base-url", mirror.url]) == 2
    assert "not both" in capsys.readouterr().err
    assert main(["download", "pmc_oa", "--dates", "2023", "--count", "2", "--base-url", mirror.url]) == 2
    assert "--dates is FROM:TO" in capsys.readouterr().err
    assert main(["download", "pubmedqa", "--count", "2", "--base-url", mirror.url]) == 2
    assert "--count do(es) not apply" in capsys.readouterr().err
