"""The base of every method's config: a frozen dataclass of knobs that checks its own values,
prints itself (the dataclass repr), serialises to canonical JSON and hashes to a short id.

Each paper folder's ``config.py`` subclasses ``Config`` once per method; a field's default is
the paper's value (or ours, with the reason in a comment). Retrievers read their knobs from
``retriever.config`` and the registry applies keyword overrides through ``replace``, so a
default is stated in exactly one place. Own code rather than pydantic: the standard library's
frozen dataclasses already give equality, a readable repr and ``dataclasses.replace``; what
is added here is a few lines of canonical JSON, hashing and range checks.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
from typing import Any, Iterable, Mapping, TypeVar

C = TypeVar("C", bound="Config")


def _plain(value: Any) -> Any:
    """JSON-ready form of a knob value: tuples (and lists) become lists, recursively."""
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    return value


def _frozen(value: Any) -> Any:
    """Hashable form of a knob value: lists become tuples, recursively."""
    if isinstance(value, (tuple, list)):
        return tuple(_frozen(v) for v in value)
    return value


def drop_none(**values) -> dict[str, Any]:
    """The keyword arguments that are not None: a notebook parameter left at None means
    "the method config's default", so only the others become overrides."""
    return {k: v for k, v in values.items() if v is not None}


@dataclasses.dataclass(frozen=True)
class Config:
    """Base class of the method configs (see the module docstring). Subclasses declare fields
    and may override ``validate`` to check their values."""

    def __post_init__(self):
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if isinstance(value, list):           # lists from JSON or notebooks: stored as tuples
                object.__setattr__(self, f.name, _frozen(value))
            elif isinstance(f.default, float) and isinstance(value, int) and not isinstance(value, bool):
                object.__setattr__(self, f.name, float(value))   # 95 and 95.0 are one config
        self.validate()

    def validate(self) -> None:
        """Raise ValueError naming the knob when a value is out of range (subclasses override)."""

    # -- knobs -----------------------------------------------------------------------------
    @classmethod
    def knobs(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls))

    def replace(self: C, **changes) -> C:
        """A copy with ``changes`` applied (and validated); an unknown name is an error that lists the knobs."""
        unknown = sorted(set(changes) - set(self.knobs()))
        if unknown:
            raise ValueError(f"{type(self).__name__} has no knob {', '.join(map(repr, unknown))}; "
                             f"its knobs are: {', '.join(self.knobs())}")
        return dataclasses.replace(self, **changes) if changes else self

    @classmethod
    def resolve(cls: type[C], config: C | None = None, **overrides) -> C:
        """``config`` (or this class's defaults) with ``overrides`` applied: what a retriever's
        ``__init__(config=None, **overrides)`` stores as ``self.config``."""
        if config is None:
            config = cls()
        elif type(config) is not cls:
            raise TypeError(f"expected a {cls.__name__}, got {type(config).__name__}")
        return config.replace(**overrides)

    # -- serialisation ---------------------------------------------------------------------
    def as_dict(self) -> dict[str, Any]:
        return {f.name: _plain(getattr(self, f.name)) for f in dataclasses.fields(self)}

    def to_json(self) -> str:
        """Canonical JSON: sorted keys, tuples as lists, no whitespace (what ``config_id`` hashes)."""
        return json.dumps(self.as_dict(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def from_dict(cls: type[C], data: Mapping[str, Any]) -> C:
        """The config a ``as_dict()`` (or a JSON object) describes; knobs it lacks take their defaults."""
        return cls().replace(**dict(data))

    @property
    def config_id(self) -> str:
        """Ten hex digits of sha256 over the class name and the canonical JSON: stable across runs."""
        return hashlib.sha256(f"{type(self).__name__}:{self.to_json()}".encode()).hexdigest()[:10]

    # -- checks for validate() -------------------------------------------------------------
    def _fail(self, name: str, expected: str) -> None:
        raise ValueError(f"{type(self).__name__}.{name} must be {expected}, got {getattr(self, name)!r}")

    def check_positive(self, *names: str) -> None:
        for name in names:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                self._fail(name, "a positive number")

    def check_non_negative(self, *names: str) -> None:
        for name in names:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                self._fail(name, "a number >= 0")

    def check_integer(self, *names: str) -> None:
        for name in names:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                self._fail(name, "an integer")

    def check_range(self, name: str, low: float, high: float, low_open: bool = False) -> None:
        value = getattr(self, name)
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and \
            (low < value if low_open else low <= value) and value <= high
        if not ok:
            self._fail(name, f"in {'(' if low_open else '['}{low}, {high}]")

    def check_choice(self, name: str, choices: Iterable[Any]) -> None:
        choices = tuple(choices)
        if getattr(self, name) not in choices:
            self._fail(name, f"one of {', '.join(map(repr, choices))}")

    def check_overlap(self, size: str, overlap: str) -> None:
        """``size`` positive and ``0 <= overlap < size`` (token windows that move forward)."""
        self.check_integer(size, overlap)
        self.check_positive(size)
        if not 0 <= getattr(self, overlap) < getattr(self, size):
            self._fail(overlap, f">= 0 and below {size} ({getattr(self, size)})")
