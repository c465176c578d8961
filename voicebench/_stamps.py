"""The kernel's stamps of what a socket receives and sends, on the ``perf_counter_ns`` clock
(``voicebench._arrivals`` says how they are used)."""

from __future__ import annotations

import platform
import socket
import struct
import sys
import time

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


_CLOCKS_TRIES = 4
_CLOCKS_TIGHT_NS = 50_000
"""A reading of both clocks is kept once ``perf_counter_ns`` moved at most this much across
it; else the tightest of ``_CLOCKS_TRIES`` readings is."""


def _clocks() -> tuple[int, int]:
    """The wall clock (``time_ns``) and ``perf_counter_ns`` at one moment. The wall clock is
    read between two reads of the other, and the reading is made again when the process was
    paused between them: on a machine whose cores are shared, a pause of tens of milliseconds
    between two reads would move every stamp converted with them by as much."""
    best: tuple[int, int, int] | None = None
    for _ in range(_CLOCKS_TRIES):
        before = time.perf_counter_ns()
        real = time.time_ns()
        after = time.perf_counter_ns()
        if best is None or after - before < best[0]:
            best = (after - before, real, (before + after) // 2)
        if best[0] <= _CLOCKS_TIGHT_NS:
            break
    assert best is not None
    return best[1], best[2]


def _stamp(ancillary: list[tuple[int, int, bytes]], kind: int) -> int | None:
    """The kernel's stamp of control message ``kind`` (its first timespec: the software one),
    on the ``perf_counter_ns`` clock by its age; None when there is none."""
    for level, found, data in ancillary:
        if level == socket.SOL_SOCKET and found == kind:
            seconds, nanos = _TIMESPEC.unpack(data[: _TIMESPEC.size])
            now_real, now = _clocks()
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
