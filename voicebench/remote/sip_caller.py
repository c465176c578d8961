"""A voice agent called over SIP, as a phone line calls it (``[remote] protocol = "sip"``, or
``--agent sip:USER@HOST[:PORT]``).

One call a run, like every caller's: an INVITE (``voicebench.remote.sip``: through an
outbound proxy when ``[remote.sip] proxy`` names one, with digest credentials named by
environment variables), then G.711 over RTP both ways (``voicebench.remote.rtp``), BYE at the
end. The microphone is the same real-time one as every caller's: each 20 ms frame leaves, as
one RTP packet, once its 20 ms have been recorded, so the true end of speech is placed as it
always is; silence between utterances is sent as audio, as a phone sends it. What the agent
sends goes through a phone's fixed jitter buffer (``voicebench.remote.jitter``, ``jitter_ms``
deep: 40 ms unless the spec says otherwise) and reaches the loudspeaker when the buffer plays
it: that is when the caller hears it, so TTFA includes the buffer's depth, as it does on a
phone. Each packet's arrival is the kernel's stamp.

The caller listens from the first SDP that names the agent's media: a 183 Session Progress
with SDP (early media) as much as the 200 OK. What the agent plays before it answers (an IVR's
greeting) is the call's opening (``hear_opening``, ``voicebench.runlog.openings``), heard to
its end before the first turn is spoken and timed from the INVITE. A re-INVITE from the agent
is answered (``voicebench.remote.sip_sdp``): where it moves the agent's media, the RTP goes
from then on, and the turn goes on.

A call that does not start fails the run's turns with its SIP status: ``busy`` (486, 600),
``sip_rejected`` (any other final answer of 300-699, after the challenges are answered),
``no_answer`` (no final answer within ``connect_timeout_secs``); an agent that hangs up
mid-turn is ``closed_mid_turn``, and one whose call is answered but sends no RTP in a turn's
time is ``one_way_audio``. The password never appears in a reason.

An IVR in front of the agent (``[[remote.sip.ivr]]``) is gone through in the opening: each
menu's prompt heard out, then its digits pressed as RFC 4733 events; a prompt that never comes
fails the call as ``ivr_no_prompt``.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from typing import Any

import numpy as np

from voicebench.agent.interface import PLAIN, HeardTurn, TurnCue
from voicebench.agent.realtime import FIXTURE_RATE, FRAME_NS, NS_PER_S
from voicebench.agentspec import AgentSpec
from voicebench.budgets import TURN_TIMEOUT_S
from voicebench.errors import redact
from voicebench.remote.caller import RemoteAgent
from voicebench.remote.jitter import JitterBuffer
from voicebench.remote.rtp import RtpPacket, RtpSession
from voicebench.remote.sip import SipFailure, SipLine, SipTarget
from voicebench.remote.sip_sdp import MediaAnswer, point
from voicebench.remote.sip_stream import local_address_for, tls_context
from voicebench.remotespec import IvrStep, SipSettings
from voicebench.runlog import ScenarioOutcome, TurnError
from voicebench.timing import EventKind

DIGIT_MS = 100
"""How long an IVR menu's key is held (RFC 4733 events; a person's press is 100-200 ms)."""
DIGIT_GAP_MS = 100
"""The pause between two keys of a menu."""


class SipAgent(RemoteAgent):
    """``async with SipAgent(spec) as agent``: one SIP call for a run."""

    def __init__(self, spec: AgentSpec, *, clock=time.perf_counter_ns) -> None:
        super().__init__(spec, clock=clock)
        self.settings = self.remote.sip or SipSettings()
        self.jitter = JitterBuffer(self.remote.jitter_ms)
        self.received = 0
        """Packets of the agent's audio received in the call."""
        self._line: SipLine | None = None
        self._rtp: RtpSession | None = None
        self._arrived = asyncio.Event()
        self._hung_up_by_agent = False
        self._dialled_ns = 0
        """When the INVITE left: the call's opening is timed from it."""
        self._early = 0
        self._opened = False
        """Whether the call's opening (its early media, its IVR menus) has been heard."""
        """Packets of the agent's audio that came before it answered."""

    async def __aenter__(self) -> SipAgent:
        user, password = self.settings.credentials()
        self._secrets = (password,) if password else ()
        sips = self.remote.url.startswith("sips:")
        over = "tls" if sips else self.settings.transport
        target = SipTarget.parse(self.remote.url, tls=over == "tls")
        via = None
        if self.settings.proxy is not None:
            host, _, port = self.settings.proxy.rpartition(":")
            via = (host, int(port))
        try:
            # this machine's address on the way to the agent (or its proxy): what it reaches
            local = local_address_for(*(via or (target.host, target.port)))
        except OSError as exc:
            self._failure = TurnError(
                kind="connection_refused", reason=f"{self.remote.url}: {exc.strerror or exc}"
            )
            return self
        self._rtp = RtpSession(host=local, on_packet=self._heard)
        tls = tls_context(self.settings.tls_ca_file) if over == "tls" else None
        line = SipLine(host=local, on_media=self._point, transport=over, tls=tls, sips=sips)
        self._line = await line.__aenter__()
        # what it plays before it answers (early media) is heard, and kept for the opening
        self._dialled_ns = self.clock()
        self._speaker.start_recording(TURN_TIMEOUT_S + self._menus_s())
        self._speaker.new_turn(self._dialled_ns, self._dialled_ns)
        self._tasks = [asyncio.create_task(self._play())]
        try:
            media = await self._line.dial(
                target,
                rtp_port=self._rtp.local_port,
                codecs=self.settings.codecs,
                via=via,
                username=user,
                password=password,
                timeout_s=self.remote.connect_timeout_secs,
            )
        except (SipFailure, OSError) as exc:
            kind = exc.kind if isinstance(exc, SipFailure) else "connection_refused"
            reason = exc.reason if isinstance(exc, SipFailure) else f"{self.remote.url}: {exc}"
            self._failure = TurnError(kind=kind, reason=redact(reason, *self._secrets))
            return self
        self._early = self.received
        try:
            self._point(media)
        except ValueError as exc:  # (an address not IPv4, a port out of range)
            self._line.hang_up()
            self._failure = TurnError(kind="sip_rejected", reason=f"{self.remote.url}: {exc}")
            return self
        self._ws = self._line  # (what the caller checks to know the agent answered)
        self._tasks += [
            asyncio.create_task(self._pace()),
            asyncio.create_task(self._watch_line()),
        ]
        return self

    def _point(self, media: MediaAnswer) -> None:
        """Send (and take) the call's RTP where the agent's SDP says: its early media, its
        answer, a re-INVITE's."""
        assert self._rtp is not None
        point(self._rtp, media)

    async def __aexit__(self, *exc: object) -> None:
        await self._stop_listening()
        if self._line is not None:
            with contextlib.suppress(Exception):
                await self._line.__aexit__(None, None, None)
        if self._rtp is not None:
            self._rtp.close()

    # The loudspeaker, through the jitter buffer ----------------------------------------------

    def _heard(self, packet: RtpPacket) -> None:
        self.received += 1
        self.jitter.push(packet)
        self._arrived.set()

    async def _play(self) -> None:
        """Hand the loudspeaker each packet when the jitter buffer plays it."""
        while True:
            due = self.jitter.next_ns
            if due is None:
                await self._arrived.wait()
                self._arrived.clear()
                continue
            wait_s = (due - time.perf_counter_ns()) / NS_PER_S
            if wait_s > 0:
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(wait_s):
                        await self._arrived.wait()  # (an earlier packet may come meanwhile)
                self._arrived.clear()
                continue
            now = time.perf_counter_ns()
            for pcm, play_ns in self.jitter.pop(now):
                self._speaker.hear(pcm.astype(np.int16).tobytes(), self.clock() - (now - play_ns))

    async def _watch_line(self) -> None:
        assert self._line is not None
        await self._line.ended.wait()
        self._hung_up_by_agent = True
        # what the jitter buffer holds was sent before the BYE: it still plays
        while (due := self.jitter.next_ns) is not None:
            await asyncio.sleep(max(0, due - time.perf_counter_ns()) / NS_PER_S + 0.001)
        self._closed.set()
        self._speaker.news.set()

    # The microphone, as RTP ----------------------------------------------------------------

    async def _pace(self) -> None:
        assert self._rtp is not None
        origin = self.clock()
        k = 0
        while not self._closed.is_set():
            window_start = origin + k * FRAME_NS
            frame = self._mic.frame(window_start)
            delay = (window_start + FRAME_NS - self.clock()) / NS_PER_S
            if delay > 0:
                await asyncio.sleep(delay)
            self._rtp.send_frame(frame)
            k += 1

    async def _send_all(self, messages: list[str | bytes]) -> bool:
        return not self._closed.is_set()  # nothing but audio goes over the call

    def _send_soon(self, message: str) -> None:
        return None

    async def speak(
        self,
        history: list[dict[str, str]],
        pcm: np.ndarray,
        speech_end_sample: int,
        *,
        timeout_s: float = TURN_TIMEOUT_S,
        cue: TurnCue = PLAIN,
    ) -> HeardTurn:
        if not self._opened:  # (a caller that does not ask for the opening still goes
            await self.hear_opening()  # through the menus before it speaks)
        heard = await super().speak(history, pcm, speech_end_sample, timeout_s=timeout_s, cue=cue)
        if heard.timed_out and heard.failure is None and self.received == 0:
            # nothing at all came back on the call: one-way audio, not a slow agent
            failure = TurnError(
                kind="one_way_audio",
                reason=f"{self.remote.url}: the call was answered but no RTP came from the agent",
            )
            return dataclasses.replace(heard, failure=failure)
        return heard

    async def hear_opening(self) -> HeardTurn | None:
        """What the agent played before it answered (early media), heard to its end, and with
        ``[[remote.sip.ivr]]`` menus, each prompt heard out and its digits pressed, then
        whatever follows the last press: the call's opening, timed from the INVITE; None when
        nothing audible played and no menu was asked for."""
        menus = self.settings.ivr
        if self._opened or self._failure is not None or (self._early == 0 and not menus):
            self._opened = True
            return None
        self._opened = True
        speaker = self._speaker
        deadline = self._dialled_ns + int((TURN_TIMEOUT_S + self._menus_s()) * NS_PER_S)
        outcome, failure = None, None
        if menus:
            outcome, failure, pressed = await self._go_through(menus, deadline)
            if failure is None:  # a greeting after the last press is heard out, if it starts
                quiet_ns = int(self.remote.quiet_secs * NS_PER_S)
                await self._prompt_after(pressed, self.clock() + quiet_ns)
        if failure is None:
            now = await self._heard_out(deadline)
        else:
            self._failure, now = failure, self.clock()
        if not any(e.kind is EventKind.AUDIO_OUT for e in speaker.events) and not menus:
            return None
        audio, placed = speaker.tape.take(self._dialled_ns, FIXTURE_RATE)
        return HeardTurn(
            speech_end_ns=self._dialled_ns,
            events=tuple(speaker.events),
            audio=audio,
            timed_out=now >= deadline,
            failure=failure,
            black_box=True,
            start_ns=self._dialled_ns,
            played=speaker.audible.since(self._dialled_ns),
            ended_ns=now,
            placed=placed,
            scenario=outcome,
        )

    def _menus_s(self) -> float:
        """The longest the IVR menus may wait for their prompts, all together."""
        return sum(step.wait_secs for step in self.settings.ivr)

    async def _heard_out(self, deadline: int) -> int:
        """Wait until what plays has ended: the jitter buffer empty and ``quiet_secs`` with no
        audible audio (at once if none is coming). When that was."""
        speaker, quiet_ns = self._speaker, int(self.remote.quiet_secs * NS_PER_S)
        while (now := self.clock()) < deadline and not self._closed.is_set():
            if self.jitter.next_ns is None and now - speaker.last_audio_end_ns > quiet_ns:
                break
            await asyncio.sleep(0.02)
        return now

    async def _go_through(
        self, menus: tuple[IvrStep, ...], deadline: int
    ) -> tuple[ScenarioOutcome, TurnError | None, int]:
        """Each menu's prompt heard out, then its digits pressed (RFC 4733, ``DIGIT_MS`` each,
        ``DIGIT_GAP_MS`` apart): what was done, the failure where a prompt never came, and when
        the last key was let go."""
        assert self._rtp is not None
        prompts: list[float] = []
        pressed: list[float] = []
        failure = None
        since = self._dialled_ns  # (the first prompt may come as early media)
        for n, step in enumerate(menus, 1):
            menu = f"{self.remote.url}: IVR menu {n} of {len(menus)}"
            began = await self._prompt_after(since, self.clock() + int(step.wait_secs * NS_PER_S))
            if began is None and self._closed.is_set():
                note = f"{menu}: the call ended before its prompt{self._close_note()}"
                failure = TurnError(kind="closed_mid_turn", reason=note)
                break
            if began is None:
                note = f"{menu}: no prompt within {step.wait_secs:g} s"
                failure = TurnError(kind="ivr_no_prompt", reason=note)
                break
            prompts.append(round((began - self._dialled_ns) / 1e6, 1))
            await self._heard_out(deadline)
            if not self._rtp.takes_digits:  # (its answer named no telephone-event type)
                note = f"{menu}: the agent takes no RFC 4733 telephone events (no key pressed)"
                failure = TurnError(kind="ivr_no_dtmf", reason=note)
                break
            try:
                for digit in step.digits:
                    released = await self._rtp.send_dtmf(digit, DIGIT_MS)
                    since = self.clock() - (time.perf_counter_ns() - released)
                    await asyncio.sleep(DIGIT_GAP_MS / 1000)
            except RuntimeError as exc:  # (the call's media closed under it)
                failure = TurnError(kind="closed_mid_turn", reason=f"{menu}: {exc}")
                break
            pressed.append(round((since - self._dialled_ns) / 1e6, 1))
        params: dict[str, float | str] = {"digits": " ".join(s.digits for s in menus)}
        outcome = ScenarioOutcome(
            name="ivr", params=params, prompts_ms=tuple(prompts), pressed_ms=tuple(pressed)
        )
        return outcome, failure, since

    async def _prompt_after(self, since: int, until: int) -> int | None:
        """When the first audible audio after ``since`` began to play; None if none began by
        ``until`` (or the call ended)."""
        while not self._closed.is_set():
            later = [start for start, _end in self._speaker.audible.spans if start > since]
            if later:
                return later[0]
            if self.clock() >= until:
                return None
            await asyncio.sleep(0.02)
        return None

    def _close_note(self) -> str:
        return " (it sent BYE)" if self._hung_up_by_agent else ""

    @property
    def line(self) -> Any:
        """The call's signalling (``SipLine``): its statuses, its early media."""
        return self._line
