"""What the browser tests share: the system Chromium driven by Playwright, where screenshots go.

Playwright's own browser download (``playwright install``) is never used: the tests drive the
Chromium the setup installs (scripts/ensure_chromium.sh) and skip, saying so, only when none is
on the machine and ``CI`` is not set (under CI they fail instead). ``launch`` gives each browser a
fresh temporary profile (its --user-data-dir). Screenshots are test artifacts under ``test-artifacts/`` (or $RAG_LAB_TEST_ARTIFACTS); with
$RAG_LAB_SCREENSHOTS set to a folder (``make screenshots`` sets docs), the README's pictures are
written there too.
"""
from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
# headless and a fresh profile come from Playwright; the rest keep Chromium off the network
# (on a machine without one its background connections only fail, many at a time)
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"]


def chromium_path() -> str | None:
    if Path("/usr/bin/chromium").is_file():
        return "/usr/bin/chromium"
    return next((p for p in map(shutil.which, CHROMIUM_NAMES) if p), None)


@contextlib.contextmanager
def chromium():
    """A headless Chromium browser (Playwright); skips the test when the machine has no Chromium, and fails
    it under ``CI`` (set to anything but empty/0/false), where a browser test that quietly skips hides that
    the setup lost the browser."""
    path = chromium_path()
    if path is None:
        why = "no Chromium/Chrome on this machine: run scripts/ensure_chromium.sh (Debian's chromium)"
        if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
            pytest.fail(f"{why}; CI is set, so the browser tests must run")
        pytest.skip(why)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=path, headless=True, args=FLAGS)
        try:
            yield browser
        finally:
            browser.close()


def artifact(name: str) -> Path:
    folder = Path(os.environ.get("RAG_LAB_TEST_ARTIFACTS", ROOT / "test-artifacts"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder / name


def publish(shot: Path, name: str) -> None:
    """Copy a screenshot to $RAG_LAB_SCREENSHOTS/<name> when that variable names a folder (make screenshots)."""
    target = os.environ.get("RAG_LAB_SCREENSHOTS")
    if target:
        folder = Path(target) if Path(target).is_absolute() else ROOT / target
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, folder / name)
