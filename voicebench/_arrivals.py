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
the reader being on time. A process of its own (``watch_lines``, one for every process that
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
import contextlib
import fcntl
import itertools
import os
import platform
import select
import socket
import struct
import subprocess
import sys
import termios
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
_TCP_INFO_BYTES = 136
_BYTES_RECEIVED = struct.Struct("@Q")
"""``tcpi_bytes_received`` of ``struct tcp_info`` (Linux 4.1 on): every byte of data that has
arrived on the connection, read or not, at offset 128."""
_NOTE = struct.Struct("@IQq")
"""A note from the watcher: the socket's token, the bytes that had arrived on it by then, and
the stamp of the last of them."""
_ACK = struct.Struct("@I")


def _received(sock: socket.socket) -> int | None:
    """All the data bytes that have arrived on TCP ``sock`` so far; None where the kernel does
    not say."""
    info = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, _TCP_INFO_BYTES)
    if len(info) < _TCP_INFO_BYTES:
        return None
    return int(_BYTES_RECEIVED.unpack_from(info, 128)[0])


def _note(sock: socket.socket) -> tuple[int, int] | None:
    """How many bytes had arrived on ``sock`` and the stamp of the last of them, peeked at
    what waits unread (None when nothing does). The count is read on both sides of the peek
    and the peek taken again if more came in between, so the stamp is that byte's."""
    for _ in range(4):
        before = _received(sock)
        try:
            data, ancillary, _flags, _address = sock.recvmsg(
                _PEEK_BYTES, _ANCILLARY, socket.MSG_PEEK | socket.MSG_DONTWAIT
            )
        except OSError:
            return None
        if not data or before is None:
            return None
        if _received(sock) == before:
            return before, _arrival(ancillary)
    return None


def watch_lines(control_fd: int) -> None:
    """The watcher process: it takes sockets from its parent over ``control_fd`` (a token and
    the descriptor, answered with the token once the socket is watched; the token alone stops
    it), and on each arrival sends back a ``_NOTE``. It ends when its parent does."""
    control = socket.socket(fileno=control_fd)
    poll = select.epoll()
    poll.register(control.fileno(), select.EPOLLIN)
    lines: dict[int, tuple[int, socket.socket]] = {}
    tokens: dict[int, int] = {}
    while True:
        for fd, _events in poll.poll():
            if fd != control.fileno():
                token, line = lines[fd]
                noted = _note(line)
                if noted is not None:
                    control.send(_NOTE.pack(token, *noted))
                continue
            message, fds, _flags, _address = socket.recv_fds(control, _ACK.size, 1)
            if not message:
                return  # the parent is gone
            (token,) = _ACK.unpack(message)
            if fds:
                line = socket.socket(fileno=fds[0])
                lines[line.fileno()], tokens[token] = (token, line), line.fileno()
                poll.register(line.fileno(), select.EPOLLIN | select.EPOLLET)
                control.send(_ACK.pack(token))
            elif token in tokens:
                fd = tokens.pop(token)
                poll.unregister(fd)
                lines.pop(fd)[1].close()


class _Watcher:
    """A process of its own (``watch_lines``) that notes each arrival on every watched socket
    as it happens, whatever this process's threads are doing."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._control: socket.socket | None = None
        self._process: subprocess.Popen | None = None
        self._pid = 0
        self._tokens = itertools.count(1)
        self._sockets: weakref.WeakValueDictionary[int, StampedSocket] = (
            weakref.WeakValueDictionary()
        )

    def _start(self) -> socket.socket:
        if self._control is not None and self._pid == os.getpid():
            return self._control
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        with theirs:
            self._process = subprocess.Popen(
                [
                    sys.executable,
                    "-c",
                    "import sys; from voicebench._arrivals import watch_lines; "
                    "watch_lines(int(sys.argv[1]))",
                    str(theirs.fileno()),
                ],
                pass_fds=[theirs.fileno()],
                stdin=subprocess.DEVNULL,
            )
        self._control, self._pid = ours, os.getpid()
        self._sockets.clear()
        return ours

    def add(self, sock: StampedSocket) -> int | None:
        """Watch ``sock`` from now on; its token, or None where no watcher can start."""
        with self._lock:
            token = next(self._tokens)
            try:
                control = self._start()
                self._sockets[token] = sock
                socket.send_fds(control, [_ACK.pack(token)], [sock.fileno()])
                while True:  # until it is watched: the notes before are of other sockets
                    message = control.recv(_NOTE.size)
                    if len(message) == _ACK.size and _ACK.unpack(message)[0] == token:
                        return token
                    self._dispatch(message)
            except OSError:
                self._sockets.pop(token, None)
                return None

    def remove(self, token: int) -> None:
        with self._lock:
            self._sockets.pop(token, None)
            if self._control is not None and self._pid == os.getpid():
                with contextlib.suppress(OSError):
                    self._control.send(_ACK.pack(token))

    def drain(self) -> None:
        """Hand every note the watcher has sent to its socket."""
        with self._lock:
            if self._control is None or self._pid != os.getpid():
                return
            while True:
                try:
                    message = self._control.recv(_NOTE.size, socket.MSG_DONTWAIT)
                except (BlockingIOError, InterruptedError):
                    return
                except OSError:
                    return
                if not message:
                    return
                self._dispatch(message)

    def _dispatch(self, message: bytes) -> None:
        if len(message) != _NOTE.size:
            return
        token, came, stamp = _NOTE.unpack(message)
        sock = self._sockets.get(token)
        if sock is not None and sock._arrivals is not None:
            arrivals = sock._arrivals
            if not arrivals or came > arrivals[-1][0]:
                arrivals.append((came, stamp))


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
    ``(bytes of the connection arrived by then, its stamp)``."""
    _unwatch: weakref.finalize | None = None

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
        read = self._consumed()
        if read is None:
            return
        self._read, self._arrivals = read, deque()
        token = _WATCHER.add(self)
        if token is None:
            self._arrivals = None
            return
        self._unwatch = weakref.finalize(self, _WATCHER.remove, token)

    def _consumed(self) -> int | None:
        """The bytes of the connection read so far: those arrived less those waiting."""
        waiting = bytearray(4)
        for _ in range(4):
            try:
                before = _received(self)
                fcntl.ioctl(self.fileno(), termios.FIONREAD, waiting)
            except OSError:
                return None
            if before is None:
                return None
            if _received(self) == before:
                return before - int.from_bytes(waiting, sys.byteorder)
        return None

    def recv(self, bufsize: int, flags: int = 0) -> bytes:
        if flags:
            return super().recv(bufsize, flags)
        if self._arrivals is None:
            data, self.arrived_ns = recv(self, bufsize)
            return data
        _WATCHER.drain()
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
