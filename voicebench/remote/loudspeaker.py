"""The caller's loudspeaker on a call to a remote agent: what it plays, when, and what it keeps.

The agent's audio plays from when it arrives, each chunk after the previous one (a one-chunk
device buffer, ``realtime.Playout``); its audible spans and the onsets of its talk are read
from the samples (``realtime.Audible``). A phone stream's ``clear`` drops what has not played
yet, and each ``mark`` is returned once the audio sent before it has played (at once on a
clear). Transcripts, reply text, ``bot_stopped`` and ``error`` messages are noted as events.

What an agent sends is not trusted to be small: one turn keeps at most the turn timeout's worth
of audio (and takes no more than that much ahead of what has played), ``MAX_EVENTS`` events
(and as many audible spans), ``MAX_TEXT_CHARS`` characters of transcript, reply and error
text, and ``MAX_MARKS`` marks waiting to be returned. An agent
that goes past one of them has ``over`` set, naming the cap, and nothing more of the turn is
kept; memory stays flat however much it sends.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import numpy as np

from voicebench.agent.realtime import NS_PER_S, Audible, Playout, Tape
from voicebench.remote.telephony import TelephonyCaller
from voicebench.timing import EventKind, TurnEvent

MAX_EVENTS = 10_000
"""Events one turn may gather (transcripts, reply text, stops, errors, onsets)."""
MAX_TEXT_CHARS = 100_000
"""Characters of transcript, reply and error text one turn may gather."""
MAX_MARKS = 1_000
"""Marks of a phone stream waiting to be returned at once."""


class Loudspeaker:
    """What the caller hears of one connection; ``hear`` takes each message as it arrives."""

    def __init__(self, rate: int, codec: Any, send: Callable[[str], None]) -> None:
        self.rate = rate
        self.codec = codec
        self.send = send
        """Sends a message back to the agent (a returned mark)."""
        self.playout = Playout()
        self.audible = Audible()
        self.events: list[TurnEvent] = []
        self.tape = Tape(rate)
        """What was heard in the turn, each chunk with when it began to play (its reply is
        what played from the end of the caller's speech on)."""
        self.recorded = 0
        """Samples on ``tape``: kept as they come, so a cap is checked without summing it."""
        self.max_recorded = 60 * rate
        self.text_chars = 0
        self.listening_since = 0
        self.last_audio_end_ns = 0
        self.marks: dict[str, asyncio.TimerHandle] = {}
        self.over: str | None = None
        """Which cap the agent went past in this turn (see the module docstring)."""
        self.news = asyncio.Event()
        """Set when an event is noted or a cap is passed: what a turn's watcher waits on."""

    def hear(self, message: str | bytes, now: int) -> None:
        """One message from the agent, received at ``now``."""
        if self.over is not None:
            return  # past a cap: nothing more of this turn is kept
        incoming = self.codec.decode(message)
        if incoming is None:
            return
        if incoming.audio is not None:
            self.play(incoming.audio, now)
            return
        kind = str(incoming.control.get("type", ""))
        if self.codec.telephony and kind == "clear":
            self.clear(now)
            return
        if self.codec.telephony and kind == "mark":
            self.mark(str(incoming.control.get("name", ""))[:200], now)
            return
        text = str(incoming.control.get("text") or incoming.control.get("message") or "")
        event = {
            "transcript": EventKind.TRANSCRIPT,
            "reply": EventKind.LLM_TOKEN,
            "bot_stopped": EventKind.BOT_STOPPED,
            "error": EventKind.ERROR,
        }.get(kind)
        if event is not None:
            self.text_chars += len(text)
            if self.text_chars > MAX_TEXT_CHARS:
                self.exceed(f"more than {MAX_TEXT_CHARS:,} characters of text in one turn")
                return
            self.note(TurnEvent(event, now, text))

    def note(self, event: TurnEvent) -> None:
        if len(self.events) >= MAX_EVENTS:
            self.exceed(f"more than {MAX_EVENTS:,} messages in one turn")
            return
        self.events.append(event)
        self.news.set()

    def exceed(self, what: str) -> None:
        """The agent went past a cap: note which, and keep nothing more of this turn."""
        self.over = f"the agent sent {what}; the turn was ended there"
        self.tape, self.recorded = Tape(self.rate), 0
        self.news.set()

    def play(self, audio: bytes, now: int) -> None:
        pcm = np.frombuffer(audio[: len(audio) // 2 * 2], dtype=np.int16)
        if pcm.size == 0:
            return
        start = self.playout.place(now, pcm.size, self.rate)
        ahead_s = (self.playout.next_free_ns - now) / NS_PER_S
        if ahead_s * self.rate > self.max_recorded:
            self.exceed(
                f"{ahead_s:,.0f} s of audio ahead of what has played (more than the turn "
                "timeout's worth)"
            )
            return
        onset = self.audible.add(start, pcm, self.rate)
        if len(self.audible.spans) > MAX_EVENTS:
            self.exceed(f"more than {MAX_EVENTS:,} stretches of sound in one turn")
            return
        if onset is not None:
            self.note(TurnEvent(EventKind.AUDIO_OUT, onset))
        self.recorded += pcm.size
        if self.recorded > self.max_recorded:
            self.exceed(
                f"more than {self.max_recorded / self.rate:g} s of audio (the turn timeout's worth)"
            )
            return
        self.tape.add(start, pcm)
        if self.audible.spans and self.audible.spans[-1][1] > start:
            # this chunk was audible: quiet is measured from the last audible audio
            self.last_audio_end_ns = self.playout.next_free_ns

    def clear(self, now: int) -> None:
        """The agent's ``clear``: what is queued and not yet played is dropped now, as the
        platform drops it, and every mark waiting on it is returned."""
        if self.playout.next_free_ns > now:
            self.tape.cut(now)
            self.recorded = self.tape.samples
        self.playout.next_free_ns = min(self.playout.next_free_ns, now)
        self.audible.cut(now)
        self.events = [
            e for e in self.events if not (e.kind is EventKind.AUDIO_OUT and e.ns >= now)
        ]
        self.events.append(TurnEvent(EventKind.AUDIO_CUT, now))
        self.news.set()
        self.last_audio_end_ns = min(self.last_audio_end_ns, now)
        for name, handle in list(self.marks.items()):
            handle.cancel()
            self.ack(name)

    def mark(self, name: str, now: int) -> None:
        """The agent's ``mark``: returned once the audio queued before it has played."""
        due = self.playout.next_free_ns - now
        if due <= 0:
            self.ack(name)
            return
        old = self.marks.pop(name, None)
        if old is not None:
            old.cancel()
        elif len(self.marks) >= MAX_MARKS:
            self.exceed(f"more than {MAX_MARKS:,} marks waiting at once")
            return
        self.marks[name] = asyncio.get_running_loop().call_later(due / NS_PER_S, self.ack, name)

    def ack(self, name: str) -> None:
        self.marks.pop(name, None)
        if isinstance(self.codec, TelephonyCaller):
            self.send(self.codec.mark(name))

    def new_turn(self, start_ns: int, speech_end_ns: int, *, asked_ns: int | None = None) -> None:
        """A turn started at ``start_ns``: forget what came before it, and record from the end
        of the caller's speech. An error the agent sent after the turn was asked of it at
        ``asked_ns`` (its context sent), before the caller's first sound, is this turn's."""
        self.listening_since = speech_end_ns
        since = start_ns if asked_ns is None else min(asked_ns, start_ns)
        self.events = [
            e
            for e in self.events
            if e.ns >= start_ns or (e.kind is EventKind.ERROR and e.ns >= since)
        ]
        self.audible.forget_before(start_ns)
        self.over = None

    def start_recording(self, timeout_s: float) -> None:
        """Keep what is heard from now on, at most ``timeout_s`` worth."""
        self.tape, self.recorded, self.text_chars = Tape(self.rate), 0, 0
        self.max_recorded = int(timeout_s * self.rate)

    def close(self) -> None:
        for handle in self.marks.values():
            handle.cancel()
        self.marks.clear()
