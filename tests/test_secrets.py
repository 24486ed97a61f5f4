"""An API key in the environment never reaches a file: the quickstart notebook is run against a
local fake OpenAI-compatible server with both key variables set to a unique marker, and every file
the run wrote (executed notebook, manifest, caches, logs, figures, tables) is searched for it. The NCBI
key and e-mail address likewise: a pmc_oa download whose efetch fails is run through the command line
against the local mirror, and every file it wrote and everything it printed or logged is searched."""
from __future__ import annotations

import base64
import json
import logging
import uuid

import pytest
from fake_openai_server import fake_openai  # noqa: F401  (a fixture)

from conftest import empty_cache, run_notebook_smoke
from download_server import MirrorServer



def _forms(secret: str) -> list[bytes]:
    """The marker as it could appear in a file: plain, JSON-escaped, UTF-16, base64 (any alignment)."""
    raw = secret.encode()
    forms = [raw, json.dumps(secret).encode()[1:-1], secret.encode("utf-16-le")]
    forms += [base64.b64encode(b"\0" * pad + raw)[4:-4] for pad in range(3)]
    return forms


@pytest.mark.notebook
def test_no_file_written_by_a_run_holds_the_api_key(fake_openai, tmp_path, monkeypatch, embedder):
    embedder.model  # noqa: B018 - the session's ONNX export, which the run's cache shares (no second export)
    marker = f"sk-rag-lab-secret-{uuid.uuid4().hex}"
    monkeypatch.setenv("RAG_LAB_LLM_API_KEY", marker)
    monkeypatch.setenv("OPENAI_API_KEY", marker)
    monkeypatch.setenv("RAG_LAB_CACHE", str(empty_cache(tmp_path / "cache")))  # the kernel inherits it: caches land here
    fake_openai.responder = lambda request: {"answer": "Pesto comes from Genoa."}
    log_file = tmp_path / "logs" / "run.log"
    log_file.parent.mkdir()
    handler = logging.FileHandler(log_file, encoding="utf-8")
    handler.setLevel(logging.DEBUG)
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        run_notebook_smoke("00_quickstart", {"limit": 2, "ks": [1, 3, 5], "answer_k": 3,
                                             "reasoner": f"openai-compatible:fake-model@{fake_openai.base_url}"},
                           tmp_path)
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)
        handler.close()
    # the key was really in use: every request carried it, and the answers came from the server
    assert fake_openai.requests and all(h.get("Authorization") == f"Bearer {marker}" for h in fake_openai.headers)
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    kinds = {p.suffix for p in written}
    assert {".ipynb", ".json", ".sqlite", ".log", ".png", ".csv", ".md"} <= kinds, kinds
    leaks = [str(p) for p in written if any(form in p.read_bytes() for form in _forms(marker))]
    assert not leaks, f"the API key was written to: {leaks}"


def test_the_search_would_find_the_key_in_any_of_its_forms():
    secret = "sk-rag-lab-secret-0123456789abcdef"
    for blob in (f"key={secret}".encode(), json.dumps({"k": secret}).encode(), secret.encode("utf-16-le"),
                 b"x" + base64.b64encode(b"Bearer " + secret.encode()), base64.b64encode(b"ab" + secret.encode())):
        assert any(form in blob for form in _forms(secret)), blob
    assert not any(form in b"sk-rag-lab-secret-0123" for form in _forms(secret))


def test_the_ncbi_key_and_email_reach_no_file_and_no_output(tmp_path, monkeypatch, capsys, caplog):
    from rag_lab.cli import main

    key, email = f"ncbi-{uuid.uuid4().hex}", f"keeper-{uuid.uuid4().hex[:8]}@example.org"
    monkeypatch.setenv("NCBI_API_KEY", key)
    monkeypatch.setenv("NCBI_EMAIL", email)
    server = MirrorServer()
    server.faults["/entrez/eutils/efetch.fcgi"] = ["500"] * 2          # the first article fails on every try
    try:
        with caplog.at_level(logging.DEBUG):
            code = main(["download", "pmc_oa", "--ids", "PMC9000001,PMC9000002", "--dest", str(tmp_path / "data"),
                         "--base-url", server.url, "--retries", "1", "--no-progress"])
    finally:
        server.stop()
    assert code == 0
    sent = [r["query"] for r in server.requests if r["path"] == "/entrez/eutils/efetch.fcgi"]
    assert sent and all(q["api_key"] == key and q["email"] == email for q in sent)     # really in use
    failed = json.loads((tmp_path / "data" / "pmc_oa" / "manifest.json").read_text())["failed"]["PMC9000001"]
    assert "api_key=REDACTED" in failed["error"] and "email=REDACTED" in failed["error"]
    out = capsys.readouterr()
    said = (out.out + out.err + caplog.text).encode()
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    for secret in (key, email):
        assert not any(form in said for form in _forms(secret)), f"{secret} was printed or logged"
        leaks = [str(p) for p in written if any(form in p.read_bytes() for form in _forms(secret))]
        assert not leaks, f"{secret} was written to: {leaks}"


@pytest.mark.notebook
def test_a_key_the_judge_server_echoes_reaches_no_file_and_a_judge_that_always_fails_fails_the_run(
        fake_openai, tmp_path, monkeypatch, capfd, embedder):
    """Issue 48: a server that answers the judge with the key in its 401, 429 and 500 messages (ragas logs
    those errors into the notebook); then one that refuses every judge call: the run fails, naming it."""
    from fake_openai_server import Reply
    from test_answer_metrics import agreeable_judge

    from rag_lab.runs.runner import run_notebooks

    embedder.model  # noqa: B018 - the session's ONNX export, which the run's cache shares (no second export)
    marker = f"sk-rag-lab-echoed-{uuid.uuid4().hex}"
    monkeypatch.setenv("RAG_LAB_LLM_API_KEY", marker)
    monkeypatch.setenv("RAG_LAB_CACHE", str(empty_cache(tmp_path / "cache")))
    seen = []

    def echoing(request):
        seen.append(1)
        status = (401, 429, 500, None)[len(seen) % 4]
        return agreeable_judge(request) if status is None else Reply("refused", status=status, echo_key=True)

    fake_openai.responder = echoing
    spec = f"openai-compatible:judge-model@{fake_openai.base_url}"
    params = {"limit": 2, "ks": [1, 3, 5], "answer_k": 3, "reasoner": "offline", "judge": spec}
    mixed = run_notebooks(["00_quickstart"], params, runs_dir=tmp_path / "runs", figures_root=tmp_path / "figures",
                          progress=False)
    fake_openai.responder = lambda request: Reply("Incorrect API key", status=401, echo_key=True)
    failed = run_notebooks(["00_quickstart"], {**params, "answer_k": 2}, runs_dir=tmp_path / "runs",
                           figures_root=tmp_path / "figures", progress=False, run_id="all-failed")
    assert len(seen) >= 4 and all(h.get("Authorization") == f"Bearer {marker}" for h in fake_openai.headers)
    entry = failed["notebooks"][0]
    assert entry["status"] == "failed" and "every one of its" in entry["error"] and "***" in entry["error"]
    assert mixed["notebooks"][0]["status"] == "ok", mixed["notebooks"][0].get("error")
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.suffix == ".html" for p in written)
    leaks = [str(p) for p in written if any(form in p.read_bytes() for form in _forms(marker))]
    assert not leaks, f"the echoed key was written to: {leaks}"
    said = "".join(capfd.readouterr()).encode()
    assert not any(form in said for form in _forms(marker)), "the echoed key was printed"
