"""WebSocket messages stamped with when their last bytes reached the socket.

With many calls on one event loop, a message waits: for the loop to read it, then in the
connection's queue for its reader. A stamp taken when the reader gets it counts both waits.
Here each connection reads a ``StampedSocket`` (``voicebench._arrivals``): the kernel stamps
each segment as it arrives, and as each frame that completes a message is parsed, right
after the read that brought it, the read's stamp is queued for that message. ``arrival()``
gives the stamps in message order, one per message the reader takes.
Where the kernel gives no stamps the read's own time is used, which still leaves out the
wait in the queue.
"""

from __future__ import annotations

import time
from collections import deque
from typing import Any

from websockets.asyncio.client import ClientConnection
from websockets.asyncio.server import ServerConnection
from websockets.frames import DATA_OPCODES, Frame

from voicebench import _arrivals as kernel


class _Stamps:
    """Mixed into a websockets connection: the arrival of each message, in order."""

    _arrivals: deque[int]
    _socket: kernel.StampedSocket | None = None

    def connection_made(self, transport: Any) -> None:
        self._arrivals = deque()
        self._socket = kernel.stamped(transport.get_extra_info("socket"))
        super().connection_made(transport)  # type: ignore[misc]

    def process_event(self, event: Any) -> None:
        if isinstance(event, Frame) and event.opcode in DATA_OPCODES and event.fin:
            sock = self._socket
            self._arrivals.append(sock.arrived_ns if sock else time.perf_counter_ns())
        super().process_event(event)  # type: ignore[misc]

    def arrival(self) -> int:
        """When the next message the reader takes arrived (``perf_counter_ns``)."""
        return self._arrivals.popleft() if self._arrivals else time.perf_counter_ns()


class StampedClientConnection(_Stamps, ClientConnection):
    """``websockets.connect(..., sock=STAMPED, create_connection=StampedClientConnection)``."""


class StampedServerConnection(_Stamps, ServerConnection):
    """``websockets.serve(..., sock=LISTENER, create_connection=StampedServerConnection)``."""
