"""JSON bytes for the API: strict (no NaN or Infinity, which browsers cannot parse) and compact."""

from __future__ import annotations

import json
from typing import Any


def json_bytes(data: Any) -> bytes:
    """Strict JSON; a non-finite number raises ValueError (the caller decides whose mistake it is)."""
    return json.dumps(data, allow_nan=False, separators=(",", ":"), check_circular=False).encode()
