"""Serving the review app: ``serving`` starts uvicorn in a thread on a bound socket (a free port
with ``port=0``) and stops it on leaving, for tests and for ``m3kit review``; ``open_review``
builds the app for a folder (its source, its decisions, the reviewer)."""

from __future__ import annotations

import getpass
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import uvicorn
from fastapi import FastAPI

from m3kit.review.app import LOOPBACK_HOSTS, create_app
from m3kit.review.sources import open_source
from m3kit.review.store import DecisionStore

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "default_reviewer", "open_review", "serving"]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
_START_TIMEOUT_S = 30.0


def default_reviewer() -> str:
    """The operating system's user name ("reviewer" when it has none)."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no user database entry, no LOGNAME/USER
        return "reviewer"


def open_review(root: Path, reviewer: str | None = None,
                host: str = DEFAULT_HOST) -> FastAPI:
    """The review app of the builder output at ``root`` (``SchemaError`` when it is none),
    answering loopback host names only when ``host`` is a loopback address."""
    source = open_source(Path(root))
    store = DecisionStore(source.root, source.benchmark)
    hosts = LOOPBACK_HOSTS if host in LOOPBACK_HOSTS else ("*",)
    return create_app(source, store, reviewer or default_reviewer(), allowed_hosts=hosts)


def _url(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/"


@contextmanager
def serving(app: FastAPI, host: str = DEFAULT_HOST, port: int = 0) -> Iterator[str]:
    """Serve ``app`` on ``host``:``port`` (0: a free port) in a thread; yields the URL, stops
    the server (open connections closed) on leaving."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    bound_port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off",
                                           timeout_graceful_shutdown=2))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]},
                              name="m3kit-review", daemon=True)
    thread.start()
    try:
        if not _wait_started(server, thread):
            raise RuntimeError(f"the review server did not start on {host}:{bound_port}")
        yield _url(host, bound_port)
    finally:
        server.should_exit = True
        thread.join(timeout=_START_TIMEOUT_S)
        sock.close()


def _wait_started(server: uvicorn.Server, thread: threading.Thread) -> bool:
    deadline = time.monotonic() + _START_TIMEOUT_S
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.02)
    return server.started
