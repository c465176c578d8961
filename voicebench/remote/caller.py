r"""A running voice agent reached over WebSocket, driven as a caller would and timed as a black box.

One connection serves a whole run, like one phone call per run; after a failed turn the replay
loop starts a new one. The caller's side is a real-time microphone and loudspeaker:

- Microphone: 20 ms frames, each sent once its 20 ms have "been recorded" (frame j of an
  utterance that starts at t0 leaves at t0 + (j + 1) * 20 ms), silence between utterances.
  Sample i of an utterance happens at t0 + i / rate, which places the true end of speech.
- Loudspeaker: the agent's audio plays from when it arrives, each chunk after the previous
  one (a one-chunk device buffer). The first audible sample of a talk the agent begins after
  the end of speech is the turn's first audio (``realtime.Audible``: after at least
  ``TALK_GAP_NS`` of silence); TTFA runs from the end of speech to it. When the caller talks
  over the agent, its stop is read the same way, from the audio: the last audible sample
  before such a silence.

On a phone platform's stream (``twilio``, ``telnyx``) voicebench plays the platform: it opens
with ``connected`` and ``start``, sends the microphone as 8 kHz mu-law ``media`` events and
closes with ``stop``. The agent's audio queues as the platform queues it; its ``clear`` drops
what has not played yet at the moment it arrives (so its talk stops there: with the
interruption scenarios, a clear is a stop, recorded as an ``audio_cut`` event), and each of its
``mark``\ s is returned once the audio sent before it has played, or at once on a clear.

A token the agent checks (``[remote.auth]``) goes in a handshake header or the URL's query
when dialling; it is read from the environment then and kept out of every reason recorded.

A turn ends when the agent says ``bot_stopped`` after speaking, or when it has spoken and
then ``quiet_secs`` pass after the last of its audio has played with nothing new. Failures
are returned on the turn, never raised: ``connection_refused``, ``handshake`` (the server
answered but no WebSocket opened), ``closed_mid_turn``, ``agent_error``, and, from the
replay loop, ``timeout`` (nothing audible within the turn timeout).

What an agent sends is not trusted to be small: the loudspeaker caps what one turn keeps
(``voicebench.remote.loudspeaker``), and an agent that goes past a cap has its turn ended as
``agent_error``, naming the cap.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any
from urllib.parse import quote

import numpy as np
import scipy.signal  # noqa: F401  (resample's; loaded here so no turn waits on it)

from voicebench import _arrivals
from voicebench.agent.interface import AFTER_ASIDE_S, PLAIN, HeardTurn, TurnCue
from voicebench.agent.realtime import (
    FIXTURE_RATE,
    FRAME_NS,
    NS_PER_S,
    Microphone,
    Placed,
    at_rate,
)
from voicebench.agent.watch import Ending, watch_turn
from voicebench.agentspec import AgentSpec
from voicebench.budgets import TURN_TIMEOUT_S
from voicebench.errors import redact
from voicebench.remote.codecs import codec
from voicebench.remote.loudspeaker import Loudspeaker
from voicebench.runlog import TurnError
from voicebench.timing import EventKind

MAX_MESSAGE_BYTES = 2**24
"""The largest message taken from an agent (16 MiB: over eight minutes of 16 kHz audio)."""
MAX_WAIT_S = 0.5
"""The longest a turn's watcher sleeps without looking (it wakes on the agent's news)."""
QUEUED_MESSAGES = 4
"""Messages the connection holds before reading stops (bounds what waits to be read)."""


class RemoteAgent:
    """``async with RemoteAgent(spec) as agent``: one WebSocket call for a run."""

    def __init__(self, spec: AgentSpec, *, clock=time.perf_counter_ns) -> None:
        assert spec.remote is not None
        self.spec = spec
        self.remote = spec.remote
        self.rate = spec.remote.sample_rate
        self.codec = codec(spec.remote.protocol, self.rate, spec.remote.parameters)
        self.clock = clock
        self._ws: Any = None
        self._failure: TurnError | None = None
        self._tasks: list[asyncio.Task] = []
        self._mic = Microphone(self.rate)
        self._speaker = Loudspeaker(self.rate, self.codec, self._send_soon)
        self._closed = asyncio.Event()
        self._secrets: tuple[str, ...] = ()

    async def __aenter__(self) -> RemoteAgent:
        import websockets

        url, headers, token = self.remote.dial()
        secrets = (token, quote(token, safe="")) if token else ()
        self._secrets = secrets
        try:
            self._ws = await asyncio.wait_for(
                self._dial(url, headers), self.remote.connect_timeout_secs
            )
        except TimeoutError:  # (before OSError, of which it is one)
            self._failure = TurnError(
                kind="connection_refused",
                reason=(
                    f"{self.remote.url}: no connection within "
                    f"{self.remote.connect_timeout_secs:g} s"
                ),
            )
            return self
        except (ConnectionRefusedError, OSError) as exc:
            self._failure = TurnError(
                kind="connection_refused",
                reason=redact(f"{self.remote.url}: {exc.strerror or exc}", *secrets),
            )
            return self
        except websockets.exceptions.WebSocketException as exc:
            self._failure = TurnError(
                kind="handshake", reason=redact(f"{self.remote.url}: {exc}", *secrets)
            )
            return self
        if not await self._send_all(self.codec.hello()):
            return self  # it closed at once (a refused call): the first turn says why
        self._tasks = [asyncio.create_task(self._receive()), asyncio.create_task(self._pace())]
        return self

    async def _dial(self, url: str, headers: dict[str, str] | None) -> Any:
        """The WebSocket, on a socket whose arrivals the kernel stamps where it can (not
        through a proxy: the proxy's socket is not the agent's)."""
        import websockets
        from websockets.proxy import get_proxy
        from websockets.uri import parse_uri

        from voicebench.remote.arrivals import StampedClientConnection

        uri = parse_uri(url)
        sock = None
        if _arrivals.SUPPORTED and get_proxy(uri) is None:
            sock = await _arrivals.connect(uri.host, uri.port)
            sock.watch()  # the agent's chunks keep their own arrivals however late the loop
        try:
            return await websockets.connect(
                url,
                sock=sock,
                create_connection=StampedClientConnection,
                compression=None,  # audio does not compress; deflating each frame costs time
                additional_headers=headers or None,
                max_size=MAX_MESSAGE_BYTES,
                max_queue=QUEUED_MESSAGES,
                open_timeout=None,
                ping_interval=None,
            )
        except BaseException:
            if sock is not None:
                sock.close()
            raise

    @property
    def connected(self) -> bool:
        """Whether the agent answered: the WebSocket opened."""
        return self._ws is not None

    async def _stop_listening(self) -> None:
        """Stop the call's tasks (the microphone, the listener) and the loudspeaker."""
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._speaker.close()

    async def __aexit__(self, *exc) -> None:
        await self._stop_listening()
        if self._ws is not None and not self._closed.is_set():
            with contextlib.suppress(Exception):
                for message in self.codec.bye():
                    await asyncio.wait_for(self._ws.send(message), 5)
        if self._ws is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._ws.close(), 5)

    # The loudspeaker -----------------------------------------------------------------------

    async def _receive(self) -> None:
        import websockets

        try:
            async for message in self._ws:
                # when it arrived, on this agent's clock
                age = time.perf_counter_ns() - self._ws.arrival()
                self._speaker.hear(message, self.clock() - age)
        except websockets.exceptions.ConnectionClosed:
            pass
        finally:
            self._closed.set()
            self._speaker.news.set()

    async def _send_all(self, messages: list[str | bytes]) -> bool:
        """Send ``messages`` in order; False (and the call marked closed) if the agent has
        closed the connection."""
        import websockets

        try:
            for message in messages:
                await self._ws.send(message)
        except websockets.exceptions.ConnectionClosed:
            self._closed.set()
            return False
        return True

    def _send_soon(self, message: str) -> None:
        if self._ws is not None and not self._closed.is_set():
            task = asyncio.ensure_future(self._ws.send(message))
            task.add_done_callback(lambda t: t.cancelled() or t.exception())

    # The microphone ------------------------------------------------------------------------

    async def _pace(self) -> None:
        origin = self.clock()
        k = 0
        while True:
            window_start = origin + k * FRAME_NS
            # made while its 20 ms are being recorded, so that it leaves the moment they are
            message = self.codec.audio(self._mic.frame(window_start).tobytes())
            delay = (window_start + FRAME_NS - self.clock()) / NS_PER_S
            if delay > 0:
                await asyncio.sleep(delay)
            await self._ws.send(message)
            k += 1

    # A turn --------------------------------------------------------------------------------

    def _failed(self, speech_end_ns: int, error: TurnError) -> HeardTurn:
        return HeardTurn(
            speech_end_ns=speech_end_ns,
            events=(),
            audio=np.zeros(0, np.int16),
            timed_out=False,
            failure=error,
            black_box=True,
        )

    async def speak(
        self,
        history: list[dict[str, str]],
        pcm: np.ndarray,
        speech_end_sample: int,
        *,
        timeout_s: float = TURN_TIMEOUT_S,
        cue: TurnCue = PLAIN,
    ) -> HeardTurn:
        """Say one utterance after ``history`` (16 kHz fixture PCM) and wait for the answer."""
        if self._failure is not None:
            return self._failed(self.clock(), self._failure)
        asked_ns = None  # a barge-in is said over the reply to the turn before: not asked
        if not cue.barge_in:
            asked_ns = self.clock()
            await self._send_all(self.codec.context(list(history)))
        if self._closed.is_set():
            return self._failed(
                self.clock(),
                TurnError(
                    kind="closed_mid_turn",
                    reason="the agent closed the connection" + self._close_note(),
                ),
            )
        if self.rate != FIXTURE_RATE:
            pcm = self._to_line(pcm)
            speech_end_sample = speech_end_sample * self.rate // FIXTURE_RATE
        speaker = self._speaker
        speaker.start_recording(timeout_s)
        utterance = self._mic.say(pcm)
        start_ns = await utterance.started
        speech_end_ns = start_ns + speech_end_sample * NS_PER_S // self.rate
        speaker.new_turn(start_ns, speech_end_ns, asked_ns=asked_ns)
        await utterance.finished
        watched = await watch_turn(
            _Watching(self, speech_end_ns),
            cue,
            clock=self.clock,
            deadline_ns=self.clock() + int(timeout_s * NS_PER_S),
        )
        audio, placed, before = self._take()
        if watched.ending is Ending.LOST and speaker.over is None:  # the agent hung up
            return HeardTurn(
                speech_end_ns,
                tuple(speaker.events),
                audio,
                False,
                placed=placed,
                before=before,
                failure=TurnError(
                    kind="closed_mid_turn",
                    reason="the agent closed the connection before its answer ended"
                    + self._close_note(),
                ),
                black_box=True,
                start_ns=start_ns,
                played=speaker.audible.since(start_ns),
                aside_ns=watched.aside_ns,
                ended_ns=watched.ended_ns,
            )
        errors = [e.text for e in speaker.events if e.kind is EventKind.ERROR]
        if speaker.over is not None:
            errors.insert(0, speaker.over)
        failure = (
            TurnError(kind="agent_error", reason=redact(errors[0], *self._secrets))
            if errors
            else None
        )
        return HeardTurn(
            speech_end_ns,
            tuple(speaker.events),
            audio,
            watched.ending is Ending.TIMED_OUT,
            placed=placed,
            before=before,
            failure=failure,
            black_box=True,
            start_ns=start_ns,
            played=speaker.audible.since(start_ns),
            aside_ns=watched.aside_ns,
            ended_ns=watched.ended_ns,
        )

    def _close_note(self) -> str:
        """The close code and reason the agent gave, if it gave one (a refused call's why)."""
        code = getattr(self._ws, "close_code", None)
        if code is None or code == 1000:
            return ""
        reason = getattr(self._ws, "close_reason", "") or ""
        return redact(f" ({code}{': ' + reason if reason else ''})", *self._secrets)

    def _to_line(self, pcm: np.ndarray) -> np.ndarray:
        """16 kHz fixture PCM at the connection's sample rate."""
        return at_rate(pcm, self.rate)

    def _take(self) -> tuple[np.ndarray, Placed, tuple[tuple[int, np.ndarray], ...]]:
        """The reply heard from the end of the caller's speech on, where it lies on the clock,
        and what played before it in the turn."""
        tape, since = self._speaker.tape, self._speaker.listening_since
        return *tape.take(since, FIXTURE_RATE), tape.before(since, FIXTURE_RATE)


class _Watching:
    """A remote agent's side of watching a turn (``voicebench.agent.watch``): its loudspeaker's
    events, the watcher woken by what the agent sends. Its answer has ended when it says
    ``bot_stopped`` after its last onset, or when ``quiet_secs`` have passed since the last of
    its audio played (either once a backchannel has had ``AFTER_ASIDE_S`` to be answered)."""

    def __init__(self, agent: RemoteAgent, speech_end_ns: int) -> None:
        self.agent = agent
        self.speaker = agent._speaker
        self.speech_end_ns = speech_end_ns
        self.quiet_ns = int(agent.remote.quiet_secs * NS_PER_S)
        self.onsets: list[int] = []
        self.speaker.news.clear()  # what arrives from here on wakes the watcher

    def first_audio_ns(self) -> int | None:
        self.onsets = [
            e.ns
            for e in self.speaker.events
            if e.kind is EventKind.AUDIO_OUT and e.ns >= self.speech_end_ns
        ]
        return self.onsets[0] if self.onsets else None

    def gone(self) -> bool:
        return self.speaker.over is not None  # it went past a cap of the loudspeaker's

    def ended(self, now_ns: int, aside_ns: int | None) -> Ending | None:
        stopped = [e.ns for e in self.speaker.events if e.kind is EventKind.BOT_STOPPED]
        settled = aside_ns is None or now_ns - aside_ns >= AFTER_ASIDE_S * NS_PER_S
        quiet = now_ns - self.speaker.last_audio_end_ns > self.quiet_ns
        if self.onsets and settled and (any(s > self.onsets[-1] for s in stopped) or quiet):
            return Ending.ANSWERED
        if self.agent._closed.is_set():
            return Ending.LOST
        return None

    def due_ns(self, first_ns: int | None, aside_ns: int | None) -> list[int]:
        if first_ns is None:
            return []
        due = [self.speaker.last_audio_end_ns + self.quiet_ns + 1]
        if aside_ns is not None:
            due.append(aside_ns + int(AFTER_ASIDE_S * NS_PER_S) + 1)
        return due

    async def wait(self, until_ns: int) -> None:
        # Nothing to do until the agent sends news (an onset, a stop, an error, a close) or
        # the next moment a rule looks at comes.
        wait_s = min(max(0, until_ns - self.agent.clock()) / NS_PER_S, MAX_WAIT_S)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(wait_s):
                await self.speaker.news.wait()
        self.speaker.news.clear()

    async def say(self, pcm: np.ndarray) -> int:
        return await self.agent._mic.say(self.agent._to_line(pcm)).started
