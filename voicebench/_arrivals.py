"""When bytes reached a socket, as the kernel stamped them on arrival.

A voice pipeline's event loop is busy (audio frames, voice activity detection, resampling),
so it reads a socket some time after the bytes came in, and parsing takes more time again.
A stamp taken when the bytes are finally handled puts that lateness into the figure being
measured. On Linux a socket with ``SO_TIMESTAMPNS`` has each incoming segment stamped as it
arrives, and ``recvmsg`` returns the stamp of the last segment it took: that is when the
bytes a read returns were all there, however late the read.

Kernel stamps are on the wall clock (``CLOCK_REALTIME``). ``recv`` puts them on the
``perf_counter_ns`` clock by their age, read the moment the read returns, so a wall-clock
step would have to fall between a segment's arrival and its read to mislead it.

Where the kernel gives no stamp (another system, or a read that took no segment), the stamp
is the read's own time: never later than a stamp taken after parsing.

When the reader comes late and several segments wait, one read takes them all and the stamp
is the last one's: a read cannot tell where the segments were cut.
"""

from __future__ import annotations

import asyncio
import platform
import socket
import struct
import sys
import time
import weakref
from collections.abc import Iterable
from typing import Any

_SO_TIMESTAMPNS: int = getattr(socket, "SO_TIMESTAMPNS", 35)
"""Python names no constant for it; 35 is Linux's own on x86, Arm, RISC-V, POWER and Z."""
SUPPORTED = sys.platform == "linux" and platform.machine().lower().startswith(
    ("x86", "i686", "amd64", "aarch64", "arm", "riscv", "ppc", "s390")
)
"""Whether this system stamps arrivals (Linux)."""
_TIMESPEC = struct.Struct("@ll")
_ANCILLARY = socket.CMSG_SPACE(_TIMESPEC.size) if SUPPORTED else 0


def enable(sock: socket.socket) -> bool:
    """Ask the kernel to stamp what arrives on ``sock`` (inherited by sockets it accepts)."""
    if not SUPPORTED:
        return False
    try:
        sock.setsockopt(socket.SOL_SOCKET, _SO_TIMESTAMPNS, 1)
    except OSError:
        return False
    return True


def _arrival(ancillary: list[tuple[int, int, bytes]]) -> int:
    """The arrival of the last segment read, on the ``perf_counter_ns`` clock."""
    now_real, now = time.time_ns(), time.perf_counter_ns()
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == _SO_TIMESTAMPNS:
            seconds, nanos = _TIMESPEC.unpack(data[: _TIMESPEC.size])
            age = now_real - (seconds * 1_000_000_000 + nanos)
            return now - max(0, age)
    return now


def recv(sock: socket.socket, max_bytes: int) -> tuple[bytes, int]:
    """Read up to ``max_bytes`` from ``sock`` (raising as ``sock.recv`` does); returns the
    bytes and when they had all arrived (``perf_counter_ns``)."""
    if not SUPPORTED:
        return socket.socket.recv(sock, max_bytes), time.perf_counter_ns()
    data, ancillary, _flags, _address = socket.socket.recvmsg(sock, max_bytes, _ANCILLARY)
    return data, _arrival(ancillary)


_LIVE: weakref.WeakValueDictionary[int, StampedSocket] = weakref.WeakValueDictionary()
"""Every ``StampedSocket`` by file descriptor: an asyncio transport shows a wrapper, not the
socket itself."""


class StampedSocket(socket.socket):
    """A socket whose reads note when their bytes arrived (``arrived_ns``).

    For code that reads through an asyncio transport (a server, a WebSocket client): the
    transport calls ``recv``, gets the bytes, and the stamp of that read stays on the socket
    until the next one; a protocol's ``data_received`` runs right after the read and can take
    it. A listening ``StampedSocket`` accepts ``StampedSocket``\\ s.
    """

    arrived_ns: int = 0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _LIVE[self.fileno()] = self

    def recv(self, bufsize: int, flags: int = 0) -> bytes:
        if flags:
            return super().recv(bufsize, flags)
        data, self.arrived_ns = recv(self, bufsize)
        return data

    def recv_into(self, buffer, nbytes: int = 0, flags: int = 0) -> int:
        if flags or not SUPPORTED:
            n = super().recv_into(buffer, nbytes, flags)
            self.arrived_ns = time.perf_counter_ns()
            return n
        view = memoryview(buffer).cast("B")
        n, ancillary, _flags, _address = self.recvmsg_into(
            [view[:nbytes] if nbytes else view], _ANCILLARY
        )
        self.arrived_ns = _arrival(ancillary)
        return n

    def accept(self) -> tuple[socket.socket, object]:
        fd, address = self._accept()  # type: ignore[attr-defined]
        conn = StampedSocket(self.family, self.type, self.proto, fileno=fd)
        if socket.getdefaulttimeout() is None and self.gettimeout():
            conn.setblocking(True)
        return conn, address


async def connect(
    host: str, port: int, local_address: str | None = None, options: Iterable[Any] = ()
) -> StampedSocket:
    """A non-blocking TCP ``StampedSocket`` connected to ``host:port`` (each address tried in
    turn, as ``socket.create_connection`` does), with arrival stamps on and Nagle off."""
    loop = asyncio.get_running_loop()
    failure: OSError | None = None
    for family, kind, proto, _name, address in await loop.getaddrinfo(
        host, port, type=socket.SOCK_STREAM
    ):
        sock = StampedSocket(family, kind, proto)
        try:
            sock.setblocking(False)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            enable(sock)
            for option in options:
                sock.setsockopt(*option)
            if local_address:
                sock.bind((local_address, 0))
            await loop.sock_connect(sock, address)
        except OSError as exc:
            sock.close()
            failure = exc
            continue
        except BaseException:
            sock.close()
            raise
        return sock
    raise failure or OSError(f"no address found for {host}")


def stamped(sock: Any) -> StampedSocket | None:
    """The ``StampedSocket`` behind ``sock`` (an asyncio transport's ``socket`` extra), if
    there is one."""
    if isinstance(sock, StampedSocket):
        return sock
    fd = sock.fileno() if sock is not None else -1
    return _LIVE.get(fd) if fd >= 0 else None
