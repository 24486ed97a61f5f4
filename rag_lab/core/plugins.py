"""Outside packages that add methods or data sets to the lab, found through entry points.

A package announces itself in its ``pyproject.toml``::

    [project.entry-points."rag_lab.methods"]
    my_method = "my_package.plugin:register_methods"

and, once installed, rag_lab calls ``register_methods()`` with no argument; that function registers
through the same call the lab's own methods use (``rag_lab.evaluation.retrievers.register``; data sets:
group ``rag_lab.datasets``, ``rag_lab.datasets.register_loader``). Entry points are the standard way
(``importlib.metadata``) for one installed package to offer something to another, so nothing in
rag_lab changes when a plugin is installed.

A group is loaded once per process, on the first lookup of its registry (``available_methods``,
``get_retriever``, ``available_datasets`` ...), never at import. A plugin whose import or registration
fails, that registers nothing, or that takes a name already taken is kept as *broken* with its error
and has registered nothing (its partial registrations are rolled back): listings show it, and runs
that do not name its methods go on. ``RAG_LAB_PLUGINS=0`` loads none (a run that must match the
committed reference, which holds the lab's methods only).
"""
from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass
from importlib import metadata
from typing import Iterable, MutableMapping

log = logging.getLogger(__name__)
METHODS, DATASETS = "rag_lab.methods", "rag_lab.datasets"
SWITCH = "RAG_LAB_PLUGINS"   # 0 / false / no / off: load no plugin


@dataclass(frozen=True)
class Plugin:
    """One entry point of a group: what it registered, or why it is broken."""

    group: str
    name: str                    # the entry point's name
    target: str                  # "module:function"
    package: str                 # the distribution declaring it, "name version"
    registered: tuple[str, ...] = ()
    error: str | None = None     # None when it loaded and registered

    @property
    def broken(self) -> bool:
        return self.error is not None

    def describe(self) -> str:
        """One line: the entry point, its package and, when broken, its error."""
        where = f"{self.name} = {self.target} (package {self.package})"
        return f"{where}: {self.error}" if self.broken else f"{where}: {', '.join(self.registered)}"


_LOADED: dict[str, list[Plugin]] = {}
_LOCK = threading.RLock()


def _call(entry_point, registry: MutableMapping, reserved: set[str]) -> Plugin:
    """Load and call one entry point; on any failure the registry is as it was before."""
    before = dict(registry)
    dist = getattr(entry_point, "dist", None)
    package = f"{dist.name} {dist.version}" if dist is not None else "unknown package"
    plugin = Plugin(entry_point.group, entry_point.name, entry_point.value, package)
    try:
        function = entry_point.load()
        if not callable(function):
            raise TypeError(f"{entry_point.value} is a {type(function).__name__}, not a function to call")
        function()
        added = tuple(name for name in registry if name not in before)
        taken = sorted({n for n in before if registry.get(n) is not before[n]} | (set(added) & reserved))
        if taken:
            raise ValueError(f"registers {', '.join(map(repr, taken))}, already taken; choose other names")
        if not added:
            raise ValueError("registered nothing: its function must call the registry's register function")
    except Exception as e:   # noqa: BLE001 - any error of outside code makes it broken, never fatal
        registry.clear()
        registry.update(before)
        broken = Plugin(plugin.group, plugin.name, plugin.target, plugin.package, (), f"{type(e).__name__}: {e}")
        log.warning("plugin %s is broken and was skipped", broken.describe())
        return broken
    return Plugin(plugin.group, plugin.name, plugin.target, plugin.package, added)


def load_plugins(group: str, registry: MutableMapping, reserved: Iterable[str] = ()) -> list[Plugin]:
    """Call every entry point of ``group`` once per process (later calls return the same list), each
    adding names to ``registry``; ``reserved``: names it may not take besides the registry's own.
    A call made while the group is loading (a plugin looking names up) returns what has loaded so far."""
    with _LOCK:
        if group in _LOADED:
            return list(_LOADED[group])
        loaded = _LOADED[group] = []
        if os.environ.get(SWITCH, "1").strip().lower() in ("0", "false", "no", "off"):
            return []
        points = sorted(metadata.entry_points(group=group), key=lambda ep: (ep.name, ep.value))
        for entry_point in points:
            loaded.append(_call(entry_point, registry, set(reserved)))
        return list(loaded)


def source_of(group: str, name: str) -> str | None:
    """The package of the plugin that registered ``name`` in ``group`` (None: not a plugin's)."""
    return next((p.package for p in _LOADED.get(group, ()) if name in p.registered), None)


def forget(group: str, registry: MutableMapping) -> None:
    """Unregister what ``group``'s plugins registered and let the next lookup load them again
    (for tests, and for a kernel that installed a plugin after its first lookup)."""
    with _LOCK:
        for plugin in _LOADED.pop(group, ()):
            for name in plugin.registered:
                registry.pop(name, None)
