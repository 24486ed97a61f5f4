"""JupyterLab in a real browser: started as `make lab` starts it (rag_lab/runs/lab.py) on a loopback port
the OS gives it, with a token, 00_quickstart opened and run top to bottom as shipped (Run > Run All Cells), the
kernel back to idle, no cell in error, plotly figures drawn, and the explorer widget live: typing a
question and switching the method (a first SKETCH build) update its view. Screenshots are kept."""
from __future__ import annotations

import json
import os
import secrets
import signal
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from browser_support import ROOT, artifact, chromium, publish
from rag_lab.runs.lab import lab_command

pytestmark = [pytest.mark.notebook, pytest.mark.xdist_group("quickstart")]   # one browser at a time
NOTEBOOK = "00_quickstart.ipynb"
RUN_SECONDS = 600            # generous: the notebook takes ~20 s warm, more with a cold embedding cache
# The cells' prompts read [n]: once run, [*]: running or queued; JupyterLab renders an error output with this
# mime type. One poll of the page says how far the run is.
RUN_STATE = """() => {
  const prompts = [...document.querySelectorAll('.jp-NotebookPanel .jp-CodeCell .jp-InputArea-prompt')];
  const text = prompts.map(p => p.textContent.trim());
  const errors = [...document.querySelectorAll(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.error']")];
  const indicator = document.querySelector('.jp-Notebook-ExecutionIndicator');
  return {cells: text.length, done: text.filter(t => /\\[\\d+\\]/.test(t)).length,
          queued: text.filter(t => t.includes('*')).length, prompts: text,
          errors: errors.map(e => e.innerText.slice(0, 2000)),
          kernel: indicator ? indicator.getAttribute('data-status') : null};
}"""


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """JupyterLab over a copy of the notebook (running it writes figures beside it, not into the
    repository); user settings only turn off windowed rendering so every cell stays in the page."""
    root = tmp_path_factory.mktemp("lab")
    (root / "notebooks").mkdir()
    shutil.copy(ROOT / "notebooks" / NOTEBOOK, root / "notebooks" / NOTEBOOK)
    settings = root / ".jupyter" / "lab" / "user-settings" / "@jupyterlab" / "notebook-extension"
    settings.mkdir(parents=True)
    (settings / "tracker.jupyterlab-settings").write_text('{"windowingMode": "none"}')
    token = secrets.token_hex(16)
    # PYTHONFAULTHANDLER: a kernel stopped with SIGABRT prints every thread's stack into the server's log
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(root / ".jupyter"), "JUPYTER_RUNTIME_DIR": str(root / ".runtime"),
           "PYTHONFAULTHANDLER": "1"}
    # port 0: the server asks the OS for a free port as it starts and writes it to its jpserver-<pid>.json (no
    # port is picked here and handed over seconds later). jupyter_server still binds it, closes it and binds it
    # again moments later: if another process took it in between, the server exits saying so and starts again.
    cmd = lab_command(0, token, open_browser=False, root=root,
                      extra=("--ServerApp.port_retries=0", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
                             "--LabApp.news_url=None"))
    log_path = root / "jupyterlab.log"
    for attempt in range(3):
        with open(log_path, "w") as log:
            proc = subprocess.Popen(cmd, env=env, cwd=root, stdout=log, stderr=subprocess.STDOUT)
            try:
                url = _serving(proc, root / ".runtime" / f"jpserver-{proc.pid}.json", token, log_path)
                if url is not None:
                    yield url, token, root, proc, log_path
                    return
            finally:
                proc.terminate()
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    proc.kill()
    pytest.fail(f"JupyterLab found its port taken three times:\n{log_path.read_text()[-3000:]}")


def _serving(proc, info: Path, token: str, log: Path) -> str | None:
    """The server's URL once it answers; None when it exited because its port was taken meanwhile."""
    deadline = time.monotonic() + 90
    while True:
        if proc.poll() is not None:
            text = log.read_text()
            if "already in use" in text or "not available" in text:
                return None
            pytest.fail(f"JupyterLab exited with {proc.returncode}:\n{text[-3000:]}")
        try:
            url = f"http://127.0.0.1:{json.loads(info.read_text())['port']}"
            with urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=5) as r:
                if r.status == 200:
                    return url
        except (OSError, ValueError, KeyError):       # not written yet (or half written), or not answering yet
            if time.monotonic() > deadline:
                pytest.fail(f"JupyterLab did not answer within 90 s:\n{log.read_text()[-3000:]}")
            time.sleep(0.5)


def test_quickstart_runs_top_to_bottom_in_jupyterlab(lab):
    url, token, root, server, log_path = lab
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        try:
            page.goto(f"{url}/lab/tree/notebooks/{NOTEBOOK}?token={token}")
            page.wait_for_selector(".jp-NotebookPanel .jp-CodeCell", timeout=90_000)
            page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=90_000)
            t0 = time.monotonic()
            _run_all_cells(page, server, log_path)
            page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=60_000)
            seconds = time.monotonic() - t0
            artifact("lab_run_seconds.txt").write_text(f"{seconds:.1f}\n")
            errors = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.error']")
            assert errors.count() == 0, errors.first.inner_text()[:2000]
            tracebacks = [t for t in page.locator(".jp-OutputArea-output").all_inner_texts() if "Traceback" in t]
            assert not tracebacks, tracebacks[0][:2000]
            plots = page.locator(".jp-OutputArea-output.jp-RenderedPlotly")          # plotly's JupyterLab renderer
            assert plots.count() == 2, [o.get_attribute("class") for o in page.locator(".jp-OutputArea-output").all()]
            for plot in plots.all():                                          # heatmap, bars: drawn by plotly.js
                assert plot.locator("svg.main-svg").count() >= 1, plot.inner_html()[:1500]

            explorer = page.locator(".jp-OutputArea-output .rag-lab-explorer")
            explorer.first.wait_for(timeout=30_000)
            assert "<mark" in explorer.first.inner_html()                    # gold passages marked
            page.locator(".widget-text input[placeholder^='…or type a question']").fill("Where does pesto come from?")
            page.keyboard.press("Enter")
            page.wait_for_function("() => [...document.querySelectorAll('.rag-lab-explorer')]"
                                   ".some(e => e.textContent.includes('Where does pesto come from?'))", timeout=60_000)
            page.locator(".widget-text input[placeholder^='…or type a question']").fill("")   # back to question 1
            page.keyboard.press("Enter")
            page.wait_for_function("() => [...document.querySelectorAll('.rag-lab-explorer')]"
                                   ".some(e => e.textContent.includes('reference answer'))", timeout=60_000)
            page.locator(".widget-dropdown select").nth(1).select_option("sketch")
            page.wait_for_function("() => [...document.querySelectorAll('.rag-lab-explorer')]"
                                   ".some(e => e.textContent.includes('What sketch did'))", timeout=300_000)
            assert "graph facts" in explorer.first.inner_text()
            news = page.locator(".jp-Notification-Toast button", has_text="No")   # JupyterLab's news question
            if news.count():
                news.first.click()
            widget = page.locator(".jp-OutputArea-output:has(.rag-lab-explorer)").first
            widget.scroll_into_view_if_needed()
            publish(_shot(widget, "explorer.png"), "explorer.png")
        finally:
            page.screenshot(path=str(artifact("lab_quickstart.png")))


def _run_all_cells(page, server, log_path: Path) -> None:
    """Run > Run All Cells, then watch the prompts until every code cell has run. Fails at once on an error
    output; asks again once if the run stalls for a minute with cells left (kernel idle, none queued: a menu click
    lost on a loaded machine, or a run that stopped queuing after its first cells, seen once under load); on
    time-out, says which cells had not run and puts the kernel's stack into the failure (SIGABRT with
    PYTHONFAULTHANDLER set) instead of a bare 'Timeout exceeded'."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    dismissed: list[str] = []

    def click_run_all():
        for attempt in range(2):            # a dialog that opened after the look for one took a click: once more
            _close_dialog(page, dismissed)
            try:
                page.locator(".jp-NotebookPanel .jp-Cell").first.click()    # the notebook has the focus
                page.locator(".lm-MenuBar-item", has_text="Run").first.click()
                page.locator(".lm-Menu-item", has_text="Run All Cells").first.click()
                return
            except PlaywrightTimeout:
                if attempt or not page.locator(".jp-Dialog").count():
                    raise

    click_run_all()
    started, asked_again = time.monotonic(), False
    progress, progressed = None, started        # (done, queued) last seen, and when it last changed
    while True:
        state = page.evaluate(RUN_STATE)
        assert not state["errors"], f"a cell failed in JupyterLab:\n{state['errors'][0]}"
        if state["cells"] and state["done"] == state["cells"]:
            return
        now = time.monotonic()
        if (state["done"], state["queued"]) != progress:
            progress, progressed = (state["done"], state["queued"]), now
        waited = now - started
        stalled = state["queued"] == 0 and state["kernel"] == "idle" and now - progressed > 60
        if not asked_again and stalled:
            click_run_all()
            asked_again, progressed = True, now
        if waited > RUN_SECONDS:
            kernels = _abort_kernels(server)
            time.sleep(3)
            pytest.fail(f"00_quickstart had not run within {RUN_SECONDS} s in JupyterLab (asked again: {asked_again}); "
                        f"dialogs closed first: {dismissed}; "
                        f"prompts {state['prompts']}, kernel {state['kernel']}, kernels stopped for their stacks "
                        f"{kernels}; the server's log ends:\n{log_path.read_text()[-6000:]}")
        time.sleep(1)


def _close_dialog(page, dismissed: list[str]) -> None:
    """A JupyterLab dialog over the notebook takes every click (once, on a loaded machine, the menu click timed
    out behind one): give it 30 s to go by itself, then note its text in ``dismissed`` and close it with
    Escape, its cancel. What it warned of (a kernel that died, a server that stopped answering) still shows:
    the cells then do not run, and the failure names the dialog."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    dialog = page.locator(".jp-Dialog")
    if not dialog.count():
        return
    try:
        dialog.first.wait_for(state="detached", timeout=30_000)
    except PlaywrightTimeout:
        if dialog.count():
            dismissed.append(" ".join(dialog.first.inner_text().split())[:500])
            page.keyboard.press("Escape")
            try:
                dialog.first.wait_for(state="detached", timeout=30_000)
            except PlaywrightTimeout:
                pytest.fail(f"a JupyterLab dialog stays over the notebook after Escape: {dismissed[-1]}")


def _abort_kernels(server) -> list[int]:
    """SIGABRT the server's kernel processes: with PYTHONFAULTHANDLER each prints its threads' stacks."""
    import psutil                                     # ipykernel's own dependency
    pids = [child.pid for child in psutil.Process(server.pid).children(recursive=True)]
    for pid in pids:
        try:
            os.kill(pid, signal.SIGABRT)
        except ProcessLookupError:
            pass
    return pids


def _shot(locator, name: str) -> Path:
    path = artifact(name)
    locator.screenshot(path=str(path))
    return path
