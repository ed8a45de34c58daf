"""JSON bytes for the API: strict (no NaN or Infinity, which browsers cannot parse) and compact."""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any

from pydantic import ConfigDict, TypeAdapter

from ..results import Estimate


def json_bytes(data: Any) -> bytes:
    """Strict JSON; a non-finite number raises ValueError (the caller decides whose mistake it is)."""
    return json.dumps(data, allow_nan=False, separators=(",", ":"), check_circular=False).encode()


@cache
def _estimates_adapter() -> TypeAdapter:
    # A list around the dataclass: pydantic takes serializer settings for the outer type only.
    return TypeAdapter(list[Estimate], config=ConfigDict(ser_json_inf_nan="constants"))


def estimate_json(est: Estimate) -> bytes:
    """Estimate.to_dict() as JSON, serialized by pydantic's compiled encoder (about 8x faster).

    A non-finite number comes out as a bare Infinity or NaN token after a ':', ',' or '['; where
    such a token may appear (text in a string can look alike), the exact path decides and raises
    ValueError for a real non-finite number.
    """
    out = _estimates_adapter().dump_json([est])[1:-1]
    if _BARE_NON_FINITE.search(out):
        return json_bytes(est.to_dict())
    return out


_BARE_NON_FINITE = re.compile(rb"[:,\[]-?(?:Infinity|NaN)")
