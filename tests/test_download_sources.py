"""Every download name against the local mirror (tests/download_server.py): download -> the files land in
the data cache -> the loader reads them by name. The fixture files are small, written for these tests, in
the upstream layouts (field names, nesting, compression)."""
from __future__ import annotations

import hashlib
import json
from dataclasses import replace

import pytest
from download_server import data_cache, mirror, mirror_files, served_here  # noqa: F401  (pytest fixtures)

from rag_lab.datasets import available_datasets, load_dataset
from rag_lab.datasets import sources as src
from rag_lab.datasets.download import download
from rag_lab.caching.atomic import sha256_file
from rag_lab.datasets.transport import ChecksumError, OfflineError, RateLimiter, Transport
from rag_lab.datasets.vocabulary import load_mesh_descriptors

QUIET = dict(log=lambda *a: None)


def fetch(name, server, **kw):
    return download(name, transport=Transport(server.url, backoff=0, progress=False), **QUIET, **kw)


def test_every_source_has_a_licence_and_official_https_urls():
    for s in src.SOURCES.values():
        assert s.licence and s.homepage.startswith("https://")
        assert s.urls() and all(u.startswith("https://") for u in s.urls()), s.name


def test_pubmedqa(mirror, data_cache, monkeypatch):
    served_here(monkeypatch, mirror, "pubmedqa")                # the official host: its checksum is recorded
    [report] = download("pubmedqa", transport=Transport(None, backoff=0, progress=False), **QUIET)
    file = data_cache / "pubmedqa" / "ori_pqal.json"
    assert report.files[0].path == file and file.is_file()
    assert "recorded on first use" in report.files[0].check and sha256_file(file) in report.files[0].check
    recorded = json.loads((data_cache / "checksums.json").read_text())
    assert recorded[src.SOURCES["pubmedqa"].files[0].url]["sha256"] == sha256_file(file)
    data = load_dataset("pubmedqa")
    assert [d.id for d in data.documents] == ["80000101", "80000102"]
    assert [s.title for s in data.documents[1].sections] == ["OBJECTIVE", "METHODS", "RESULTS"]
    assert data.questions[0].meta["final_decision"] == "yes"
    assert "\u00b1 2" in data.documents[0].text                     # the JSON \u escape decoded


def test_qasper_tarballs_unpacked(mirror, data_cache):
    [report] = fetch("qasper", mirror)
    folder = data_cache / "qasper"
    assert sorted(p.name for p in folder.glob("*.json")) == ["qasper-dev-v0.3.json", "qasper-test-v0.3.json",
                                                             "qasper-train-v0.3.json"]
    assert not (folder / "README.md").exists()                    # only the named members are unpacked
    dev = load_dataset("qasper")
    assert [d.id for d in dev.documents] == ["2201.00002"] and [q.id for q in dev.questions] == ["bbb1", "bbb2"]
    assert dev.questions[0].gold_contexts == ["We wrote 40 sentences by hand."]
    assert load_dataset("qasper", split="test").questions[0].answer == "9 of 10"
    # a second run needs no network: everything is unpacked already
    requests = len(mirror.requests)
    fetch("qasper", mirror)
    assert len(mirror.requests) == requests


def test_qasper_one_split_fetches_one_archive(mirror, data_cache):
    fetch("qasper", mirror, splits=["test"])
    assert [r["path"] for r in mirror.requests] == ["/qasper-test-and-evaluator-v0.3.tgz"]
    with pytest.raises(ValueError, match="unknown split"):
        fetch("qasper", mirror, splits=["validation"])


def test_quality_zip(mirror, data_cache):
    fetch("quality", mirror)
    folder = data_cache / "quality"
    assert sorted(p.name for p in folder.iterdir() if p.name.startswith("QuALITY.v1.0.1.")) == [
        "QuALITY.v1.0.1.htmlstripped.dev", "QuALITY.v1.0.1.htmlstripped.test", "QuALITY.v1.0.1.htmlstripped.train",
        "QuALITY.v1.0.1.zip"]                                    # the HTML variant stays in the zip
    dev = load_dataset("quality")
    # article 70002 is on two lines (two writers): one document, both question sets; gold 2 -> "A bakery"
    assert [d.id for d in dev.documents] == ["70002"]
    assert [q.answer for q in dev.questions] == ["A bakery", "Never"]
    assert load_dataset("quality", split="test").questions[0].answer is None      # no gold label in test


def test_narrativeqa_questions_and_summaries(mirror, data_cache):
    fetch("narrativeqa", mirror)
    assert (data_cache / "narrativeqa" / "third_party" / "wikipedia" / "summaries.csv").is_file()
    data = load_dataset("narrativeqa")
    assert [d.title for d in data.documents] == ["Canal Summer", "The Salt Road"]
    assert len(data.questions) == 3 and data.questions[0].meta["answers"] == ["On a canal boat",
                                                                               "A narrowboat, on the canal"]


def test_ragbench_pinned_checksums_refuse_other_bytes(mirror, data_cache):
    # the fixture parquet is not the real file, so the pinned Hugging Face checksum must refuse it
    with pytest.raises(ChecksumError, match="published value is 25bc50f0"):
        fetch("ragbench_covidqa", mirror)
    assert not list((data_cache / "ragbench").rglob("*.parquet*"))    # neither the file nor a .part is left
    with pytest.raises(ChecksumError, match="published value is dac74061"):    # the eManual file is pinned too
        fetch("ragbench_emanual", mirror)


def test_github_files_are_read_at_a_pinned_commit():
    github = [f.url for s in src.SOURCES.values() for f in s.files
              if "github.com/" in f.url or "githubusercontent" in f.url]
    assert len(github) == 6
    for url in github:
        assert any(f"/{commit}/" in url for commit in src.GITHUB_COMMITS.values()), url
        assert "/master/" not in url and "/main/" not in url


def test_ragbench_group_with_pins_set_to_the_fixtures(mirror, data_cache, monkeypatch):
    for name in ("ragbench_covidqa", "ragbench_emanual", "ragbench_techqa"):   # pin the fixtures' own checksums
        s = src.SOURCES[name]
        files = tuple(replace(f, sha256=sha256_of(f.url.replace("https://huggingface.co", "")))
                      if "/test-" in f.url else f for f in s.files)
        monkeypatch.setitem(src.SOURCES, name, replace(s, files=files))
    reports = fetch("ragbench", mirror)
    assert [r.source.name for r in reports] == ["ragbench_covidqa", "ragbench_emanual", "ragbench_techqa"]
    checks = [r.files[0].check for r in reports]
    assert all(check.startswith("pinned SHA-256 matches") for check in checks)
    covid = load_dataset("ragbench_covidqa")
    assert [q.id for q in covid.questions] == ["cq-t1", "cq-t2"]
    assert covid.questions[0].gold_contexts == ["An invented swab test returned a result in twenty minutes."]
    assert load_dataset("ragbench_emanual").questions[0].answer == "Hold the power button for ten seconds."
    assert len(load_dataset("ragbench_techqa").questions[0].gold_contexts) == 2


def sha256_of(path):
    return hashlib.sha256(mirror_files()[path]).hexdigest()


def test_covidqa_squad_format(mirror, data_cache):
    fetch("covidqa", mirror)
    data = load_dataset("covidqa")
    assert [d.id for d in data.documents] == ["7001", "7002"] and [q.id for q in data.questions] == ["101", "102",
                                                                                                     "103"]
    q = data.questions[0]
    doc = data.documents[0]
    assert q.answer == "35 minutes" and q.gold_doc_ids == ["7001"]
    # gold: the answer's sentence (not the whole article), placed by offset
    sentence = "The assay detected viral RNA within 35 minutes and missed no sample that a reference method had found."
    assert q.gold_contexts == [sentence] and doc.text[q.gold_context_offsets[0]:].startswith(sentence)
    assert q.gold_section_ids == ["7001:p0"] and [s.kind for s in doc.sections] == ["paragraph"]
    assert data.meta["misplaced_spans"] == 1          # question 103's answer_start is 3 characters off: relocated
    assert data.meta["answer_spans"] == {"placed": 2, "relocated": 1, "not_found": 0, "duplicates": 0}
    assert data.questions[2].gold_contexts == ["The filter ran at 300 cubic metres per hour."]


def test_squad_v2_dev(mirror, data_cache):
    fetch("squad", mirror)
    data = load_dataset("squad")
    guild = data.documents[0]
    assert (guild.id, guild.title) == ("harbour-guild", "Harbour_Guild")
    # two paragraphs joined by a blank line: the second starts 2 characters after the first ends
    first, second = guild.sections
    assert second.start == first.end + 2 and guild.text[second.start:second.end].startswith("Members paid")
    unanswerable = data.questions[1]
    assert unanswerable.answer is None and unanswerable.gold_doc_ids == [] and unanswerable.gold_contexts == []
    assert unanswerable.meta["plausible_answers"] == ["ferry pilots"]
    assert data.questions[2].gold_section_ids == [second.id] and data.meta["misplaced_spans"] == 0
    other = load_dataset("squad", path=data_cache / "squad" / "dev-v2.0.json", max_documents=1)
    assert [d.id for d in other.documents] == ["harbour-guild"]


def test_mesh_descriptors(mirror, data_cache):
    [report] = fetch("mesh", mirror)
    assert report.files[0].path == data_cache / "mesh" / "desc2026.xml"
    vocab = load_mesh_descriptors()                                 # no path: the downloaded file
    coastal = vocab["D900002"]
    assert coastal.synonyms == ("Coastal Lantern Fever",)
    assert set(coastal.relations) == {("is_a", "D900001"), ("associated_with", "D900003")}
    assert vocab["D900001"].synonyms == ("Keeper's Fever",)         # the permuted term is left out
    # NLM rewrites the file in place: a changed file downloads again without a checksum error
    path = "/projects/mesh/MESH_FILES/xmlmesh/desc2026.xml"
    mirror.files[path] = mirror.files[path].replace(b"Keeper's Fever", b"Keepers' Fever")
    [again] = fetch("mesh", mirror, force=True)
    assert "not recorded (fetched from http://127.0.0.1:" in again.files[0].check and load_mesh_descriptors()["D900001"].synonyms == (
        "Keepers' Fever",)
    with pytest.raises(ValueError, match="--year"):
        fetch("mesh", mirror, year="last")


def test_pmc_oa_by_pmcid(mirror, data_cache, monkeypatch):
    monkeypatch.setenv("NCBI_API_KEY", "test-key")
    [report] = fetch("pmc_oa", mirror, ids=["PMC9000001", "9000002", "pmc9000003"])
    folder = data_cache / "pmc_oa"
    assert sorted(p.name for p in folder.glob("*.xml")) == ["PMC9000001.xml", "PMC9000002.xml"]
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["articles"]["PMC9000002"]["licence"] == "CC BY-NC"
    assert "idIsNotOpenAccess" in manifest["skipped"]["PMC9000003"] and report.notes
    efetch = [r for r in mirror.requests if r["path"] == "/entrez/eutils/efetch.fcgi"]
    assert [r["query"]["id"] for r in efetch] == ["9000001", "9000002"]      # no efetch for the closed article
    assert all(r["query"]["tool"] == "rag_lab" and r["query"]["api_key"] == "test-key" for r in efetch)
    data = load_dataset("pmc_oa", imrad_only=False, questions=False)
    assert [d.id for d in data.documents] == ["PMC9000001", "PMC9000002"]
    assert [s.title for s in data.documents[1].sections if s.kind == "section"][-2:] == ["Case presentation",
                                                                                         "Conclusions"]
    with pytest.raises(ValueError, match="not a PMCID"):
        fetch("pmc_oa", mirror, ids=["doi:10.1/x"])
    with pytest.raises(ValueError, match="--ids"):
        fetch("pmc_oa", mirror)


def test_wikipedia_ssg_corpus(mirror, data_cache):
    limiter = RateLimiter(0)
    fetch("wikipedia", mirror, articles_per_topic=1, limiter=limiter)
    assert mirror.count("/w/api.php") == 4                          # two searches, two extracts
    data = load_dataset("wikipedia", articles_per_topic=1, online=False)
    assert [d.title for d in data.documents] == ["Machine learning", "Artificial intelligence"]
    assert "See also" not in data.documents[0].text and [s.title for s in data.documents[0].sections] == [
        "History", "Approaches"]
    manifest = json.loads((data_cache / "wikipedia" / "manifest.json").read_text())
    assert [d["title"] for d in manifest["documents"]] == ["Machine learning", "Artificial intelligence"]
    fetch("wikipedia", mirror, articles_per_topic=1, limiter=limiter)
    assert mirror.count("/w/api.php") == 4                          # saved responses are reused


def test_api_sources_offline_say_what_to_fetch_and_where(data_cache, refused_port):
    offline = Transport(f"http://127.0.0.1:{refused_port}", retries=0, backoff=0, progress=False)
    with pytest.raises(OfflineError) as e:
        download("pmc_oa", ids=["PMC9000001"], transport=offline, limiter=RateLimiter(0), **QUIET)
    assert "oa.fcgi" in str(e.value) and str(data_cache / "pmc_oa" / "PMC9000001.xml") in str(e.value)
    with pytest.raises(FileNotFoundError) as e:          # the wikipedia loader's own message
        download("wikipedia", articles_per_topic=1, transport=offline, limiter=RateLimiter(0), **QUIET)
    assert "/w/api.php" in str(e.value) and str(data_cache / "wikipedia" / "search") in str(e.value)


def test_loaders_look_in_the_cache_and_an_explicit_path_wins(mirror, data_cache, tmp_path):
    with pytest.raises(FileNotFoundError, match="python -m rag_lab download pubmedqa") as e:
        load_dataset("pubmedqa")
    assert str(data_cache / "pubmedqa") in str(e.value)
    fetch("pubmedqa", mirror)
    assert len(load_dataset("pubmedqa").documents) == 2
    other = tmp_path / "mine.json"
    other.write_text(json.dumps({"1": {"QUESTION": "q?", "CONTEXTS": ["one context"]}}))
    assert [d.id for d in load_dataset("pubmedqa", path=other).documents] == ["1"]
    # the shipped corpora do not move with $RAG_LAB_DATA
    assert len(load_dataset("italian_cuisine").documents) > 0
    assert {"squad", "covidqa", "pubmedqa"} <= set(available_datasets())
