"""``python -m rag_lab cache info | prune | clear``: see what the cache folder holds and remove what is no
longer needed (``rag_lab.caching.inventory`` does the work)."""
from __future__ import annotations


def add_arguments(parser):
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    sub.add_parser("info", help="size and entries of each kind of cache")
    prune = sub.add_parser("prune", help="remove index entries the current code cannot look up, leftovers of killed "
                                         "saves and damaged files moved aside (--older-than: also unused entries)")
    prune.add_argument("--older-than", type=float, default=None, metavar="DAYS",
                       help="also remove index entries and token embeddings not used, and cached replies and results "
                            "written, more than DAYS days ago")
    prune.add_argument("--dry-run", action="store_true", help="list what would be removed, remove nothing")
    clear = sub.add_parser("clear", help="delete every entry of the kinds named")
    clear.add_argument("--kind", action="append", required=True, metavar="KIND",
                       help="a kind from `cache info` (embeddings, llm, judge, offline_reasoner, "
                            "token_embeddings, onnx, indexes); repeat for several")


def run(args) -> int:
    from ..caching import inventory
    from ..caching.sqlite_cache import default_cache_dir
    from ..datasets.cache import data_root

    root, data = default_cache_dir(), data_root()
    if args.action == "info":
        return _info(root, data)
    if args.action == "prune":
        if args.older_than is not None and args.older_than < 0:
            raise ValueError(f"--older-than must be a number of days >= 0, got {args.older_than}")
        return _prune(root, data, args.older_than, args.dry_run)
    for kind in args.kind:
        if kind not in inventory.KINDS:
            raise ValueError(f"unknown cache kind {kind!r}; kinds: {', '.join(inventory.KINDS)}")
    for kind in args.kind:
        gone = inventory.clear(root, kind)
        print(f"{kind}: removed {len(gone)} path(s)" + (f" ({', '.join(str(p) for p in gone)})" if gone else ""))
    return 0


def _info(root, data) -> int:
    from ..caching.inventory import KINDS, human, info

    rows = info(root, data)
    print(f"rag_lab cache: {root}" + ("" if root.is_dir() else " (does not exist yet)"))
    print(f"{'kind':<18}{'entries':>10}{'size':>11}  what (path)")
    for row in rows:
        what = KINDS[row.kind].what if row.kind in KINDS else row.note
        entries = f"{row.entries:,}" if row.entries is not None else "?"
        print(f"{row.kind:<18}{entries:>10}{human(row.size):>11}  {what} ({row.path})"
              + (f" — {row.note}" if row.note and row.kind in KINDS else ""))
    print(f"{'total':<18}{'':>10}{human(sum(r.size for r in rows)):>11}")
    candidates = _candidates(root, data, None)
    if candidates:
        print(f"`python -m rag_lab cache prune` would remove {len(candidates)} item(s), "
              f"{human(sum(c.size for c in candidates))} (list them with --dry-run)")
    return 0


def _candidates(root, data, older_than):
    from ..caching.inventory import prune_candidates
    from ..evaluation.index_store import is_current

    return prune_candidates(root, is_current, older_than, data=data)


def _prune(root, data, older_than, dry_run) -> int:
    from ..caching.inventory import human, remove

    candidates = _candidates(root, data, older_than)
    for c in candidates:
        print(f"{'would remove' if dry_run else 'removing'} {c.kind}: {c.path} ({human(c.size)}): {c.reason}")
    if dry_run:
        print(f"{len(candidates)} item(s), {human(sum(c.size for c in candidates))}; nothing removed (--dry-run)")
        return 0
    removed, freed = remove(candidates)
    print(f"removed {removed} item(s), freed {human(freed)}")
    return 0
