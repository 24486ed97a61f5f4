"""The Wikipedia loader on MediaWiki API responses in the upstream format (tests/fixtures/wikipedia),
read from a folder, fetched from a local HTTP server on 127.0.0.1, and failing clearly offline."""
from __future__ import annotations

import json
import shutil
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from rag_lab import load_dataset
from rag_lab.datasets.loaders.wikipedia import (WikiEngine, WikipediaUnavailableError, clean_extract, load_wikipedia,
                                                parse_extract, slug)

FIXTURE = Path(__file__).parent / "fixtures" / "wikipedia"


def test_reads_saved_responses_offline_through_the_registry():
    data = load_dataset("wikipedia", path=FIXTURE, online=False, articles_per_topic=2)
    # machine learning: "Machine learning", "Ghost page" (missing: skipped), "Supervised learning";
    # artificial intelligence: "Artificial intelligence", "Machine learning" (already taken), "Expert system"
    assert [d.id for d in data.documents] == ["wiki-machine-learning", "wiki-supervised-learning",
                                              "wiki-artificial-intelligence", "wiki-expert-system"]
    ml = data.documents[0]
    assert ml.title == "Machine learning" and ml.meta["topic"] == "Machine learning" and ml.meta["pageid"] == 101
    assert ml.text == ("Machine learning studies programs that improve with data. It sits between statistics and "
                       "computer science.\n\nEarly researchers trained simple learning machines on punched cards."
                       "\n\nLater systems fitted a line to noisy points.\n\nModels are fitted by lowering a loss on examples.")
    assert "References" not in ml.text and "Statistics" not in ml.text and "displaystyle" not in ml.text
    assert [(s.title, s.kind, ml.text[s.start:s.end]) for s in ml.sections] == [
        ("History", "section", "Early researchers trained simple learning machines on punched cards.\n\n"
                               "Later systems fitted a line to noisy points."),
        ("Later work", "subsection", "Later systems fitted a line to noisy points."),
        ("Methods", "section", "Models are fitted by lowering a loss on examples.")]
    # formatversion=1 page (pages keyed by id) reads the same way
    assert data.documents[1].text == "Supervised learning uses labelled examples.\n\nSpam filters are a common use."


def test_clean_extract_drops_back_matter_and_nested_headings():
    text, sections = clean_extract("Lead.\n== A ==\nBody a.\n== Notes ==\n=== Inner ===\nGone.\n== B ==\nBody b.\n")
    assert text == "Lead.\n\nBody a.\n\nBody b." and [s.title for s in sections] == ["A", "B"]


def test_parse_extract_missing_and_api_errors():
    assert parse_extract({"query": {"pages": [{"title": "X", "missing": True}]}}) is None
    assert parse_extract({"query": {"pages": {"-1": {"ns": 0, "title": "X", "missing": ""}}}}) is None
    with pytest.raises(ValueError, match="error 'badvalue'"):
        parse_extract({"error": {"code": "badvalue", "info": "bad"}})


class _FixtureAPI(BaseHTTPRequestHandler):
    """Serves the fixture files as if it were the MediaWiki API (chooses the file from the query)."""

    requests: list[dict] = []

    def log_message(self, *args):
        pass

    def do_GET(self):
        q = {k: v[0] for k, v in urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query).items()}
        type(self).requests.append(q)
        if q.get("list") == "search":
            path = FIXTURE / "search" / f"{slug(q['srsearch'])}-{q['srlimit']}.json"
        else:
            path = FIXTURE / "pages" / f"{slug(q['titles'])}.json"
        body = path.read_bytes() if path.exists() else b'{"error": {"code": "nope", "info": "not in fixture"}}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(autouse=True)
def no_waiting(monkeypatch):
    """The loader's one-request-a-second pacing and retry back-off, off for these tests."""
    from rag_lab.datasets.loaders import wikipedia

    monkeypatch.setattr(wikipedia, "REQUEST_INTERVAL", 0.0)
    monkeypatch.setattr(wikipedia, "BACKOFF", 0.0)


@pytest.fixture
def fixture_api():
    _FixtureAPI.requests = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _FixtureAPI)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/w/api.php"
    server.shutdown()
    server.server_close()


def test_fetches_from_the_api_saves_responses_and_replays_offline(fixture_api, tmp_path):
    data = load_wikipedia(articles_per_topic=2, path=tmp_path, api_url=fixture_api)
    assert len(data.documents) == 4
    sent = _FixtureAPI.requests
    assert sent[0]["list"] == "search" and sent[0]["srsearch"] == "Machine learning" and sent[0]["srlimit"] == "7"
    assert {"prop": "extracts", "explaintext": "1", "titles": "Machine learning"}.items() <= sent[1].items()
    assert json.loads((tmp_path / "pages" / "expert-system.json").read_text())["query"]["pages"][0]["pageid"] == 202
    # a second run reads the saved responses and sends nothing
    again = load_wikipedia(articles_per_topic=2, path=tmp_path, api_url=fixture_api, online=False)
    assert [d.text for d in again.documents] == [d.text for d in data.documents] and len(sent) == 1 + 3 + 1 + 2


def test_offline_without_saved_responses_fails_with_a_clear_message(tmp_path, refused_port):
    with pytest.raises(WikipediaUnavailableError) as e:
        load_wikipedia(path=tmp_path / "empty", api_url=f"http://127.0.0.1:{refused_port}/w/api.php", timeout=2)
    message = str(e.value)
    assert "could not fetch the search for 'Machine learning'" in message
    assert str(tmp_path / "empty") in message and "RAG_LAB_DATA_WIKIPEDIA" in message
    with pytest.raises(FileNotFoundError, match="online=False"):
        load_wikipedia(path=tmp_path / "empty", online=False)


def test_environment_variable_names_the_folder(tmp_path, monkeypatch):
    shutil.copytree(FIXTURE, tmp_path / "wiki")
    monkeypatch.setenv("RAG_LAB_DATA_WIKIPEDIA", str(tmp_path / "wiki"))
    assert WikiEngine(online=False).folder == tmp_path / "wiki"
    assert len(load_wikipedia(articles_per_topic=2, online=False).documents) == 4
