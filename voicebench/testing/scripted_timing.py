"""How the scripted servers keep time: deadlines met to the microsecond, each request timed from
when its last bytes reached the server's socket (``voicebench._arrivals``), and how each one
says it is ready and runs until it is told to stop."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import signal
import socket
import time

from aiohttp import web

from voicebench import _arrivals as kernel

# asyncio wakes up to ~1 ms late (epoll timeouts are whole milliseconds, rounded up), so sleep
# until this long before a deadline and spin for the rest: the chunk leaves within microseconds.
_SPIN_NS = 1_500_000


async def sleep_until(deadline_ns: int) -> None:
    remaining = deadline_ns - _SPIN_NS - time.perf_counter_ns()
    if remaining > 0:
        await asyncio.sleep(remaining / 1e9)
    while time.perf_counter_ns() < deadline_ns:
        pass


def listener(host: str, port: int) -> kernel.StampedSocket:
    """A socket bound to ``host:port`` whose accepted connections stamp arrivals."""
    sock = kernel.StampedSocket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    kernel.enable(sock)  # the connections it accepts inherit it
    sock.bind((host, port))
    return sock


def arrived(request: web.Request, fallback_ns: int) -> int:
    """When the latest bytes of ``request``'s connection reached the socket."""
    conn = kernel.stamped(request.transport.get_extra_info("socket") if request.transport else None)
    return conn.arrived_ns if conn is not None and conn.arrived_ns else fallback_ns


async def ready_until_stopped(url: str) -> None:
    """Print ``READY URL`` (what ``HelperServer`` waits for) and return on SIGTERM, SIGINT or
    the parent's death."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    gc.freeze()  # startup objects (the voice, numpy) need no scanning: shorter pauses
    print(f"READY {url}", flush=True)
    parent = os.getppid()
    while not stop.is_set() and os.getppid() == parent:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=1.0)


class HeardLine:
    """A call as the scripted agent reads it, for transports whose audio does not come as
    WebSocket messages (WebRTC, SIP): what the caller said, each piece put in by ``hear`` with
    its arrival, out of ``async for``; ``arrival()`` is the last piece's, ``hear(None)`` ends
    the call's audio."""

    def __init__(self) -> None:
        self._heard: asyncio.Queue[tuple[bytes, int] | None] = asyncio.Queue()
        self._arrival = 0

    def hear(self, audio: bytes | None, arrival_ns: int = 0) -> None:
        self._heard.put_nowait(None if audio is None else (audio, arrival_ns))

    def arrival(self) -> int:
        return self._arrival

    def __aiter__(self) -> HeardLine:
        return self

    async def __anext__(self) -> bytes:
        got = await self._heard.get()
        if got is None:
            raise StopAsyncIteration
        audio, self._arrival = got
        return audio
