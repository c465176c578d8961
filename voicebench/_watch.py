"""The watcher of ``voicebench._arrivals``: a process of its own that notes each arrival on
every watched socket as it happens, whatever the watching process's threads are doing (a
thread would need the interpreter's lock for each note, and the thread holding it may have
lost its core to another process for longer than a 20 ms chunk).

The watching process hands it each socket (``WATCHER.add``: a token and the descriptor, over
a Unix socket pair); it answers with the token once the socket is watched, and on each
arrival sends back a note: how many bytes of the connection had come in by then (the
kernel's count, ``TCP_INFO``) and the kernel's stamp of the last of them. Each read of a
watched ``StampedSocket`` first takes the notes sent so far (``WATCHER.drain``). The watcher
holds a copy of each socket until told to let go (``WATCHER.remove``, when the socket is
closed), and ends when its parent does.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import select
import socket
import struct
import subprocess
import sys
import threading
import weakref
from typing import Any

from voicebench._stamps import _ANCILLARY, _arrival

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


def received(sock: socket.socket) -> int | None:
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
        before = received(sock)
        try:
            data, ancillary, _flags, _address = sock.recvmsg(
                _PEEK_BYTES, _ANCILLARY, socket.MSG_PEEK | socket.MSG_DONTWAIT
            )
        except OSError:
            return None
        if not data or before is None:
            return None
        if received(sock) == before:
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
        self._sockets: weakref.WeakValueDictionary[int, Any] = weakref.WeakValueDictionary()

    def _start(self) -> socket.socket:
        if self._control is not None and self._pid == os.getpid():
            return self._control
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        with theirs:
            self._process = subprocess.Popen(
                [
                    sys.executable,
                    "-c",
                    "import sys; from voicebench._watch import watch_lines; "
                    "watch_lines(int(sys.argv[1]))",
                    str(theirs.fileno()),
                ],
                pass_fds=[theirs.fileno()],
                stdin=subprocess.DEVNULL,
            )
        self._control, self._pid = ours, os.getpid()
        self._sockets.clear()
        return ours

    def add(self, sock: Any) -> int | None:
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


WATCHER = _Watcher()
