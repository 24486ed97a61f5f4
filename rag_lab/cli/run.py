import json


def add_arguments(parser):
    parser.add_argument("notebooks", nargs="*", help="notebook names (e.g. 00_quickstart or 00); all when none")
    parser.add_argument("-p", "--parameter", nargs=2, action="append", default=[], metavar=("KEY", "VALUE"),
                        help="notebook parameter; VALUE is read as YAML (numbers, lists, true/false)")
    parser.add_argument("--run-id", default=None, help="name of the run folder (default: a timestamp)")


def run(args) -> int:
    import yaml

    from ..runner import run_notebooks

    params = {k: yaml.safe_load(v) for k, v in args.parameter}
    manifest = run_notebooks(args.notebooks or None, params, run_id=args.run_id)
    for nb in manifest["notebooks"]:
        print(f"{nb['status']:7s} {nb['notebook']}  {nb['seconds']:.1f}s  -> {nb['output']}")
        if nb["status"] != "ok":
            print(f"        {nb['error'].splitlines()[0]}")
    print(json.dumps({"run_id": manifest["run_id"], "status": manifest["status"]}))
    return 0 if manifest["status"] == "ok" else 1
