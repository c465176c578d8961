"""An LLM client's HTTP requests, timed at the socket: when a request left and when its
reply's first answer token arrived.

- **Sent**: httpcore traces each request, and ``send_request_body.complete`` comes once its
  last byte has been handed to the kernel. The SDK building the request and the connection's
  set-up come before that, so they are not counted as the model's time.
- **Arrived**: each connection reads its socket with kernel arrival stamps
  (``voicebench._arrivals``), TLS running on top, so each read knows when its bytes had
  all come in, however late the busy event loop got to them. The connection a response comes
  on is noted (httpx's ``network_stream`` extension); when the LLM service reaches the reply's
  first answer token (pipecat's time-to-first-answer-token point, which a role-only or empty
  chunk is not), ``Wire.arrived_age_ns`` says how long ago the read that completed those
  bytes took them in.

The SDKs sit on httpx or its successor httpx2 (with httpcore or httpcore2 below); the stamped
transport is built from whichever the SDK's client class comes from. Where the kernel gives
no stamps (not Linux) the client keeps its own transport, and the first token is timed from
the service's own report of it (``voicebench.timing.events``).
"""

from __future__ import annotations

import asyncio
import importlib
import select
import socket
import ssl
import time
from collections.abc import Callable, Iterable
from typing import Any

import anyio
import anyio.abc
from anyio.streams.tls import TLSAttribute, TLSStream

from voicebench import _arrivals as kernel


class _SocketStream(anyio.abc.ByteStream):
    """A connected non-blocking TCP socket, read with kernel arrival stamps."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.arrived_ns: int | None = None
        """When the bytes of the latest read had all arrived (``perf_counter_ns``)."""

    async def receive(self, max_bytes: int = 65536) -> bytes:
        while True:
            try:
                data, arrived = kernel.recv(self.sock, max_bytes)
            except (BlockingIOError, InterruptedError):
                await self._ready(writing=False)
                continue
            except OSError as exc:
                raise anyio.BrokenResourceError from exc
            if not data:
                raise anyio.EndOfStream
            self.arrived_ns = arrived
            return data

    async def send(self, item: bytes) -> None:
        view = memoryview(item)
        while view:
            try:
                view = view[self.sock.send(view) :]
            except (BlockingIOError, InterruptedError):
                await self._ready(writing=True)
            except OSError as exc:
                raise anyio.BrokenResourceError from exc

    async def _ready(self, *, writing: bool) -> None:
        loop = asyncio.get_running_loop()
        fd = self.sock.fileno()
        if fd < 0:
            raise anyio.ClosedResourceError
        ready: asyncio.Future[None] = loop.create_future()

        def wake() -> None:
            if not ready.done():
                ready.set_result(None)

        add, remove = (
            (loop.add_writer, loop.remove_writer)
            if writing
            else (loop.add_reader, loop.remove_reader)
        )
        add(fd, wake)
        try:
            await ready
        finally:
            remove(fd)

    async def send_eof(self) -> None:
        self.sock.shutdown(socket.SHUT_WR)

    async def aclose(self) -> None:
        self.sock.close()

    @property
    def extra_attributes(self) -> Any:
        sock = self.sock
        return {
            anyio.abc.SocketAttribute.raw_socket: lambda: sock,
            anyio.abc.SocketAttribute.family: lambda: sock.family,
            anyio.abc.SocketAttribute.local_address: lambda: sock.getsockname(),
            anyio.abc.SocketAttribute.remote_address: lambda: sock.getpeername(),
        }


class StampedStream:
    """httpcore's view of one connection (its ``AsyncNetworkStream``): plain or TLS bytes over
    a stamped socket, failing with the exceptions of ``core`` (httpcore or httpcore2)."""

    def __init__(self, stream: anyio.abc.ByteStream, raw: _SocketStream, core: Any) -> None:
        self._stream = stream
        self.raw = raw
        self._core = core

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        try:
            async with asyncio.timeout(timeout):
                return await self._stream.receive(max_bytes)
        except anyio.EndOfStream:
            return b""
        except TimeoutError as exc:
            raise self._core.ReadTimeout(str(exc)) from exc
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
            raise self._core.ReadError(str(exc) or type(exc).__name__) from exc

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        try:
            async with asyncio.timeout(timeout):
                await self._stream.send(buffer)
        except TimeoutError as exc:
            raise self._core.WriteTimeout(str(exc)) from exc
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
            raise self._core.WriteError(str(exc) or type(exc).__name__) from exc

    async def aclose(self) -> None:
        await self._stream.aclose()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> StampedStream:
        try:
            async with asyncio.timeout(timeout):
                tls = await TLSStream.wrap(
                    self._stream,
                    ssl_context=ssl_context,
                    hostname=server_hostname,
                    standard_compatible=False,
                    server_side=False,
                )
        except TimeoutError as exc:
            await self.aclose()
            raise self._core.ConnectTimeout(str(exc)) from exc
        except (anyio.BrokenResourceError, anyio.EndOfStream, ssl.SSLError, OSError) as exc:
            await self.aclose()
            raise self._core.ConnectError(str(exc) or type(exc).__name__) from exc
        return StampedStream(tls, self.raw, self._core)

    def get_extra_info(self, info: str) -> Any:
        sock = self.raw.sock
        if info == "ssl_object":
            return self._stream.extra(TLSAttribute.ssl_object, None)
        if info == "client_addr":
            return sock.getsockname()
        if info == "server_addr":
            return sock.getpeername()
        if info == "socket":
            return sock
        if info == "is_readable":  # an idle kept-alive connection the server has closed
            return sock.fileno() < 0 or bool(select.select([sock], [], [], 0)[0])
        return None


class StampedBackend:
    """httpcore's network backend (its ``AsyncNetworkBackend``) with stamped TCP connections,
    Unix sockets as usual; ``core`` is httpcore or httpcore2."""

    def __init__(self, core: Any) -> None:
        self._core = core

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> StampedStream:
        try:
            async with asyncio.timeout(timeout):
                sock = await kernel.connect(host, port, local_address, socket_options or ())
        except TimeoutError as exc:
            raise self._core.ConnectTimeout(str(exc)) from exc
        except OSError as exc:
            raise self._core.ConnectError(str(exc)) from exc
        raw = _SocketStream(sock)
        return StampedStream(raw, raw, self._core)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> Any:
        return await self._core.AnyIOBackend().connect_unix_socket(path, timeout, socket_options)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


class Wire:
    """One LLM client's requests timed at the socket; ``httpx_options()`` goes to its
    ``AsyncClient``. ``on_sent`` is called the moment each request has been written."""

    def __init__(self, on_sent: Callable[[], None] = lambda: None) -> None:
        self.on_sent = on_sent
        self._stream: _SocketStream | None = None

    def httpx_options(self, client: type) -> dict[str, Any]:
        """For ``client`` (an ``httpx`` or ``httpx2`` ``AsyncClient`` class): ``transport``
        (stamped connections, where the system stamps) and ``event_hooks``."""
        options: dict[str, Any] = {
            "event_hooks": {"request": [self._request], "response": [self._response]}
        }
        roots = {base.__module__.split(".")[0] for base in client.__mro__}
        flavor = next((r for r in ("httpx2", "httpx") if r in roots), None)
        if not kernel.SUPPORTED or flavor is None:
            return options
        transport = importlib.import_module(flavor).AsyncHTTPTransport()
        pool = getattr(transport, "_pool", None)
        if hasattr(pool, "_network_backend"):  # the pool's backend is the one seam it has
            core = importlib.import_module(flavor.replace("httpx", "httpcore"))
            pool._network_backend = StampedBackend(core)  # type: ignore[union-attr]
            options["transport"] = transport
        return options

    async def _request(self, request: Any) -> None:
        self._stream = None
        request.extensions["trace"] = self._trace

    async def _trace(self, name: str, _info: dict[str, Any]) -> None:
        # .failed too: a server may answer a request it stopped reading part way
        if name.endswith(("send_request_body.complete", "send_request_body.failed")):
            self.on_sent()

    async def _response(self, response: Any) -> None:
        stream = response.extensions.get("network_stream")
        self._stream = stream.raw if isinstance(stream, StampedStream) else None

    def arrived_age_ns(self) -> int | None:
        """How long ago the latest bytes of the current response arrived; None when its
        connection is not stamped."""
        if self._stream is None or self._stream.arrived_ns is None:
            return None
        return time.perf_counter_ns() - self._stream.arrived_ns
