"""How the scripted LLM server keeps time: deadlines met to the microsecond, and each request
timed from when its last bytes reached the server's socket (``voicebench._arrivals``)."""

from __future__ import annotations

import asyncio
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
