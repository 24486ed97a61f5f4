"""Progress on long work: a bar with a count and an ETA for the index-building loops that call a
reasoner, and one line saying which method is building.

Why: building an index over a real corpus calls the reasoner once per chunk or document (SKETCH
triples, UnWeaver entities, SSG themes, RAPTOR summaries) and used to run for minutes with no sign
of life. ``track`` wraps such a loop in ``tqdm.auto``: a widget bar inside Jupyter (ipywidgets is
pinned, so tqdm does not warn and fall back), a text bar in a terminal. When the reasoner behind
the loop makes LLM calls, the bar's postfix shows the calls, tokens and fallbacks so far (and
cache hits when the reasoner keeps ``stats``), read from ``reasoner.usage``.

``building`` (used by ``harness.build``) writes "building <method> over N documents" to the
process's own stderr (file descriptor 2): in a terminal that is the terminal; inside a Jupyter
kernel ipykernel shows it in the cell and also echoes it to the kernel's original stderr, which
for a notebook run by ``python -m rag_lab run`` is that command's terminal.

Quiet by a flag, never by default: ``RAG_LAB_QUIET=1`` in the environment (or ``enabled=False``
per call, or ``with quiet():`` for the current thread's work, as a Dask task does) turns both off,
and the plain counters (encoding, retrieving, downloads: ``progress_bar`` with ``unit``). Headless: a kernel run by ``python -m rag_lab run`` (papermill; the runner sets
``RAG_LAB_HEADLESS=1``) saves its output for a reader, so it draws no bar at all (a saved bar is a
stack of ``\r`` fragments or a stale widget) and its "building" lines go only to the terminal of
the run, not into the notebook.
"""
from __future__ import annotations

import contextlib
import contextvars
import os
import sys
from typing import Any, Callable, Iterable, Iterator, TypeVar

T = TypeVar("T")
QUIET_ENV = "RAG_LAB_QUIET"
HEADLESS_ENV = "RAG_LAB_HEADLESS"
_FALSE = ("", "0", "false", "no", "off")
# The reasoner of the method being built, for loops that are handed only a callable (RAPTOR's
# summarize): a getter, read when a loop starts (None or an unresolved spec: no postfix).
_building_reasoner: contextvars.ContextVar[Callable[[], Any] | None] = contextvars.ContextVar(
    "rag_lab_building_reasoner", default=None)


_quiet: contextvars.ContextVar[bool] = contextvars.ContextVar("rag_lab_quiet", default=False)


def is_quiet() -> bool:
    """True inside ``quiet()``, or when ``RAG_LAB_QUIET`` is set to anything but an empty/false value."""
    return _quiet.get() or os.environ.get(QUIET_ENV, "").strip().lower() not in _FALSE


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """No bar or "building" line from this thread's work inside the block (others keep theirs)."""
    token = _quiet.set(True)
    try:
        yield
    finally:
        _quiet.reset(token)


def is_headless() -> bool:
    """True in a kernel whose output is saved for a reader (``RAG_LAB_HEADLESS``, set by the runner)."""
    return os.environ.get(HEADLESS_ENV, "").strip().lower() not in _FALSE


def bars_shown(enabled: bool | None = None) -> bool:
    """Whether a bar is drawn: never when ``enabled`` is False or headless; when None, unless quiet."""
    if enabled is False or is_headless():
        return False
    return enabled is True or not is_quiet()


def announce(message: str, enabled: bool | None = None) -> None:
    """One line on the process's stderr (fd 2; see the module docstring), unless quiet. Headless, the
    line goes to the terminal the kernel was started from (ipykernel's copy of fd 2), not the notebook."""
    if enabled is False or (enabled is None and is_quiet()):
        return
    if is_headless():
        terminal = getattr(sys.stderr, "_original_stdstream_copy", None)   # ipykernel's saved fd 2
        if isinstance(terminal, int):
            with contextlib.suppress(OSError):
                os.write(terminal, (message + "\n").encode("utf-8", "replace"))
        return
    stream = sys.__stderr__ or sys.stderr
    if stream is not None:
        print(message, file=stream, flush=True)


@contextlib.contextmanager
def building(name: str, n_documents: int, reasoner: Callable[[], Any] | None = None) -> Iterator[None]:
    """Announce that ``name`` is building; loops inside may read the method's reasoner from ``reasoner()``."""
    announce(f"building {name} over {n_documents} document{'s' if n_documents != 1 else ''}")
    token = _building_reasoner.set(reasoner)
    try:
        yield
    finally:
        _building_reasoner.reset(token)


def _usage_of(reasoner: Any):
    """The reasoner's ``Usage`` when it is a resolved reasoner (a spec string or None has none)."""
    usage = getattr(reasoner, "usage", None)
    return usage if hasattr(usage, "copy") and hasattr(reasoner, "usage_since") else None


def llm_postfix(reasoner: Any, before) -> dict[str, Any]:
    """``{"calls", "tokens", "fallbacks"[, "cached"]}`` since ``before``; empty when no LLM call was made
    (the offline reasoner never counts one, so its bars carry no postfix)."""
    cost = reasoner.usage_since(before)
    if not cost.llm_calls and not cost.llm_fallbacks:
        return {}
    out = {"calls": cost.llm_calls, "tokens": _short(cost.llm_prompt_tokens + cost.llm_completion_tokens),
           "fallbacks": cost.llm_fallbacks}
    stats = getattr(reasoner, "stats", None)
    if isinstance(stats, dict) and "cache_hits" in stats:
        out["cached"] = stats["cache_hits"]
    return out


def _short(n: int) -> str:
    return f"{n / 1e6:.1f}M" if n >= 1e6 else f"{n / 1e3:.1f}k" if n >= 1e4 else str(n)


class Bar:
    """A started bar: ``advance()`` after each finished item (see ``progress_bar``)."""

    def __init__(self, total: int | None, desc: str, reasoner: Any = None, unit: str | None = None):
        if reasoner is None and unit is None and _building_reasoner.get() is not None:
            reasoner = _building_reasoner.get()()
        self.reasoner = reasoner
        usage = _usage_of(reasoner)
        self._before = usage.copy() if usage is not None else None
        self.failed = 0
        self._bar, self._handle = _open_bar(total, desc, unit or "it")

    def advance(self, n: int = 1, failed: int = 0) -> None:
        """``n`` more items done (``failed`` of them failed); the postfix shows the reasoner's calls,
        tokens, fallbacks and cache hits since the bar opened, and the failures so far."""
        self.failed += failed
        postfix = llm_postfix(self.reasoner, self._before) if self._before is not None else {}
        if self.failed:
            postfix["failed"] = self.failed
        if postfix:
            self._bar.set_postfix(postfix, refresh=False)
        self._bar.update(n)

    def close(self) -> None:
        self._bar.close()
        if self._handle is not None:   # the notebook's saved output shows the final count, not 0%
            self._handle.update(self._bar.container)


class _Silent:
    failed = 0

    def advance(self, n: int = 1, failed: int = 0) -> None:
        self.failed += failed

    def close(self) -> None:
        pass


@contextlib.contextmanager
def progress_bar(total: int | None, desc: str, *, reasoner: Any = None, enabled: bool | None = None,
                 unit: str | None = None) -> Iterator[Bar | _Silent]:
    """A bar (count, rate, ETA) for work that finishes in any order (a batch of concurrent calls):
    call ``advance()`` from the thread that opened it. ``reasoner`` as in ``track``; with ``unit``
    (e.g. "text") a plain counter that never reads the building method's reasoner."""
    bar = Bar(total, desc, reasoner, unit) if bars_shown(enabled) else _Silent()
    try:
        yield bar
    finally:
        bar.close()


def track(items: Iterable[T], desc: str, *, total: int | None = None, reasoner: Any = None,
          enabled: bool | None = None) -> Iterator[T]:
    """Yield ``items``, advancing a bar (count, rate, ETA) after each one is processed.

    ``reasoner``: the reasoner the loop calls (default: that of the method being built, see
    ``building``); its LLM usage since the loop started is the bar's postfix. ``enabled``: None
    follows ``RAG_LAB_QUIET`` (``bars_shown``)."""
    if total is None and hasattr(items, "__len__"):
        total = len(items)  # type: ignore[arg-type]
    with progress_bar(total, desc, reasoner=reasoner, enabled=enabled) as bar:
        for item in items:
            yield item
            bar.advance()


def _open_bar(total: int | None, desc: str, unit: str = "it"):
    """A ``tqdm.auto`` bar. In a notebook it is displayed with a display id and updated when it
    closes, so an executed notebook (papermill, nbconvert) keeps the final count as its text."""
    from tqdm.auto import tqdm

    notebook = sys.modules.get("tqdm.notebook")   # imported by tqdm.auto only inside a Jupyter kernel
    if notebook is None or not issubclass(tqdm, notebook.tqdm_notebook):
        return tqdm(total=total, desc=desc, unit=unit, dynamic_ncols=True), None
    from IPython.display import display

    bar = tqdm(total=total, desc=desc, unit=unit, display=False)
    return bar, display(bar.container, display_id=True)
