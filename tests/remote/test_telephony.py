"""The phone platforms' media streams: voicebench's caller side against pipecat's own Twilio and
Telnyx serializers, and the remote client honouring an agent's ``clear`` and ``mark``."""

from __future__ import annotations

import asyncio
import base64
import json
import time

import numpy as np
import pytest
from pipecat.frames.frames import InputAudioRawFrame, InterruptionFrame, OutputAudioRawFrame
from pipecat.serializers.telnyx import TelnyxFrameSerializer
from pipecat.serializers.twilio import TwilioFrameSerializer

from voicebench.agent.interface import PLAIN
from voicebench.agentspec import AgentSpec, RemoteSpec
from voicebench.errors import InputError
from voicebench.remote.caller import RemoteAgent
from voicebench.remote.telephony import TelephonyAgentSide, TelephonyCaller
from voicebench.timing import EventKind

RATE = 8_000


def tone(seconds: float, rate: int = RATE, amplitude: float = 0.3) -> np.ndarray:
    t = np.arange(int(seconds * rate)) / rate
    return (amplitude * 32767 * np.sin(2 * np.pi * 440 * t)).astype(np.int16)


def tone_of(audio: bytes) -> np.ndarray:
    return np.frombuffer(audio, dtype=np.int16).astype(np.int32)


async def pipecat_serializer(platform: str, caller: TelephonyCaller):
    """pipecat's serializer for ``platform``, made from the ids in the caller's ``start``."""
    start = json.loads(caller.hello()[1])
    if platform == "twilio":
        s = TwilioFrameSerializer(
            stream_sid=start["start"]["streamSid"],
            call_sid=start["start"]["callSid"],
            params=TwilioFrameSerializer.InputParams(auto_hang_up=False, sample_rate=RATE),
        )
    else:
        encoding = start["start"]["media_format"]["encoding"]
        s = TelnyxFrameSerializer(
            stream_id=start["stream_id"],
            outbound_encoding=encoding,
            inbound_encoding=encoding,
            params=TelnyxFrameSerializer.InputParams(auto_hang_up=False, sample_rate=RATE),
        )
    await s.setup(None)  # the pipeline's rate is given in the params
    return s


@pytest.mark.parametrize("platform", ["twilio", "telnyx"])
async def test_pipecats_serializers_read_what_the_caller_sends_and_back(platform: str):
    caller = TelephonyCaller(platform, {"campaign": "spring"})
    connected, start = (json.loads(m) for m in caller.hello())
    assert connected["event"] == "connected" and start["event"] == "start"
    params = start["start"]["customParameters" if platform == "twilio" else "custom_parameters"]
    assert params == {"campaign": "spring"}
    serializer = await pipecat_serializer(platform, caller)

    said = tone(0.02)
    frame = await serializer.deserialize(caller.audio(said.tobytes()))
    assert isinstance(frame, InputAudioRawFrame) and frame.sample_rate == RATE
    heard = np.frombuffer(frame.audio, dtype=np.int16)
    assert heard.size == said.size
    # G.711 keeps about 8 bits: within a few per cent of each sample's size.
    assert np.max(np.abs(heard.astype(int) - said)) <= 0.04 * np.abs(said).max() + 16

    spoken = tone(0.1)
    out = await serializer.serialize(
        OutputAudioRawFrame(audio=spoken.tobytes(), sample_rate=RATE, num_channels=1)
    )
    incoming = caller.decode(out)
    assert incoming is not None and incoming.audio is not None
    assert len(incoming.audio) == spoken.nbytes
    cleared = caller.decode(await serializer.serialize(InterruptionFrame()))
    assert cleared is not None and cleared.control == {"type": "clear"}


@pytest.mark.parametrize("platform", ["twilio", "telnyx"])
def test_the_caller_numbers_its_media_and_the_agent_side_reads_it(platform: str):
    caller, agent = TelephonyCaller(platform), TelephonyAgentSide(platform)
    started = agent.decode(caller.hello()[1])
    assert started is not None and started.control["stream_id"] == caller.stream_id
    assert started.control["call_id"] == caller.call_id
    sequence = "sequenceNumber" if platform == "twilio" else "sequence_number"
    events = [json.loads(caller.audio(tone(0.02).tobytes())) for _ in range(3)]
    assert [e[sequence] for e in events] == ["2", "3", "4"]
    assert [e["media"]["timestamp"] for e in events] == ["0", "20", "40"]
    assert all(len(base64.b64decode(e["media"]["payload"])) == 160 for e in events)
    mark = agent.decode(caller.mark("reply-0"))
    assert mark is not None and mark.control == {"type": "mark", "name": "reply-0"}
    stop = agent.decode(caller.bye()[0])
    assert stop is not None and stop.control == {"type": "stop"}
    assert json.loads(agent.clear())["event"] == "clear"
    if platform == "twilio":
        assert json.loads(agent.audio(b"\0\0"))["streamSid"] == caller.stream_id


def test_phone_streams_are_8k_and_their_settings_are_checked():
    spec = RemoteSpec(url="ws://127.0.0.1:1", protocol="twilio")
    assert spec.sample_rate == 8_000  # a phone line's, whatever the default
    again = RemoteSpec.model_validate_json(spec.model_dump_json())  # as a run header is read
    assert again == spec
    for bad, field in [
        ({"protocol": "twilio", "sample_rate": 16_000}, "8 kHz"),
        ({"protocol": "pcm", "parameters": {"a": "b"}}, "parameters"),
        ({"auth": {"token_env": "T", "header": None}}, "header or query"),
        ({"auth": {"token_env": "not a name"}}, "token_env"),
    ]:
        with pytest.raises(InputError, match=field):
            from voicebench._model import validate_record

            validate_record(RemoteSpec, {"url": "ws://127.0.0.1:1", **bad}, file="far.toml")


def test_a_token_goes_where_the_spec_says_and_is_read_when_dialling(monkeypatch):
    spec = RemoteSpec(
        url="ws://127.0.0.1:1/media?x=1",
        auth={"token_env": "FAR_TOKEN", "query": "token", "scheme": "Token"},
    )
    monkeypatch.delenv("FAR_TOKEN", raising=False)
    assert spec.dial() == ("ws://127.0.0.1:1/media?x=1", {}, None)
    monkeypatch.setenv("FAR_TOKEN", "s3cret/value")
    url, headers, token = spec.dial()
    assert url == "ws://127.0.0.1:1/media?x=1&token=s3cret%2Fvalue"
    assert headers == {"Authorization": "Token s3cret/value"} and token == "s3cret/value"


async def test_a_clear_drops_the_queued_audio_and_returns_the_marks():
    """The agent sends 2 s of its voice at once and a mark, then clears after 300 ms: the
    caller plays 300 ms of it, returns the mark at the clear, and records the cut."""
    import websockets

    sent: dict[str, int] = {}
    acked: dict[str, int] = {}

    async def agent(ws) -> None:
        side = TelephonyAgentSide("twilio")
        frames = 0
        async for message in ws:
            incoming = side.decode(message)
            if incoming is None:
                continue
            if incoming.control.get("type") == "mark":
                acked[incoming.control["name"]] = time.perf_counter_ns()
            if incoming.audio is not None and (
                frames or np.abs(tone_of(incoming.audio)).max() > 1000
            ):
                frames += 1  # counted from the caller's first sound
            if frames == 30 and "burst" not in sent:  # the caller's 0.3 s, then 0.3 s quiet
                sent["burst"] = time.perf_counter_ns()
                await ws.send(side.audio(tone(2.0).tobytes()))
                await ws.send(side.mark("end"))
                await asyncio.sleep(0.3)
                sent["clear"] = time.perf_counter_ns()
                await ws.send(side.clear())

    async with websockets.serve(agent, "127.0.0.1", 0) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        spec = AgentSpec(
            name="phone",
            family="acme",
            remote=RemoteSpec(url=f"ws://127.0.0.1:{port}", protocol="twilio", quiet_secs=0.5),
        )
        said = tone(0.3, rate=16_000)
        async with RemoteAgent(spec) as far:
            heard = await far.speak([], said, said.size, timeout_s=10, cue=PLAIN)
    assert heard.failure is None and not heard.timed_out
    # The mark came back at the clear, not when the 2 s would have played.
    assert acked["end"] - sent["clear"] < 100_000_000
    played = heard.played[-1][1] - heard.played[0][0]
    assert 0.25e9 < played < 0.4e9, heard.played
    cuts = [e.ns for e in heard.events if e.kind is EventKind.AUDIO_CUT]
    assert len(cuts) == 1 and abs(heard.played[-1][1] - cuts[0]) < 25_000_000
    # What was recorded is what played: 0.3 s at 16 kHz, not the 2 s sent.
    assert 0.25 * 16_000 < heard.audio.size < 0.4 * 16_000
