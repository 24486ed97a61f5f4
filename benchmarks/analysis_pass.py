"""Notebook 10's analysis cells (5-15: leaderboards, budgets, differences, flips, heatmaps, claims) timed
one by one in one process, on one ``compare`` run, with every table they write kept so two versions of
the code can be compared table for table.

    python benchmarks/analysis_pass.py [--inputs inputs.pkl] [--dump DIR] [--against DIR]

``compare`` runs once over notebook 10's default parameters (its four data sets, every method, ks 5 and
10, k 5, baseline naive, the offline reasoner; indexes come from the shared index store after a first
run), as cell 3 runs it. ``--inputs``: pickle (results, runs) there after the run, or read them from it
when it exists, so a second version of the analysis reads the very same inputs and compare's own time
is not paid twice (when the built retrievers pickle: those holding a lock do not, and compare runs each time). Each stage runs the calls of its cell (tables and figures written to a folder, the
ledger to ``<folder>/ledger/10_compare_retrieval.csv``), ``display`` left out. ``--dump DIR``: write
there and also pickle every in-memory table and printed line (``outputs.pkl``); ``--against DIR``:
compare this run's CSV and Markdown files, ledger and pickled tables with that folder's, exactly
(``assert_frame_equal(check_exact=True)``, files byte for byte). Timing, not a test: run it alone,
under the heavy lock. ``--profile FILE``: the stages under cProfile (slower; for finding the hot spots).
"""
from __future__ import annotations

import argparse
import cProfile
import io
import os
import pickle
import sys
import tempfile
import time
from contextlib import redirect_stdout
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pandas as pd  # noqa: E402

DATASETS = ["italian_cuisine", "ml_encyclopedia", "biomed_articles", "fenwold_gazetteer"]
METHODS, KS, K, BASELINE, REASONER = "all", [5, 10], 5, "naive", "offline"
NOTEBOOK = "10_compare_retrieval"


def inputs(path: Path | None):
    """(results, runs, units, dead: the sentence naming the metrics left out) as cell 3 leaves them; read from ``path`` when it exists."""
    from rag_lab.compare.comparison import compare
    from rag_lab.compare.unscored import without_unscored
    from rag_lab.datasets import data_source

    if path is not None and path.exists():
        with open(path, "rb") as f:
            results, runs = pickle.load(f)
        print(f"inputs read from {path}")
    else:
        t0 = time.perf_counter()
        runs = {}
        results = compare([data_source(d) for d in DATASETS], METHODS, KS, reasoner=REASONER, keep=runs)
        print(f"compare: {time.perf_counter() - t0:.1f} s")
        if path is not None:
            try:
                path.write_bytes(pickle.dumps((results, runs)))
            except (TypeError, pickle.PicklingError) as e:    # a built retriever may hold a lock
                print(f"inputs not kept ({e}): each run runs compare")
    results, dead = without_unscored(results)
    units = {name: runs[name].units for name in results}
    return results, runs, units, dead


def stages(results, runs, units, dead, out: Path, kept: dict):
    """The analysis cells as (name, callable) in notebook order; each callable fills ``kept``."""
    from rag_lab.compare.comparison import leaderboard
    from rag_lab.compare.descriptions import (alike_sentence, budget_sentence, definition_sentence,
                                              semantic_truncation_sentence)
    from rag_lab.compare.intervals import leaderboard_ci, rank_metric
    from rag_lab.compare.ranks import save_rank_table
    from rag_lab.compare.comparison import decision_budgets, decision_claims, decision_differences, decision_flips
    from rag_lab.core.figures import save_figure, save_table
    from rag_lab.core.plots import forest_grid, interval_bars, method_metric_heatmap
    from rag_lab.evaluation.findings import finding_sentences
    from rag_lab.evaluation.provenance import caption_reasoners

    k, baseline, limit = K, BASELINE, None

    def leaderboards():
        boards = {name: leaderboard_ci(df, k, units=units[name]) for name, df in results.items()}
        for name, board in boards.items():
            ranked_by = f"{rank_metric(results[name]['metric'])}@{k}"
            caption = f"{name}: leaderboard at k={k} (unequal budgets: context_budget), mean [95% interval over questions, clustered by document] ({caption_reasoners(results[name])})"
            shown = runs[name].once(board)
            save_table(board, out, f"leaderboard_{name}", index=False, caption=caption, shown=shown)
            save_figure(interval_bars(board, ranked_by, f"{name}: {ranked_by} per method (at k={k}, unequal budgets)"), out, f"leaderboard_bars_{name}")
            print(caption); print(alike_sentence(runs[name], results[name]))
            kept[f"leaderboard_shown_{name}"] = shown
            kept[f"rank_table_{name}"] = save_rank_table(results[name], ranked_by, units[name], out, name)
            print(semantic_truncation_sentence(runs[name].retrievers))
        kept["boards"] = boards

    def budgets():
        boards = kept["boards"]
        budgets = {name: decision_budgets(df, runs[name], k, baseline) for name, df in results.items()}
        for name, by_setting in budgets.items():
            for tag, (setting, eb) in zip(["", "_mid"], by_setting.items()):
                caption = (f"{name}: every method's ranking at k={eb.deepest_k} cut to {eb.budget} tokens ({setting}: {eb.label}), "
                           f"mean [95% interval over questions] ({caption_reasoners(results[name])})")
                eb.rows.to_csv(out / f"equal_budget{tag}_rows_{name}.csv", index=False)
                shown = runs[name].once(eb.board)
                save_table(eb.board, out, f"equal_budget{tag}_{name}", index=False, caption=caption, shown=shown)
                print(caption)
                kept[f"equal_budget{tag}_shown_{name}"] = shown
                kept[f"equal_budget{tag}_board_{name}"] = eb.board
                kept[f"equal_budget{tag}_rows_{name}"] = eb.rows
            print(budget_sentence(results[name], k, by_setting, boards[name]))
        kept["budgets"] = budgets

    def differences():
        budgets = kept["budgets"]
        differences = {name: decision_differences(df, budgets[name], baseline, k, units[name]) for name, df in results.items()}
        for name, diff in differences.items():
            if diff.empty:
                print(f"{name}: {baseline} did not run, no differences"); continue
            save_table(diff.round(4), out, f"differences_{name}", index=False,
                       caption=f"{name}: each method minus {baseline} at two equal budgets and at k={k} (unequal budgets), paired by "
                               f"question, clustered by document; tokens handed in method_tokens/baseline_tokens ({caption_reasoners(results[name])})")
            fig = forest_grid(diff, name)
            save_figure(fig, out, f"forest_{name}", height=fig.layout.height)
            print(*finding_sentences(diff, across_settings=True, dataset=name), sep="\n")
            kept[f"differences_{name}"] = diff

    def flips():
        budgets = kept["budgets"]
        flip_counts_table, flipped_questions = decision_flips(results, budgets, k, runs, limit)
        save_table(flip_counts_table, out, "flip_counts", index=False, caption=f"Flipped questions at two equal budgets and at k={k} (unequal budgets) ({caption_reasoners(*results.values())})")
        for name, df in results.items():
            flipped = flipped_questions[name]
            save_table(flipped, out, f"flips_{name}", index=False, caption=f"{name}: questions that flip at two equal budgets and at k={k} ({caption_reasoners(df)})")
            kept[f"flips_{name}"] = flipped
        kept["flip_counts"] = flip_counts_table
        cells = flip_counts_table.assign(cell=[f"{w}–{l} ({t})" for w, l, t in flip_counts_table[["wins", "losses", "ties"]].values])
        kept["flip_view"] = cells.pivot_table(index=["dataset", "method", "baseline"], columns="setting", values="cell",
                                              aggfunc="first", sort=False).rename_axis(columns=None)

    def heatmaps():
        for name, df in results.items():
            means = leaderboard(df, k)
            cols = [c for c in means.columns if not c.startswith("section_coverage")]
            fig = method_metric_heatmap(means, cols, f"{name}: methods × metrics at k={k}, unequal budgets (means; intervals in the leaderboard)")
            save_figure(fig, out, f"heatmap_{name}")
            kept[f"heatmap_means_{name}"] = means
        print(dead)

    def claims():
        budgets = kept["budgets"]
        comparisons, claims = decision_claims(results, budgets, k, units)
        reasoners = caption_reasoners(*results.values())
        verdicts = (claims.pivot_table(index=["paper", "claim"], columns="setting", values="this run", aggfunc="first",
                                       sort=False).reset_index().rename_axis(columns=None))
        save_table(comparisons.round(4), out, "claim_comparisons", index=False, caption=f"Every comparison behind the claims, at two equal budgets and at k={k} (unequal budgets; {reasoners})")
        save_table(claims, out, "claims", index=False, shown=verdicts.set_index("paper"),
                   caption=f"Paper claims vs this run: one row per claim, its verdict at two equal budgets and at k={k} (unequal budgets); "
                           f"how each was reached and the hits each budget holds: claims.csv; every comparison: claim_comparisons ({reasoners})")
        print("SSG traversal:", definition_sentence())
        kept["verdict_table"] = verdicts
        kept["claim_comparisons"] = comparisons
        kept["claims"] = claims
        for _, row in claims.iterrows():
            print(f"{row['paper']} ({row['setting']}): {row['this run']} — {row['decided by']}; hits that fit: {row['hits that fit']}")

    return [("leaderboards", leaderboards), ("budgets", budgets), ("differences", differences), ("flips", flips),
            ("heatmaps", heatmaps), ("claims", claims)]


def compared(folder: Path, against: Path) -> list[str]:
    """Every difference between two dumps: files (CSV, Markdown, the ledger) byte for byte, then the
    pickled tables exactly and the printed lines."""
    problems = []
    files = lambda d: {p.relative_to(d) for p in d.rglob("*") if p.suffix in (".csv", ".md")}
    mine, theirs = files(folder), files(against)
    problems += [f"only in {against}: {p}" for p in sorted(theirs - mine)]
    problems += [f"only in {folder}: {p}" for p in sorted(mine - theirs)]
    problems += [f"differs: {p}" for p in sorted(mine & theirs) if (folder / p).read_bytes() != (against / p).read_bytes()]
    a, b = (pickle.loads((d / "outputs.pkl").read_bytes()) for d in (folder, against))
    for key in sorted(set(a["tables"]) | set(b["tables"])):
        if key not in a["tables"] or key not in b["tables"]:
            problems.append(f"table {key} in one run only"); continue
        x, y = a["tables"][key], b["tables"][key]
        try:
            pd.testing.assert_frame_equal(x, y, check_exact=True)
        except AssertionError as e:
            problems.append(f"table {key}: {str(e).splitlines()[0:3]}")
    for stage in sorted(set(a["printed"]) | set(b["printed"])):
        if a["printed"].get(stage) != b["printed"].get(stage):
            problems.append(f"printed lines of {stage} differ")
    return problems


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=Path, default=None, help="pickle of compare's (results, runs): read or written")
    parser.add_argument("--dump", type=Path, default=None, help="write the tables here (and outputs.pkl)")
    parser.add_argument("--against", type=Path, default=None, help="a --dump folder to compare with")
    parser.add_argument("--profile", type=Path, default=None, help="cProfile the analysis stages into this file")
    args = parser.parse_args(argv)

    results, runs, units, dead = inputs(args.inputs)
    out = args.dump or Path(tempfile.mkdtemp(prefix="analysis_pass_"))
    out.mkdir(parents=True, exist_ok=True)
    ledger = out / "ledger" / f"{NOTEBOOK}.csv"
    ledger.parent.mkdir(exist_ok=True)
    ledger.unlink(missing_ok=True)
    os.environ["RAG_LAB_LEDGER"] = str(ledger)
    kept: dict = {}
    printed, seconds = {}, {}
    profiler = cProfile.Profile() if args.profile else None
    for name, stage in stages(results, runs, units, dead, out, kept):
        buffer = io.StringIO()
        t0 = time.perf_counter()
        with redirect_stdout(buffer):
            if profiler:
                profiler.runcall(stage)
            else:
                stage()
        seconds[name] = time.perf_counter() - t0
        printed[name] = buffer.getvalue()
        print(f"{name}: {seconds[name]:.1f} s", flush=True)
    print(f"all analysis stages: {sum(seconds.values()):.1f} s" + (" (under cProfile)" if profiler else ""))
    if profiler:
        profiler.dump_stats(str(args.profile))
    tables = {key: value for key, value in kept.items() if isinstance(value, pd.DataFrame)}
    with open(out / "outputs.pkl", "wb") as f:
        pickle.dump({"tables": tables, "printed": printed, "seconds": seconds}, f)
    print(f"written to {out}")
    if args.against:
        problems = compared(out, args.against)
        print(f"against {args.against}: " + ("every file, table and printed line identical" if not problems
                                              else f"{len(problems)} differences"))
        for p in problems:
            print("  " + p)
        return 1 if problems else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
