"""What ``rag_lab eval`` shows beside the scores: how long each method's index took to build and how
large it is, and one progress line over the whole evaluation with the time elapsed.

Build seconds are the build's own (``build_cost``): an index reused from the cache keeps the
seconds of the build that made it, and the table says it was reused. The index size is the size of the
state the index store keeps for it (``index_store.dump_state``, pickled), the same bytes a reuse loads.

Why one line of our own rather than the loops' tqdm bars: those bars cover building and answering
only (about half the wall time of an evaluation), each in its own line; the line here covers every
step, names the one running, and keeps counting seconds while a step has no bar of its own.
"""
from __future__ import annotations

import sys
import threading
import time
from typing import Mapping, Sequence

import pandas as pd

from ..core.progress import is_quiet, quiet
from ..core.types import Document
from .harness import build


def index_bytes(retriever) -> int | None:
    """The stored size of a built retriever's index; None when its state cannot be pickled."""
    from .index_store import dump_state

    recorded = (getattr(retriever, "index_reuse", None) or {}).get("bytes")
    if recorded is not None:
        return int(recorded)
    try:
        return len(dump_state(retriever))
    except Exception:  # noqa: BLE001 - a state that cannot be pickled has no stored size
        return None


def build_table(retrievers: Mapping[str, object]) -> pd.DataFrame:
    """One row per built method: ``build_s`` (its build's seconds), ``reused`` (from the index cache)
    and ``index_mb`` (stored size, MB of 10^6 bytes)."""
    rows = []
    for name, r in retrievers.items():
        size = index_bytes(r)
        rows.append({"method": name, "build_s": round(float(r.build_cost.seconds), 2),
                     "reused": bool((getattr(r, "index_reuse", None) or {}).get("reused")),
                     "index_mb": None if size is None else round(size / 1e6, 3)})
    return pd.DataFrame(rows, columns=["method", "build_s", "reused", "index_mb"])


def clock(seconds: float) -> str:
    """``0:07``, ``3:48`` or ``1:02:03``."""
    s = int(seconds)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


class StepLine:
    """One line: ``eval [2/4] building semantic | 0:42 elapsed``. In a terminal it is redrawn in place
    every second; otherwise each step is printed once when it starts. Nothing when quiet."""

    def __init__(self, total: int, label: str = "eval", stream=None, interval: float = 1.0):
        self.total, self.label, self.interval = total, label, interval
        self.stream = stream or sys.stderr
        self.live = bool(getattr(self.stream, "isatty", lambda: False)())
        self.shown = not is_quiet()
        self.done, self.step, self.t0 = 0, "", time.perf_counter()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def text(self) -> str:
        return f"{self.label} [{min(self.done + 1, self.total)}/{self.total}] {self.step} | " \
               f"{clock(time.perf_counter() - self.t0)} elapsed"

    def _draw(self, final: bool = False) -> None:
        if not self.shown:
            return
        if self.live:
            self.stream.write("\r\x1b[2K" + self.text() + ("\n" if final else ""))
        else:
            self.stream.write(self.text() + "\n")
        self.stream.flush()

    def start(self, step: str) -> None:
        """Begin ``step`` (the previous one counts as done)."""
        if self.step:
            self.done += 1
        self.step = step
        self._draw()

    def __enter__(self) -> "StepLine":
        if self.shown and self.live:
            self._thread = threading.Thread(target=self._tick, daemon=True)
            self._thread.start()
        return self

    def _tick(self) -> None:
        while not self._stop.wait(self.interval):
            self._draw()

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.done, self.step = self.total - 1, "done"
        if self.shown and self.live:
            self._draw(final=True)
        elif self.shown:
            self.stream.write(f"{self.label}: done in {clock(time.perf_counter() - self.t0)}\n")
            self.stream.flush()


def build_each(retrievers: Mapping[str, object], documents: Sequence[Document], line: StepLine) -> None:
    """Build (or reuse) every retriever, one step of ``line`` each; the methods' own bars and
    "building" lines are kept quiet so ``line`` is the only one."""
    for name, r in retrievers.items():
        line.start(f"building {name} over {len(documents)} documents")
        with quiet():
            build(r, documents)
