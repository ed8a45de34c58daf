"""Small file uploads without extra dependencies: a multipart/form-data part, or the file as the raw body.

The body is read in chunks and refused as soon as it passes the cap, so a large upload never sits
in memory. Multipart bodies are parsed with the standard library's email parser.
"""

from __future__ import annotations

from email import policy
from email.parser import BytesParser

from fastapi import Request

from .errors import ApiError

MULTIPART_OVERHEAD_BYTES = 16 * 1024
RAW_TYPES = ("application/json", "application/octet-stream", "text/plain")


def _kib(n: int) -> str:
    return f"{n // 1024} KB"


async def read_upload(request: Request, field: str, max_bytes: int) -> tuple[bytes, str]:
    """(file bytes, file name) from a multipart part named `field` or from the raw body."""
    content_type = request.headers.get("content-type", "")
    kind = content_type.split(";")[0].strip().lower()
    multipart = kind == "multipart/form-data"
    if not multipart and kind and kind not in RAW_TYPES:
        raise ApiError(["body", field], f"send the file as multipart/form-data (field {field!r}) or as "
                                        f"application/json, not {kind[:60]!r}", 415)
    limit = max_bytes + (MULTIPART_OVERHEAD_BYTES if multipart else 0)
    declared = request.headers.get("content-length", "")
    too_big = ApiError(["body", field], f"the file is larger than {_kib(max_bytes)}")
    if declared.isdigit() and int(declared) > limit:
        raise too_big
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise too_big
        chunks.append(chunk)
    body = b"".join(chunks)
    if not multipart:
        if not body:
            raise ApiError(["body", field], "no file was sent")
        return body, ""
    data, name = _multipart_part(content_type, body, field)
    if len(data) > max_bytes:
        raise too_big
    return data, name


def _multipart_part(content_type: str, body: bytes, field: str) -> tuple[bytes, str]:
    header = f"Content-Type: {content_type}\r\nMIME-Version: 1.0\r\n\r\n".encode("latin-1", "replace")
    message = BytesParser(policy=policy.HTTP).parsebytes(header + body)
    if not message.is_multipart():
        raise ApiError(["body", field], "not a readable multipart/form-data body")
    for part in message.iter_parts():
        if part.get_param("name", header="content-disposition") == field:
            payload = part.get_payload(decode=True) or b""
            if not payload:
                raise ApiError(["body", field], "the file is empty")
            return payload, part.get_filename() or ""
    raise ApiError(["body", field], f"no form field named {field!r}")
