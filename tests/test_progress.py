"""Progress on long work: bars with a count, LLM usage as the postfix, the "building" line on fd 2,
quiet by RAG_LAB_QUIET, and the notebook variant inside a real kernel (no ipywidgets warning, the
saved output ends at the final count)."""
import nbformat
import pytest

from rag_lab.evaluation import harness
from rag_lab.core.progress import HEADLESS_ENV, QUIET_ENV, announce, bars_shown, building, llm_postfix, progress_bar, track
from rag_lab.reasoning.base import Reasoner
from rag_lab.core.types import Cost


class CountingLLM(Reasoner):
    """Every summarize call costs 10 prompt + 5 completion tokens; every third one falls back."""

    name = "fake:llm"

    def __init__(self):
        super().__init__()
        self.stats = {"cache_hits": 0}
        self.n = 0

    def summarize(self, texts, max_words=100):
        self.n += 1
        self.usage.add("summarize", Cost(llm_prompt_tokens=10, llm_completion_tokens=5, llm_calls=1,
                                         llm_fallbacks=int(self.n % 3 == 0)))
        return "summary"

    entities = triples = query_entities = themes = answer = choose_next = None


@pytest.fixture(autouse=True)
def not_quiet(monkeypatch):
    monkeypatch.delenv(QUIET_ENV, raising=False)
    monkeypatch.delenv(HEADLESS_ENV, raising=False)


def test_postfix_counts_calls_tokens_fallbacks_since_the_loop_started():
    llm = CountingLLM()
    llm.summarize(["before"])                     # not part of the loop
    before = llm.usage.copy()
    for _ in range(3):
        llm.summarize(["x"])
    llm.stats["cache_hits"] = 2
    # 3 calls x (10 + 5) tokens; calls 2, 3, 4 overall: the third overall falls back
    assert llm_postfix(llm, before) == {"calls": 3, "tokens": "45", "fallbacks": 1, "cached": 2}


def test_offline_style_reasoner_gets_no_postfix():
    llm = CountingLLM()
    assert llm_postfix(llm, llm.usage.copy()) == {}


def test_track_yields_everything_and_shows_count_and_llm_usage(capsys):
    llm = CountingLLM()
    out = [llm.summarize([x]) for x in track(["a", "b", "c"], "summaries", reasoner=llm)]
    assert out == ["summary"] * 3
    err = capsys.readouterr().err
    assert "summaries: 100%" in err and "3/3" in err
    assert "calls=3" in err and "tokens=45" in err and "fallbacks=1" in err


def test_loops_without_a_reasoner_read_the_one_of_the_method_being_built(capfd):
    llm = CountingLLM()
    with building("raptor", 2, reasoner=lambda: llm):
        for texts in track([["a"], ["b"]], "RAPTOR level 1 summaries"):
            llm.summarize(texts)
    captured = capfd.readouterr().err
    assert "building raptor over 2 documents" in captured
    assert "calls=2" in captured


def test_quiet_flag_silences_bars_and_announcements(monkeypatch, capfd):
    monkeypatch.setenv(QUIET_ENV, "1")
    assert list(track(range(5), "quiet")) == [0, 1, 2, 3, 4]
    announce("building x over 1 document")
    err = capfd.readouterr().err
    assert err == ""
    monkeypatch.setenv(QUIET_ENV, "0")            # an explicit false value is not quiet
    announce("building y over 1 document")
    assert "building y" in capfd.readouterr().err


def test_headless_kernels_draw_no_bar_at_all(monkeypatch, capfd):
    """A kernel run by `rag_lab run` saves its output for a reader: no bar even where one is asked for,
    and "building" lines only on the terminal's copy of fd 2 (none here: not a kernel)."""
    monkeypatch.setenv(HEADLESS_ENV, "1")
    assert not bars_shown(None) and not bars_shown(True)
    assert list(track(range(3), "headless")) == [0, 1, 2]
    with progress_bar(5, "embedding", unit="text", enabled=True) as bar:
        bar.advance(5)
    announce("building x over 1 document")
    assert capfd.readouterr().err == ""
    monkeypatch.setenv(HEADLESS_ENV, "0")
    monkeypatch.setenv(QUIET_ENV, "1")
    assert bars_shown(True) and not bars_shown(None)          # quiet: an explicit request still draws


def test_the_runner_starts_kernels_headless_and_restores_the_environment(monkeypatch):
    import os

    from rag_lab.runs.runner import HEADLESS, headless_kernels

    monkeypatch.setenv("TQDM_DISABLE", "0")
    with headless_kernels():
        assert {k: os.environ.get(k) for k in HEADLESS} == {HEADLESS_ENV: "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1",
                                                            "TQDM_DISABLE": "1"}
    assert os.environ["TQDM_DISABLE"] == "0" and HEADLESS_ENV not in os.environ


def test_retriever_build_says_which_method_is_building(capfd, embedder):
    from rag_lab.methods import get_retriever
    from rag_lab.core.types import Document

    harness.build(get_retriever("naive", embedder=embedder), [Document("d", "Pesto comes from Genoa.")])
    assert "building naive over 1 document\n" in capfd.readouterr().err


@pytest.mark.notebook
def test_notebook_bar_is_a_widget_without_warnings_and_keeps_its_final_count(tmp_path):
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("from rag_lab.core.progress import track\n"
                                          "total = sum(track(range(4), 'demo loop'))\nprint(total)")]
    NotebookClient(nb, kernel_name="rag_lab", timeout=120, resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = nb.cells[0].outputs
    bars = [o for o in outputs if o.output_type == "display_data"]
    assert len(bars) == 1 and "application/vnd.jupyter.widget-view+json" in bars[0].data   # ipywidgets in use
    assert "demo loop: 100%" in bars[0].data["text/plain"] and "4/4" in bars[0].data["text/plain"]
    text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert "6" in text and "IProgress not found" not in text and "TqdmWarning" not in text
