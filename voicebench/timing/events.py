"""Turn events and how a turn's milestones are read from them.

The observer records what it sees as ``TurnEvent``s (kind, clock reading, text). One turn's
events are those from the moment its audio started playing until the next turn starts.
``derive_timing`` picks the milestones out of them. Retried or cancelled LLM calls leave
extra events behind; the rule is to time the LLM request whose reply was actually heard:

- ``audio_out``: the first audible bot sample after the anchor.
- ``llm_request``: the last LLM request started before that sample (or the last one at all
  when nothing was heard); its time is when the HTTP request left (``llm_sent``, stamped by
  the client's request hook) when the provider reports it, else when the pipeline asked. A
  speculative reply (``[turn] speculate``) is held until the turn end confirms it, so its
  send precedes the reply's start: then it is the last send before the first released token.
- ``llm_release``: the first token released to the speaker after that request.
- ``llm_first_token``: the first answer token *received* from the provider for that request,
  at or before the release: when its bytes reached the socket (``llm_token_arrived``, the
  kernel's arrival stamp, ``voicebench.llm.arrival``) where the client stamps arrivals; else
  when the LLM service reported it (``llm_token_received``: its time-to-first-answer-token
  metrics frame, pushed as the token is parsed and never held); else the release itself.
  The difference is the ``turn_hold``.
- ``vad_stop`` / ``transcript``: the last VAD stop / transcript before that request.
- ``tts_request`` / ``tts_first_audio``: the first TTS start / audio frame after the first token.
- ``audio_release``: the first release of audio after that frame, no later than the audible
  sample (only an agent that holds audio records releases).
A reply dropped unheard (its audio held, then withdrawn) has had its events taken back
(``TimingObserver.retract``), so it is never the one timed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from voicebench.timing.models import TurnTiming


class EventKind(StrEnum):
    VAD_START = "vad_start"
    VAD_STOP = "vad_stop"
    TRANSCRIPT = "transcript"
    LLM_REQUEST = "llm_request"
    LLM_SENT = "llm_sent"
    LLM_TOKEN = "llm_token"
    """A token released downstream (held ones are pushed when the turn is confirmed)."""
    LLM_TOKEN_RECEIVED = "llm_token_received"
    """The LLM service reported the first answer token (parsed, held or not)."""
    LLM_TOKEN_ARRIVED = "llm_token_arrived"
    """The first answer token's bytes reached the client's socket (kernel arrival stamp)."""
    LLM_END = "llm_end"
    TTS_REQUEST = "tts_request"
    TTS_AUDIO = "tts_audio"
    AUDIO_RELEASE = "audio_release"
    """A reply's first audio went on to the speaker (``[turn] hold = "audio"``): at once, or
    when the turn end confirmed a speculative reply whose audio was held."""
    MODEL_AUDIO = "model_audio"
    """A speech-to-speech model began an answer's audio (its first audio of a response)."""
    AUDIO_OUT = "audio_out"
    """The first audible sample of a talk the agent began (``replay.realtime.Audible``)."""
    AUDIO_CUT = "audio_cut"
    """An interruption reached the loudspeaker: what was queued is dropped (in-process)."""
    BOT_STOPPED = "bot_stopped"
    ERROR = "error"


@dataclass(frozen=True, slots=True)
class TurnEvent:
    """Something the observer saw, stamped on the run's clock."""

    kind: EventKind
    ns: int
    text: str = ""
    source: str = ""
    """For an error: the stage that raised it (``asr``, ``llm``, ``tts``), empty if unknown."""
    frame_id: int | None = field(default=None, compare=False)
    """The pipecat frame that was seen, so a reply dropped later can be taken back."""


def _last(events: Sequence[TurnEvent], kind: EventKind, before: int | None) -> TurnEvent | None:
    found = None
    for e in events:
        if e.kind is kind and (before is None or e.ns <= before):
            found = e
    return found


def _first(events: Sequence[TurnEvent], kind: EventKind, after: int | None) -> TurnEvent | None:
    for e in events:
        if e.kind is kind and (after is None or e.ns >= after):
            return e
    return None


def derive_timing(events: Sequence[TurnEvent], speech_end_ns: int) -> TurnTiming:
    """The milestones of one turn (events in clock order)."""
    events = sorted(events, key=lambda e: e.ns)
    audio = _first(events, EventKind.AUDIO_OUT, speech_end_ns)
    if any(e.kind is EventKind.MODEL_AUDIO for e in events):
        return _speech_to_speech(events, speech_end_ns, audio)
    request = _last(events, EventKind.LLM_REQUEST, audio.ns if audio else None)
    token = _first(events, EventKind.LLM_TOKEN, request.ns) if request else None
    sent = None
    if request is not None:
        sent = _first(events, EventKind.LLM_SENT, request.ns)
        if token is not None and (sent is None or sent.ns > token.ns):
            # A speculative reply is held until the turn end confirms it, so its request
            # left before the reply's start was pushed: the last send before its first token.
            sent = _last(events, EventKind.LLM_SENT, token.ns)
    if sent is not None and (token is None or sent.ns <= token.ns):
        request = sent
    first_token = token
    for kind in (EventKind.LLM_TOKEN_RECEIVED, EventKind.LLM_TOKEN_ARRIVED):  # worst to best
        received = _first(events, kind, request.ns) if request else None
        if received is not None and (token is None or received.ns <= token.ns):
            first_token = received  # (one after the release is a later inference's)
    limit = request.ns if request else None
    vad = _last(events, EventKind.VAD_STOP, limit)
    transcript = _last(events, EventKind.TRANSCRIPT, limit)
    tts_req = _first(events, EventKind.TTS_REQUEST, token.ns) if token else None
    tts_audio = _first(events, EventKind.TTS_AUDIO, token.ns) if token else None
    release = _first(events, EventKind.AUDIO_RELEASE, tts_audio.ns) if tts_audio else None
    if release is not None and audio is not None and release.ns > audio.ns:
        release = None
    return TurnTiming(
        speech_end_ns=speech_end_ns,
        vad_stop_ns=vad.ns if vad else None,
        transcript_ns=transcript.ns if transcript else None,
        llm_request_ns=request.ns if request else None,
        llm_first_token_ns=first_token.ns if first_token else None,
        llm_release_ns=token.ns if token else None,
        tts_request_ns=tts_req.ns if tts_req else None,
        tts_first_audio_ns=tts_audio.ns if tts_audio else None,
        audio_release_ns=release.ns if release else None,
        audio_out_ns=audio.ns if audio else None,
    )


def _speech_to_speech(
    events: Sequence[TurnEvent], speech_end_ns: int, audio: TurnEvent | None
) -> TurnTiming:
    """A speech-to-speech model's turn: the response heard is the last one whose audio began
    before the first audible sample; the answer asked for (``llm_request``, local turn
    detection only) and the end of the turn (``vad_stop``) are the last before it."""
    model = _last(events, EventKind.MODEL_AUDIO, audio.ns if audio else None)
    limit = model.ns if model else None
    request = _last(events, EventKind.LLM_REQUEST, limit)
    vad = _last(events, EventKind.VAD_STOP, request.ns if request else limit)
    return TurnTiming(
        speech_end_ns=speech_end_ns,
        vad_stop_ns=vad.ns if vad else None,
        llm_request_ns=request.ns if request else None,
        model_audio_ns=model.ns if model else None,
        audio_out_ns=audio.ns if audio else None,
    )


def user_transcript(events: Sequence[TurnEvent], timing: TurnTiming) -> str:
    """What the ASR heard this turn: every transcript up to the timed LLM request."""
    limit = timing.llm_request_ns
    parts = [
        e.text.strip()
        for e in sorted(events, key=lambda e: e.ns)
        if e.kind is EventKind.TRANSCRIPT and (limit is None or e.ns <= limit)
    ]
    return " ".join(p for p in parts if p)


def reply_text(events: Sequence[TurnEvent], timing: TurnTiming) -> str:
    """The LLM's reply to the timed request, up to its end (a speech-to-speech model's: the
    transcript of its answer's audio, as the model reported it, from the end of the turn)."""
    if timing.model_audio_ns is not None:
        since = min(t for t in (timing.vad_stop_ns, timing.model_audio_ns) if t is not None)
        timing = timing.model_copy(update={"llm_request_ns": since})
    if timing.llm_request_ns is None:
        return ""
    out: list[str] = []
    for e in sorted(events, key=lambda e: e.ns):
        if e.ns < timing.llm_request_ns:
            continue
        if e.kind is EventKind.LLM_END:
            break
        if e.kind is EventKind.LLM_TOKEN:
            out.append(e.text)
    return "".join(out).strip()
