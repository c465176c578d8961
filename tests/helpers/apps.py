"""Web apps a test serves in its own event loop, as their authors would serve them (uvicorn)."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator
from typing import Any


@contextlib.asynccontextmanager
async def served(app: Any) -> AsyncIterator[int]:
    """Serve the ASGI ``app`` on 127.0.0.1 with uvicorn; yields its port, stops it on exit."""
    import uvicorn

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    task = asyncio.create_task(server.serve())
    while not server.started:
        assert not task.done(), "the app's server did not start"
        await asyncio.sleep(0.05)
    try:
        yield port
    finally:
        server.should_exit = True
        await task
