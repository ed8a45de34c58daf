"""Dataclasses to and from JSON-ready dicts, strictly: unknown keys and wrong types name their field."""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from enum import Enum
from functools import cache
from typing import Any

from .errors import ScenarioError


@cache
def _field_names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls))


_PLAIN = (str, int, float, bool, type(None))


def to_jsonable(value: Any) -> Any:
    """Dataclasses become dicts, enums their values, tuples lists; floats stay floats."""
    if isinstance(value, _PLAIN):
        return value
    if hasattr(type(value), "__dataclass_fields__"):
        return {name: to_jsonable(getattr(value, name)) for name in _field_names(type(value))}
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    return value


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _convert(tp: Any, value: Any, path: str) -> Any:
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        options = typing.get_args(tp)
        if value is None and type(None) in options:
            return None
        inner = [o for o in options if o is not type(None)]
        return _convert(inner[0], value, path)
    if origin is tuple:
        if not isinstance(value, (list, tuple)):
            raise ScenarioError(path, "must be a list")
        item = typing.get_args(tp)[0]
        return tuple(_convert(item, v, f"{path}[{i}]") for i, v in enumerate(value))
    if dataclasses.is_dataclass(tp):
        return from_dict(tp, value, path)
    if isinstance(tp, type) and issubclass(tp, Enum):
        try:
            return tp(value)
        except ValueError:
            allowed = ", ".join(str(e.value) for e in tp)
            raise ScenarioError(path, f"must be one of {allowed}, not {value!r}") from None
    if tp is bool:
        if not isinstance(value, bool):
            raise ScenarioError(path, "must be true or false")
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, float) and value.is_integer():
                return int(value)
            raise ScenarioError(path, f"must be a whole number, not {value!r}")
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ScenarioError(path, f"must be a number, not {value!r}")
        if not math.isfinite(value):
            raise ScenarioError(path, "must be a finite number")
        return float(value)
    if tp is str:
        if not isinstance(value, str):
            raise ScenarioError(path, f"must be text, not {value!r}")
        return value
    raise TypeError(f"{path}: unsupported field type {tp!r}")


def from_dict(cls: type, data: Any, path: str = "") -> Any:
    """Build dataclass `cls` from a dict, refusing unknown keys and values of the wrong type."""
    if not isinstance(data, dict):
        raise ScenarioError(path or cls.__name__, "must be an object")
    hints = _hints(cls)
    known = {f.name for f in dataclasses.fields(cls) if f.init}
    for key in data:
        if key not in known:
            raise ScenarioError(f"{path}.{key}" if path else str(key), "unknown field")
    kwargs = {k: _convert(hints[k], v, f"{path}.{k}" if path else k) for k, v in data.items()}
    try:
        return cls(**kwargs)
    except TypeError as exc:  # a required field is missing
        raise ScenarioError(path or cls.__name__, str(exc)) from None
