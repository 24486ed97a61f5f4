"""Shared fixtures: one embedder for the session, a private cache, a notebook runner whose runs are made
once per session and read by every test that asks for them, and one Dask LocalCluster per session.

The suite runs on several processes (``make test``: pytest-xdist, ``-n 2 --dist loadgroup``). How the
work is shared out (``pytest_collection_modifyitems`` below):
- a test file is one unit of work unless its tests name an ``xdist_group``: its module-scoped fixtures
  (reference builds) are made once, on one worker; a new plain test file needs no mark;
- tests that use ``dask_cluster`` go to the group ``dask``, so one worker starts the session's cluster;
- files marked ``notebook`` or ``heavy`` are handed out first, so no long file starts last;
- the groups reach the scheduler through a file (``GROUPS``, written by the workers as they collect, read
  by ``GroupScheduling`` in the controller): pytest-xdist 3.8's own ``loadgroup`` appends the group to
  the test id, which pytest 9.2 no longer lets it change, so its groups are silently ignored
  (pytest-dev/pytest-xdist#1386) and a file's tests would be spread over both workers;
- the tests that build every method on the quality floor's cases (tests/quality_floor.py: the TREC
  equality, evaluation at k, the quality floor, reproducibility) are one group (``INDEXES``) and read and
  write the session store with reuse on (``quality_floor.reusing``): one worker builds each index once;
- a notebook run (``notebook_run``) is made once per (notebook, parameters) in a folder both workers see,
  under a file lock: the second worker to ask waits for it and reads it. Every execution of a project
  notebook, and every index built in a test process, is logged there and summed up at the end of the
  session (``pytest_terminal_summary``), with the indexes notebook kernels and subprocesses built and kept
  (found in the session's stores).
"""
from __future__ import annotations

import contextvars
import dataclasses
import json
import os
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# Several test processes share the cores (make test: one per core): each runs ONNX Runtime, BLAS and numba
# on one thread, so no two thread pools spin against each other (notebook kernels inherit it).
if int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")) > 1:
    for _var in ("RAG_LAB_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
        os.environ.setdefault(_var, "1")
# The session's store: one fresh cache (vectors, the ONNX export, reasoner results, indexes), and so a fresh
# data cache (downloads live in $RAG_LAB_DATA, else <cache>/data): a user's downloaded data sets never leak
# into tests. The key that signs cached indexes (rag_lab/caching/trust.py) is made in a private folder too,
# never in the user's ~/.config. Both are made once, by the process that starts the session (xdist's
# controller, or the only process): the workers it starts inherit them (``SESSION_ENV`` says they were made
# for this session), so every worker reads the vectors and the model export the others wrote and verifies
# what they signed. Notebook kernels inherit them too. Tests that test a build use a cache of their own.
SESSION_ENV = "RAG_LAB_TEST_SESSION"
if not (os.environ.get("PYTEST_XDIST_WORKER") and os.environ.get(SESSION_ENV) == os.environ.get("RAG_LAB_CACHE")):
    os.environ["RAG_LAB_CACHE"] = tempfile.mkdtemp(prefix="rag_lab_test_cache_")
    os.environ["RAG_LAB_CONFIG"] = tempfile.mkdtemp(prefix="rag_lab_test_config_")
    os.environ[SESSION_ENV] = os.environ["RAG_LAB_CACHE"]
os.environ.pop("RAG_LAB_DATA", None)
# Each test sees the build it asks for: persisted indexes and cached offline results are off unless a test
# turns them on (tests/test_index_store.py, tests/test_offline_cache.py).
os.environ["RAG_LAB_REUSE"] = "0"

ROOT = Path(__file__).resolve().parents[1]
SESSION_CACHE = Path(os.environ["RAG_LAB_CACHE"])
NOTEBOOKS = ROOT / "notebooks"
EXECUTIONS = "notebook_executions.jsonl"
BUILDS = "index_builds.jsonl"         # every index built in a test process (``_log_index_builds``)
INDEXES = "indexes"                   # the xdist group of the tests sharing the session store's indexes (above)
GROUPS = "xdist_groups.json"          # test id -> its group, for the scheduler (see above)
STORES = "session_store."             # + worker name: the cache that worker uses (one for all, see above)
# a file (or xdist group) marked so is handed out before the others: it runs for a minute or more
FIRST = ("notebook", "heavy")
# Executing a notebook (kernel start, model load, the notebook's own builds) takes minutes on two busy
# cores; the suite's default (--timeout in pyproject.toml) is for everything else.
NOTEBOOK_TIMEOUT = 900


def pytest_configure(config):
    config.addinivalue_line("markers", "heavy: runs for a minute or more; handed out first when tests run on "
                                       "several workers")


# -- sharing the work out ---------------------------------------------------------------------------
@pytest.hookimpl(tryfirst=True)          # before xdist's own (which no longer takes effect, see above)
def pytest_collection_modifyitems(config, items):
    for item in items:
        groups = {_group_name(m) for m in item.iter_markers("xdist_group")}
        if "dask_cluster" in getattr(item, "fixturenames", ()):
            if groups - {"dask"}:
                raise pytest.UsageError(f"{item.nodeid} uses dask_cluster (group 'dask') but is in the group(s) "
                                        f"{sorted(groups)}: one worker holds the session's cluster")
            if not groups:
                item.add_marker(pytest.mark.xdist_group("dask"))
        elif not groups:
            item.add_marker(pytest.mark.xdist_group(item.path.stem))
        if item.get_closest_marker("notebook") and not item.get_closest_marker("timeout"):
            item.add_marker(pytest.mark.timeout(NOTEBOOK_TIMEOUT))
    if os.environ.get("PYTEST_XDIST_WORKER"):
        # every worker sorts the same way (the scheduler checks the workers collected the same order)
        first = {_group_of(i) for i in items if any(i.get_closest_marker(m) for m in FIRST)}
        items.sort(key=lambda i: _group_of(i) not in first)
        from rag_lab.caching.atomic import write_text
        write_text(shared_folder(config._tmp_path_factory) / GROUPS,
                   json.dumps({item.nodeid: _group_of(item) for item in items}))
        write_text(shared_folder(config._tmp_path_factory) / f"{STORES}{os.environ['PYTEST_XDIST_WORKER']}",
                   os.environ["RAG_LAB_CACHE"])


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadgroup``: xdist's scheduler by scope, each scope a group as the workers wrote them."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    groups_file = shared_folder(config._tmp_path_factory) / GROUPS

    class GroupScheduling(LoadScopeScheduling):
        groups: dict | None = None

        def _split_scope(self, nodeid: str) -> str:
            if self.groups is None:      # first asked once every worker has collected (and written the file)
                self.groups = json.loads(groups_file.read_text(encoding="utf-8"))
            return self.groups.get(nodeid) or nodeid.rsplit("@", 1)[-1]

    return GroupScheduling(config, log)


def _group_name(mark) -> str:
    return str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))


def _group_of(item) -> str:
    return "_".join(sorted({_group_name(m) for m in item.iter_markers("xdist_group")}))


def shared_folder(tmp_path_factory) -> Path:
    """A folder every process of this session sees: the session's base temp (the workers' base temps
    are folders inside it)."""
    base = tmp_path_factory.getbasetemp()
    folder = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "shared"
    folder.mkdir(exist_ok=True)
    return folder


# -- caches -----------------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def embedder():
    from rag_lab.core.embedding import Embedder
    return Embedder()


def empty_cache(folder: Path) -> Path:
    """An empty rag_lab cache in ``folder`` that shares the session's ONNX export (made once, not what any
    test compares); call after the session's embedder has loaded its model."""
    folder.mkdir(parents=True)
    if (SESSION_CACHE / "onnx").exists():
        (folder / "onnx").symlink_to(SESSION_CACHE / "onnx")
    return folder


# -- notebooks --------------------------------------------------------------------------------------
def run_notebook_smoke(name: str, parameters: dict, tmp_path: Path) -> dict:
    """Execute one notebook under papermill with small parameters; fail with its traceback, when its
    executed output holds a Python warning, a traceback, a progress-bar fragment, a long decimal or a [-1, 1]
    interval, when a Markdown table it wrote is too long, too wide in a cell or has an empty column
    (tests/output_checks.py), or when a printed line breaks a rule of tests/sentence_checks.py (grammar,
    length, numbers beside "cannot be decided", counts and leaders against the ledger and tables).

    The kernel reuses indexes, and offline reasoner results (``RAG_LAB_REUSE=1``) in the cache
    it is given (the session store, or the run's own): a notebook test checks the notebook's tables, not a
    build, and a reused index gives what a fresh build gives (tests/test_determinism.py). So SSG's seven
    traversals build one graph, and notebook 10 reads the indexes notebooks 01-03 built over the same data.
    What a notebook times it builds with ``reuse=False`` itself (notebook 04's Table 3, notebook 11)."""
    from rag_lab.core.environment import environment
    from output_checks import output_problems, table_problems
    from rag_lab.runs.runner import run_notebooks
    from sentence_checks import run_problems

    with environment({"RAG_LAB_REUSE": "1"}):
        manifest = run_notebooks([name], parameters, runs_dir=tmp_path / "runs", figures_root=tmp_path / "figures",
                                 progress=False)
    entry = manifest["notebooks"][0]
    assert entry["status"] == "ok", f"{name} failed:\n{entry.get('traceback', entry.get('error'))}"
    problems = output_problems(tmp_path / "runs" / manifest["run_id"] / entry["output"])
    assert not problems, f"{name}: the executed notebook shows clutter a reader meets:\n" + "\n".join(problems)
    tables = [p for path in entry["files"] if path.endswith(".md") for p in table_problems(path)]
    assert not tables, f"{name}: tables a reader cannot take in:\n" + "\n".join(tables)
    sentences = run_problems(tmp_path / "runs" / manifest["run_id"], entry)     # tests/sentence_checks.py
    assert not sentences, f"{name}: printed sentences that do not read or disagree with the tables:\n" + "\n".join(sentences)
    return manifest


@dataclasses.dataclass(frozen=True)
class NotebookRun:
    """One executed notebook: its manifest and the folder holding ``runs/`` and ``figures/`` (laid out as
    ``run_notebook_smoke`` lays out a test's ``tmp_path``). Shared by the tests that read it: never write here."""
    manifest: dict
    root: Path

    @property
    def run_dir(self) -> Path:
        return self.root / "runs" / self.manifest["run_id"]

    @property
    def files(self) -> dict[str, Path]:
        """The files the notebook wrote, by file name."""
        return {Path(p).name: Path(p) for p in self.manifest["notebooks"][0]["files"]}


def made_once(folder: Path, make: Callable[[Path], object]):
    """What ``make(folder)`` returned (JSON), made by the first caller of the session on any worker and read
    back by every later one: a file lock on ``folder`` lets one make it while the others wait, and
    ``folder/done.json`` keeps the value, or the failure, which then fails every later caller too. (With
    pytest-xdist a session fixture is made once per worker, so sharing has to go through the disk.)"""
    from rag_lab.caching.atomic import write_text
    from rag_lab.caching.locked_json import locked

    done = folder / "done.json"
    with locked(folder):
        if not done.exists():
            folder.mkdir(parents=True, exist_ok=True)
            try:
                record = {"value": make(folder)}
            except (Exception, pytest.fail.Exception) as e:      # pytest.fail (and a timeout) raise BaseException
                write_text(done, json.dumps({"failure": f"{type(e).__name__}: {e}"}))
                raise
            write_text(done, json.dumps(record, default=str))
        record = json.loads(done.read_text(encoding="utf-8"))
    if "failure" in record:
        pytest.fail(f"{folder.name} failed when an earlier test made it:\n{record['failure']}")
    return record["value"]


@pytest.fixture(scope="session")
def notebook_run(tmp_path_factory, embedder):
    """``notebook_run(name, parameters)`` -> NotebookRun: the notebook executed with ``parameters`` (and
    checked as ``run_notebook_smoke`` checks it) once per session, in an empty cache of its own (sharing
    the ONNX export), whichever test or worker asks first (``made_once``); a run that failed fails every
    test that asks."""
    runs = shared_folder(tmp_path_factory) / "notebook-runs"

    def run(name: str, parameters: dict) -> NotebookRun:
        from rag_lab.runs.runner import parameter_hash

        def execute(folder: Path) -> dict:
            embedder.model   # noqa: B018 - the ONNX export the run's cache shares
            with pytest.MonkeyPatch.context() as mp:
                mp.setenv("RAG_LAB_CACHE", str(empty_cache(folder / "cache")))
                return run_notebook_smoke(name, parameters, folder)

        folder = runs / f"{name}-{parameter_hash(parameters)}"
        return NotebookRun(made_once(folder, execute), folder)

    return run


@pytest.fixture(scope="session", autouse=True)
def _log_notebook_executions(tmp_path_factory):
    """Note every notebook papermill executes in this process (notebook, parameters, Dask address) in the
    session's log, which ``pytest_terminal_summary`` sums up: each should appear once."""
    import papermill

    from rag_lab.evaluation.cluster import ADDRESS_ENV
    from rag_lab.runs.runner import parameter_hash

    log = shared_folder(tmp_path_factory) / EXECUTIONS
    real = papermill.execute_notebook

    def execute(input_path, output_path, parameters=None, **kwargs):
        given = {k: v for k, v in (parameters or {}).items() if k != "figures_dir"}
        line = {"notebook": Path(str(input_path)).stem, "project": Path(str(input_path)).parent == NOTEBOOKS,
                "parameters": parameter_hash(given), "cluster": os.environ.get(ADDRESS_ENV),
                "worker": os.environ.get("PYTEST_XDIST_WORKER", "main")}
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(line) + "\n")
        return real(input_path, output_path, parameters=parameters, **kwargs)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(papermill, "execute_notebook", execute)
        yield


_BUILDING: contextvars.ContextVar = contextvars.ContextVar("index key being built", default=None)


@pytest.fixture(scope="session", autouse=True)
def _log_index_builds(tmp_path_factory):
    """Note every index this process builds (``index_reuse._build_here``: one line a build, whether it is
    then saved or not) with its store key, None when built with reuse off, in the session's log, which
    ``pytest_terminal_summary`` sums up. Builds in other processes (notebook kernels, ``rag_lab``
    subprocesses) are not seen here: the summary counts them from the entries they kept (``kept_elsewhere``)."""
    from rag_lab.evaluation import index_reuse

    log = shared_folder(tmp_path_factory) / BUILDS
    build_here, build_and_keep = index_reuse._build_here, index_reuse._build_and_keep

    def keyed(retriever, documents, distribute, parts, key, store):
        token = _BUILDING.set((key, str(store.root)))
        try:
            return build_and_keep(retriever, documents, distribute, parts, key, store)
        finally:
            _BUILDING.reset(token)

    def logged(retriever, documents, distribute):
        key, store = _BUILDING.get() or (None, None)
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"method": retriever.name, "key": key, "store": store,
                                 "worker": os.environ.get("PYTEST_XDIST_WORKER", "main")}) + "\n")
        return build_here(retriever, documents, distribute)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(index_reuse, "_build_and_keep", keyed)
        mp.setattr(index_reuse, "_build_here", logged)
        yield


def kept_elsewhere(roots: list[Path], logged: list[dict]) -> list[dict]:
    """The index entries under ``roots`` (every ``<cache>/indexes/<method>/<key>/COMPLETE``) that no test process
    logged building (``_log_index_builds``): built and kept by a notebook kernel or a subprocess (``rag_lab eval``),
    which that log does not see (or written by a test itself); one line each, as the log writes them."""
    seen = {(os.path.realpath(d["store"]), d["key"]) for d in logged if d["key"]}
    found = {}
    for root in roots:
        for marker in Path(root).glob("**/indexes/*/*/COMPLETE"):
            store, key = os.path.realpath(marker.parents[2]), marker.parent.name
            if (store, key) not in seen:
                found[(store, key)] = {"method": marker.parent.parent.name, "key": key, "store": store,
                                       "worker": "kernel or subprocess"}
    return list(found.values())


def _logged(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()] \
        if path.exists() else []


def pytest_terminal_summary(terminalreporter, config):
    if os.environ.get("PYTEST_XDIST_WORKER") or getattr(config, "_tmp_path_factory", None) is None:
        return
    factory = config._tmp_path_factory
    if factory._basetemp is None:         # nothing used a temporary folder: nothing ran a notebook
        return
    shared = factory.getbasetemp() / "shared"
    stores = {p.read_text(encoding="utf-8") for p in shared.glob(STORES + "*")}
    if stores:
        terminalreporter.section("session store")
        terminalreporter.write_line(f"{len(stores)} cache(s) for the workers: {', '.join(sorted(stores))}"
                                    + ("" if len(stores) == 1 else "   <- expected one, shared by every worker"))
    builds = _logged(shared / BUILDS)
    elsewhere = kept_elsewhere([factory.getbasetemp(), SESSION_CACHE], builds)
    if builds or elsewhere:
        keyed = [d for d in builds if d["key"]] + elsewhere
        again = {k: n for k, n in Counter(d["key"] for d in keyed).items() if n > 1}
        terminalreporter.section("index builds")
        terminalreporter.write_line(f"{len(builds) + len(elsewhere)} builds: {len(builds)} in the test processes "
                                    f"({sum(not d['key'] for d in builds)} with reuse off), {len(elsewhere)} kept by "
                                    f"notebook kernels and subprocesses; {len(again)} distinct key(s) built more than once")
        for key, n in sorted(again.items(), key=lambda kv: (-kv[1], kv[0])):
            same = [d for d in keyed if d["key"] == key]
            methods, stores = sorted({d["method"] for d in same}), {os.path.realpath(d["store"]) for d in same}
            terminalreporter.write_line(f"{n} x {key} ({', '.join(methods)}) in {len(stores)} store(s)"
                                        + ("   <- built again in one store" if len(stores) < n else ""))
    counts = Counter((d["notebook"], d["parameters"], d["cluster"] is not None)
                     for d in _logged(shared / EXECUTIONS) if d["project"])
    if not counts:
        return
    terminalreporter.section("notebook executions")
    for (name, digest, clustered), n in sorted(counts.items()):
        flag = "" if n == 1 else "   <- executed more than once with the same parameters"
        terminalreporter.write_line(f"{n} x {name} {digest}{' on a Dask cluster' if clustered else ''}{flag}")


# -- ports ------------------------------------------------------------------------------------------
@pytest.fixture
def refused_port():
    """A loopback port that refuses connections for the whole test: bound here and never listened on, so
    no other process (a server another worker starts) can take it between choosing it and using it."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        yield s.getsockname()[1]


# -- the Dask cluster -------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class DaskCluster:
    address: str
    cache: Path          # the workers' rag_lab cache (their own; its ONNX export shared)


@pytest.fixture(scope="session")
def dask_cluster(tmp_path_factory, embedder):
    """One LocalCluster for the session: two worker processes (one thread each) on 127.0.0.1, no dashboard,
    with a cache of their own and index/result reuse on (what a cluster build writes into)."""
    from distributed import LocalCluster

    from rag_lab.evaluation import cluster as cluster_module

    embedder.model  # noqa: B018 - the ONNX export the workers' cache shares
    cache = empty_cache(tmp_path_factory.mktemp("dask") / "workers-cache")
    with LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1", dashboard_address=None, processes=True,
                      env={"RAG_LAB_REUSE": "1", "RAG_LAB_QUIET": "1", "RAG_LAB_CACHE": str(cache)}) as cluster:
        try:
            yield DaskCluster(cluster.scheduler_address, cache)
        finally:
            cluster_module.close_clients()


# -- checks several notebook tests share ---------------------------------------------------------------
def assert_captions_name_reasoners(manifest: dict, paper_only: tuple[str, ...] = ()) -> None:
    """Every table the notebook wrote (``name.md``, caption on the first line) names the reasoner that
    built the index and the one that answered; ``paper_only``: tables of paper-reported numbers alone."""
    tables = [Path(p) for p in manifest["notebooks"][0]["files"] if p.endswith(".md")]
    assert tables, "the notebook wrote no table"
    for table in tables:
        if table.stem not in paper_only:
            caption = table.read_text(encoding="utf-8").splitlines()[0]
            assert "answers by:" in caption, f"{table.name}: {caption!r}"
            assert "index built by:" in caption or "index built without a reasoner" in caption, \
                f"{table.name}: {caption!r}"
            assert "built by: none" not in caption and "judge: None" not in caption, f"{table.name}: {caption!r}"
