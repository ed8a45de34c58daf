"""The page's server in a child process on a free loopback port: for the browser tests, the
benchmarks and the screenshot script, which all need a real uvicorn to talk to."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager

SERVER_CODE = ("import sys, uvicorn; from infercost.server import create_app; "
               "uvicorn.run(create_app(sys.argv[2]), host='127.0.0.1', port=int(sys.argv[1]), log_level='warning')")


def free_loopback_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_healthy(proc: subprocess.Popen, url: str, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url + "api/health", timeout=1) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.1)
        if proc.poll() is not None:
            raise RuntimeError("the server exited before it answered")
    raise RuntimeError(f"the server did not answer within {timeout_s:g} s")


@contextmanager
def running_server(course_url: str = "", timeout_s: float = 30) -> Iterator[tuple[str, int]]:
    """Yield (base URL ending in "/", server pid) once /api/health answers; stop the server after."""
    port = free_loopback_port()
    proc = subprocess.Popen([sys.executable, "-c", SERVER_CODE, str(port), course_url])
    url = f"http://127.0.0.1:{port}/"
    try:
        _wait_healthy(proc, url, timeout_s)
        yield url, proc.pid
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
