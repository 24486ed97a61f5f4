"""Every preset that needs data, walked as a user would: `rag_lab run NB --preset P` stops before running and
prints the download command; that command, run as printed (against the local mirror, through
$RAG_LAB_DOWNLOAD_BASE_URL), fetches what is needed; the preset's pre-flight check then passes. No notebook
is executed (the walk stops at the pre-flight), so each case takes seconds."""
from __future__ import annotations

import hashlib
import re
import shlex
from dataclasses import replace

import pytest
from download_server import data_cache, mirror, mirror_files  # noqa: F401  (pytest fixtures)

from rag_lab.cli import main
from rag_lab.datasets import sources as src
from rag_lab.runs.presets import apply_preset, available
from rag_lab.runs.runner import NOTEBOOK_DIR

WALKS = [("01_sketch", "paper", {}), ("01_sketch", "paper_quality", {}), ("01_sketch", "paper_narrativeqa", {}),
         ("02_unweaver", "paper", {}), ("03_ssg_traversal", "paper", {"reasoner": "openai:gpt-4o-mini"}),
         ("04_gralc_rag", "paper", {}), ("04_gralc_rag", "paper_pmc", {}), ("10_compare_retrieval", "real", {})]


def printed_commands(stderr: str) -> list[list[str]]:
    """The `python -m rag_lab download ...` commands of a preset's missing-data message, as argv lists."""
    found = re.search(r"Fetch it with:  (.+?)  and run again", stderr)
    assert found, stderr
    commands = [c.strip() for c in found.group(1).split("  ") if c.strip()]
    assert all(c.startswith("python -m rag_lab download ") for c in commands), commands
    return [shlex.split(c)[3:] for c in commands]


@pytest.fixture
def as_upstream(mirror, data_cache, monkeypatch):
    """The mirror stands in for every host; the pauses a real host gets are off; the RAGBench pins are set to
    the fixture files (which are not the real ones)."""
    import rag_lab.datasets.api_sources as api
    import rag_lab.datasets.stories as stories

    monkeypatch.setenv("RAG_LAB_DOWNLOAD_BASE_URL", mirror.url)
    monkeypatch.setenv("NCBI_API_KEY", "walk-test-key")        # NCBI's faster pace (10 requests/s)
    monkeypatch.setattr(api, "WIKIPEDIA_INTERVAL", 0.0)
    monkeypatch.setattr(stories, "PAUSE", {"*": 0.0})
    for name in ("ragbench_covidqa", "ragbench_emanual", "ragbench_techqa"):
        s = src.SOURCES[name]
        files = tuple(replace(f, sha256=hashlib.sha256(mirror_files()[f.url.replace("https://huggingface.co", "")])
                              .hexdigest()) if "/test-" in f.url else f for f in s.files)
        monkeypatch.setitem(src.SOURCES, name, replace(s, files=files))
    return mirror


def test_the_walk_covers_every_preset_with_data():
    with_data = {(nb.stem, name) for nb in NOTEBOOK_DIR.glob("*.ipynb") for name in available(nb)
                 if re.search(r"^data:\s*\n\s+- ", (NOTEBOOK_DIR / f"{nb.stem}.{name}.yaml").read_text(), re.M)}
    assert with_data == {(nb, name) for nb, name, _ in WALKS}


@pytest.mark.parametrize("notebook, preset, overrides", WALKS, ids=[f"{n}.{p}" for n, p, _ in WALKS])
def test_the_printed_command_makes_the_preset_runnable(as_upstream, capsys, notebook, preset, overrides):
    extra = [a for k, v in overrides.items() for a in ("-p", k, v)]
    assert main(["run", notebook, "--preset", preset, *extra]) == 2          # stops before running anything
    commands = printed_commands(capsys.readouterr().err)
    for argv in commands:
        assert main(argv + ["--no-progress"]) == 0, capsys.readouterr().err
    names, per_notebook = apply_preset([notebook], preset, overrides)      # the pre-flight passes now
    assert names == [str(NOTEBOOK_DIR / f"{notebook}.ipynb")] and per_notebook[notebook]
