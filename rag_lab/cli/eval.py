"""``python -m rag_lab eval``: build methods on a dataset, score retrieval at every k and — with
``--reasoner`` — answers (ragas; LLM-judged metrics with ``--judge``), through ``evaluate``."""
from pathlib import Path


def add_arguments(parser):
    parser.add_argument("--data", required=True, help="dataset name or folder in the generic form")
    parser.add_argument("--strict", action="store_true",
                        help="refuse a generic-form folder whose JSONL lines hold fields the format does not know "
                             "(without it: one warning per unknown field, naming its first line; docs/data.md)")
    parser.add_argument("--methods", default="naive,semantic", help="comma-separated registered method names")
    parser.add_argument("--k", default="1,3,5,10", help="comma-separated cut-offs")
    parser.add_argument("--limit", type=int, default=None, help="evaluate only the first N questions")
    parser.add_argument("--min-overlap", type=float, default=0.5,
                        help="context match: overlap share of the shorter span")
    parser.add_argument("--reasoner", default=None, metavar="SPEC",
                        help="answer every question with this reasoner (offline, openai:MODEL, ...) and score "
                             "the answers; without it only retrieval is scored")
    parser.add_argument("--judge", default=None, metavar="SPEC",
                        help="LLM judge for ragas' LLM metrics (faithfulness, answer relevancy, ...); needs --reasoner")
    parser.add_argument("--judge-concurrency", type=int, default=None, metavar="N",
                        help="scoring jobs ragas runs at once (its RunConfig.max_workers; default 16); in the sidecar")
    parser.add_argument("--judge-timeout", type=float, default=None, metavar="SECONDS",
                        help="seconds ragas gives one scoring job (RunConfig.timeout; default 180); in the sidecar")
    parser.add_argument("--address", default=None, metavar="tcp://HOST:PORT",
                        help="build each method's per-document work (chunks, vectors, reasoner jobs) on this "
                             "Dask scheduler's workers; the index is assembled here (docs/sweeps.md)")
    parser.add_argument("--judge-repeats", type=int, default=1, metavar="N",
                        help="ask the judge N times per answer: each judged score is the mean, and "
                             "<metric>_judge_sd its spread, reported beside the interval over questions")
    parser.add_argument("--answer-k", type=int, default=5, help="the answer's contexts: the method's own top k")
    parser.add_argument("--section-level", default="section", choices=("section", "subsection", "paragraph"),
                        help="granularity of section coverage (datasets with sections)")
    parser.add_argument("--baseline", default=None, metavar="NAME",
                        help="compare every other method with this one, question by question (clustered by the "
                             "document each question targets): the difference, its 95%% interval, p, p Holm-adjusted "
                             "within the tested family, the minimum detectable effect and the verdict")
    parser.add_argument("--family", default=None, metavar="METRIC@K,...",
                        help="with --baseline: the metric@k columns tested as one family (default: doc_mrr and "
                             "ctx_recall at k 5, or at the largest --k); token counts and judge spreads are never tested")
    parser.add_argument("--trec", type=Path, default=None, metavar="DIR",
                        help="write each method's ranking (at the largest --k) as TREC run files and the data set's "
                             "qrels into DIR: <dataset>.<method>.run, <dataset>.qrels, and passage runs and qrels "
                             "where questions have gold passages (docs/interop.md)")
    parser.add_argument("--run", action="append", default=[], metavar="NAME=FILE", dest="outside",
                        help="an outside TREC run (its documents must be the data set's) joins as method NAME: "
                             "document-level metrics, intervals and --baseline tests; repeatable (docs/interop.md)")
    parser.add_argument("--out", type=Path, default=None,
                        help="write tidy per-question rows to this CSV and their provenance beside it (.json), the "
                             "means with 95%% intervals to NAME.summary.csv, build seconds and index sizes to "
                             "NAME.builds.csv, the leaderboard figure to NAME.leaderboard.html/.png and, with "
                             "--baseline, the paired differences to NAME.differences.csv")


def parse_ints(text: str, what: str) -> list[int]:
    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ValueError(f"{what} must be comma-separated integers, got {text!r}") from None
    if not values or min(values) <= 0:
        raise ValueError(f"{what} must be positive integers, got {text!r}")
    return values


def strict_option(args) -> dict:
    """``strict=True`` for the generic form's reader when ``--strict`` was given (a name or loader ignores it)."""
    return {"strict": True} if getattr(args, "strict", False) else {}


def leaderboard_files(summary, ks, csv: Path, title: str) -> list[Path]:
    """The summary as one figure beside the CSV (``NAME.leaderboard.html`` and ``.png``): every metric at the
    headline k, one bar per method with its 95% interval. The PNG needs a browser (kaleido); without one
    only the HTML is written, and a note says so."""
    from ..core.figures import save_figure
    from ..core.plots import grouped_bars
    from ..evaluation.uncertainty import HEADLINE_K

    k = HEADLINE_K if HEADLINE_K in ks else max(ks)
    at_k = summary["metric"].str.endswith(f"@{k}")
    shares = summary["metric"].str.startswith(("doc_", "ctx_")) | summary["metric"].str.contains("_share@")
    board = summary[at_k & shares]          # scores in [0, 1] (coverage counts and answer metrics left out)
    if board.empty:
        return []
    means = board.pivot(index="method", columns="metric", values="mean")
    columns = list(dict.fromkeys(board["metric"]))
    fig = grouped_bars(means.loc[list(dict.fromkeys(board["method"]))], columns, f"{title}: retrieval at k={k}",
                       intervals=board)
    name = f"{csv.stem}.leaderboard"
    try:
        return save_figure(fig, csv.parent, name, plotly_js="plotly.min.js")
    except RuntimeError as e:          # no browser for the PNG: keep the interactive figure
        print(f"note: {name}.png not written ({str(e).split('. ')[0]}); the HTML has the same figure")
        return save_figure(fig, csv.parent, name, png=False, plotly_js="plotly.min.js")


def run(args) -> int:
    import pandas as pd

    from ..datasets import load_dataset
    from ..caching.atomic import atomic_path
    from ..evaluation.cluster import cluster_address
    from ..evaluation.harness import evaluate, nan_counts
    from ..evaluation.ledger import ledger_rows
    from ..evaluation.provenance import caption_reasoners, save_results
    from ..evaluation.trec import join_outside_runs, load_outside_runs, parse_run_option, write_trec
    from ..evaluation.uncertainty import (formatted_summary, headline_family, paired_differences, question_units,
                                          summary_with_ci, testable_family)
    from ..evaluation.build_report import StepLine, build_each, build_table
    from ..evaluation.metric_specs import check_family, produced_columns
    from ..methods import get_retriever
    from ..reasoning.judge import get_judge

    ks = parse_ints(args.k, "--k")
    if args.out and args.out.suffix.lower() == ".json":
        raise ValueError(f"--out {args.out}: give the CSV's path; its provenance goes beside it "
                         f"as {args.out.stem}.json")
    if args.answer_k <= 0:
        raise ValueError(f"--answer-k must be a positive integer, got {args.answer_k}")
    if args.judge_repeats < 1:
        raise ValueError(f"--judge-repeats must be a positive integer, got {args.judge_repeats}")
    if args.judge_repeats > 1 and not args.judge:
        raise ValueError("--judge-repeats asks the judge again: give --judge SPEC too")
    if args.judge and not args.reasoner:
        raise ValueError("--judge scores answers: give --reasoner SPEC too (e.g. --reasoner offline)")
    judge_options = {k: v for k, v in (("concurrency", args.judge_concurrency), ("timeout", args.judge_timeout))
                     if v is not None}
    if judge_options and not args.judge:
        raise ValueError("--judge-concurrency and --judge-timeout set the judge: give --judge SPEC too")
    judge = get_judge(args.judge, **judge_options) if args.judge else None
    names = [m.strip() for m in args.methods.split(",") if m.strip()]
    outside = [parse_run_option(text) for text in args.outside]
    if args.baseline is not None and args.baseline not in names + [n for n, _ in outside]:
        raise ValueError(f"--baseline {args.baseline!r} must be one of --methods {names} or a --run name")
    if args.family is not None and args.baseline is None:
        raise ValueError("--family names the columns --baseline tests: give --baseline NAME too")
    family = testable_family([c.strip() for c in args.family.split(",") if c.strip()]) if args.family \
        else headline_family(ks)
    dataset = load_dataset(args.data, limit=args.limit, **strict_option(args))
    if args.family:      # before any build: a column this run cannot produce would only give "(0 tests)"
        check_family(family, produced_columns(dataset, ks, args.section_level, bool(args.reasoner), bool(judge),
                                              args.answer_k))
    every_question = ([q.id for q in load_dataset(args.data, **strict_option(args)).questions]
                      if outside and args.limit else None)
    outside_runs = load_outside_runs(outside, dataset, every_question)   # refused before any work
    retrievers = {n: get_retriever(n) for n in names}
    kept = {}
    with cluster_address(args.address), StepLine(len(retrievers) + 1) as line:
        build_each(retrievers, dataset.documents, line)
        line.start("querying and scoring" + (" the answers" if args.reasoner else ""))
        df = evaluate(list(retrievers.values()), dataset, ks, reasoner=args.reasoner, judge=judge,
                      answer_k=args.answer_k, min_overlap=args.min_overlap, section_level=args.section_level,
                      judge_repeats=args.judge_repeats, progress=False, keep=kept)
    builds = build_table(retrievers)
    if args.trec:
        written = write_trec(args.trec, dataset, kept["retrievers"], kept["retrievals"][max(ks)], args.min_overlap)
        print(f"wrote {len(written)} TREC files (runs at k={max(ks)}, qrels) to {args.trec}")
    df = join_outside_runs(df, outside_runs, dataset, ks)
    for r in outside_runs:
        print(r.describe())
    units = question_units(dataset)
    summary = summary_with_ci(df, units=units)
    differences = None
    if args.baseline:
        differences = paired_differences(df, args.baseline, metrics=family, units=units,
                                         family=f"each method minus {args.baseline} on {', '.join(family)}")
    if args.out:
        csv, sidecar = save_results(df, args.out)
        print(f"wrote {len(df)} rows to {csv} and their provenance to {sidecar}")
        comparisons = ledger_rows(differences, dataset.name, "eval") if differences is not None else None
        for table, suffix in ((summary, "summary"), (differences, "differences"), (comparisons, "comparisons"),
                              (builds, "builds")):
            if table is not None:
                target = csv.with_name(f"{csv.stem}.{suffix}.csv")
                with atomic_path(target) as tmp:
                    table.to_csv(tmp, index=False)
                print(f"wrote {target}")
        for figure in leaderboard_files(summary, ks, csv, f"{dataset.name}, {len(dataset.questions)} questions"):
            print(f"wrote {figure}")
    print(f"{dataset.name}, {len(dataset.questions)} questions; {caption_reasoners(df)}")
    print("mean [95% interval] over the questions scored (n), chosen by the metric's kind (Wilson for 0/1 scores, an "
          "interval inside [0, 1] for fractions, t for unbounded values; docs/statistics.md), clustered by the "
          "document each question targets (the interval column of the summary CSV names each):")
    with pd.option_context("display.max_columns", None, "display.width", 200, "display.max_colwidth", 40):
        print(formatted_summary(summary))   # one row per metric@k, one column per method
        if differences is not None:
            print(f"each method minus {args.baseline}, question by question, on the family {family} "
                  f"({int(differences['family_size'].max()) if len(differences) else 0} tests; p_holm: Holm within it; "
                  "verdict decided only when p_holm < 0.05; mde: the smallest difference this n detects with 80% power):")
            print(differences.round(4).to_string(index=False))
        print("index per method: build seconds (of the build that made it, when reused from the cache) and "
              "stored size:")
        print(builds.to_string(index=False))
        nans = nan_counts(df)
        if not nans.empty:
            print("NaN values (not scored, left out of the means):")
            print(nans)
    return 0
