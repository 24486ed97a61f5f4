"""The sentence test (issue 54 item 6): what an executed notebook prints must read as English and agree
with the tables beside it. Read from the notebook's outputs (stdout and stderr streams, the
``text/markdown`` and ``text/plain`` of displays), never from the functions that build the sentences, so it
holds however those move. ``notebook_problems`` lists, one line each:

- **grammar**: a verdict word after the wrong verb or before the wrong preposition — "is cannot be
  decided", "are supported against" — against the one rule in ``rag_lab.evaluation.decisions``
  (``copula``, ``relation``); a word said twice ("is is"); "1 comparisons";
- **long line**: a printed line over ``MAX_LINE`` characters (a reader scrolls sideways and loses it);
- **whole range**: "(interval: the whole range, -1 to 1)": a design that cannot decide is said once, in
  words, with no interval;
- **undecided with numbers**: an interval or MDE beside "cannot be decided" (a design that cannot decide is
  said once, in one line, with no interval, MDE or verdict row);
- **count**: "N of M comparisons <verdict>" with no slice of the notebook's ledger (all its rows, or those
  of one dataset, metric, setting, family or method, or two of these) holding M rows of which N carry the
  verdict named;
- **family**: 'Holm within "<family>" (N comparisons)' where the ledger's rows of that family (all, or
  those with a test) are not N, or N is 0;
- **leader**: "the best <metric> is <method> (<value>)" (or "highest <metric> ...: <method> (<value>)")
  where a table the notebook wrote has that metric and method but its best value is not the one named;
- **alike**: "<dataset>: no two methods retrieve exactly alike." while the dataset's per-question table
  (``results_<dataset>.csv``) gives two methods the same score on every question and metric at k, and the
  line names neither pair;
- **verdict**: a line "<method> - <baseline> on <metric>: ... : <verdict>" (or ``=``) whose verdict is not
  the ledger's for that comparison; a claims row whose verdict contradicts its own counts ("supported"
  beside a comparison that is not, "cannot be decided" beside an inconclusive one).
"""
from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import Iterable, Iterator, Mapping

import pandas as pd

from rag_lab.evaluation.decisions import copula, relation
from rag_lab.evaluation.statistics import CONTRADICTED, INCONCLUSIVE, SUPPORTED, UNDECIDABLE, VERDICTS

MAX_LINE = 400
WHOLE_RANGE = "(interval: the whole range"       # the words format_ci once printed for [-1, 1]
VERBS = ("is ", "are ", "was ", "were ", "be ")
SLICE_COLUMNS = ("dataset", "metric", "setting", "family", "method", "baseline")


# -- reading ------------------------------------------------------------------------------------------
def _text(value) -> str:
    return "".join(value) if isinstance(value, list) else str(value or "")


def printed_lines(notebook: Mapping) -> Iterator[tuple[int, str]]:
    """(cell index, line) for every line a reader meets in a code cell's outputs: streams, and a display's
    Markdown (else its plain text). HTML, images and errors are not sentences."""
    for i, cell in enumerate(notebook.get("cells", [])):
        if cell.get("cell_type") != "code":
            continue
        for out in cell.get("outputs", []):
            kind = out.get("output_type")
            if kind == "stream":
                text = _text(out.get("text"))
            elif kind in ("display_data", "execute_result"):
                data = out.get("data", {})
                text = _text(data.get("text/markdown") or data.get("text/plain"))
            else:
                continue
            for line in text.splitlines():
                if line.strip():
                    yield i, line


# -- the rules, one line at a time --------------------------------------------------------------------
def grammar_problems(line: str) -> list[str]:
    """A verdict word after a verb ``copula`` does not give it, or before "against" when ``relation`` does
    not put it there; a word repeated ("is is")."""
    out = []
    for word in VERDICTS:
        for verb in VERBS:
            if not copula(word) and re.search(rf"\b{verb}{re.escape(word)}\b", line):
                out.append(f"grammar: '{verb}{word}'")
        wrong = f"{word} against"
        if relation(word) != wrong and re.search(rf"\b{re.escape(wrong)}\b", line):
            out.append(f"grammar: '{wrong}' (say '{relation(word)}')")
    for m in re.finditer(r"(?<![\d.])1 (comparisons|documents|questions|units|methods|baselines|chunks)\b", line):
        out.append(f"grammar: '{m.group(0)}' (one is singular)")
    for m in re.finditer(r"\b([a-z]{2,}) \1\b", "" if "  " in line else line):   # prose, not a table's columns
        out.append(f"grammar: '{m.group(0)}' (a word twice)")
    return out


def length_problems(line: str) -> list[str]:
    return [f"long line: {len(line)} characters (at most {MAX_LINE})"] if len(line) > MAX_LINE else []


def whole_range_problems(line: str) -> list[str]:
    return [f"whole range: {WHOLE_RANGE!r}: a design that cannot decide prints no interval"] if WHOLE_RANGE in line else []


_INTERVAL = r"\[[-+]?\d+(?:\.\d+)?, [-+]?\d+(?:\.\d+)?\]"
UNDECIDED_NUMBERS = re.compile(  # an interval or MDE, then the word with nothing between that starts another comparison
    rf"(?:{_INTERVAL}|\bMDE \d)[^;\[]*?{UNDECIDABLE}|{UNDECIDABLE} against [\w.+-]+ [-+]?\d\.\d+"
    rf"|\d\.\d+,? {UNDECIDABLE}")     # a verdict row: a value and the word beside it


def undecided_problems(line: str) -> list[str]:
    """A comparison that cannot be decided shown with an interval or an MDE (issue 54: where a design cannot
    decide, the notebook says so once, in one line, and prints no interval, MDE or verdict row for it)."""
    m = UNDECIDED_NUMBERS.search(line)
    return [f"undecided with numbers: {m.group(0)[:80]!r}: say it cannot be decided, and why, without them"] if m else []


# -- the rules against the tables ---------------------------------------------------------------------
COUNT = re.compile(r"\b(\d+) of (?:the |its |these |all )?(\d+) (?:[\w-]+ ){0,3}?comparisons?\b([^;.]*)")


def _claimed_verdicts(rest: str) -> set[str] | None:
    """The verdicts a count's predicate names ("cannot be decided", "are supported", "decide"), or None."""
    if UNDECIDABLE in rest:
        return {UNDECIDABLE}
    for word in (SUPPORTED, CONTRADICTED, INCONCLUSIVE):
        if re.search(rf"\b{word}\b", rest):
            return {word}
    if re.search(r"\bdecided?\b", rest):
        return {SUPPORTED, CONTRADICTED}
    return None


def _slices(ledger: pd.DataFrame) -> Iterator[pd.DataFrame]:
    yield ledger
    columns = [c for c in SLICE_COLUMNS if c in ledger.columns]
    for r in (1, 2):
        for cols in itertools.combinations(columns, r):
            for _, g in ledger.groupby(list(cols), sort=False, dropna=False):
                yield g


def count_problems(line: str, ledger: pd.DataFrame | None) -> list[str]:
    """"N of M comparisons <verdict>" against the ledger: some slice of M rows with N of that verdict."""
    out = []
    for m in COUNT.finditer(line):
        n, total, verdicts = int(m.group(1)), int(m.group(2)), _claimed_verdicts(m.group(3))
        if ledger is None or ledger.empty:
            out.append(f"count: '{m.group(0).strip()}' but the notebook's ledger holds no comparison")
            continue
        words = ledger["verdict"].astype(str).str.split(" (", n=1, regex=False).str[0]
        if not any(len(g) == total and (verdicts is None or int(words[g.index].isin(verdicts).sum()) == n)
                   for g in _slices(ledger)):
            out.append(f"count: '{m.group(0).strip()}': no slice of the ledger ({len(ledger)} rows) has "
                       f"{total} comparisons with {n} {'/'.join(sorted(verdicts or {'of them'}))}")
    return out


FAMILY = re.compile(r'"(?P<family>[^"]+)" \((?P<n>\d+) comparisons?\)')


def family_problems(line: str, ledger: pd.DataFrame | None) -> list[str]:
    """A family named with its size: the ledger's rows of that family (all, or those with a test) number
    that many, and never 0 (Holm over no comparison adjusts nothing: say there is no test)."""
    out = []
    for m in FAMILY.finditer(line):
        n = int(m.group("n"))
        rows = ledger[ledger["family"] == m.group("family")] if ledger is not None and not ledger.empty else None
        if n == 0:
            out.append(f"family: '{m.group(0)[-60:]}': a family of 0 comparisons (none has a test: say so instead)")
        elif rows is not None and len(rows) and n not in (len(rows), int(rows["p"].notna().sum())):
            out.append(f"family: '{m.group(0)[-60:]}' but the ledger holds {len(rows)} rows of it, "
                       f"{int(rows['p'].notna().sum())} with a test")
    return out


LEADER = re.compile(r"(?:the best|highest) ([\w@.-]+)(?: at [\w ]+?)?(?: is|:) ([\w.+-]+) \((\d+\.\d+)\)")


def _values(tables: Iterable[pd.DataFrame], metric: str) -> Iterator[pd.Series]:
    """method -> value of ``metric`` in every table that has it: as a column (methods as the index or a
    ``method``/``strategy`` column), or as rows of a tidy table (``metric`` and ``mean`` columns)."""
    for t in tables:
        if "metric" in t.columns and "mean" in t.columns and "method" in t.columns:
            rows = t[t["metric"].astype(str) == metric]
            if not rows.empty:
                yield rows.groupby("method")["mean"].first()
        elif metric in t.columns:
            key = next((c for c in ("method", "strategy") if c in t.columns), None)
            values = t.set_index(key)[metric] if key else t[metric]
            yield pd.to_numeric(values, errors="coerce").dropna()


def leader_problems(line: str, tables: Iterable[pd.DataFrame]) -> list[str]:
    """A named leader and its value against every written table holding that metric and method."""
    out = []
    tables = list(tables)
    for m in LEADER.finditer(line):
        metric, method, value = m.group(1), m.group(2), float(m.group(3))
        for values in _values(tables, metric):
            if method not in values.index or values.empty:
                continue
            best = float(values.max())
            if abs(float(values[method]) - best) > 5e-4 or abs(value - best) > 5e-4:
                out.append(f"leader: '{m.group(0)}' but the table's best {metric} is "
                           f"{', '.join(map(str, values[values >= best - 5e-4].index))} ({best:.3f})")
                break
    return out


ALIKE = re.compile(r"^(\S+): no two methods retrieve exactly alike")


def identical_methods(results: pd.DataFrame) -> list[tuple[str, str]]:
    """Pairs of methods with the same score on every question and metric at k in a tidy results table."""
    scored = results[results["k"].notna()] if "k" in results.columns else results
    keys = [c for c in ("question_id", "metric", "k") if c in scored.columns]
    wide = scored.pivot_table(index=keys, columns="method", values="value", aggfunc="first")
    names = list(wide.columns)
    return [(a, b) for a, b in itertools.combinations(names, 2)
            if ((wide[a] == wide[b]) | (wide[a].isna() & wide[b].isna())).all()]


def alike_problems(line: str, results: Mapping[str, pd.DataFrame]) -> list[str]:
    m = ALIKE.match(line)
    if not m or m.group(1) not in results:
        return []
    pairs = [(a, b) for a, b in identical_methods(results[m.group(1)]) if not (a in line and b in line)]
    return [f"alike: '{m.group(0)}' but {a} and {b} score the same on every question" for a, b in pairs[:3]]


DIFFERENCE = re.compile(r"^\s*(?P<method>[\w.+-]+) - (?P<baseline>[\w.+-]+) (?:on (?P<metric>[\w@.-]+)"
                        r"(?: \((?P<setting>threshold [-+\d.e]+)\))?|=).*: "
                        rf"(?P<verdict>{'|'.join(map(re.escape, VERDICTS))})\b")


def verdict_problems(line: str, ledger: pd.DataFrame | None) -> list[str]:
    """A printed difference whose verdict is not the ledger's for the same method, baseline and metric (where
    the ledger holds exactly one such comparison); a claim's roll-up of "N supported, N inconclusive, N
    contradicted, N cannot be decided" said with a verdict that contradicts it."""
    out = []
    m = DIFFERENCE.search(line)
    if m and m.group("metric") and ledger is not None and not ledger.empty:
        from rag_lab.evaluation.ledger import split_metric
        metric, setting = split_metric(m.group("metric"))
        setting = f"{setting}; {m.group('setting')}".lstrip("; ") if m.group("setting") else setting
        rows = ledger[(ledger["method"] == m.group("method")) & (ledger["baseline"] == m.group("baseline"))
                      & (ledger["metric"] == metric) & (ledger["setting"].astype(str) == setting)]
        words = set(rows["verdict"].astype(str).str.split(" (", n=1, regex=False).str[0])
        if len(words) == 1 and m.group("verdict") not in words:
            out.append(f"verdict: '{m.group('method')} - {m.group('baseline')} on {m.group('metric')}' said "
                       f"{m.group('verdict')}, the ledger says {words.pop()}")
    roll = re.search(rf"(?P<said>{'|'.join(map(re.escape, VERDICTS))})\W+(\d+) {SUPPORTED}, (\d+) {INCONCLUSIVE}, "
                     rf"(\d+) {CONTRADICTED}, (\d+) {UNDECIDABLE}", line)
    if roll:
        said, (sup, inc, con, und) = roll.group("said"), (int(g) for g in roll.groups()[1:])
        # a claim that must hold in every comparison (``claims.every_one``): any contradicted contradicts it,
        # all supported support it, else it is open: cannot be decided when every open one is so
        right = (CONTRADICTED if con else SUPPORTED if not (inc or und) else UNDECIDABLE if not inc else INCONCLUSIVE)
        if said != right:
            out.append(f"verdict: a claim said {said} beside {sup} supported, {inc} inconclusive, {con} "
                       f"contradicted, {und} cannot be decided")
    return out


# -- one notebook -------------------------------------------------------------------------------------
def notebook_problems(notebook: Mapping, ledger: pd.DataFrame | None = None,
                      tables: Iterable[pd.DataFrame] = (), results: Mapping[str, pd.DataFrame] | None = None) -> list[str]:
    """Every rule above over every printed line of ``notebook`` (its parsed JSON), as
    ``"cell 7: grammar: 'is cannot be decided': <the line, cut>"``; empty when it reads."""
    tables = list(tables)
    problems = []
    for cell, line in printed_lines(notebook):
        found = (grammar_problems(line) + length_problems(line) + whole_range_problems(line) + undecided_problems(line)
                 + count_problems(line, ledger) + family_problems(line, ledger) + leader_problems(line, tables)
                 + alike_problems(line, results or {}) + verdict_problems(line, ledger))
        problems += [f"cell {cell}: {p}: {line[:160]!r}" for p in found]
    return problems


def run_problems(run_dir: Path, entry: Mapping) -> list[str]:
    """``notebook_problems`` for one executed notebook of a run (``entry``: its manifest entry): its
    ledger (``<run>/ledger/<notebook>.csv``), the CSV tables it wrote and its per-question tables."""
    from rag_lab.evaluation.ledger import LEDGER_DIR, read

    nb = json.loads((Path(run_dir) / entry["output"]).read_text(encoding="utf-8"))
    path = Path(run_dir) / LEDGER_DIR / f"{entry.get('notebook') or Path(entry['output']).stem}.csv"
    ledger = read(path).drop_duplicates(ignore_index=True) if path.is_file() else None
    csvs = [Path(p) for p in entry.get("files", []) if str(p).endswith(".csv")]
    tables, results = [], {}
    for path in csvs:
        try:
            table = pd.read_csv(path)
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError):
            continue
        if path.stem.startswith("results_") and {"method", "value", "metric"} <= set(table.columns):
            results[path.stem.removeprefix("results_")] = table
        else:
            tables.append(table)
    return notebook_problems(nb, ledger, tables, results)


if __name__ == "__main__":      # python tests/sentence_checks.py <run dir> : every notebook of a run
    import sys

    run = Path(sys.argv[1])
    manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    for e in manifest["notebooks"]:
        found = run_problems(run, e)
        print(f"{e['output']}: {len(found)} problems")
        print("\n".join(found))
