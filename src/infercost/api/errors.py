"""Every client mistake becomes a 422 naming the field; nothing else leaks a traceback."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from ..errors import InferCostError

log = logging.getLogger("infercost.server")
MAX_MESSAGE_CHARS = 500


PROBLEM_SCHEMA = {"type": "object", "required": ["detail"], "properties": {"detail": {"type": "array", "items": {
    "type": "object", "required": ["loc", "msg", "type"],
    "properties": {"loc": {"type": "array", "items": {"anyOf": [{"type": "string"}, {"type": "integer"}]}},
                   "msg": {"type": "string"}, "type": {"type": "string"}}}}}}
# The error answers every POST route may give, for the OpenAPI schema.
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    413: {"description": "the request body is too large", "content": {"application/json": {"schema": PROBLEM_SCHEMA}}},
    422: {"description": "a field is missing, of the wrong type or out of bounds; `msg` names it",
          "content": {"application/json": {"schema": PROBLEM_SCHEMA}}},
}


class ApiError(Exception):
    """A client mistake found by the API itself (upload size, content type): 422 unless told."""

    def __init__(self, loc: list[str | int], message: str, status_code: int = 422) -> None:
        super().__init__(message)
        self.loc, self.message, self.status_code = loc, message, status_code


def problem(loc: list[str | int], message: str, kind: str = "value_error") -> dict[str, Any]:
    field = ".".join(str(part) for part in loc if part != "body") or "body"
    text = message if message.startswith(field + ":") else f"{field}: {message}"
    return {"loc": loc, "msg": text[:MAX_MESSAGE_CHARS], "type": kind}


def field_loc(field: str) -> list[str | int]:
    """"custom_model.moe.experts" -> ["body", "custom_model", "moe", "experts"]."""
    return ["body", *[part for part in field.replace("[", ".").replace("]", "").split(".") if part]]


def unprocessable(problems: list[dict[str, Any]], status_code: int = 422) -> JSONResponse:
    return JSONResponse({"detail": problems}, status_code=status_code)


async def _validation(_: Request, exc: RequestValidationError) -> JSONResponse:
    problems = []
    for error in exc.errors()[:20]:
        loc = [part if isinstance(part, (str, int)) else str(part) for part in error.get("loc", ())]
        kind = str(error.get("type", "value_error"))
        if kind == "json_invalid":  # loc holds the character offset, not a field
            at = loc[1] if len(loc) > 1 else "?"
            problems.append(problem(["body"], f"not valid JSON (error at character {at})", kind))
            continue
        problems.append(problem(loc, str(error.get("msg", "invalid")), kind))
    return unprocessable(problems)


async def _infercost(_: Request, exc: InferCostError) -> JSONResponse:
    return unprocessable([problem(field_loc(exc.field), exc.message)])


async def _api(_: Request, exc: ApiError) -> JSONResponse:
    return unprocessable([problem(exc.loc, exc.message)], exc.status_code)


async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
    if exc.status_code == 400:  # a body FastAPI could not parse: a client mistake like any other
        return unprocessable([problem(["body"], "could not be read (not JSON, or not in the declared encoding)")])
    return JSONResponse({"detail": exc.detail}, status_code=exc.status_code, headers=getattr(exc, "headers", None))


async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    log.exception("unexpected error on %s %s", request.method, request.url.path)
    return JSONResponse({"detail": [{"loc": [], "msg": "internal error: the server could not answer this request",
                                     "type": "internal_error"}]}, status_code=500)


def install(app: FastAPI) -> None:
    app.add_exception_handler(RequestValidationError, _validation)
    app.add_exception_handler(InferCostError, _infercost)
    app.add_exception_handler(ApiError, _api)
    app.add_exception_handler(StarletteHTTPException, _http)
    app.add_exception_handler(Exception, _unexpected)
