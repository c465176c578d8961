"""WebSocket messages are stamped when their bytes reached the socket, not when a busy event
loop got to them: a server on loopback sends while the client's loop is blocked. (Two messages
that both wait for a late reader are taken in one read and share the later stamp.)"""

from __future__ import annotations

import asyncio
import time

import pytest
import websockets

from voicebench import _arrivals
from voicebench.remote.arrivals import StampedClientConnection, StampedServerConnection
from voicebench.testing.scripted_timing import listener

GAP_S = 0.3
BUSY_S = 0.15


@pytest.mark.skipif(not _arrivals.SUPPORTED, reason="no kernel arrival stamps")
async def test_each_message_keeps_its_own_arrival_while_the_loop_is_busy():
    sent: list[int] = []
    heard: list[int] = []

    async def talk(ws) -> None:
        await ws.recv()  # (read first: before it comes, the stamp is the handshake's)
        heard.append(ws.arrival())  # the client's hello, stamped on the server's side
        for text in ("one", "two"):
            sent.append(time.perf_counter_ns())
            await ws.send(text)
            await asyncio.sleep(GAP_S)
        await ws.wait_closed()

    sock = listener("127.0.0.1", 0)
    async with websockets.serve(talk, sock=sock, create_connection=StampedServerConnection):
        port = sock.getsockname()[1]
        client = await _arrivals.connect("127.0.0.1", port)
        async with websockets.connect(
            f"ws://127.0.0.1:{port}", sock=client, create_connection=StampedClientConnection
        ) as ws:
            hello_sent = time.perf_counter_ns()
            await ws.send("hello")
            await asyncio.sleep(0.01)
            time.sleep(BUSY_S)  # the loop is busy while the first message comes in
            freed = time.perf_counter_ns()
            got = [(await ws.recv(), ws.arrival()) for _ in range(2)]
    assert [text for text, _ in got] == ["one", "two"]
    (_, one), (_, two) = got
    assert sent[0] <= one < freed - BUSY_S * 1e9 / 2  # when it came, not when it was read
    assert freed < sent[1] <= two  # the next one keeps its own
    assert hello_sent - 1_000_000 <= heard[0]  # the server side stamps the same way
