"""An agent served over SIP (``voicebench serve --protocol sip``) against a stranger's input:
broken, garbled and lying SIP datagrams at its port, garbage on a call's RTP port, a flood of
INVITEs, and a caller that vanishes without a BYE. Whatever comes, the server answers with a
SIP status of its own or nothing (never a traceback, never a 5xx), keeps nothing of a call it
did not make, hangs up on a silent line, and answers the next proper call.

One server, the scripted agent's, runs in a thread of its own for the module; the SIP cases are
sent to its port, the RTP cases and the server's readers are fuzzed in-process.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import re
import socket
import struct
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
from fuzzing import fuzz_settings
from hypothesis import HealthCheck, given
from hypothesis import strategies as st
from sip_tools import digest_answer, speech, talk

from voicebench.live.serve_sip import REALM, Held, SipServer

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "sip-fuzz-token-0123456789"
FUZZ = fuzz_settings(HealthCheck.function_scoped_fixture)
REPLIES = {100, 400, 401, 403, 405, 481, 486, 488}
"""What the server may answer a stranger (200 too, to an OPTIONS)."""
SDP = (
    "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"
    "m=audio 40000 RTP/AVP 0 101\r\na=rtpmap:0 PCMU/8000\r\n"
    "a=rtpmap:101 telephone-event/8000\r\na=ptime:20\r\n"
)


@dataclass
class Served:
    """The module's server: its port, what it said, and a way to ask it things in its loop."""

    server: SipServer
    port: int
    loop: asyncio.AbstractEventLoop
    events: list[tuple[str, int]] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    logged: list[logging.LogRecord] = field(default_factory=list)
    loop_errors: list[dict] = field(default_factory=list)

    def held(self) -> Held:
        return self.ask(self.server.held)

    def ask(self, what):
        async def run():
            return what()

        return asyncio.run_coroutine_threadsafe(run(), self.loop).result(30)

    def tracebacks(self, since: int = 0) -> list[str]:
        """What was logged from record ``since`` on with a traceback, as an error, or by
        voicebench (a message it could not handle), and what the loop caught."""
        told = [
            r
            for r in self.logged[since:]
            if r.exc_info or r.levelno >= logging.ERROR or r.name.startswith("voicebench")
        ]
        return [r.getMessage() for r in told] + [str(c) for c in self.loop_errors]


class _Keep(logging.Handler):
    def __init__(self, into: list[logging.LogRecord]) -> None:
        super().__init__(logging.DEBUG)
        self.into = into

    def emit(self, record: logging.LogRecord) -> None:
        self.into.append(record)


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    from voicebench.agentspec import load_agent_spec
    from voicebench.live.serve import CallerTransport, shared_backend

    loop = asyncio.new_event_loop()
    stop = asyncio.Event()
    ready: list[Served] = []
    started = threading.Event()
    failed: list[BaseException] = []

    async def serve() -> None:
        async with shared_backend(load_agent_spec(ROOT / "agents" / "scripted.toml")) as spec:
            served = Served(
                SipServer(
                    spec,
                    password=TOKEN,
                    limit=1,
                    host="127.0.0.1",
                    caller_transport=CallerTransport,
                ),
                0,
                loop,
            )
            served.server.on_call = lambda what, n: served.events.append((what, n))
            served.server.on_refused = served.refused.append

            def on_ready(url: str) -> None:
                # (only now: aiosipua's start on 3.11 raises a harmless error the loop catches)
                loop.set_exception_handler(lambda _loop, c: served.loop_errors.append(c))
                served.port = int(url.rsplit(":", 1)[1])
                ready.append(served)
                started.set()

            await served.server.run(0, stop, on_ready)

    def thread() -> None:
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(serve())
        except BaseException as exc:  # (told to the test below)
            failed.append(exc)
            started.set()

    runner = threading.Thread(target=thread, daemon=True)
    runner.start()
    assert started.wait(120) and not failed, failed
    keep = _Keep(ready[0].logged)
    logging.getLogger().addHandler(keep)
    previous = logging.getLogger().level
    logging.getLogger().setLevel(logging.DEBUG)
    try:
        yield ready[0]
    finally:
        logging.getLogger().removeHandler(keep)
        logging.getLogger().setLevel(previous)
        loop.call_soon_threadsafe(stop.set)
        runner.join(60)


@pytest.fixture(scope="module")
def client() -> Iterator[socket.socket]:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.settimeout(10)
        yield sock


@pytest.fixture(scope="module")
def nonce(served: Served, client: socket.socket) -> str:
    return challenge(client, served.port)


# SIP messages ----------------------------------------------------------------------------

_numbers = itertools.count()


def request(
    method: str,
    me: int,
    n: int,
    *,
    body: bytes = b"",
    headers: dict[str, str] | None = None,
    length: str | None = None,
) -> bytes:
    """A request from ``127.0.0.1:me`` (its answers come back there: ``rport``), with
    ``headers`` replacing (or, with the value None, removing) the usual ones."""
    usual = {
        "Via": f"SIP/2.0/UDP 127.0.0.1:{me};rport;branch=z9hG4bK-f{n}",
        "Max-Forwards": "70",
        "From": f"<sip:fuzz@127.0.0.1>;tag=f{n}",
        "To": "<sip:agent@127.0.0.1>",
        "Call-ID": f"fuzz-{n}",
        "CSeq": f"1 {method}",
        "Contact": f"<sip:fuzz@127.0.0.1:{me}>",
    }
    if body:
        usual["Content-Type"] = "application/sdp"
    usual.update(headers or {})
    usual["Content-Length"] = str(len(body)) if length is None else length
    lines = [f"{method} sip:agent@127.0.0.1 SIP/2.0"]
    lines += [f"{k}: {v}" for k, v in usual.items() if v is not None]
    return "\r\n".join([*lines, "", ""]).encode("utf-8", "surrogatepass") + body


def invite(me: int, n: int, **kwargs) -> bytes:
    kwargs.setdefault("body", SDP.encode())
    return request("INVITE", me, n, **kwargs)


def exchange(sock: socket.socket, server: int, datagram: bytes) -> list[tuple[int, bytes]]:
    """Send ``datagram``, then an OPTIONS whose answer says the server has read it: what came
    back in between, each answer's status and its bytes."""
    from aiosipua.message import SipMessage, SipResponse

    n = next(_numbers)
    me = sock.getsockname()[1]
    sock.sendto(datagram, ("127.0.0.1", server))
    sock.sendto(request("OPTIONS", me, n, headers={"Call-ID": f"probe-{n}"}), ("127.0.0.1", server))
    got: list[tuple[int, bytes]] = []
    while True:
        raw = sock.recv(65_535)
        reply = SipMessage.parse(raw)
        assert isinstance(reply, SipResponse), raw[:300]
        if reply.call_id == f"probe-{n}":
            assert reply.status_code == 200
            return got
        got.append((reply.status_code, raw))


def challenge(sock: socket.socket, server: int) -> str:
    """A nonce of the server's, from the 401 to an INVITE without credentials."""
    replies = exchange(sock, server, invite(sock.getsockname()[1], next(_numbers)))
    assert [status for status, _ in replies] == [100, 401]
    return re.search(rb'nonce="([^"]+)"', replies[1][1])[1].decode()  # type: ignore[index]


def digest(nonce: str, password: str = TOKEN, uri: str = "sip:agent@127.0.0.1") -> str:
    return digest_answer(password, nonce, uri)


# What a stranger sends: each case a kind and how to make its datagram -------------------

NAMES = ["Via", "From", "To", "Call-ID", "CSeq", "Contact", "Content-Type", "Max-Forwards"]
odd_text = st.text(max_size=60) | st.sampled_from(
    ["", " ", "\x00", "é\u2028", "1 INVITE x", "x INVITE", "99999999999999999999 INVITE", "<>"]
)
sdp_lines = st.lists(
    st.one_of(
        st.sampled_from(SDP.split("\r\n")),
        st.builds("{}={}".format, st.sampled_from(list("vosctmabz")), odd_text),
        st.builds(
            "m=audio {} RTP/AVP {}".format,
            st.sampled_from(["0", "-1", "65536", "99999999999", "x", ""]),
            st.sampled_from(["0", "8", "0 8 101", "96", "x", ""]),
        ),
        st.builds(
            "a=rtpmap:{} {}".format,
            st.sampled_from(["0", "101", "x", "300", ""]),
            st.sampled_from(["PCMU/8000", "telephone-event/8000", "x/y/z", ""]),
        ),
        st.builds("c=IN IP4 {}".format, st.sampled_from(["0.0.0.0", "224.0.0.1", "x", "::1"])),
    ),
    max_size=14,
).map(lambda lines: "\r\n".join(lines).encode("utf-8", "surrogatepass"))
authorizations = st.one_of(
    odd_text,
    st.builds(
        lambda params: "Digest " + ", ".join(params),
        st.lists(
            st.builds(
                '{}="{}"'.format,
                st.sampled_from(["username", "realm", "nonce", "uri", "response", "qop", "nc"]),
                odd_text | st.just(REALM) | st.just("auth") | st.just("NONCE"),
            ),
            max_size=9,
        ),
    ),
    st.sampled_from(["Digest", "Basic Zm9vOmJhcg==", "digest nonce=", 'Digest nonce="1é.x"']),
)


@st.composite
def stranger(draw) -> tuple[str, object]:
    """A case: ``(kind, what)``, made into a datagram by ``datagram``."""
    kind = draw(
        st.sampled_from(
            ["noise", "cut", "garbled", "header", "length", "sdp", "auth", "method", "response"]
        )
    )
    if kind == "noise":
        return kind, draw(st.binary(max_size=1500))
    if kind in ("cut", "garbled"):
        return kind, (draw(st.integers(0, 10_000)), draw(st.binary(min_size=1, max_size=20)))
    if kind == "header":
        name = draw(st.sampled_from(NAMES))
        how = draw(st.sampled_from(["odd", "none", "many"]))
        return kind, (name, None if how == "none" else draw(odd_text), how)
    if kind == "length":
        lie = st.integers(1, 10**12).map(lambda extra: ("more", extra))
        return kind, draw(lie | st.sampled_from(["-1", "abc", "1e3", "", " 7 7", "²"]))
    if kind == "sdp":
        return kind, draw(sdp_lines)
    if kind == "auth":
        return kind, draw(authorizations)
    if kind == "method":
        method = draw(
            st.sampled_from(
                ["OPTIONS", "BYE", "CANCEL", "ACK", "PRACK", "UPDATE", "REFER", "NOTIFY", "INFO"]
            )
            | st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZ-", min_size=1, max_size=12)
        )
        return kind, (method, draw(st.sampled_from([None, "fuzz-0", "x"])), draw(sdp_lines))
    return kind, (draw(st.integers(100, 699)), draw(odd_text))


def datagram(kind: str, what, me: int, n: int, nonce: str) -> bytes:
    proper = invite(me, n)
    if kind == "noise":
        return what
    if kind == "cut":
        return proper[: what[0] % len(proper)]
    if kind == "garbled":
        at, junk = what
        at %= len(proper)
        return proper[:at] + junk + proper[at + len(junk) :]
    if kind == "header":
        name, value, how = what
        if how == "many":
            return invite(me, n, headers={"X-Many": "x\r\nX-Many: x" * 300})
        return invite(me, n, headers={name: value})
    if kind == "length":
        body = SDP.encode()
        length = str(len(body) + what[1]) if isinstance(what, tuple) else what
        return invite(me, n, length=length)
    if kind == "sdp":
        return invite(me, n, body=what)
    if kind == "auth":
        return invite(me, n, headers={"Authorization": what.replace("NONCE", nonce)})
    if kind == "method":
        method, call_id, body = what
        return request(method, me, n, body=body, headers={"Call-ID": call_id or f"fuzz-{n}"})
    status, reason = what
    head = f"SIP/2.0 {status} {reason}\r\n".encode("utf-8", "surrogatepass")
    return head + request("INVITE", me, n).split(b"\r\n", 1)[1]


def expected(kind: str, what) -> set[tuple[int, ...]] | None:
    """The answers a case must get, where they are known (None: any of ``REPLIES``)."""
    from aiosipua import parse_sdp

    if kind == "length":
        return {(400,)}
    if kind == "sdp":
        try:
            parse_sdp(what.decode("utf-8", "replace"))
        except Exception:  # (aiosipua cannot read it: answered 400 before it tries)
            return {(400,)}
        return {(100, 401)}  # (challenged: credentials come before the offer)
    if kind == "auth":
        return {(100, 401), (100, 403)}
    if kind == "response":
        return {()}
    return None


@FUZZ
@given(stranger())
def test_the_server_answers_any_datagram_with_its_own_status_or_nothing(
    served: Served, client: socket.socket, nonce: str, case: tuple[str, object]
):
    kind, what = case
    since = len(served.logged)
    data = datagram(kind, what, client.getsockname()[1], next(_numbers), nonce)
    replies = exchange(client, served.port, data)
    statuses = tuple(status for status, _ in replies)
    allowed = REPLIES | ({200} if data.startswith(b"OPTIONS ") else set())
    assert set(statuses) <= allowed, (statuses, data[:300])
    known = expected(kind, what)
    if known is not None:
        assert statuses in known, (statuses, data[:300])
    assert served.tracebacks(since) == []


@FUZZ
@given(stranger())
def test_screen_hands_aiosipua_only_what_it_reads(case: tuple[str, object]):
    from aiosipua import parse_sdp
    from aiosipua.message import SipRequest

    from voicebench.live.sip_screen import BadRequest, screen

    kind, what = case
    data = datagram(kind, what, 5_000, 1, "nonce")
    screened = screen(data)
    if isinstance(screened, BadRequest):
        assert screened.request.method != "ACK" and screened.request.via
        assert screened.why in ("Content-Length", "CSeq", "From", "To", "Contact", "SDP")
    elif screened is not None:
        for read in ("via", "cseq", "from_addr", "to_addr", "contact", "call_id"):
            getattr(screened, read)
        if screened.body and screened.content_type == "application/sdp":
            parse_sdp(screened.text)
        if isinstance(screened, SipRequest):
            assert screened.via
    if kind == "length":
        assert isinstance(screened, BadRequest) and screened.why == "Content-Length"


@FUZZ
@given(authorizations, st.sampled_from(["INVITE", "BYE", "", "é"]))
def test_the_digest_gate_judges_any_answer_without_raising(answer: str, method: str):
    from voicebench.live.serve_sip import DigestGate

    gate = DigestGate(TOKEN)
    nonce = re.search(r'nonce="([^"]+)"', gate.challenge())[1]  # type: ignore[index]
    assert gate.check(method, answer.replace("NONCE", nonce)) in (None, False)
    assert gate.check("INVITE", digest(nonce)) is True  # (and the right answer still works)


@FUZZ
@given(sdp_lines)
def test_the_media_of_any_offer_is_one_the_server_can_send_to_or_none(body: bytes):
    import ipaddress

    from aiosipua import negotiate_sdp, parse_sdp

    from voicebench.live.sip_screen import offered_media

    try:
        offer = parse_sdp(body.decode("utf-8", "replace"))
    except Exception:
        return  # (answered 400 before: screen)
    media = offered_media(offer)
    if media is None:
        return
    address = ipaddress.IPv4Address(media.host)
    assert not (address.is_multicast or address.is_unspecified or address.is_reserved)
    assert 0 < media.port < 65_536 and media.payload_type in (0, 8)
    assert media.telephone_event is None or 0 <= media.telephone_event <= 127
    _answer, payload = negotiate_sdp(offer, "127.0.0.1", 40_000, supported_codecs=[0, 8])
    assert payload == media.payload_type


# RTP ---------------------------------------------------------------------------------------

EVENTS = 101
rtp_headers = st.builds(
    lambda first, second, sequence, timestamp, ssrc: struct.pack(
        "!BBHII", first, second, sequence, timestamp, ssrc
    ),
    st.integers(0, 255) | st.integers(0x80, 0xBF),
    st.integers(0, 255) | st.sampled_from([0, 0x80, 8, EVENTS, 0x80 | EVENTS, 200, 201]),
    st.integers(0, 0xFFFF),
    st.integers(0, 0xFFFFFFFF),
    st.integers(0, 0xFFFFFFFF),
)
datagrams = st.one_of(
    st.binary(max_size=2000),
    st.builds(lambda h, payload: h + payload, rtp_headers, st.binary(max_size=400)),
    st.builds(
        lambda h, code, flags, duration: h + struct.pack("!BBH", code, flags, duration),
        rtp_headers,
        st.integers(0, 255),
        st.integers(0, 255),
        st.integers(0, 0xFFFF),
    ),
)


@pytest.fixture(scope="module")
def rtp_session():
    from voicebench.remote.rtp import PCMU, RtpSession

    loop = asyncio.new_event_loop()

    async def open_session() -> RtpSession:
        session = RtpSession(host="127.0.0.1")
        session.connect("127.0.0.1", 9, PCMU, EVENTS)
        return session

    session = loop.run_until_complete(open_session())
    yield session
    session.close()
    loop.close()


@FUZZ
@given(st.lists(datagrams, min_size=1, max_size=20))
def test_an_rtp_session_takes_any_datagram_and_then_hears_a_packet(rtp_session, sent):
    from voicebench.remote.rtp import DIGITS, MAX_QUEUED, RtpPacket
    from voicebench.scenarios import mulaw_decode, mulaw_encode

    session = rtp_session
    before = (session.received, session.dropped)
    taken = [session.take(datagram, 1_000) for datagram in sent]
    assert session.received - before[0] == len(sent)
    assert session.dropped - before[1] == taken.count(False)
    assert session.packets.qsize() <= MAX_QUEUED and session.digits.qsize() <= MAX_QUEUED
    while not session.packets.empty():
        packet = session.packets.get_nowait()
        assert packet.pcm.dtype == np.int16 and 0 < packet.pcm.size <= 1500
    while not session.digits.empty():
        assert session.digits.get_nowait().digit in DIGITS
    pcm = np.arange(-800, 800, 10, dtype=np.int16)
    valid = struct.pack("!BBHII", 0x80, 0x80, 7, 1_600, 42) + mulaw_encode(pcm)
    assert session.take(valid, 2_000) is True
    heard = session.packets.get_nowait()
    assert isinstance(heard, RtpPacket)
    assert (heard.sequence, heard.timestamp, heard.marker, heard.ssrc) == (7, 1_600, True, 42)
    assert heard.arrival_ns == 2_000 and np.array_equal(heard.pcm, mulaw_decode(mulaw_encode(pcm)))


# Calls -------------------------------------------------------------------------------------


async def until(holds, timeout_s: float = 60.0) -> None:
    for _ in range(int(timeout_s / 0.05)):
        if holds():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("not within the time")


@contextlib.asynccontextmanager
async def call(served: Served):
    """A proper call placed with voicebench's own SIP line: ``(line, rtp)`` once answered; hung
    up at the end unless the server hung up first."""
    from voicebench.remote.rtp import RtpSession
    from voicebench.remote.sip import SipLine, SipTarget

    target = SipTarget.parse(f"sip:agent@127.0.0.1:{served.port}")
    with RtpSession(host="127.0.0.1") as rtp:
        async with SipLine("127.0.0.1") as line:
            media = await line.dial(target, rtp_port=rtp.local_port, password=TOKEN, timeout_s=60)
            rtp.connect(media.host, media.port, media.payload_type, media.telephone_event)
            yield line, rtp


async def in_one_call(served: Served) -> None:
    """Until the server holds the one call and nothing else: the INVITE's transaction ends with
    the caller's ACK, which the server may read after the caller has gone on."""
    one = Held(calls=1, dialogs=1, transactions=0)
    try:
        await until(lambda: served.held() == one)
    except AssertionError:
        raise AssertionError(f"held: {served.held()}") from None


async def hung_up(served: Served) -> None:
    """Until the last call's pipeline has stopped and nothing of it is held (both: the last
    event may be an earlier call's end while this one's is still under way on a busy machine);
    what is still held, if that never comes."""
    nothing = Held(calls=0, dialogs=0, transactions=0)
    try:
        await until(lambda: served.events[-1:] == [("ended", 0)] and served.held() == nothing)
    except AssertionError:
        raise AssertionError(f"still held: {served.held()}; {served.events[-3:]}") from None


async def test_a_proper_call_is_answered_after_the_strangers(served: Served):
    started = len(served.events)
    async with call(served):
        await in_one_call(served)
    await hung_up(served)
    assert served.events[started:] == [("started", 1), ("ended", 0)]
    assert served.tracebacks() == []


async def test_a_flood_of_invites_past_the_cap_is_refused_and_leaves_nothing_held(
    served: Served, client: socket.socket, nonce: str
):
    from collections import Counter

    me = client.getsockname()[1]
    refused = len(served.refused)
    answers: Counter[int] = Counter()
    async with call(served):  # (the one call the cap allows)
        flood = [
            invite(me, next(_numbers), headers={"Authorization": digest(nonce)} if k % 2 else {})
            for k in range(600)
        ]
        for at in range(0, len(flood), 50):  # (a burst the size of a socket's buffer)
            for datagram in flood[at : at + 49]:
                client.sendto(datagram, ("127.0.0.1", served.port))
            replies = exchange(client, served.port, flood[at + 49])
            answers.update(status for status, _ in replies)
        await in_one_call(served)
    await hung_up(served)
    assert answers == {100: 600, 401: 300, 486: 300}
    assert served.refused[refused:] == ["busy: 1 calls in progress (at most 1)"] * 300
    async with call(served):  # the slot is free again
        pass
    await hung_up(served)
    assert served.tracebacks() == []


@pytest.mark.parametrize(
    "media",
    ["c=IN IP4 0.0.0.0\r\nm=audio 40000", "m=audio 0", "m=audio 70000", "m=audio -5"],
)
async def test_an_offer_the_server_cannot_send_to_is_answered_488(
    served: Served, client: socket.socket, nonce: str, media: str
):
    body = SDP.replace("m=audio 40000", media).encode()
    authorized = {"Authorization": digest(nonce)}
    replies = exchange(
        client,
        served.port,
        invite(client.getsockname()[1], next(_numbers), body=body, headers=authorized),
    )
    assert [status for status, _ in replies] == [100, 488]
    assert served.held() == Held(calls=0, dialogs=0, transactions=0)


def rtp_garbage(rng: np.random.Generator) -> bytes:
    """A datagram that is no packet the call takes: another version, cut short, too long, RTCP
    or a payload type not agreed."""
    kind = int(rng.integers(5))
    if kind == 0:
        return bytes([int(rng.integers(0, 0x80))]) + rng.bytes(int(rng.integers(0, 400)))
    if kind == 1:
        return bytes([0x80]) + rng.bytes(int(rng.integers(0, 11)))
    if kind == 2:
        return bytes([0x80, 0]) + rng.bytes(1_600)
    pt = [200, 201, 96, 18, 9][int(rng.integers(5))]
    return bytes([0x80, pt]) + rng.bytes(int(rng.integers(10, 400)))


async def test_a_call_hears_after_a_burst_of_garbage_on_its_rtp_port(served: Served):
    rng = np.random.default_rng(3550)
    started = len(served.events)
    async with call(served) as (_line, rtp):
        server_rtp = served.ask(lambda: next(iter(served.server.calls.values()))[1])
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as stranger:
            for burst in range(1, 21):  # (bursts of 50 that the socket's buffer holds)
                for _ in range(50):
                    stranger.sendto(rtp_garbage(rng), ("127.0.0.1", server_rtp.local_port))
                await until(lambda n=burst: served.ask(lambda: server_rtp.received) == 50 * n)
        assert served.ask(lambda: server_rtp.dropped) == 1_000
        assert rtp.packets.empty()  # (the agent has said nothing yet)
        speaking = asyncio.create_task(talk(rtp, speech()))
        try:
            # the agent's reply: a second of audio, 20 ms a packet
            await until(lambda: rtp.packets.qsize() >= 50, timeout_s=120)
        finally:
            speaking.cancel()
        assert served.events[started:] == [("started", 1)]  # still in the call
        assert rtp.packets.get_nowait().pcm.size == 160
    await hung_up(served)
    assert served.tracebacks() == []


async def test_a_caller_that_vanishes_is_hung_up_once_its_line_is_silent(served: Served):
    from voicebench.live.serve_sip import RTP_IDLE_S

    assert RTP_IDLE_S == 30.0
    started = len(served.events)
    served.ask(lambda: setattr(served.server, "idle_s", 1.0))
    try:
        async with call(served) as (line, rtp):
            for _ in range(10):  # a moment of the line, then nothing: no RTP, no BYE
                rtp.send_frame(np.zeros(160, np.int16))
                await asyncio.sleep(0.02)
            await asyncio.wait_for(line.ended.wait(), 60)  # the server's BYE
    finally:
        served.ask(lambda: setattr(served.server, "idle_s", RTP_IDLE_S))
    await hung_up(served)
    assert served.events[started:] == [
        ("started", 1),
        ("hung up: no RTP for 1 s", 1),
        ("ended", 0),
    ]
    async with call(served):  # its slot is free
        pass
    await hung_up(served)
    assert served.tracebacks() == []
