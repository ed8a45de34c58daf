"""`infercost serve`: the page and its JSON API, offline, from this package alone.

create_app() builds the FastAPI app: /api/* (see api/routes.py), the OpenAPI schema at
/openapi.json with a vendored Swagger UI at /docs, and the page (web/) at /. Every response
carries a strict Content-Security-Policy: the page loads nothing from outside and runs no inline
script or style.
"""

from __future__ import annotations

import ipaddress
import sys
from importlib import resources
from pathlib import Path
from urllib.parse import urlsplit

from fastapi import FastAPI
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles
from starlette.routing import Match, Mount
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .api import errors
from .api.routes import router

try:  # the benchmark's result schema (no torch needed)
    from .api.bench import router as bench_router
except ImportError:  # pragma: no cover - a build without the bench package
    bench_router = None

WEB_DIR = Path(str(resources.files("infercost").joinpath("web")))
MAX_BODY_BYTES = 1024 * 1024
CSP = ("default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; object-src 'none'; "
       "base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
SECURITY_HEADERS = [(b"content-security-policy", CSP.encode()), (b"x-content-type-options", b"nosniff"),
                    (b"referrer-policy", b"no-referrer"), (b"x-frame-options", b"DENY")]


class SecurityHeaders:
    """Adds the CSP and friends to every response; refuses request bodies over MAX_BODY_BYTES (413)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = dict(scope.get("headers", ())).get(b"content-length", b"")
        if length.isdigit() and int(length) > MAX_BODY_BYTES:
            await self._too_large(scope, receive, send)
            return
        body = bytearray()  # read the whole body first: a chunked one has no Content-Length to check
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > MAX_BODY_BYTES:
                await self._too_large(scope, receive, send)
                return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": bytes(body), "more_body": False}
            return await receive()

        await self.app(scope, replay, self._send_with_headers(send))

    async def _too_large(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = errors.unprocessable([errors.problem(["body"], f"larger than {MAX_BODY_BYTES // 1024} KB")], 413)
        await response(scope, receive, self._send_with_headers(send))

    @staticmethod
    def _send_with_headers(send: Send) -> Send:
        async def wrapped(message: Message) -> None:
            if message["type"] == "http.response.start":
                message.setdefault("headers", [])
                message["headers"] = list(message["headers"]) + SECURITY_HEADERS
            await send(message)
        return wrapped


class PageMount(Mount):
    """The page's files at /, except under /api: an API path answers as the API does (404, 405 with
    its own Allow header), never as a static file."""

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        path = scope.get("path", "")
        if path == "/api" or path.startswith("/api/"):
            return Match.NONE, {}
        return super().matches(scope)


def safe_course_url(url: str) -> str:
    """The course's base URL if it is http(s) or a site path; anything else (javascript:, data:) -> ""."""
    url = (url or "").strip()
    if url.startswith("/") and not url.startswith("//"):
        return url
    parts = urlsplit(url)
    return url if parts.scheme in ("http", "https") and parts.netloc else ""


def create_app(course_base_url: str = "") -> FastAPI:
    app = FastAPI(title="infercost", summary="Why serving a large language model costs what it costs",
                  version="0.1.0", docs_url=None, redoc_url=None)
    app.state.course_base_url = safe_course_url(course_base_url)
    errors.install(app)
    app.include_router(router)
    if bench_router is not None:
        app.include_router(bench_router)

    @app.get("/docs", include_in_schema=False)
    def docs() -> FileResponse:
        return FileResponse(WEB_DIR / "docs.html")

    app.routes.append(PageMount("/", StaticFiles(directory=WEB_DIR, html=True), name="page"))
    app.add_middleware(SecurityHeaders)
    return app


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def serve(host: str = "127.0.0.1", port: int = 8000, course_base_url: str = "") -> int:
    """Run the page under uvicorn until interrupted; print its address first."""
    import uvicorn

    if not 0 <= port <= 65535:
        print(f"infercost: error: port: must be between 0 and 65535, not {port}", file=sys.stderr)
        return 2
    if course_base_url and not safe_course_url(course_base_url):
        print("infercost: warning: --course-url must be an http(s) URL or a path starting with /; "
              "the module links are left out", file=sys.stderr)
    shown = f"[{host}]" if ":" in host else host
    print(f"infercost: the page is at http://{'127.0.0.1' if host in ('0.0.0.0', '::') else shown}:{port}/")
    if not is_loopback(host):
        print(f"infercost: warning: listening on {host}, so other machines on the network can open the page "
              "and its API; use --host 127.0.0.1 to keep it to this machine", file=sys.stderr)
    print("infercost: press Ctrl+C to stop", flush=True)
    try:
        uvicorn.run(create_app(course_base_url), host=host, port=port, log_level="warning")
    except OSError as exc:
        print(f"infercost: error: cannot listen on {host}:{port}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    except SystemExit as exc:  # uvicorn exits when it cannot bind the port
        code = exc.code if isinstance(exc.code, int) else 1
        if code:
            print(f"infercost: error: cannot listen on {host}:{port} (is the port in use? try --port)", file=sys.stderr)
        return code
    return 0
