import json
from pathlib import Path


def add_arguments(parser):
    from ..runs.runner import DEFAULT_CELL_TIMEOUT, FIGURES_DIR, RUNS_DIR

    parser.add_argument("notebooks", nargs="*", help="notebook names (e.g. 00_quickstart or 00) or paths; all when none")
    parser.add_argument("-p", "--parameter", nargs=2, action="append", default=[], metavar=("KEY", "VALUE"),
                        help="notebook parameter, checked against the notebook's parameters cell; VALUE is read as "
                             "YAML (numbers, lists, true/false); a relative file or folder is read from here")
    parser.add_argument("--timeout", type=float, default=None,
                        help=f"seconds one cell may run before its notebook fails (default {DEFAULT_CELL_TIMEOUT}; "
                             "with --grid, the grid file's)")
    parser.add_argument("--run-id", default=None,
                        help="name of the run folder (default: <notebook>-<parameter hash>-<timestamp>)")
    parser.add_argument("--runs-dir", type=Path, default=RUNS_DIR, help=f"where run folders go (default {RUNS_DIR})")
    parser.add_argument("--figures-dir", type=Path, default=FIGURES_DIR,
                        help=f"notebooks write figures and tables into DIR/<notebook>/ (default {FIGURES_DIR})")
    parser.add_argument("--write-reference", action="store_true",
                        help="write into the repository's figures/ even when the parameters differ from the "
                             "notebook's defaults (without it, such a run writes its figures to its run folder only)")
    parser.add_argument("--preset", default=None, metavar="NAME",
                        help="apply notebooks/<notebook>.NAME.yaml (e.g. paper: the paper's data, sizes and "
                             "parameters); -p overrides its values; with no notebook named, every notebook that has it")
    parser.add_argument("--grid", default=None, help="YAML grid of parameter sets x notebooks (see rag_lab/runs/grid.py)")
    parser.add_argument("--jobs", default="auto", metavar="N",
                        help="notebooks run side by side, each in its own process: a number, or auto (default: 2 on a "
                             "machine with 2 cores or more, else 1). Notebooks that time builds run alone, after the "
                             "others (rag_lab/runs/waves.py); the tables are those of a run one after another")
    parser.add_argument("--address", default=None,
                        help="a Dask scheduler address (tcp://host:8786). With --grid: the grid's runs go to it "
                             "(default a local process pool); without: this run's indexes do their per-document "
                             "work (chunks, vectors, reasoner jobs) on its workers (docs/sweeps.md)")


def run(args) -> int:
    import yaml

    from ..evaluation.ledger import ledger_lines
    from ..runs.parameters import check_all, typed_paths
    from ..runs.reference import reference_lines
    from ..runs.runner import DEFAULT_CELL_TIMEOUT, notebook_defaults, resolve_notebooks, run_notebooks
    from ..runs.waves import parse_jobs

    if args.timeout is not None and args.timeout <= 0:
        raise ValueError(f"--timeout must be a positive number of seconds, got {args.timeout:g}")
    params = typed_paths({k: yaml.safe_load(v) for k, v in args.parameter})   # relative to where they were typed
    if args.grid:
        if args.preset:
            raise ValueError("--preset and --grid cannot be combined: put the preset's parameters in the grid file")
        return run_grid_command(args, params)
    names, per_notebook = args.notebooks or None, None
    chosen = resolve_notebooks(names)
    check_all(chosen, {nb: params for nb in chosen}, notebook_defaults)   # a misspelled name is refused before any preset loads data
    if args.preset:
        from ..runs.presets import apply_preset
        names, per_notebook = apply_preset(args.notebooks, args.preset, params)
    manifest = run_notebooks(names, params, run_id=args.run_id, runs_dir=args.runs_dir, per_notebook=per_notebook,
                             figures_root=args.figures_dir, timeout=args.timeout or DEFAULT_CELL_TIMEOUT,
                             address=args.address, jobs=parse_jobs(args.jobs), write_reference=args.write_reference)
    run_dir = Path(args.runs_dir) / manifest["run_id"]
    for nb in manifest["notebooks"]:
        print(f"{nb['status']:7s} {nb['notebook']}  {nb['seconds']:.1f}s  -> {run_dir / nb['output']}")
    for line in reference_lines(manifest):
        print(line)
    for line in ledger_lines(manifest, run_dir):
        print(line)
    print(f"report: {run_dir / 'index.html'}")
    failed = [nb for nb in manifest["notebooks"] if nb["status"] != "ok"]
    for nb in failed:
        f = nb["failure"]
        print(f"FAILED  {nb['notebook']}: cell {f['cell']} ({f['first_line']!r}): {f['error'].splitlines()[0]}")
    print(json.dumps({"run_id": manifest["run_id"], "status": manifest["status"],
                      "failed": [nb["notebook"] for nb in failed]}))
    return 0 if manifest["status"] == "ok" else 1


def run_grid_command(args, params) -> int:
    from ..runs.grid import Grid, run_grid

    grid = Grid.from_yaml(args.grid)
    grid.parameters.update(params)
    if args.notebooks:
        grid.notebooks = list(args.notebooks)
    if args.timeout is not None:
        grid.timeout = args.timeout
    manifest = run_grid(grid, address=args.address, run_id=args.run_id, runs_dir=args.runs_dir)
    for tid, record in manifest["tasks"].items():
        print(f"{record['status']:7s} {tid}  attempts={len(record['attempts'])}  {record['parameters']}")
    print(json.dumps({"run_id": manifest["run_id"], "status": manifest["status"]}))
    return 0 if manifest["status"] == "ok" else 1
