"""The run's report page in a real browser: 00_quickstart run by the runner with small parameters (the
session's run, which tests/test_notebook_00.py reads too), its folder served on a loopback port, the
page loaded, every link fetched by the browser (each one a file of the run), every image decoded,
plotly drawn in the rendered notebook and in a figure, and the explorer's default view present in the
rendered notebook (papermill ran the widget cell with no one to answer it)."""
from __future__ import annotations

import functools
import http.server
import threading

import pytest

from browser_support import artifact, chromium, publish
from test_notebook_00 import SMALL

pytestmark = [pytest.mark.notebook, pytest.mark.xdist_group("quickstart")]     # with the other browser test
LINKS = "() => [...document.querySelectorAll('a[href], img[src]')].map(e => e.href || e.src)"
IMAGES = "() => [...document.images].map(i => [i.getAttribute('src'), i.complete && i.naturalWidth > 0])"


@pytest.fixture(scope="module")
def run_dir(notebook_run):
    return notebook_run("00_quickstart", SMALL).run_dir      # the run tests/test_notebook_00.py reads


@pytest.fixture(scope="module")
def served(run_dir):
    handler = functools.partial(_QuietHandler, directory=str(run_dir))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def test_report_page_links_resolve_and_images_display(run_dir, served):
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        response = page.goto(served + "index.html")
        assert response.ok and page.title().startswith("rag_lab run 00_quickstart-")
        assert page.locator("#nb-00_quickstart .status.ok").count() == 1
        links = sorted(set(page.evaluate(LINKS)))
        assert any(l.endswith("00_quickstart.html") for l in links) and any(l.endswith(".png") for l in links)
        for link in links:
            target = link.split("#", 1)[0]
            assert target.startswith(served), f"{link} points outside the run folder"
            if target != served + "index.html":
                assert page.request.get(target).ok, f"{link} does not resolve"
        images = page.evaluate(IMAGES)
        assert len(images) >= 2 and all(ok for _, ok in images), images
        assert page.locator("table").filter(has_text="doc_mrr@5").count() >= 1          # a table rendered
        shot = artifact("report_page.png")
        page.screenshot(path=str(shot))
        publish(shot, "report.png")

        page.goto(served + "00_quickstart.html")
        page.wait_for_selector(".js-plotly-plot .main-svg", timeout=30_000)
        assert page.locator(".rag-lab-explorer mark").count() >= 1         # the widget's default view, saved
        figure = next(l for l in links if "/figures/" in l and l.endswith(".html"))
        page.goto(figure)
        page.wait_for_selector(".js-plotly-plot .main-svg", timeout=30_000)
