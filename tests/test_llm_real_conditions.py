"""The LLM path against a local OpenAI-compatible server that misbehaves as real ones do (issue 37): a
server that refuses json_schema gives the same index at concurrency 1 and 8; one limiter per process per
backend; no key from a spec, an environment URL or a header in any record or printed line; identical
requests sent once; the reasoner's identity; Retry-After handling and the fallback requests counted; Ctrl-C
cancels calls in flight; failed inputs counted once; every SQLite cache private; worker paths kept inside.
Each test fails on the code before the fix. Dask: tests/test_cluster_llm.py."""
from __future__ import annotations

import json
import logging
import os
import re
import signal
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from fake_openai_server import Reply, fake_openai  # noqa: F401  (fixture)
from schema_responder import reply as schema_reply

from rag_lab.caching import trust
from rag_lab.reasoning import batch
from rag_lab.reasoning.backends import parse_spec, spec_name
from rag_lab.reasoning.batch import BatchError, run_batch
from rag_lab.reasoning.llm import LLMBackendError, LLMReasoner
from rag_lab.reasoning.llm_cache import CachedReply, LLMCache
from rag_lab.reasoning.prompts import PROMPTS
from rag_lab.reasoning.rate_limit import shared_limiter

SECRET = "sk-planted-SECRET-0123456789"
ROOT = Path(__file__).resolve().parents[1]


def llm(server, tmp_path, concurrency, cache=None, **kw):
    kw.setdefault("retry_base_delay", 0.01)
    kw.setdefault("timeout", 10)
    return LLMReasoner.from_spec(f"openai-compatible:fake-model@{server.base_url}", concurrency=concurrency,
                                 cache=tmp_path / cache if cache else False, **kw)


# --- 1. a server that refuses json_schema -------------------------------------------------------------

JOB_OF_SYSTEM = {p.system: job for job, p in PROMPTS.items()}


def no_json_schema(request):
    """Refuses structured output (as vLLM without a grammar backend does) and answers JSON mode with the
    schema responder's reply for the job the system prompt names."""
    fmt = request.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return Reply("response_format type json_schema is not supported by this server", status=400)
    if fmt.get("type") != "json_object":
        return Reply("expected JSON mode", status=422)            # 'none' would be a wrong downgrade
    job = JOB_OF_SYSTEM[request["messages"][0]["content"]]
    n = re.search(r"\[(\d+) strings\]", request["messages"][-1]["content"])
    schema = {"properties": {"themes": {"minItems": int(n.group(1)) if n else 0}}}
    return json.dumps(schema_reply({**request, "response_format": {"json_schema": {"name": job, "schema": schema}}}))


@pytest.mark.parametrize("concurrency", [1, 8])
def test_a_refused_json_schema_steps_down_once_to_json_object_at_any_concurrency(fake_openai, tmp_path, caplog,
                                                                                 concurrency):
    fake_openai.responder, fake_openai.delay = no_json_schema, 0.05
    r = llm(fake_openai, tmp_path, concurrency)
    texts = [f"Alpha{c} meets Beta{c} in Genoa." for c in "abcdefghijklmnop"]
    out = run_batch(r.triples, texts, "triples", reasoner=r, progress=False)
    assert [(t.subject, t.object) for ts in out for t in ts][:2] == [("Alphaa", "Betaa"), ("Betaa", "Genoa")]
    assert r.backend.response_format == "json_object" and r.stats["fallbacks"] == 0
    assert all((q.get("response_format") or {}).get("type") in ("json_schema", "json_object")
               for q in fake_openai.requests)                     # never stepped past json_object to 'none'
    refusals = [m for m in caplog.messages if "refused" in m]
    assert len(refusals) == 1 and "response_format=json_schema" in refusals[0]
    # every refused request was sent again through the limiter and counted
    assert r.stats["requests"] == len(fake_openai.requests) == 16 + sum(
        (q.get("response_format") or {}).get("type") == "json_schema" for q in fake_openai.requests)


def test_sketch_index_is_the_same_at_concurrency_1_and_8_when_json_schema_is_refused(fake_openai, tmp_path,
                                                                                     embedder):
    from test_llm_concurrency import DOCS, graph_of, sketch_over

    fake_openai.responder, fake_openai.delay = no_json_schema, 0.02
    one = sketch_over(llm(fake_openai, tmp_path, 1), embedder)
    eight = sketch_over(llm(fake_openai, tmp_path, 8), embedder)
    assert graph_of(one) == graph_of(eight) and len(one.graph) > 5 and len(DOCS) == 3


# --- 2. one limiter per process per backend ---------------------------------------------------------------

def test_reasoners_on_one_backend_share_one_limiter_and_its_ceiling(fake_openai, tmp_path):
    fake_openai.responder, fake_openai.delay = no_json_schema, 0.05
    a, b = llm(fake_openai, tmp_path, 3), llm(fake_openai, tmp_path, 3)
    assert a.limiter is b.limiter and a.limiter.concurrency == 3
    other = shared_limiter("openai-compatible:other@http://127.0.0.1:1/v1", None, 3)
    assert other is not a.limiter
    errors = []

    def build(r, tag):
        try:
            run_batch(r.entities, [f"{tag}{c} meets Someone{c}." for c in "abcdefghijkl"], tag, reasoner=r, progress=False)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)
    threads = [threading.Thread(target=build, args=(r, tag)) for r, tag in ((a, "Left"), (b, "Right"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(fake_openai.requests) >= 24
    # two batches of three threads each, but the process holds three calls in flight for this backend
    assert 2 <= fake_openai.peak_in_flight <= 3


# --- 3. keys never reach a record ------------------------------------------------------------------

@pytest.mark.parametrize("spec, what", [
    (f"openai-compatible:m@http://h:8000/v1?api_key={SECRET}", "a query"),
    (f"openai-compatible:m@http://h:8000/v1#{SECRET}", "a fragment"),
    (f"openai-compatible:m@http://u:{SECRET}@h:8000/v1", "user info")])
def test_a_spec_url_that_could_carry_a_key_is_refused_without_showing_it(spec, what):
    with pytest.raises(ValueError, match=f"carries {what}") as info:
        parse_spec(spec)
    assert SECRET not in str(info.value) and "http://h:8000/v1" in str(info.value)


def test_environment_urls_that_could_carry_a_key_are_refused(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    monkeypatch.setenv("OPENAI_BASE_URL", f"https://proxy.example/v1?key={SECRET}")
    with pytest.raises(ValueError, match="OPENAI_BASE_URL: the URL https://proxy.example/v1 carries a query") as info:
        parse_spec("openai:gpt-4o")
    monkeypatch.delenv("OPENAI_BASE_URL")
    monkeypatch.setenv("OLLAMA_HOST", f"admin:{SECRET}@gpu-box:11434")
    with pytest.raises(ValueError, match="OLLAMA_HOST: the URL http://gpu-box:11434 carries user info") as second:
        parse_spec("ollama:qwen2.5")
    assert SECRET not in str(info.value) + str(second.value)


def test_a_spec_is_recorded_by_its_redacted_name():
    assert spec_name(f"openai-compatible:m@http://u:{SECRET}@h:8000/v1/?k={SECRET}#x") == \
        "openai-compatible:m@http://h:8000/v1"
    assert spec_name("openai:gpt-4o") == "openai:gpt-4o" and spec_name(None) is None


def test_run_records_hold_no_key_from_a_spec(tmp_path, monkeypatch, capsys):
    from rag_lab.runs.runner import read_runs, run_notebooks
    from rag_lab.runs.llm_parameters import recorded_manifest

    monkeypatch.delenv("RAG_LAB_LLM", raising=False)
    nb_dir = tmp_path / "notebooks"
    nb_dir.mkdir()
    (nb_dir / "01_x.ipynb").write_text(json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    bad = f"openai-compatible:m@http://127.0.0.1:9/v1?api_key={SECRET}"
    with pytest.raises(ValueError, match="01_x: parameter reasoner: .*carries a query") as info:
        run_notebooks(["01_x"], {"reasoner": bad}, notebook_dir=nb_dir, runs_dir=tmp_path / "runs")
    assert SECRET not in str(info.value) and not (tmp_path / "runs").exists()   # refused before a folder was made
    monkeypatch.setenv("RAG_LAB_LLM", bad)
    with pytest.raises(ValueError, match="RAG_LAB_LLM: .*carries a query"):
        run_notebooks(["01_x"], {}, notebook_dir=nb_dir, runs_dir=tmp_path / "runs")
    # a run recorded before the rule existed is shown by redacted names (report page, `rag_lab runs`)
    old = {"run_id": "r", "parameters": {"reasoner": bad}, "per_notebook": {"01_x": {"judge": bad}},
           "notebooks": [{"notebook": "01_x", "reasoner": bad, "judge": None, "parameters": {"reasoner": bad},
                          "changed": {"reasoner": bad}}]}
    folder = tmp_path / "old_runs" / "r"
    folder.mkdir(parents=True)
    (folder / "manifest.json").write_text(json.dumps(old))
    for manifest in (recorded_manifest(old), read_runs(tmp_path / "old_runs")[0][1]):
        assert SECRET not in json.dumps(manifest) and "http://127.0.0.1:9/v1" in json.dumps(manifest)
    from rag_lab.cli import main
    capsys.readouterr()
    assert main(["runs", "--runs-dir", str(tmp_path / "old_runs")]) == 0
    listing = capsys.readouterr().out
    assert "openai-compatible:m@http://127.0.0.1:9/v1" in listing and SECRET not in listing


def test_the_cli_logs_no_request_url(fake_openai, tmp_path):
    """A real CLI process with a key in the environment: nothing it prints holds the key or a request line."""
    fake_openai.responder = lambda req: json.dumps({"entities": ["Ada"], "answer": "x"})
    env = {**os.environ, "RAG_LAB_LLM_API_KEY": SECRET, "PYTHONPATH": str(ROOT), "RAG_LAB_CACHE": str(tmp_path / "c")}
    done = subprocess.run([sys.executable, "-m", "rag_lab", "doctor", "--llm",
                           f"openai-compatible:fake-model@{fake_openai.base_url}"], env=env, capture_output=True,
                          text=True, timeout=300, cwd=tmp_path)
    printed = done.stdout + done.stderr
    assert fake_openai.requests and fake_openai.headers[0]["Authorization"] == f"Bearer {SECRET}"
    assert SECRET not in printed and "HTTP Request" not in printed


def test_every_command_sets_httpx_to_warning(tmp_path, capsys):
    from rag_lab.cli import main

    logging.getLogger("httpx").setLevel(logging.NOTSET)
    assert main(["runs", "--runs-dir", str(tmp_path)]) == 0          # any command, not only doctor
    assert logging.getLogger("httpx").level == logging.WARNING


# --- 4. identical requests, one answer -------------------------------------------------------------

def sampling(request):
    """A model at a high temperature: every request gets a new answer."""
    sampling.n += 1
    return json.dumps({"answer": f"answer {sampling.n}"})


@pytest.mark.parametrize("concurrency", [1, 8])
def test_identical_texts_in_one_batch_are_asked_once(fake_openai, tmp_path, concurrency):
    sampling.n = 0
    fake_openai.responder, fake_openai.delay = sampling, 0.1
    r = llm(fake_openai, tmp_path, concurrency, cache="c")
    out = run_batch(lambda q: r.answer(q, ["ctx"]), ["same question"] * 4, "answers", reasoner=r, progress=False)
    assert out == ["answer 1"] * 4 and len(fake_openai.requests) == 1
    again = llm(fake_openai, tmp_path, concurrency, cache="c")            # a rebuild from the cache
    assert again.answer("same question", ["ctx"]) == "answer 1" and len(fake_openai.requests) == 1


def test_the_first_reply_stored_for_a_key_stays(tmp_path):
    cache = LLMCache(tmp_path)
    assert cache.put("k", "m", CachedReply("first", 1, 2)) == CachedReply("first", 1, 2)
    assert cache.put("k", "m", CachedReply("second", 3, 4)) == CachedReply("first", 1, 2)   # another worker, later
    assert cache.get("k") == CachedReply("first", 1, 2)


# --- 5. the reasoner's identity keys the index -------------------------------------------------------

def test_temperature_max_tokens_and_format_enter_the_fingerprint(fake_openai, tmp_path):
    base = llm(fake_openai, tmp_path, 1)
    assert base.identity()["temperature"] == 0.0 and base.identity()["response_format"] == "json_schema"
    variants = [llm(fake_openai, tmp_path, 1, temperature=0.9), llm(fake_openai, tmp_path, 1, max_tokens=64),
                llm(fake_openai, tmp_path, 1, response_format="json_object")]
    prints = {base.fingerprint(), *(v.fingerprint() for v in variants)}
    assert len(prints) == 4
    assert llm(fake_openai, tmp_path, 8).fingerprint() == base.fingerprint()   # concurrency changes no reply
    assert SECRET not in json.dumps(base.identity())


# --- 7. caches no one else can plant --------------------------------------------------------------

def every_cache(folder: Path):
    from rag_lab.core.embedding import EmbeddingCache
    from rag_lab.reasoning.judge import JudgeCache
    from rag_lab.reasoning.offline_cache import OfflineResultCache

    return [lambda: LLMCache(folder), lambda: OfflineResultCache(folder), lambda: JudgeCache("j", folder),
            lambda: EmbeddingCache(folder / "embeddings.sqlite")]


def test_every_sqlite_cache_is_made_private(tmp_path):
    for make in every_cache(tmp_path / "new" / "cache"):
        cache = make()
        path = Path(cache.path)
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "new").stat().st_mode) == 0o700       # every folder it had to make


def test_an_existing_cache_file_others_can_read_is_made_private(tmp_path):
    first = LLMCache(tmp_path)
    first.put("k", "m", CachedReply("r", 1, 1))
    first.close()
    Path(first.path).chmod(0o644)
    assert LLMCache(tmp_path).get("k") == CachedReply("r", 1, 1)
    assert stat.S_IMODE(Path(first.path).stat().st_mode) == 0o600


@pytest.mark.parametrize("index", range(4))         # the four caches of every_cache
def test_every_sqlite_cache_refuses_a_folder_others_can_write(tmp_path, index):
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(0o777)
    with pytest.raises(trust.UnsafeCacheError, match=r"writable by every user .*could plant values .*chmod go-w"):
        every_cache(folder)[index]()
    folder.chmod(0o700)
    planted = folder / "llm.sqlite"
    LLMCache(folder).close()
    os.chown(planted, 65534, -1)                                       # a file someone else owns
    with pytest.raises(trust.UnsafeCacheError, match="owned by"):
        LLMCache(folder)


def test_the_key_folder_is_checked_and_a_key_link_is_not_followed(tmp_path, monkeypatch):
    config = tmp_path / "config"
    monkeypatch.setenv("RAG_LAB_CONFIG", str(config))
    trust.forget_keys()
    try:
        config.mkdir(mode=0o777)
        config.chmod(0o777)
        with pytest.raises(trust.UnsafeCacheError, match="settings folder .* writable by every user"):
            trust.sign("a", "b")
        config.chmod(0o700)
        chosen = tmp_path / "their.key"
        chosen.write_text("00" * 32)
        chosen.chmod(0o600)
        (config / "cache.key").symlink_to(chosen)
        with pytest.raises(trust.UnsafeCacheError, match="is a symbolic link"):
            trust.sign("a", "b")
    finally:
        trust.forget_keys()


# --- 8. 429s and the requests a server makes us send again -----------------------------------------------

def test_a_refused_option_is_sent_again_through_the_limiter_and_counted(fake_openai, tmp_path):
    r = llm(fake_openai, tmp_path, 1)
    fake_openai.queue(Reply("Unsupported parameter: 'max_tokens'", status=400), {"answer": "ok"})
    assert r.answer("q", ["c"]) == "ok"
    assert r.stats["requests"] == 2 == len(fake_openai.requests) and r.stats["retries"] == 0


def test_a_refused_call_gives_back_its_tokens(fake_openai, tmp_path):
    r = llm(fake_openai, tmp_path, 1, tokens_per_minute=10_000, max_retries=0)
    full = r.limiter.available
    fake_openai.queue(Reply("model not found", status=404))
    with pytest.raises(LLMBackendError, match="HTTP 404"):
        r.answer("q", ["c"])
    assert r.limiter.available == pytest.approx(full, abs=5)      # nothing stays charged (refill: a few tokens)


# --- 9. Ctrl-C, and failed inputs -----------------------------------------------------------------------

@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(), reason="needs the main thread")
@pytest.mark.parametrize("signalled", ["process", "worker thread"])
def test_ctrl_c_cancels_the_calls_in_flight(fake_openai, tmp_path, signalled):
    """The server holds every request until the test lets it go (or 20 s pass). Ctrl-C arrives while four
    are in flight: the batch must return before the server answered any of them.

    A process started in the background without job control (CI, ``make test &``) inherits SIGINT as
    ignored, and Python then installs no KeyboardInterrupt handler: the test installs Python's own for
    its run, as an interactive shell would have it. The signal goes to the process, or to one worker
    thread (where the OS may deliver a real Ctrl-C)."""
    release, answered, arrived = threading.Event(), [], []

    def slow(request):
        arrived.append(1)
        if len(arrived) == 4:
            if signalled == "process":
                os.kill(os.getpid(), signal.SIGINT)        # the user presses Ctrl-C
            else:
                worker = next(t for t in threading.enumerate() if t.name.startswith("rag_lab-batch"))
                signal.pthread_kill(worker.ident, signal.SIGINT)
        release.wait(20)
        answered.append(1)
        return json.dumps({"answer": "late"})

    fake_openai.responder = slow
    r = llm(fake_openai, tmp_path, 4, max_retries=3, timeout=60)
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            run_batch(lambda q: r.answer(q, ["c"]), [f"q{i}" for i in range(8)], "answers", reasoner=r,
                      progress=False)
        assert answered == [] and len(arrived) == 4          # nothing waited for the server; nothing new was sent
    finally:
        signal.signal(signal.SIGINT, before)
        release.set()
    assert not r._cancel.is_set()                            # the reasoner works again afterwards
    fake_openai.responder = lambda req: json.dumps({"answer": "ok"})
    assert r.answer("after", ["c"]) == "ok"


def test_a_wrong_key_costs_ten_calls_at_concurrency_8_and_failures_count_inputs(fake_openai, tmp_path, monkeypatch):
    seen = []

    class Bar:
        failed = 0

        def advance(self, n=1, failed=0):
            self.failed += failed

    import contextlib

    @contextlib.contextmanager
    def recording_bar(*a, **k):
        bar = Bar()
        seen.append(bar)
        yield bar
    monkeypatch.setattr(batch, "progress_bar", recording_bar)
    fake_openai.responder = lambda req: Reply("Incorrect API key provided", status=401, delay=0.02)
    r = llm(fake_openai, tmp_path, 8)
    with pytest.raises(BatchError, match="stopped early"):
        run_batch(lambda q: r.answer(q, ["c"]), [f"q{i}" for i in range(100)], "answers", reasoner=r)
    assert len(fake_openai.requests) == 10 and seen[0].failed == 10
    # an input that failed once and then succeeded is not a failed input
    calls = {}

    def flaky(i):
        calls[i] = calls.get(i, 0) + 1
        if calls[i] == 1 and i in (1, 2):
            raise TimeoutError("no reply")
        return i
    assert run_batch(flaky, range(5), "flaky", concurrency=2, retries=2) == [0, 1, 2, 3, 4]
    assert seen[1].failed == 0


# --- 10. what a worker names stays inside -------------------------------------------------------------

def test_a_worker_path_that_leaves_its_folder_is_refused(tmp_path):
    from rag_lab.caching.atomic import inside

    root = tmp_path / "root"
    root.mkdir()
    (root / "link").symlink_to(tmp_path)
    assert inside(root, "token_embeddings/a.npy") == root / "token_embeddings" / "a.npy"
    for bad in ["../x", "a/../../x", "/etc/passwd", "", "link/x", "a\\..\\x", None]:
        assert inside(root, bad) is None, bad
