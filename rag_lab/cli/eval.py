from pathlib import Path


def add_arguments(parser):
    parser.add_argument("--data", required=True, help="dataset name or folder in the generic form")
    parser.add_argument("--methods", default="naive,semantic", help="comma-separated registered method names")
    parser.add_argument("--k", default="1,3,5,10", help="comma-separated cut-offs")
    parser.add_argument("--limit", type=int, default=None, help="evaluate only the first N questions")
    parser.add_argument("--min-overlap", type=float, default=0.5, help="context match: overlap share of the shorter span")
    parser.add_argument("--out", type=Path, default=None, help="write tidy per-question rows to this CSV")


def parse_ints(text: str, what: str) -> list[int]:
    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ValueError(f"{what} must be comma-separated integers, got {text!r}") from None
    if not values or min(values) <= 0:
        raise ValueError(f"{what} must be positive integers, got {text!r}")
    return values


def run(args) -> int:
    import pandas as pd

    from ..atomic import atomic_path
    from ..datasets import load_dataset
    from ..evaluation import evaluate_retrieval, summarize
    from ..methods import get_retriever

    ks = parse_ints(args.k, "--k")
    dataset = load_dataset(args.data, limit=args.limit)
    names = [m.strip() for m in args.methods.split(",") if m.strip()]
    retrievers = [get_retriever(n) for n in names]
    df = evaluate_retrieval(retrievers, dataset, ks, min_overlap=args.min_overlap)
    if args.out:
        with atomic_path(args.out) as tmp:
            df.to_csv(tmp, index=False)
        print(f"wrote {len(df)} rows to {args.out}")
    with pd.option_context("display.max_columns", None, "display.width", 200, "display.precision", 3):
        print(summarize(df))
    return 0
