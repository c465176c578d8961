"""WebSocket messages are stamped when their bytes reached the socket, not when a busy event
loop got to them: a server on loopback sends while the client's loop is blocked. (Two messages
that both wait for a late reader are taken in one read and share the later stamp, unless the
socket is watched: then each keeps its own.)"""

from __future__ import annotations

import asyncio
import itertools
import queue
import threading
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


def _streaming_agent(ports: queue.Queue, sent: list[int], chunks: int) -> None:
    """An agent on a thread and loop of its own: after the caller's hello, ``chunks`` binary
    messages 20 ms apart, each one's sending noted in ``sent``."""

    async def talk(ws) -> None:
        await ws.recv()
        for k in range(chunks):
            sent.append(time.perf_counter_ns())
            await ws.send(bytes([k]) * 640)
            await asyncio.sleep(0.02)
        await ws.wait_closed()

    async def serve() -> None:
        sock = listener("127.0.0.1", 0)
        async with websockets.serve(talk, sock=sock, create_connection=StampedServerConnection):
            ports.put(sock.getsockname()[1])
            await asyncio.sleep(30)

    asyncio.run(serve())


@pytest.mark.skipif(not _arrivals.SUPPORTED, reason="no kernel arrival stamps")
async def test_a_watched_line_keeps_each_chunk_s_arrival_while_the_loop_is_held_up():
    # An agent streams 20 ms chunks while the caller's loop is held up: each must keep its own
    # arrival, or the caller plays the earlier ones late and shifts all that follows.
    sent: list[int] = []
    ports: queue.Queue = queue.Queue()
    threading.Thread(target=_streaming_agent, args=(ports, sent, 5), daemon=True).start()
    port = ports.get(timeout=30)
    client = await _arrivals.connect("127.0.0.1", port)
    client.watch()
    async with websockets.connect(
        f"ws://127.0.0.1:{port}",
        sock=client,
        create_connection=StampedClientConnection,
        compression=None,
    ) as ws:
        await ws.send("hello")
        deadline = time.monotonic() + 30
        while len(sent) < 5 and time.monotonic() < deadline:
            time.sleep(0.02)  # all five come in while this loop is busy
        time.sleep(0.05)
        freed = time.perf_counter_ns()
        got = [(await ws.recv(), ws.arrival()) for _ in range(5)]
    assert [message[0] for message, _ in got] == [0, 1, 2, 3, 4]
    stamps = [stamp for _, stamp in got]
    assert len(sent) == 5 and stamps[-1] < freed
    assert all(a < b for a, b in itertools.pairwise(stamps)), "one stamp each"
    # each arrived after it was sent and before the next was
    assert all(s <= stamp for s, stamp in zip(sent, stamps, strict=True))
    assert all(stamp < s for stamp, s in zip(stamps, sent[1:], strict=False))


def test_an_accepted_line_sends_each_message_at_once():
    # Nagle's algorithm would hold a chunk back while the one before waits for its delayed
    # ACK: an agent's chunk would reach the caller up to 40 ms after it was sent.
    import socket

    sock = listener("127.0.0.1", 0)
    sock.listen()
    with socket.create_connection(sock.getsockname()) as client:
        accepted, _ = sock.accept()
        with accepted:
            assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1
            assert client.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 0
    sock.close()


_CHUNKS_AGENT = """
import socket, sys, time
server = socket.socket()
server.bind(("127.0.0.1", 0))
server.listen()
print(server.getsockname()[1], flush=True)
line, _ = server.accept()
line.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
line.recv(1)
for k in range(5):
    print(time.perf_counter_ns(), flush=True)
    line.sendall(bytes([k]) * 640)
    time.sleep(0.02)
line.recv(1)
"""


@pytest.mark.skipif(not _arrivals.SUPPORTED, reason="no kernel arrival stamps")
def test_a_watched_line_keeps_each_arrival_while_a_thread_holds_the_interpreter():
    # A thread that holds the interpreter's lock (pure Python work, or a thread that lost its
    # core while holding it) must not merge the chunks that arrive meanwhile: each keeps its
    # own stamp. The agent is another process, so its sends do not wait for the lock.
    import socket
    import subprocess
    import sys

    agent = subprocess.Popen(
        [sys.executable, "-c", _CHUNKS_AGENT], stdout=subprocess.PIPE, text=True
    )
    try:
        port = int(agent.stdout.readline())
        line = _arrivals.StampedSocket(socket.AF_INET, socket.SOCK_STREAM)
        _arrivals.enable(line)
        line.connect(("127.0.0.1", port))
        line.watch()
        switch = sys.getswitchinterval()
        sys.setswitchinterval(5.0)  # this thread keeps the lock while it computes
        try:
            line.sendall(b"!")
            end = time.perf_counter() + 0.4
            while time.perf_counter() < end:  # all five chunks come in meanwhile
                pass
        finally:
            sys.setswitchinterval(switch)
        sent = [int(agent.stdout.readline()) for _ in range(5)]
        got: list[tuple[bytes, int]] = []
        while sum(len(data) for data, _ in got) < 5 * 640:
            data = line.recv(5 * 640)
            got.append((data, line.arrived_ns))
        line.sendall(b"!")
        line.close()
    finally:
        agent.wait(timeout=30)
    assert [data[0] for data, _ in got] == [0, 1, 2, 3, 4], "a read for each chunk"
    stamps = [stamp for _, stamp in got]
    assert all(s <= stamp for s, stamp in zip(sent, stamps, strict=True))
    assert all(stamp < s for stamp, s in zip(stamps, sent[1:], strict=False))
