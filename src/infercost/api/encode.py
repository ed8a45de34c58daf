"""JSON bytes for the API: strict (no NaN or Infinity) and compact."""

from __future__ import annotations

import json
import math
from typing import Any


def json_bytes(data: Any) -> bytes:
    """Strict JSON (no NaN or Infinity, which browsers cannot parse): non-finite floats become null."""
    try:
        return json.dumps(data, allow_nan=False, separators=(",", ":"), check_circular=False).encode()
    except ValueError:
        return json.dumps(_finite(data), allow_nan=False, separators=(",", ":")).encode()


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value
