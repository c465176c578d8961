"""The scripted LLM server's web application and its serving loop (the handlers are
``scripted_llm._Completions``'s; the command line is ``scripted_llm.main``)."""

from __future__ import annotations

from collections import deque
from typing import IO, Any, Protocol

from aiohttp import web

from voicebench.errors import RunError
from voicebench.llm.helper import HOST
from voicebench.testing.scripted_records import FAULTS
from voicebench.testing.scripted_timing import listener, ready_until_stopped


class _Completions(Protocol):
    """What the application serves (``scripted_llm._Completions``)."""

    model: str
    script: deque[dict[str, Any]]
    history: list[dict[str, Any]]

    @property
    def log(self) -> IO[str] | None: ...

    async def handle(self, request: web.Request) -> web.StreamResponse: ...

    async def complete(self, request: web.Request) -> web.Response: ...


def build_app(completions: _Completions) -> web.Application:
    """The aiohttp application serving one script."""

    async def health(_: web.Request) -> web.Response:
        return web.json_response({"status": "ok"})

    async def models(_: web.Request) -> web.Response:
        return web.json_response(
            {
                "object": "list",
                "data": [
                    {
                        "id": completions.model,
                        "object": "model",
                        "created": 0,
                        "owned_by": "voicebench",
                    }
                ],
            }
        )

    async def script(request: web.Request) -> web.Response:
        item = await request.json()
        if item.get("fault") not in (None, *FAULTS):
            return web.json_response({"error": f"unknown fault {item.get('fault')!r}"}, status=400)
        completions.script.append({k: item.get(k) for k in ("content", "fault", "top_logprobs")})
        return web.json_response({"queued": len(completions.script)})

    async def history(_: web.Request) -> web.Response:
        return web.json_response(completions.history)

    app = web.Application()
    app.router.add_post("/script", script)
    app.router.add_get("/history", history)
    app.router.add_get("/health", health)
    app.router.add_get("/v1/models", models)
    app.router.add_post("/v1/chat/completions", completions.handle)
    app.router.add_post("/v1/completions", completions.complete)
    return app


async def serve(completions: _Completions, *, port: int = 0, host: str = HOST) -> None:
    """Serve until SIGTERM, SIGINT or the parent's death; print the READY line once listening."""
    if host != HOST:
        raise RunError(f"the scripted LLM server binds {HOST} only, not {host}")
    # No access log: a write to stdout per request is jitter, and stdout carries only READY.
    runner = web.AppRunner(
        build_app(completions), access_log=None, handler_cancellation=True, shutdown_timeout=0.5
    )
    await runner.setup()
    await web.SockSite(runner, listener(HOST, port)).start()
    try:
        await ready_until_stopped(f"http://{HOST}:{runner.addresses[0][1]}/v1")
    finally:
        await runner.cleanup()
        if completions.log is not None:
            completions.log.close()
