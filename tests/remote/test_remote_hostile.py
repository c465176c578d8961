"""An agent that sends without end: its turn fails, naming the cap it went past, and the caller's
memory stays flat. The agent is a separate process on 127.0.0.1, so the memory measured is the
caller's alone."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

import numpy as np
import pytest

from voicebench.agentspec import AgentSpec, RemoteSpec
from voicebench.remote.caller import RemoteAgent
from voicebench.remote.loudspeaker import MAX_EVENTS, MAX_MARKS, MAX_TEXT_CHARS, Loudspeaker
from voicebench.remote.telephony import TelephonyAgentSide, TelephonyCaller
from voicebench.remote.wire import PCMCodec
from voicebench.replaying import replay

FRAME = 2**24 - 64  # just under the largest message a caller takes
FLOODER = f"""
import asyncio, sys, websockets
frame = (b"\\x00\\x40" * ({FRAME} // 2))  # a loud square-ish wave, 16 MiB a message
sent = 0
async def flood(ws):
    global sent
    await ws.recv()  # the caller's hello
    try:
        while True:
            await ws.send(frame)
            sent += len(frame)
            print(sent, flush=True)
    except websockets.exceptions.ConnectionClosed:
        pass
async def main():
    async with websockets.serve(flood, "127.0.0.1", 0, max_size=2**20) as server:
        print(server.sockets[0].getsockname()[1], flush=True)
        await asyncio.Future()
asyncio.run(main())
"""


def resident_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


async def test_an_agent_streaming_16_mib_frames_fails_its_turn_with_memory_flat(
    tmp_path: Path, short_set
):
    agent = subprocess.Popen(
        [sys.executable, "-c", FLOODER], stdout=subprocess.PIPE, text=True, bufsize=1
    )
    try:
        port = int(agent.stdout.readline())
        dialogue = short_set.item("short-dog")  # two short spoken turns
        spec = AgentSpec(
            name="flooder",
            family="x",
            remote=RemoteSpec(url=f"ws://127.0.0.1:{port}", quiet_secs=1.0),
        )
        before = resident_mib()
        peak = before
        done = asyncio.Event()

        async def watch() -> None:
            nonlocal peak
            while not done.is_set():
                peak = max(peak, resident_mib())
                await asyncio.sleep(0.02)

        watcher = asyncio.create_task(watch())
        started = time.monotonic()
        try:
            records = await replay(
                spec,
                **short_set.run([dialogue], tmp_path / "run", Path("flooder.toml")),
                turn_timeout_s=20,
            )
        finally:
            done.set()
            await watcher
        took = time.monotonic() - started
    finally:
        agent.kill()
        sent = [int(x) for x in agent.stdout.read().split()]
    assert len(records) == 2
    for r in records:
        assert r.error is not None and r.error.kind == "agent_error", r.error
        assert "of audio ahead of what has played (more than the turn timeout's" in r.error.reason
    gib = sent[-1] / 2**30
    growth = peak - before
    print(f"sent {gib:.2f} GiB in {took:.1f} s; resident memory grew {growth:.0f} MiB")
    assert sent[-1] > 16 * FRAME  # the agent kept sending: far more than it could be kept
    assert growth < 400, growth  # held to what one frame's decoding and a few queued take


async def test_a_million_marks_and_replies_leave_bounded_state():
    sent: list[str] = []
    phone = TelephonyAgentSide("twilio")
    speaker = Loudspeaker(8_000, TelephonyCaller("twilio"), sent.append)
    speaker.start_recording(30.0)
    speaker.new_turn(0, 0)
    second = bytes(np.full(8_000, 0x40, dtype=np.uint8))  # 1 s of audio, queued
    speaker.hear(
        json.dumps({"event": "media", "media": {"payload": base64.b64encode(second).decode()}}), 0
    )
    marks = [phone.mark(f"m{k % 500}") for k in range(500)]  # names that repeat
    for k in range(500_000):
        speaker.hear(marks[k % 500], k)
    assert len(speaker.marks) == 500 and speaker.over is None  # repeats replace, never pile up
    for k in range(500_000):
        speaker.hear(phone.mark(f"new{k}"), k)
    assert len(speaker.marks) <= MAX_MARKS
    assert len(speaker.events) <= MAX_EVENTS
    assert speaker.recorded <= 8_000
    assert speaker.over is not None and "more than 1,000 marks waiting at once" in speaker.over
    speaker.close()
    assert not speaker.marks

    # Replies: the text cap, then nothing more is kept.
    speaker = Loudspeaker(16_000, PCMCodec(16_000), sent.append)
    speaker.start_recording(30.0)
    speaker.new_turn(0, 0)
    long_reply = json.dumps({"type": "reply", "text": "x" * 1000})
    for k in range(1_000_000 // 10):
        speaker.hear(long_reply, k)
    assert speaker.over is not None and "characters of text" in speaker.over
    assert len(speaker.events) <= MAX_TEXT_CHARS // 1000


TOKEN = "s3cr3t/t0ken+value=" * 2


@pytest.mark.parametrize("late_mic", [False, True])
async def test_an_agents_error_text_is_redacted_before_it_is_cut(
    tmp_path: Path, monkeypatch, short_set, late_mic: bool
):
    """The agent echoes the token, plain and URL-quoted, across the 500th character of its
    error: the recorded reason keeps no piece of either. It sends the error as soon as it is
    asked (on the context); with ``late_mic`` the caller's first sound comes 100 ms after that,
    as on a busy machine, and the error, come before it, is still the turn's."""
    import websockets

    from voicebench.remotespec import RemoteAuth

    if late_mic:
        send_all = RemoteAgent._send_all

        async def send_then_wait(self, messages) -> bool:
            sent = await send_all(self, messages)
            if any(isinstance(m, str) and '"context"' in m for m in messages):
                await asyncio.sleep(0.1)
            return sent

        monkeypatch.setattr(RemoteAgent, "_send_all", send_then_wait)
    quoted = quote(TOKEN, safe="")
    said = {"type": "error", "message": "x" * 485 + TOKEN + " " + quoted + " end"}
    seen_headers = {}

    async def echo(ws) -> None:
        seen_headers["Authorization"] = ws.request.headers.get("Authorization")
        await ws.recv()  # hello
        await ws.recv()  # the turn's context
        await ws.send(json.dumps(said))
        with contextlib.suppress(websockets.exceptions.ConnectionClosed):
            async for _ in ws:
                pass

    monkeypatch.setenv("VB_TEST_AGENT_TOKEN", TOKEN)
    async with websockets.serve(echo, "127.0.0.1", 0) as server:
        port = server.sockets[0].getsockname()[1]
        spec = AgentSpec(
            name="echo",
            family="x",
            remote=RemoteSpec(
                url=f"ws://127.0.0.1:{port}",
                auth=RemoteAuth(token_env="VB_TEST_AGENT_TOKEN", query="token"),
            ),
        )
        dialogue = short_set.item("short-dog")
        records = await replay(
            spec,
            **short_set.run([dialogue], tmp_path / "run", Path("echo.toml")),
            turn_timeout_s=1,
        )
    assert seen_headers["Authorization"] == f"Bearer {TOKEN}"  # it was presented
    reason = records[0].error.reason
    assert records[0].error.kind == "agent_error" and reason.startswith("x" * 485 + "***")
    for secret in (TOKEN, quoted):
        for k in range(len(secret) - 6):
            assert secret[k : k + 6] not in reason.removeprefix("x" * 485), reason
    stored = (tmp_path / "run" / "turns.jsonl").read_text() + (
        tmp_path / "run" / "run.json"
    ).read_text()
    assert TOKEN not in stored and quoted not in stored
