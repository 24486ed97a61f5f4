"""Progress on long work: a bar with a count and an ETA for the index-building loops that call a
reasoner, and one line saying which method is building.

Why: building an index over a real corpus calls the reasoner once per chunk or document (SKETCH
triples, UnWeaver entities, SSG themes, RAPTOR summaries) and used to run for minutes with no sign
of life. ``track`` wraps such a loop in ``tqdm.auto``: a widget bar inside Jupyter (ipywidgets is
pinned, so tqdm does not warn and fall back), a text bar in a terminal. When the reasoner behind
the loop makes LLM calls, the bar's postfix shows the calls, tokens and fallbacks so far (and
cache hits when the reasoner keeps ``stats``), read from ``reasoner.usage``.

``building`` (used by ``Retriever.build``) writes "building <method> over N documents" to the
process's own stderr (file descriptor 2): in a terminal that is the terminal; inside a Jupyter
kernel ipykernel shows it in the cell and also echoes it to the kernel's original stderr, which
for a notebook run by ``python -m rag_lab run`` is that command's terminal.

Quiet by a flag, never by default: ``RAG_LAB_QUIET=1`` in the environment (or ``enabled=False``
per call) turns both off.
"""
from __future__ import annotations

import contextlib
import contextvars
import os
import sys
from typing import Any, Callable, Iterable, Iterator, TypeVar

T = TypeVar("T")
QUIET_ENV = "RAG_LAB_QUIET"
_FALSE = ("", "0", "false", "no", "off")
# The reasoner of the method being built, for loops that are handed only a callable (RAPTOR's
# summarize): a getter, read when a loop starts (None or an unresolved spec: no postfix).
_building_reasoner: contextvars.ContextVar[Callable[[], Any] | None] = contextvars.ContextVar(
    "rag_lab_building_reasoner", default=None)


def is_quiet() -> bool:
    """True when ``RAG_LAB_QUIET`` is set to anything but an empty/false value."""
    return os.environ.get(QUIET_ENV, "").strip().lower() not in _FALSE


def announce(message: str, enabled: bool | None = None) -> None:
    """One line on the process's stderr (fd 2; see the module docstring), unless quiet."""
    if enabled is False or (enabled is None and is_quiet()):
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


def track(items: Iterable[T], desc: str, *, total: int | None = None, reasoner: Any = None,
          enabled: bool | None = None) -> Iterator[T]:
    """Yield ``items``, advancing a bar (count, rate, ETA) after each one is processed.

    ``reasoner``: the reasoner the loop calls (default: that of the method being built, see
    ``building``); its LLM usage since the loop started is the bar's postfix. ``enabled``: None
    follows ``RAG_LAB_QUIET``."""
    if enabled is False or (enabled is None and is_quiet()):
        yield from items
        return
    if total is None and hasattr(items, "__len__"):
        total = len(items)  # type: ignore[arg-type]
    if reasoner is None and _building_reasoner.get() is not None:
        reasoner = _building_reasoner.get()()
    usage = _usage_of(reasoner)
    before = usage.copy() if usage is not None else None
    bar, handle = _open_bar(total, desc)
    try:
        for item in items:
            yield item
            if before is not None:
                bar.set_postfix(llm_postfix(reasoner, before), refresh=False)
            bar.update()
    finally:
        bar.close()
        if handle is not None:   # the notebook's saved output shows the final count, not 0%
            handle.update(bar.container)


def _open_bar(total: int | None, desc: str):
    """A ``tqdm.auto`` bar. In a notebook it is displayed with a display id and updated when it
    closes, so an executed notebook (papermill, nbconvert) keeps the final count as its text."""
    from tqdm.auto import tqdm

    notebook = sys.modules.get("tqdm.notebook")   # imported by tqdm.auto only inside a Jupyter kernel
    if notebook is None or not issubclass(tqdm, notebook.tqdm_notebook):
        return tqdm(total=total, desc=desc, dynamic_ncols=True), None
    from IPython.display import display

    bar = tqdm(total=total, desc=desc, display=False)
    return bar, display(bar.container, display_id=True)
