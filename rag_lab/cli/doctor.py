"""``python -m rag_lab doctor --llm SPEC``: a pre-flight check of a reasoner before a long run.

Runs every reasoner job once on a small built-in sample and prints one verdict line per job:
did it answer, was the reply valid JSON or did the job fall back, how many items it produced,
how long it took. A job passes when it answered without error, without falling back, and
with a non-empty result. Exit code 0 when every job passes, 1 otherwise (2: bad spec).
The response cache is off by default so the model is really asked.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass

SAMPLE_TEXT = ("Marie Curie was a physicist and chemist who worked in Paris. She discovered polonium and "
               "radium together with Pierre Curie. In 1903 she shared the Nobel Prize in Physics with "
               "Pierre Curie and Henri Becquerel.")
SAMPLE_QUERY = "Which elements did Marie Curie discover?"
SAMPLE_GATHERED = ["Marie Curie was a physicist and chemist who worked in Paris."]
SAMPLE_CANDIDATES = [  # (id, text, similarity to the query)
    ("s2", "She discovered polonium and radium together with Pierre Curie.", 0.82),
    ("s3", "In 1903 she shared the Nobel Prize in Physics with Pierre Curie and Henri Becquerel.", 0.55),
    ("x1", "The Eiffel Tower was completed in 1889 for the World's Fair.", 0.12),
]
N_THEMES = 5
PREVIEW_CHARS = 70
ERROR_CHARS = 400   # errors are shown (nearly) whole: they say what to fix


def add_arguments(parser):
    parser.add_argument("--llm", default=None,
                        help="reasoner spec: offline, openai:MODEL, ollama:MODEL, openai-compatible:MODEL@URL, "
                             "gguf:/path/model.gguf (default: $RAG_LAB_LLM, else offline)")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for one reply")
    parser.add_argument("--retries", type=int, default=1, help="retries on timeouts, 429 and 5xx")
    parser.add_argument("--cache", action="store_true", help="use the response cache (off: really ask the model)")


@dataclass
class JobReport:
    job: str
    ok: bool
    reply: str        # "valid JSON", "fallback", "offline", "error", "not run"
    items: str
    seconds: float | None
    detail: str

    def line(self) -> str:
        secs = "" if self.seconds is None else f"{self.seconds:.2f} s"
        return (f"{self.job:<15} {'PASS' if self.ok else 'FAIL':<7} {self.reply:<11} {self.items:<13} "
                f"{secs:>9}  {self.detail}")


def _short(text: str, limit: int = PREVIEW_CHARS) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def sample_calls():
    """(job, call(reasoner), describe(result) -> (items, detail, non_empty)) for every job."""
    ids = [c[0] for c in SAMPLE_CANDIDATES]

    def listing(unit):
        def describe(result):
            return f"{len(result)} {unit}", _short("; ".join(map(_fmt, result))), bool(result)
        return describe

    def describe_choice(c):
        if c.action == "stop":
            return "stop", _short(c.reason), True
        return f"next -> {ids[c.candidate]}", _short(c.reason), c.candidate is not None

    def describe_text(t):
        return f"{len(t.split())} words", _short(t), bool(t.strip())

    return [
        ("entities", lambda r: r.entities(SAMPLE_TEXT), listing("entities")),
        ("triples", lambda r: r.triples(SAMPLE_TEXT), listing("triples")),
        ("query_entities", lambda r: r.query_entities(SAMPLE_QUERY), listing("names")),
        ("themes", lambda r: r.themes(SAMPLE_TEXT, n=N_THEMES), listing("themes")),
        ("answer", lambda r: r.answer(SAMPLE_QUERY, [SAMPLE_TEXT]), describe_text),
        ("choose_next", lambda r: r.choose_next(SAMPLE_QUERY, SAMPLE_GATHERED, [c[1] for c in SAMPLE_CANDIDATES],
                                                [c[2] for c in SAMPLE_CANDIDATES], ids), describe_choice),
        ("summarize", lambda r: r.summarize([SAMPLE_TEXT], max_words=30), describe_text),
    ]


def _fmt(item) -> str:
    from ..reasoning import Entity, Triple
    if isinstance(item, Entity):
        return f"{item.name} ({item.type})" if item.type else item.name
    if isinstance(item, Triple):
        return f"({item.subject}, {item.relation}, {item.object})"
    return str(item)


def check(reasoner) -> list[JobReport]:
    """Run every job once on the sample; stop asking once the backend is unreachable or refuses."""
    from ..reasoning.llm import LLMBackendError, LLMReasoner

    is_llm = isinstance(reasoner, LLMReasoner)
    reports: list[JobReport] = []
    dead: str | None = None
    for job, call, describe in sample_calls():
        if dead:
            reports.append(JobReport(job, False, "not run", "", None, f"skipped: {dead}"))
            continue
        before = reasoner.usage.copy()
        t0 = time.perf_counter()
        try:
            result = call(reasoner)
        except LLMBackendError as e:
            dead = "the backend failed on an earlier job"
            reports.append(JobReport(job, False, "error", "", time.perf_counter() - t0, _short(str(e), ERROR_CHARS)))
            continue
        except Exception as e:  # a doctor reports every failure instead of stopping at the first
            reports.append(JobReport(job, False, "error", "", time.perf_counter() - t0,
                                     _short(f"{type(e).__name__}: {e}", ERROR_CHARS)))
            continue
        seconds = time.perf_counter() - t0
        fell_back = reasoner.usage_since(before).llm_fallbacks > 0
        items, detail, non_empty = describe(result)
        reply = "fallback" if fell_back else ("valid JSON" if is_llm else "offline")
        if fell_back:
            detail = "reply was not valid JSON for the schema even after a retry; the fallback was used"
        elif not non_empty:
            detail = "empty result"
        reports.append(JobReport(job, not fell_back and non_empty, reply, items, seconds, detail))
    return reports


def run(args) -> int:
    from ..reasoning import OFFLINE, get_reasoner

    spec = args.llm or os.environ.get("RAG_LAB_LLM") or OFFLINE
    if spec == OFFLINE:
        reasoner = get_reasoner(OFFLINE)
    else:
        if args.timeout <= 0 or args.retries < 0:
            raise ValueError(f"--timeout must be > 0 and --retries >= 0, got {args.timeout} and {args.retries}")
        reasoner = get_reasoner(spec, cache=True if args.cache else False, timeout=args.timeout,
                                max_retries=args.retries)
    print(f"reasoner: {reasoner.name}")
    print(f"{'job':<15} {'verdict':<7} {'reply':<11} {'result':<13} {'latency':>9}  detail")
    reports = check(reasoner)
    for rep in reports:
        print(rep.line())
    passed = sum(r.ok for r in reports)
    ready = passed == len(reports)
    print(f"verdict: {passed}/{len(reports)} jobs pass -- "
          + ("ready for a run" if ready else "NOT ready: fix the failing jobs or expect fallbacks"))
    return 0 if ready else 1
