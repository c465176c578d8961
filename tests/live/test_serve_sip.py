"""An agent served over SIP (`voicebench serve --protocol sip`): after a flood of 1,000 broken,
scrambled and unauthenticated INVITEs, it is called by voicebench's own SIP caller with the
server's token as its digest password and its reply heard; a wrong password is refused (403)
before any pipeline is built. A caller that moves its media mid-call (a re-INVITE) has it
answered and hears the reply where it moved."""

from __future__ import annotations

import asyncio
import contextlib
import random
import socket
from pathlib import Path

import pytest
from sip_tools import baresip, digest_answer, kamailio, speech, talk

from voicebench.agentspec import AgentSpec, load_agent_spec
from voicebench.live import serve
from voicebench.remotespec import RemoteSpec, SipSettings
from voicebench.replaying import replay

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "sip-serve-token-0123456789"


async def _replay(spec: AgentSpec, out: Path, short, **kwargs):
    two = next(d for d in short.dialogues if len(d.seeker_turn_indices) == 2)
    return await replay(spec, **short.run([two], out, Path("sip.toml")), **kwargs)


INVITE = (
    "INVITE sip:agent@127.0.0.1:{port} SIP/2.0\r\n"
    "Via: SIP/2.0/UDP 127.0.0.1:9;branch=z9hG4bK{n}\r\n"
    "From: <sip:x@127.0.0.1>;tag={n}\r\nTo: <sip:agent@127.0.0.1>\r\n"
    "Call-ID: fuzz-{n}\r\nCSeq: 1 INVITE\r\nContact: <sip:x@127.0.0.1:9>\r\n"
    "Content-Type: application/sdp\r\nContent-Length: {length}\r\n\r\n{body}"
)


def garbage(port: int, seed: int = 7, count: int = 1000) -> None:
    """``count`` datagrams at the SIP port: random bytes, INVITEs cut anywhere, INVITEs with
    their bytes scrambled, lying lengths and broken SDP, and well-formed INVITEs with no
    credentials (a flood: each is challenged, none makes a call)."""
    rng = random.Random(seed)
    sdp = "v=0\r\nc=IN IP4 127.0.0.1\r\nm=audio 9 RTP/AVP 0\r\n"
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for n in range(count):
            body = sdp if n % 3 else rng.randbytes(rng.randrange(0, 200)).decode("latin-1")
            message = INVITE.format(
                port=port, n=n, length=rng.choice([len(body), 0, 99999]), body=body
            ).encode("latin-1")
            kind = n % 4
            if kind == 0:
                data = rng.randbytes(rng.randrange(0, 1400))
            elif kind == 1:
                data = message[: rng.randrange(0, len(message))]
            elif kind == 2:
                data = bytearray(message)
                for _ in range(rng.randrange(1, 20)):
                    data[rng.randrange(len(data))] = rng.randrange(256)
                data = bytes(data)
            else:
                data = message
            s.sendto(data, ("127.0.0.1", port))


def caller(url: str, password_env: str, username_env: str | None = None) -> AgentSpec:
    sip = SipSettings(username_env=username_env, password_env=password_env)
    remote = RemoteSpec(url=url, protocol="sip", quiet_secs=1.0, sip=sip)
    return AgentSpec(name="served", family="sip", remote=remote)


@contextlib.asynccontextmanager
async def served(**options):
    """The scripted agent served over SIP (``serve``'s other keywords: ``options``), its URL
    yielded once it listens; stopped, with its calls, at the end."""
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    stop = asyncio.Event()
    server = asyncio.create_task(
        serve(
            load_agent_spec(ROOT / "agents" / "scripted.toml"),
            port=0,
            token=TOKEN,
            protocol="sip",
            on_ready=ready.set_result,
            stop=stop,
            **options,
        )
    )
    try:
        yield await asyncio.wait_for(ready, 60)
    finally:
        stop.set()
        await asyncio.wait_for(server, 60)


async def test_an_agent_served_over_sip_answers_voicebench_s_sip_caller(
    tmp_path: Path, short_set, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("VB_SERVE_SIP_USER", "tester")
    monkeypatch.setenv("VB_SERVE_SIP_RIGHT", TOKEN)
    monkeypatch.setenv("VB_SERVE_SIP_WRONG", "not-the-token-000")
    refused: list[str] = []
    calls: list[tuple[str, int]] = []
    async with served(
        max_calls=1,
        on_refused=refused.append,
        on_call=lambda what, n: calls.append((what, n)),
    ) as url:
        assert url.startswith("sip:agent@127.0.0.1:")
        garbage(int(url.rsplit(":", 1)[1]))
        await asyncio.sleep(1.0)  # (what the flood asked is answered, or dropped)
        # a password alone: the caller's user name is voicebench
        (answered,) = await _replay(
            caller(url, "VB_SERVE_SIP_RIGHT"), tmp_path / "run", short_set, final_only=True
        )
        (wrong,) = await _replay(
            caller(url, "VB_SERVE_SIP_WRONG", "VB_SERVE_SIP_USER"),
            tmp_path / "wrong",
            short_set,
            final_only=True,
        )
    assert answered.error is None, answered.error
    assert answered.timing is not None and answered.timing.ttfa_ms is not None
    assert answered.reply_text == ""  # a black box: what it said is heard, not told
    assert wrong.error is not None and wrong.error.kind == "sip_rejected"
    assert wrong.error.reason == f"{url}: 403 Forbidden"
    assert refused == ["wrong digest credentials"]
    assert calls == [("started", 1), ("ended", 0)]


async def test_a_call_through_a_proxy_that_challenges_then_the_agent_answers_both(
    tmp_path: Path, short_set, monkeypatch: pytest.MonkeyPatch
):
    """kamailio asks for its credentials (407), then the served agent behind it for its own
    (401, another realm): the INVITE is sent a third time with both answers, and the call is
    answered. The agent's answers carry the proxy's Record-Route, so the caller's BYE reaches it
    through the proxy and ends the call there. A wrong password fails on the proxy's
    challenge, answered once."""
    monkeypatch.setenv("VB_PROXY_USER", "alice")
    monkeypatch.setenv("VB_PROXY_PASSWORD", TOKEN)  # (the proxy's and the agent's alike)
    monkeypatch.setenv("VB_PROXY_WRONG", "not-the-token-000")
    calls: list[tuple[str, int]] = []
    with kamailio(tmp_path / "proxy", {"alice": TOKEN}) as proxy:
        host, port = proxy.address
        async with served(max_calls=1, on_call=lambda what, n: calls.append((what, n))) as url:
            spec = caller(url, "VB_PROXY_PASSWORD", "VB_PROXY_USER")
            settings = spec.remote.sip.model_copy(update={"proxy": f"{host}:{port}"})
            through = spec.model_copy(
                update={"remote": spec.remote.model_copy(update={"sip": settings})}
            )
            (answered,) = await _replay(through, tmp_path / "run", short_set, final_only=True)
            for _ in range(100):  # (the BYE's 200 may come before the call is counted out)
                if ("ended", 0) in calls:
                    break
                await asyncio.sleep(0.05)
            assert calls == [("started", 1), ("ended", 0)]  # ended by the BYE, not the stop
            wrong_sip = settings.model_copy(update={"password_env": "VB_PROXY_WRONG"})
            wrong = through.model_copy(
                update={"remote": through.remote.model_copy(update={"sip": wrong_sip})}
            )
            (refused,) = await _replay(wrong, tmp_path / "wrong", short_set, final_only=True)
    assert answered.error is None, answered.error
    assert answered.timing is not None and answered.timing.ttfa_ms is not None
    assert refused.error is not None and refused.error.kind == "sip_rejected"
    assert refused.error.reason.endswith(": 407 Proxy Authentication Required"), refused.error


async def test_baresip_calls_the_served_agent_and_hears_its_reply(tmp_path: Path):
    """An independent SIP phone calls the served agent: it answers the digest challenge with
    the token, the agent hears the caller's turn and its reply reaches the phone as RTP."""
    import numpy as np

    from voicebench.fixtures import BUILTIN_FIXTURES, load_manifest, read_wav
    from voicebench.fixtures.audio import resample, to_int16, write_wav

    entry = load_manifest(BUILTIN_FIXTURES).entries[1]
    said = read_wav(BUILTIN_FIXTURES / entry.path, expect_rate=16_000)
    line = to_int16(resample(said / 32768.0, 16_000, 8_000))
    quiet = np.zeros(8_000, np.int16)
    write_wav(tmp_path / "said.wav", np.concatenate([quiet, line, *[quiet] * 8]), 8_000)
    calls: list[tuple[str, int]] = []
    async with served(on_call=lambda what, n: calls.append((what, n))) as url:
        with baresip(
            tmp_path / "phone", tmp_path / "said.wav", user="tester", password=TOKEN, dial=url
        ) as phone:
            for _ in range(600):  # the call: the turn, the reply, then the file's end
                if ("ended", 0) in calls:
                    break
                await asyncio.sleep(0.1)
            await asyncio.sleep(0.5)
            received = phone.received_packets()
            log = phone.said()
    assert calls == [("started", 1), ("ended", 0)], log[-1500:]
    assert "Call established" in log
    # the agent's reply: at least a second of audio, 20 ms a packet
    assert received is not None and received >= 50, log[-1500:]


async def test_a_caller_that_moves_its_media_mid_call_hears_the_reply_there():
    from voicebench.remote.rtp import RtpSession
    from voicebench.remote.sip import SipLine, SipTarget
    from voicebench.remote.sip_sdp import MediaAnswer

    calls: list[tuple[str, int]] = []
    async with served(on_call=lambda what, n: calls.append((what, n))) as url:
        with RtpSession() as first, RtpSession() as second:
            async with SipLine() as line:
                media = await line.dial(
                    SipTarget.parse(url), rtp_port=first.local_port, password=TOKEN, timeout_s=60
                )
                first.connect(media.host, media.port, media.payload_type, media.telephone_event)
                status, moved = await line.reoffer(second.local_port, timeout_s=5)
                assert moved is not None, status
                second.connect(moved.host, moved.port, moved.payload_type, moved.telephone_event)
                speaking = asyncio.create_task(talk(second, speech()))
                try:
                    for _ in range(1200):  # the agent's reply: a second of it, 20 ms a packet
                        if second.packets.qsize() >= 50:
                            break
                        await asyncio.sleep(0.1)
                finally:
                    speaking.cancel()
                heard_first, heard_second = first.packets.qsize(), second.packets.qsize()
                answered = list(line.statuses)
    assert status == 200 and answered[-1][0] == 200  # (its own answer: not the INVITE's)
    assert moved == MediaAnswer(media.host, media.port, media.payload_type, media.telephone_event)
    assert heard_second >= 50 and heard_first == 0
    assert calls == [("started", 1), ("ended", 0)]


def test_the_digest_gate_takes_a_right_answer_only_to_a_nonce_it_made_lately(monkeypatch):
    import re

    from voicebench.live import serve_sip
    from voicebench.live.serve_sip import DigestGate

    gate = DigestGate(TOKEN)
    nonce = re.search(r'nonce="([^"]+)"', gate.challenge())[1]  # type: ignore[index]

    def answer(password: str, nonce: str) -> str:
        return digest_answer(password, nonce, "sip:agent@127.0.0.1:5060")

    assert gate.check("INVITE", answer(TOKEN, nonce)) is True
    assert gate.check("INVITE", answer("not-the-token", nonce)) is False
    assert gate.check("INVITE", None) is None
    forged = nonce[:-1] + ("0" if nonce[-1] != "0" else "1")
    assert gate.check("INVITE", answer(TOKEN, forged)) is None  # not one of ours: challenge
    # a thousand challenges later, the first is still good: nothing is stored to push it out
    for _ in range(1000):
        gate.challenge()
    assert gate.check("INVITE", answer(TOKEN, nonce)) is True
    # and after its time it is not
    later = serve_sip.time.monotonic_ns() + int((serve_sip.NONCE_S + 1) * 1e9)
    monkeypatch.setattr(serve_sip.time, "monotonic_ns", lambda: later)
    assert gate.check("INVITE", answer(TOKEN, nonce)) is None
