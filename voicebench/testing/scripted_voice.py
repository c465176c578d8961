"""A scripted WebSocket voice agent with a known response delay: the far end for testing and
self-checking voicebench's remote-agent client and load mode.

It speaks any protocol of ``voicebench.remote.wire`` (``pcm``, ``pipecat``, or the agent's
side of a ``twilio`` or ``telnyx`` media stream, 8 kHz mu-law), or a speech-to-speech model's
server (``openai-realtime``: ``voicebench.testing.scripted_realtime``; ``gemini-live``:
``voicebench.testing.scripted_gemini``), or answers WebRTC calls
(``webrtc``: ``voicebench.testing.scripted_webrtc``) on 127.0.0.1, one call per
connection, any number of calls at once. Per call it listens to the caller's 20 ms frames;
once it has heard speech followed by ``hangover_ms`` of silence it answers, placing the first
audible sample of its reply ``delay_ms`` after the end of the caller's speech. It knows when
that was from the stream itself: a frame is sent when its 20 ms have been recorded, so the
sample ``s`` of a frame that arrived at ``t`` and ends at sample ``e`` was spoken at
``t - (e - s) / rate``; of the places the utterance's frames give, the earliest is taken (a
frame held up on its way, by a busy caller or network, arrives late, those after it catch up).
The reply is streamed in real time,
followed (``pcm``) by ``bot_stopped``. A delay shorter than the hangover cannot be kept; the
reply then leaves at once, and the log shows it.

Talked over (``--stop-ms``): when the caller speaks during a reply and is still speaking
``--yield-after-ms`` after their first sound, it stops so that the reply's last sample plays
``--stop-ms`` after that first sound (truncating the chunk that spans it), then answers what
the caller said as usual. Shorter speech (a backchannel, "yeah") does not stop it when
``--yield-after-ms`` is longer than the word; with 0 it stops for any sound. Without
``--stop-ms`` it never stops. Each stop is logged with the spoken time of the caller's first
sound and of the last audible sample it played.

On a phone stream it stops with a ``clear`` sent at that moment instead (the caller plays what
it was sent until the clear arrives), and after each reply it sends a ``mark``; the log notes
when the caller returned it (``{"call": 0, "mark": "reply-0", "acked_ns": ...}``) and when the
reply should have finished playing (``reply_ends_ns`` on the turn's line).

With ``--token-env NAME`` a handshake without ``Authorization: Bearer TOKEN`` or
``?token=TOKEN`` (the variable's value) is refused with HTTP 401.

Faults, one per call in order of connection (later calls are normal): ``refuse`` (the
handshake is answered with HTTP 503), ``close`` (the connection is closed as the reply would
start), ``silent`` (no reply at all), ``error`` (an ``error`` message instead of a reply),
``busy`` (SIP only: the INVITE is answered 486).

Log (``--log PATH``): one JSON line per answered turn, flushed as written::

    {"call": 0, "speech_end_ns": ..., "found_end_ns": ..., "first_audio_sent_ns": ...,
     "delay_ms": 300.0}
    {"call": 0, "stop": true, "speech_start_ns": ..., "last_audible_ns": ..., "stop_ms": 150.0}

CLI::

    python -m voicebench.testing.scripted_voice --port 0 --delay-ms 800 [--protocol pcm]
        [--hangover-ms 600|750] [--reply TEXT] [--log PATH] [--fault close ...]
        [--stop-ms 150 [--yield-after-ms 0]] [--token-env NAME]
        [--early-media-ms 600] [--move-media-ms 300] [--ivr 1,2#]   (sip: ``scripted_sip``)

prints ``READY ws://127.0.0.1:PORT`` once listening; exits on SIGTERM, SIGINT or its
parent's death.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
from http import HTTPStatus
from pathlib import Path

from voicebench.errors import RunError
from voicebench.llm.helper import HOST, HelperServer
from voicebench.remote.arrivals import StampedServerConnection
from voicebench.remote.telephony import LINE_RATE, TELEPHONY
from voicebench.testing.scripted_plan import reply_audio
from voicebench.testing.scripted_timing import listener, ready_until_stopped
from voicebench.testing.scripted_voice_agent import DEFAULT_REPLY, FAULTS, Agent, Fault

REALTIME = "openai-realtime"
"""A speech-to-speech model's server (``voicebench.testing.scripted_realtime``)."""
GEMINI = "gemini-live"
"""Another speech-to-speech protocol (``voicebench.testing.scripted_gemini``)."""
WEBRTC = "webrtc"
"""Calls over WebRTC (``voicebench.testing.scripted_webrtc``)."""
SIP = "sip"
PROTOCOLS = ("pcm", "pipecat", *TELEPHONY, REALTIME, GEMINI, WEBRTC, SIP)


async def serve(agent: Agent, *, port: int = 0) -> None:
    import websockets

    def process_request(connection, request):
        if agent.token is not None and not _presents(request, agent.token):
            return connection.respond(HTTPStatus.UNAUTHORIZED, "token required\n")
        call = next(agent.calls)
        connection.voicebench_call = call
        if agent.fault_for(call) == "refuse":
            return connection.respond(HTTPStatus.SERVICE_UNAVAILABLE, "scripted refusal\n")
        return None

    async with websockets.serve(
        agent.handle,
        sock=listener(HOST, port),  # the agent hears each frame when it arrived
        create_connection=StampedServerConnection,
        process_request=process_request,
        max_size=2**24,
        ping_interval=None,
        compression=None,
    ) as server:
        bound = next(iter(server.sockets)).getsockname()[1]
        await ready_until_stopped(f"ws://{HOST}:{bound}")


def hangover_for(protocol: str) -> float:
    """The default silence that ends the caller's turn. On a phone stream a sentence's last
    fricative is above the 4 kHz the line carries, so the pause before the next sentence reads
    up to 0.7 s long (0.6 s at 16 kHz) in the built-in fixtures: the wait is longer there."""
    return 750.0 if protocol in (*TELEPHONY, SIP) else 600.0


def _presents(request, token: str) -> bool:
    """Whether the handshake carries the token: ``Authorization: Bearer TOKEN`` or
    ``?token=TOKEN``."""
    from urllib.parse import parse_qs, urlsplit

    if request.headers.get("Authorization") == f"Bearer {token}":
        return True
    return token in parse_qs(urlsplit(request.path).query).get("token", [])


def _hold(value: str) -> tuple[float, float]:
    after, _, hold = value.partition(":")
    return float(after), float(hold)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m voicebench.testing.scripted_voice",
        description="Scripted WebSocket voice agent.",
    )
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--protocol", choices=PROTOCOLS, default="pcm")
    parser.add_argument(
        "--sample-rate", type=int, default=16_000, help="pcm and pipecat (phone lines are 8 kHz)"
    )
    parser.add_argument(
        "--token-env",
        default=None,
        help="refuse (HTTP 401) a caller that does not present this variable's value",
    )
    parser.add_argument(
        "--delay-ms",
        type=float,
        default=800.0,
        help="end of the caller's speech to the reply's first audible sample",
    )
    parser.add_argument(
        "--hangover-ms",
        type=float,
        default=None,
        help="silence after speech that ends the caller's turn (default 600 ms, 750 on a phone "
        "stream)",
    )
    parser.add_argument("--reply", default=DEFAULT_REPLY)
    parser.add_argument("--log", type=Path, default=None)
    parser.add_argument("--fault", action="append", default=[], choices=FAULTS)
    parser.add_argument(
        "--stop-ms",
        type=float,
        default=None,
        help="talked over: the caller's first sound to the reply's last sample (default: never)",
    )
    parser.add_argument(
        "--yield-after-ms",
        type=float,
        default=0.0,
        help="talked over: how long the caller must keep speaking before it stops",
    )
    parser.add_argument(
        "--hold",
        action="append",
        default=[],
        metavar="AFTER_MS:HOLD_MS",
        help="a stall plan: after AFTER_MS of reply the caller hears nothing for HOLD_MS, the "
        "audio held back until then (repeatable)",
    )
    parser.add_argument(
        "--pace", type=float, default=1.0, help="send the reply at this fraction of real time"
    )
    parser.add_argument(
        "--pause-ms",
        type=float,
        default=0.0,
        help="silence sent between the reply's sentences (a pause it means)",
    )
    parser.add_argument(
        "--lead-ms",
        type=float,
        default=0.0,
        help="send the reply this far ahead of the caller's playout (its first chunks at once)",
    )
    parser.add_argument(
        "--early-media-ms",
        type=float,
        default=0.0,
        help="sip: play this long a tone as early media (after a 183) before answering",
    )
    parser.add_argument(
        "--move-media-ms",
        type=float,
        default=None,
        help="sip: this long after answering, move its media to a new port with a re-INVITE",
    )
    parser.add_argument(
        "--ivr",
        default="",
        help="sip: after answering, menus (comma-separated) each prompting until its digits come",
    )
    parser.add_argument(
        "--reliable-ringing",
        action="store_true",
        help="sip: send a reliable 180 (100rel) and wait for its PRACK before answering",
    )
    args = parser.parse_args(argv)
    rate = LINE_RATE if args.protocol in (*TELEPHONY, SIP) else args.sample_rate
    kind, in_rate = Agent, None
    if args.protocol == REALTIME:
        from voicebench.testing.scripted_realtime import RATE, RealtimeAgent

        kind, rate = RealtimeAgent, RATE
    elif args.protocol == GEMINI:
        from voicebench.testing.scripted_gemini import IN_RATE, OUT_RATE, GeminiAgent

        kind, rate, in_rate = GeminiAgent, OUT_RATE, IN_RATE
    elif args.protocol == WEBRTC:
        rate = 48_000
    token = os.environ.get(args.token_env) if args.token_env else None
    if args.token_env and not token:
        raise RunError(f"--token-env: {args.token_env} is not set")
    agent = kind(
        protocol=args.protocol,
        rate=rate,
        delay_ms=args.delay_ms,
        hangover_ms=args.hangover_ms
        if args.hangover_ms is not None
        else hangover_for(args.protocol),
        reply=reply_audio(args.reply, rate, args.pause_ms),
        faults=tuple(args.fault),
        log_path=args.log,
        stop_ms=args.stop_ms,
        yield_after_ms=args.yield_after_ms,
        token=token,
        reply_text=args.reply,
        in_rate=in_rate,
        holds=tuple(_hold(h) for h in args.hold),
        pace=args.pace,
        lead_ms=args.lead_ms,
    )
    if args.protocol == WEBRTC:
        from voicebench.testing.scripted_webrtc import serve_webrtc

        asyncio.run(serve_webrtc(agent, port=args.port))
        return
    if args.protocol == SIP:
        from voicebench.testing.scripted_sip import serve_sip

        asyncio.run(
            serve_sip(
                agent,
                port=args.port,
                early_media_ms=args.early_media_ms,
                move_media_ms=args.move_media_ms,
                ivr=tuple(m for m in args.ivr.split(",") if m),
                reliable_ringing=args.reliable_ringing,
            )
        )
        return
    asyncio.run(serve(agent, port=args.port))


class ScriptedVoiceAgent(HelperServer):
    """Runs the scripted agent in a subprocess; ``with ScriptedVoiceAgent(delay_ms=300) as a:
    a.url``. A sync or async context manager. A stall plan: ``holds`` (after M ms of reply the
    caller hears nothing for N ms), ``pace`` (the reply sent at that fraction of real time),
    ``lead_ms`` (sent that far ahead of the caller's playout), ``pause_ms`` (silence sent
    between its sentences: pauses it means, not stalls). Over SIP, ``early_media_ms`` and
    ``move_media_ms``, ``ivr`` and ``reliable_ringing`` (``voicebench.testing.scripted_sip``)."""

    what = "scripted voice agent"

    def __init__(
        self,
        *,
        delay_ms: float = 800.0,
        hangover_ms: float | None = None,
        protocol: str = "pcm",
        sample_rate: int = 16_000,
        faults: tuple[Fault, ...] | list[Fault] = (),
        reply: str | None = None,
        stop_ms: float | None = None,
        yield_after_ms: float = 0.0,
        token_env: str | None = None,
        holds: tuple[tuple[float, float], ...] = (),
        pace: float = 1.0,
        lead_ms: float = 0.0,
        pause_ms: float = 0.0,
        early_media_ms: float = 0.0,
        move_media_ms: float | None = None,
        ivr: tuple[str, ...] = (),
        reliable_ringing: bool = False,
    ) -> None:
        bad = [f for f in faults if f not in FAULTS]
        if bad:
            raise ValueError(f"unknown faults {bad}; choose from {FAULTS}")
        self._tmp = tempfile.TemporaryDirectory(prefix="scripted-voice-")
        args = [
            "--port",
            "0",
            "--log",
            str(self.log_path),
            "--delay-ms",
            str(delay_ms),
            "--hangover-ms",
            str(hangover_ms if hangover_ms is not None else hangover_for(protocol)),
            "--protocol",
            protocol,
            "--sample-rate",
            str(sample_rate),
            *(a for f in faults for a in ("--fault", f)),
        ]
        if reply is not None:
            args += ["--reply", reply]
        if stop_ms is not None:
            args += ["--stop-ms", str(stop_ms), "--yield-after-ms", str(yield_after_ms)]
        if token_env is not None:
            args += ["--token-env", token_env]
        args += [a for after, hold in holds for a in ("--hold", f"{after}:{hold}")]
        args += ["--pace", str(pace), "--lead-ms", str(lead_ms), "--pause-ms", str(pause_ms)]
        args += ["--early-media-ms", str(early_media_ms)]
        if move_media_ms is not None:
            args += ["--move-media-ms", str(move_media_ms)]
        if ivr:
            args += ["--ivr", ",".join(ivr)]
        if reliable_ringing:
            args.append("--reliable-ringing")
        super().__init__(
            self.python_module("voicebench.testing.scripted_voice", *args),
            ready_pattern=rf"READY ((?:ws|http)://{HOST}:\d+\S*|sip:agent@{HOST}:\d+)",
            # it speaks its reply with Piper before it listens: several at once on a
            # machine whose cores are taken by other work need more than the default
            start_timeout_s=90.0,
        )

    @property
    def url(self) -> str | None:
        """``ws://127.0.0.1:PORT`` while it runs (``webrtc``: its offer endpoint,
        ``http://127.0.0.1:PORT/api/offer``)."""
        running = self.process is not None and self.process.poll() is None
        return self.ready_match.group(1) if running and self.ready_match else None

    @property
    def log_path(self) -> Path:
        return Path(self._tmp.name) / "turns.jsonl"

    def turns(self) -> list[dict]:
        """The log of answered turns so far."""
        return [e for e in self._log() if "speech_end_ns" in e]

    def marks(self) -> list[dict]:
        """The marks the caller returned (twilio, telnyx): name and when it came back."""
        return [e for e in self._log() if "mark" in e]

    def histories(self) -> list[list[dict]]:
        """The history each session was seeded with (``gemini-live``: its ``clientContent``
        turns), in order."""
        return [e["history"] for e in self._log() if "history" in e]

    def moves(self) -> list[dict]:
        """The log of the media moves it made with a re-INVITE (SIP, ``move_media_ms``)."""
        return [e for e in self._log() if "moved" in e]

    def logged(self, key: str) -> list[dict]:
        """The entries of its log that hold ``key``: over SIP, ``ivr`` (each menu's digits as
        they came, and whether they were right), ``pracked`` (whether a reliable 180 had its
        PRACK)."""
        return [e for e in self._log() if key in e]

    def stops(self) -> list[dict]:
        """The log of replies it stopped because the caller spoke over them."""
        return [e for e in self._log() if e.get("stop")]

    def _log(self) -> list[dict]:
        if not self.log_path.exists():
            return []
        return [json.loads(line) for line in self.log_path.read_text().splitlines() if line]


if __name__ == "__main__":
    try:
        main()
    except RunError as exc:  # pragma: no cover - shown to whoever started it
        raise SystemExit(str(exc)) from None
