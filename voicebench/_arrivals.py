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
the reader being on time. A process of its own (``voicebench._watch``, one for every process that
watches, holding a copy of each watched socket) wakes on each segment's arrival, peeks at
what is queued and notes how many bytes of the connection had come in (the kernel's count,
``TCP_INFO``) and the stamp of the one just come; each read then stops where such an arrival
ended and takes its stamp. Chunks that waited together for an event loop held up by other
work, or for a core taken by other processes, still each keep their own arrival. (A thread
would not do: it needs the interpreter's lock for each note, and the thread holding the lock
may have lost its core to another process for longer than a 20 ms chunk.)
"""

from __future__ import annotations

import asyncio
import fcntl
import socket
import sys
import termios
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

from voicebench._stamps import _ANCILLARY as _ANCILLARY
from voicebench._stamps import SUPPORTED as SUPPORTED
from voicebench._stamps import _arrival as _arrival
from voicebench._stamps import enable as enable
from voicebench._stamps import recv as recv
from voicebench._stamps import sent_ns as sent_ns
from voicebench._stamps import stamp_sends as stamp_sends
from voicebench._watch import WATCHER, received

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
    _arrivals: deque[tuple[int, int]] | None = None
    """Watched: each arrival the watcher noted and no read has reached the end of yet, as
    ``(bytes of the connection arrived by then, its stamp)``."""
    _unwatch: weakref.finalize | None = None
    _drain: Callable[[], None]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _LIVE[self.fileno()] = self
        self._lock = threading.Lock()
        self._read = 0
        """Watched: the bytes of the connection read so far."""

    def watch(self) -> None:
        """Note each arrival as it happens (see the module docstring), so that reads stop
        where arrivals ended and keep their stamps however late they come. (A connected TCP
        socket; where the kernel does not count its arrivals, its reads are stamped as
        unwatched ones are.)"""
        if not SUPPORTED or self._arrivals is not None:
            return
        read = self._consumed(received)
        if read is None:
            return
        self._read, self._arrivals = read, deque()
        token = WATCHER.add(self)
        if token is None:
            self._arrivals = None
            return
        self._drain = WATCHER.drain
        self._unwatch = weakref.finalize(self, WATCHER.remove, token)

    def _consumed(self, received: Callable[[socket.socket], int | None]) -> int | None:
        """The bytes of the connection read so far: those arrived less those waiting."""
        waiting = bytearray(4)
        for _ in range(4):
            try:
                before = received(self)
                fcntl.ioctl(self.fileno(), termios.FIONREAD, waiting)
            except OSError:
                return None
            if before is None:
                return None
            if received(self) == before:
                return before - int.from_bytes(waiting, sys.byteorder)
        return None

    def recv(self, bufsize: int, flags: int = 0) -> bytes:
        if flags:
            return super().recv(bufsize, flags)
        if self._arrivals is None:
            data, self.arrived_ns = recv(self, bufsize)
            return data
        self._drain()
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
        if self._unwatch is not None:
            self._unwatch()  # the watcher lets go of its copy, so the connection can close
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
