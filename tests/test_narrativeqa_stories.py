"""NarrativeQA's full stories fetched from the URLs in documents.csv (the local mirror stands in for Project
Gutenberg and the script sites): gzip-compressed answers unpacked, each story recorded with its checksum, a
story that cannot be fetched recorded and left out by the loader with its questions, and nothing fetched twice."""
from __future__ import annotations

import json

import pytest
from download_server import data_cache, mirror  # noqa: F401  (pytest fixtures)

from rag_lab.datasets import load_dataset
from rag_lab.datasets.download import download
from rag_lab.datasets.stories import fetch_stories
from rag_lab.datasets.transport import Transport

SALT, CANAL, LANTERN = ("3b2c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e", "2a1b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d",
                        "1f0e3a9b2c4d5e6f708192a3b4c5d6e7f8091a2b")
NO_PAUSE = {"*": 0.0}


def test_stories_of_a_split_are_fetched_and_read_as_full_texts(mirror, data_cache, monkeypatch):
    import rag_lab.datasets.stories as stories

    monkeypatch.setattr(stories, "PAUSE", NO_PAUSE)
    monkeypatch.setattr(stories, "DEFAULT_PAUSE", 0.0)
    [report] = download("narrativeqa", stories=["valid"], transport=Transport(mirror.url, retries=0, backoff=0,
                                                                              progress=False), log=lambda *a: None)
    tmp = data_cache / "narrativeqa" / "tmp"
    assert sorted(p.name for p in tmp.glob("*.content")) == [f"{CANAL}.content", f"{SALT}.content"]
    assert (tmp / f"{SALT}.content").read_bytes().startswith(b"The Project Gutenberg-like")   # gunzipped
    record = json.loads((tmp / "stories.json").read_text())
    assert set(record) == {CANAL, SALT} and record[SALT]["url"].endswith("/ebooks/99999992.txt.utf-8")
    assert len(record[SALT]["sha256"]) == 64 and not report.notes
    data = load_dataset("narrativeqa", split="valid", source="stories")
    salt = next(d for d in data.documents if d.id == SALT)
    assert salt.text.startswith("THE SALT ROAD") and salt.text.endswith("FINIS")        # cut to the markers
    assert "NELL steers the narrowboat" in next(d for d in data.documents if d.id == CANAL).text
    assert len(data.questions) == 3
    requests = len(mirror.requests)
    download("narrativeqa", stories=["valid"], transport=Transport(mirror.url, retries=0, progress=False),
             log=lambda *a: None)
    assert len(mirror.requests) == requests                                             # all present: nothing fetched


def test_a_story_that_cannot_be_fetched_is_recorded_and_left_out(mirror, data_cache):
    t = Transport(mirror.url, retries=0, backoff=0, progress=False)
    download("narrativeqa", transport=t, log=lambda *a: None)                  # the CSV files
    said = []
    manifest = fetch_stories(data_cache / "narrativeqa", ["train"], t, log=said.append, pauses=NO_PAUSE)
    assert "not found (HTTP 404)" in manifest[LANTERN]["error"]                # the train story is gone upstream
    assert said[-1].startswith("narrativeqa stories (train): 0 saved, 0 already present, 1 failed; failures are")
    data = load_dataset("narrativeqa", split="train", source="stories")
    assert data.documents == [] and data.questions == [] and data.meta["documents_without_text"] == [LANTERN]
    # a story that was never downloaded (no record) still stops the loader, naming the command
    with pytest.raises(FileNotFoundError, match="python -m rag_lab download narrativeqa --stories valid"):
        load_dataset("narrativeqa", split="valid", source="stories")
    with pytest.raises(ValueError, match="--stories takes splits from train, valid, test"):
        fetch_stories(data_cache / "narrativeqa", ["dev"], t)
