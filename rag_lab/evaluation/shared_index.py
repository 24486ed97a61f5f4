"""Which methods build the same index, and handing one built index to another such method.

Two retrievers build the same index when their index-store entries would be the same (family and
key, ``index_store.key_parts``): SSG's seven algorithms share one graph. Notebook 11 builds and times
each distinct index once and gives the other methods a copy of it for their queries, just as a
reuse from the store would.
"""
from __future__ import annotations

from typing import Any, Sequence

from .index_store import dump_state, family, index_key, key_parts, restore_state


def index_identity(retriever, documents: Sequence[Any]) -> str:
    """``<family>/<key>``: the entry ``retriever``'s index over ``documents`` is filed under. Two
    retrievers with the same identity build the same index (SSG's seven algorithms share one graph)."""
    return f"{family(retriever)}/{index_key(key_parts(retriever, documents))}"


def share_index(built, other, documents: Sequence[Any]) -> None:
    """Give ``other`` the index ``built`` holds (the state the store would persist, copied), as a reuse
    from the store would; both must have the same ``index_identity`` over ``documents``."""
    mine, theirs = index_identity(built, documents), index_identity(other, documents)
    if mine != theirs:
        raise ValueError(f"{other.name} cannot share the index of {built.name}: they build different indexes "
                         f"({theirs} vs {mine})")
    restore_state(other, dump_state(built))
    other.index_reuse = {"reused": True, "key": mine.rsplit("/", 1)[1], "entry": f"shared from {built.name}"}
