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

When the reader comes late and several segments wait, the kernel has merged them and gives
the last one's stamp for all: a read cannot tell where they were cut. A *watched* socket
(``StampedSocket.watch``: a caller's line to an agent that streams audio) does not depend on
the reader being on time. A thread of its own (``_Watcher``, one for every watched socket)
wakes on each segment's arrival, peeks at what is queued and notes how many bytes had come in
and the stamp of the one just come; each read then stops where such an arrival ended and takes
its stamp. Chunks that waited together for an event loop held up by other work, or for a core
taken by other processes, still each keep their own arrival. (The thread needs only the
interpreter's lock for a moment, which it gets within its switch interval, well before the
next 20 ms chunk.)
"""

from __future__ import annotations

import asyncio
import contextlib
import platform
import select
import socket
import struct
import sys
import threading
import time
import weakref
from collections import deque
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


def _stamp(ancillary: list[tuple[int, int, bytes]], kind: int) -> int | None:
    """The kernel's stamp of control message ``kind`` (its first timespec: the software one),
    on the ``perf_counter_ns`` clock by its age; None when there is none."""
    now_real, now = time.time_ns(), time.perf_counter_ns()
    for level, found, data in ancillary:
        if level == socket.SOL_SOCKET and found == kind:
            seconds, nanos = _TIMESPEC.unpack(data[: _TIMESPEC.size])
            return now - max(0, now_real - (seconds * 1_000_000_000 + nanos))
    return None


def _arrival(ancillary: list[tuple[int, int, bytes]]) -> int:
    """The arrival of the last segment read, on the ``perf_counter_ns`` clock."""
    stamp = _stamp(ancillary, _SO_TIMESTAMPNS)
    return time.perf_counter_ns() if stamp is None else stamp


_SO_TIMESTAMPING = 37
"""Linux's own number for it (and for its control message), as ``_SO_TIMESTAMPNS``."""
_TX_FLAGS = (1 << 1) | (1 << 4) | (1 << 11)
"""Stamp what is sent as the kernel hands it to the device, report software stamps, and
queue the stamp alone (``SOF_TIMESTAMPING_TX_SOFTWARE | SOFTWARE | OPT_TSONLY``)."""
_TX_ANCILLARY = socket.CMSG_SPACE(3 * _TIMESPEC.size) + socket.CMSG_SPACE(64) if SUPPORTED else 0


def stamp_sends(sock: socket.socket) -> bool:
    """Ask the kernel to stamp each send of ``sock`` as it leaves (``sent_ns``)."""
    if not SUPPORTED:
        return False
    try:
        sock.setsockopt(socket.SOL_SOCKET, _SO_TIMESTAMPING, _TX_FLAGS)
    except OSError:
        return False
    return True


def sent_ns(sock: socket.socket) -> int | None:
    """When the last send of a ``stamp_sends`` socket left it (``perf_counter_ns``), from the
    stamps the kernel queued for it (all taken); None when none is queued."""
    latest = None
    while True:
        try:
            _data, ancillary, _flags, _address = socket.socket.recvmsg(
                sock, 1, _TX_ANCILLARY, socket.MSG_ERRQUEUE | socket.MSG_DONTWAIT
            )
        except OSError:
            return latest
        latest = _stamp(ancillary, _SO_TIMESTAMPING) or latest


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


_PEEK_BYTES = 1 << 20
"""At most this much queued data is looked at when an arrival is noted."""


class _Watcher:
    """One thread that notes each arrival on every watched socket as it happens."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._epoll: Any = None
        self._sockets: weakref.WeakValueDictionary[int, StampedSocket] = (
            weakref.WeakValueDictionary()
        )

    def add(self, sock: StampedSocket) -> None:
        with self._lock:
            if self._epoll is None:
                self._epoll = select.epoll()
                threading.Thread(target=self._run, name="arrivals", daemon=True).start()
            self._sockets[sock.fileno()] = sock
            self._epoll.register(sock.fileno(), select.EPOLLIN | select.EPOLLET)

    def remove(self, fd: int) -> None:
        with self._lock:
            self._sockets.pop(fd, None)
            if self._epoll is not None:
                with contextlib.suppress(OSError):
                    self._epoll.unregister(fd)

    def _run(self) -> None:
        while True:
            for fd, _events in self._epoll.poll():
                sock = self._sockets.get(fd)
                if sock is not None:
                    sock.note_arrival()


_WATCHER = _Watcher()


class StampedSocket(socket.socket):
    """A socket whose reads note when their bytes arrived (``arrived_ns``).

    For code that reads through an asyncio transport (a server, a WebSocket client): the
    transport calls ``recv``, gets the bytes, and the stamp of that read stays on the socket
    until the next one; a protocol's ``data_received`` runs right after the read and can take
    it. A listening ``StampedSocket`` accepts ``StampedSocket``\\ s.
    """

    arrived_ns: int = 0
    _arrivals: deque[tuple[int, int]] | None = None
    """Watched: each arrival the watcher noted and no read has reached the end of yet, as
    ``(bytes read and arrived by then, its stamp)``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _LIVE[self.fileno()] = self
        self._lock = threading.Lock()
        self._read = 0
        """Bytes read so far."""

    def watch(self) -> None:
        """Note each arrival as it happens (see the module docstring), so that reads stop
        where arrivals ended and keep their stamps however late they come."""
        if SUPPORTED and self._arrivals is None:
            self._arrivals = deque()
            _WATCHER.add(self)

    def note_arrival(self) -> None:
        """On the watcher's thread, woken by an arrival: how much had come in by then, and
        its stamp."""
        with self._lock:
            try:
                data, ancillary, _flags, _address = socket.socket.recvmsg(
                    self, _PEEK_BYTES, _ANCILLARY, socket.MSG_PEEK | socket.MSG_DONTWAIT
                )
            except OSError:
                return
            arrivals = self._arrivals
            if data and arrivals is not None:
                came = self._read + len(data)
                if not arrivals or came > arrivals[-1][0]:
                    arrivals.append((came, _arrival(ancillary)))

    def recv(self, bufsize: int, flags: int = 0) -> bytes:
        if flags:
            return super().recv(bufsize, flags)
        if self._arrivals is None:
            data, self.arrived_ns = recv(self, bufsize)
            return data
        with self._lock:
            arrivals = self._arrivals
            while arrivals and arrivals[0][0] <= self._read:
                arrivals.popleft()
            ended, stamp = arrivals[0] if arrivals else (0, 0)
            if arrivals:
                bufsize = min(bufsize, ended - self._read)
            data, self.arrived_ns = recv(self, bufsize)
            self._read += len(data)
            if arrivals and self._read == ended:
                self.arrived_ns = stamp
            return data

    def close(self) -> None:
        if self._arrivals is not None and self.fileno() >= 0:
            _WATCHER.remove(self.fileno())
        super().close()

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
        if self.family in (socket.AF_INET, socket.AF_INET6) and self.type == socket.SOCK_STREAM:
            # Nagle off, as asyncio sets it for the TCP sockets it makes (it cannot tell that
            # this one is TCP: it was made with protocol 0). With it on, a chunk sent while
            # the one before waits for its delayed ACK is held back for up to 40 ms.
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
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
