"""Presets: a paper's setting for a notebook, kept in a small YAML file beside it.

``python -m rag_lab run 04_gralc_rag --preset paper`` reads ``notebooks/04_gralc_rag.paper.yaml``::

    description: GraLC-RAG Tables 1-2 on PubMedQA* (1,000 abstracts)
    tables: [Table 1, Table 2]
    data:                       # what must be on this machine before the run starts
      - dataset: pubmedqa       # a name load_dataset knows
        download: pubmedqa      # python -m rag_lab download NAME fetches it
        check: {path: "{data_path}", limit_records: 1}   # loader arguments; "{p}" is notebook parameter p
    needs_llm: []               # parameters of which one must name an LLM, not "offline"
    measured: 41 min on 2 cores # optional: how long the preset took, where and how (said when it starts)
    parameters:                 # notebook parameters (names checked against the notebook)
      dataset: pubmedqa

Parameters given with ``-p`` override the preset's. Before anything runs, every data set the run
will load (``dataset``/``datasets``/``compare_datasets`` after ``-p``, with ``dataset_options`` or
``loader_params``) is loaded once: a data set the preset lists with its ``check`` arguments over the
run's (small sizes, so the loader's own presence check runs and little is read), any other with the
run's arguments; a preset entry the run does not name is not checked. A loader that cannot find its
files makes the run fail with the loader's message and the ``python -m rag_lab download NAME`` command. Relative paths in
parameters whose name ends in ``path`` are made absolute (the notebook runs in ``notebooks/``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from ..core.progress import announce
from .runner import NOTEBOOK_DIR, list_notebooks, resolve_notebooks

KEYS = {"description", "tables", "data", "needs_llm", "measured", "parameters"}
DATA_KEYS = {"dataset", "download", "check", "note"}
_PLACEHOLDER = re.compile(r"^\{(\w+)\}$")


class PresetDataMissing(FileNotFoundError):
    """A preset's data set is not on this machine; the message holds the download command."""


@dataclass
class Preset:
    name: str
    notebook: str
    path: Path
    description: str = ""
    tables: list[str] = field(default_factory=list)
    data: list[dict] = field(default_factory=list)
    needs_llm: list[str] = field(default_factory=list)
    parameters: dict[str, Any] = field(default_factory=dict)
    measured: str = ""


def preset_file(notebook: Path, name: str) -> Path:
    return notebook.with_name(f"{notebook.stem}.{name}.yaml")


def available(notebook: Path) -> list[str]:
    """Preset names that exist for a notebook."""
    return sorted(p.name[len(notebook.stem) + 1:-len(".yaml")] for p in notebook.parent.glob(f"{notebook.stem}.*.yaml"))


def notebook_parameters(notebook: Path) -> set[str]:
    """Names assigned in the notebook's cell tagged ``parameters`` (``a, b = 1, 2`` gives both;
    papermill's own inspection misses tuple assignments)."""
    import ast
    import json

    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    cell = next((c for c in cells if "parameters" in c.get("metadata", {}).get("tags", [])), None)
    if cell is None:
        raise ValueError(f"{notebook}: no cell tagged 'parameters'")
    names: set[str] = set()
    for node in ast.parse("".join(cell["source"])).body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        for t in targets:
            names |= {n.id for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


def load_preset(notebook: Path, name: str) -> Preset:
    """The preset ``name`` of a notebook, checked: known keys, known notebook parameters."""
    import yaml

    path = preset_file(notebook, name)
    if not path.is_file():
        have = available(notebook)
        raise ValueError(f"notebook {notebook.stem} has no preset {name!r} (expected {path}); "
                         f"its presets: {', '.join(have) if have else 'none'}")
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as e:
        raise ValueError(f"{path}: not valid YAML ({e})") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("parameters"), dict):
        raise ValueError(f"{path}: expected a mapping with a 'parameters' mapping (and optionally {sorted(KEYS)})")
    unknown = set(raw) - KEYS
    if unknown:
        raise ValueError(f"{path}: unknown keys {sorted(unknown)}; expected {sorted(KEYS)}")
    data = raw.get("data") or []
    for i, entry in enumerate(data):
        if not isinstance(entry, dict) or not {"dataset", "download"} <= set(entry) or set(entry) - DATA_KEYS:
            raise ValueError(f"{path}: data entry {i + 1} must have 'dataset' and 'download' (and optionally "
                             f"'check', 'note'), got {entry!r}")
    known = notebook_parameters(notebook)
    strays = sorted(set(raw["parameters"]) - known)
    if strays:
        raise ValueError(f"{path}: {', '.join(strays)} are not parameters of {notebook.name} "
                         f"(its parameters: {', '.join(sorted(known))})")
    return Preset(name, notebook.stem, path, str(raw.get("description") or ""), list(raw.get("tables") or []),
                  list(data), list(raw.get("needs_llm") or []), dict(raw["parameters"]), str(raw.get("measured") or ""))


def merge(preset: Preset, overrides: dict[str, Any]) -> dict[str, Any]:
    """Preset parameters with the command line's on top, relative ``*path`` values made absolute."""
    params = {**preset.parameters, **overrides}
    for key, value in params.items():
        if key.endswith("path") and isinstance(value, str) and value and not Path(value).is_absolute() \
                and Path(value).exists():
            params[key] = str(Path(value).resolve())
    return params


def _fill(value, params: dict[str, Any]):
    """``"{name}"`` -> the notebook parameter ``name`` (None when unset); other values unchanged.
    In a mapping, ``from_parameter: name`` merges that dict-valued parameter under the other keys
    (so ``loader_params`` given with ``-p`` still reach the check, its sizes overridden)."""
    if isinstance(value, str):
        m = _PLACEHOLDER.match(value)
        if m:
            return params.get(m.group(1))
    if isinstance(value, dict):
        base = params.get(value["from_parameter"]) or {} if "from_parameter" in value else {}
        if not isinstance(base, dict):
            raise ValueError(f"parameter {value['from_parameter']!r} must be a mapping of loader arguments, "
                             f"got {base!r}")
        return {**base, **{k: _fill(v, params) for k, v in value.items() if k != "from_parameter"}}
    return value


# The parameters through which a notebook names the data it loads, and where their loader arguments are.
DATA_PARAMETERS = ("dataset", "datasets", "compare_datasets")


def run_data(params: dict[str, Any]) -> list[tuple[Any, dict]]:
    """(data parameter value, its loader arguments) for every data set the run will load: the values of
    ``dataset``/``datasets``/``compare_datasets``, with ``dataset_options[label]`` or, for ``dataset``,
    ``loader_params``."""
    from ..datasets import data_source

    options = params.get("dataset_options") or {}
    out, seen = [], set()
    for key in DATA_PARAMETERS:
        values = params.get(key)
        for value in ([values] if isinstance(values, (str, dict)) else values or []):
            label = value.get("loader") if isinstance(value, dict) else str(value)
            try:
                label = data_source(value).label
            except ValueError:
                pass                                   # named in check_data's message
            extra = options.get(label) or (params.get("loader_params") if key == "dataset" else None) or {}
            if repr((value, extra)) not in seen:
                seen.add(repr((value, extra)))
                out.append((value, dict(extra)))
    return out


def check_data(preset: Preset, params: dict[str, Any]) -> None:
    """Check what the run will load, and nothing else: each data set the run names (after ``-p``), with its
    options (paths) and the loaders' ``RAG_LAB_DATA_*`` variables. A data set the preset lists is loaded
    with its ``check`` arguments over the run's (small sizes, the run's paths); another (a substitute, a
    folder) with the run's own. Every missing or unknown data set is named at once, with the download command."""
    from ..datasets import data_source
    from ..datasets.sources import SOURCES

    entries = {entry["dataset"]: entry for entry in preset.data}
    missing, unknown = [], []
    for value, options in run_data(params):
        try:
            source = data_source(value)
        except ValueError as e:
            unknown.append(str(e))
            continue
        entry = entries.get(source.label)
        check = {k: v for k, v in _fill(entry.get("check") or {}, params).items() if v is not None} if entry else {}
        try:
            source.load({**options, **check})
        except FileNotFoundError as e:
            download = entry["download"] if entry else source.label if source.label in SOURCES else None
            missing.append((source.label, download, str(e)))
    if unknown:
        raise ValueError(f"preset {preset.name!r} of {preset.notebook}: " + "; ".join(unknown))
    if missing:
        paths = [k for k in params if k.endswith("path")]
        by_hand = f", or pass -p {paths[0]} PATH to a copy you have" if paths else \
            ", or pass its path in -p dataset_options" if "dataset_options" in params else ""
        needs = "; ".join(f"{name} ({why})" for name, _, why in missing)
        commands = "  ".join(f"python -m rag_lab download {download}" for _, download, _ in missing if download)
        fetch = f" Fetch it with:  {commands}  and run again" if commands else ""
        raise PresetDataMissing(f"preset {preset.name!r} of {preset.notebook} needs data that is not on this machine: "
                                f"{needs}.{fetch}{by_hand}.")


def check_llm(preset: Preset, params: dict[str, Any]) -> None:
    """``needs_llm`` lists parameters of which at least one must name an LLM (not "offline")."""
    if not preset.needs_llm:
        return
    if not any(params.get(k) and str(params[k]).strip().lower() != "offline" for k in preset.needs_llm):
        key = preset.needs_llm[0]
        raise ValueError(f"preset {preset.name!r} of {preset.notebook} needs an LLM in "
                         f"{' or '.join(preset.needs_llm)} (this part of the paper's setting cannot run offline): "
                         f"pass -p {key} SPEC, e.g. -p {key} openai:gpt-4o-mini")


def apply_preset(names: Sequence[str] | None, name: str, overrides: dict[str, Any],
                 notebook_dir: Path = NOTEBOOK_DIR, check: bool = True) -> tuple[list[str], dict[str, dict]]:
    """(notebooks to run, per-notebook parameters) for ``--preset name``; with no notebook names,
    every notebook that has the preset. Fails before any run when data or an LLM is missing."""
    if names:
        notebooks = resolve_notebooks(names, notebook_dir)
    else:
        notebooks = [nb for nb in list_notebooks(notebook_dir) if preset_file(nb, name).is_file()]
        if not notebooks:
            raise ValueError(f"no notebook in {notebook_dir} has a preset {name!r}")
    per_notebook = {}
    for nb in notebooks:
        preset = load_preset(nb, name)
        params = merge(preset, overrides)
        if check:
            check_llm(preset, params)
            check_data(preset, params)
        per_notebook[nb.stem] = params
        if preset.measured:
            announce(f"{nb.stem} --preset {name}: measured {preset.measured}")
    return [str(nb) for nb in notebooks], per_notebook
