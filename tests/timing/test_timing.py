"""Timing: milestones from events, on an injected clock, with exact values."""

from __future__ import annotations

from pipecat.frames.frames import (
    BotStoppedSpeakingFrame,
    LLMFullResponseEndFrame,
    LLMFullResponseStartFrame,
    LLMTextFrame,
    TranscriptionFrame,
    TTSAudioRawFrame,
    TTSStartedFrame,
    VADUserStoppedSpeakingFrame,
)
from pipecat.observers.base_observer import FramePushed
from pipecat.processors.frame_processor import FrameDirection

from voicebench.timing import (
    STAGE_NAMES,
    EventKind,
    RunClock,
    TimingObserver,
    TurnEvent,
    TurnTiming,
    derive_timing,
    reply_text,
    user_transcript,
)

MS = 1_000_000


class FakeClock:
    """A settable ns counter injected into RunClock."""

    def __init__(self, start: int = 10_000 * MS) -> None:
        self.now = start

    def __call__(self) -> int:
        return self.now


def ev(kind: EventKind, ms: float, text: str = "") -> TurnEvent:
    return TurnEvent(kind, int(ms * MS), text)


def test_run_clock_reads_the_injected_counter_and_is_not_reset_by_start():
    fake = FakeClock(123 * MS)
    clock = RunClock(fake)
    clock.start()
    assert clock.get_time() == 123 * MS
    fake.now += 7
    assert clock.get_time() == 123 * MS + 7


def test_ttft_ttfa_and_waterfall_are_exact():
    t = TurnTiming(
        speech_end_ns=1000 * MS,
        vad_stop_ns=1600 * MS,
        transcript_ns=2050 * MS,
        llm_request_ns=2051 * MS,
        llm_first_token_ns=2351 * MS,
        llm_release_ns=2371 * MS,
        tts_request_ns=2411 * MS,
        tts_first_audio_ns=2466 * MS,
        audio_out_ns=2519 * MS,
    )
    assert t.ttft_ms == 300.0
    assert t.ttfa_ms == 1519.0
    assert t.stages_ms == {
        "endpointing": 600.0,
        "asr": 450.0,
        "turn_end": 1.0,
        "model_audio": None,  # a speech-to-speech model's stage
        "llm_ttft": 300.0,
        "turn_hold": 20.0,
        "text_aggregation": 40.0,
        "tts_first_audio": 55.0,
        "audio_hold": None,  # the text was what was held
        "output": 53.0,
    }
    assert sum(v for v in t.stages_ns().values() if v) == t.audio_out_ns - t.speech_end_ns
    # The same turn with the audio held instead: made at 2,466 ms, released at 2,500 ms.
    held = t.model_copy(update={"llm_release_ns": 2351 * MS, "audio_release_ns": 2500 * MS})
    assert held.ttfa_ms == 1519.0
    assert held.stages_ms["turn_hold"] == 0.0
    assert held.stages_ms["text_aggregation"] == 60.0
    assert (held.stages_ms["audio_hold"], held.stages_ms["output"]) == (34.0, 19.0)
    assert (
        sum(v for v in held.stages_ns().values() if v is not None)
        == held.audio_out_ns - held.speech_end_ns
    )


def test_waterfall_is_monotone_and_still_sums_to_ttfa_when_milestones_overlap():
    # The transcript arrives before the VAD stop is seen: no negative stage.
    t = TurnTiming(
        speech_end_ns=0,
        vad_stop_ns=500 * MS,
        transcript_ns=400 * MS,
        llm_request_ns=600 * MS,
        llm_first_token_ns=900 * MS,
        llm_release_ns=900 * MS,
        tts_request_ns=950 * MS,
        tts_first_audio_ns=1000 * MS,
        audio_out_ns=1100 * MS,
    )
    stages = t.stages_ns()
    assert stages["asr"] == 0
    assert stages.pop("audio_hold") is None
    assert stages.pop("model_audio") is None
    assert all(v is not None and v >= 0 for v in stages.values())
    assert sum(stages.values()) == 1100 * MS


def test_missing_milestone_leaves_its_stage_empty_and_the_next_stage_absorbs_it():
    t = TurnTiming(
        speech_end_ns=0,
        vad_stop_ns=500 * MS,
        transcript_ns=900 * MS,
        llm_request_ns=901 * MS,
        llm_first_token_ns=1201 * MS,
        tts_request_ns=None,
        tts_first_audio_ns=1300 * MS,
        audio_out_ns=1350 * MS,
    )
    stages = t.stages_ms
    assert stages["text_aggregation"] is None
    assert stages["tts_first_audio"] == 99.0
    assert sum(v for v in stages.values() if v is not None) == t.ttfa_ms == 1350.0


def test_no_audio_means_no_ttfa_and_no_waterfall():
    t = TurnTiming(speech_end_ns=0, llm_request_ns=10 * MS, llm_first_token_ns=20 * MS)
    assert t.ttfa_ms is None
    assert t.ttft_ms == 10.0
    assert set(t.stages_ms) == set(STAGE_NAMES)
    assert all(v is None for v in t.stages_ms.values())


def test_derive_timing_times_the_request_whose_reply_was_heard():
    # A comma pause ended the turn early: the first request was cancelled and redone.
    events = [
        ev(EventKind.VAD_STOP, 900),
        ev(EventKind.TRANSCRIPT, 1300, "I feel lost,"),
        ev(EventKind.LLM_REQUEST, 1301),
        ev(EventKind.VAD_STOP, 2600),
        ev(EventKind.TRANSCRIPT, 3000, "and nobody listens."),
        ev(EventKind.LLM_REQUEST, 3002),
        ev(EventKind.LLM_TOKEN, 3302, "That "),
        ev(EventKind.LLM_TOKEN, 3312, "hurts."),
        ev(EventKind.LLM_END, 3320),
        ev(EventKind.TTS_REQUEST, 3330),
        ev(EventKind.TTS_AUDIO, 3400),
        ev(EventKind.AUDIO_OUT, 3450),
        ev(EventKind.BOT_STOPPED, 5000),
    ]
    t = derive_timing(list(reversed(events)), speech_end_ns=2100 * MS)
    assert t.vad_stop_ns == 2600 * MS
    assert t.transcript_ns == 3000 * MS
    assert t.llm_request_ns == 3002 * MS
    assert t.ttft_ms == 300.0
    assert t.ttfa_ms == 1350.0
    assert user_transcript(events, t) == "I feel lost, and nobody listens."
    assert reply_text(events, t) == "That hurts."


def _push(frame, ts: int) -> FramePushed:
    return FramePushed(
        source=None,
        destination=None,
        frame=frame,
        direction=FrameDirection.DOWNSTREAM,
        timestamp=ts,
    )


async def test_observer_stamps_events_with_the_push_time_not_its_own():
    obs = TimingObserver()
    assert obs.observe_every_push is False
    audio = TTSAudioRawFrame(audio=b"\x00\x00" * 160, sample_rate=16000, num_channels=1)
    pushes = [
        (VADUserStoppedSpeakingFrame(), 1600),
        (TranscriptionFrame("I lost my job.", "", "t"), 2050),
        (LLMFullResponseStartFrame(), 2051),
        (LLMTextFrame("I'm "), 2351),
        (LLMTextFrame("sorry."), 2361),
        (LLMFullResponseEndFrame(), 2370),
        (TTSStartedFrame(), 2411),
        (audio, 2466),
        (BotStoppedSpeakingFrame(), 6000),
    ]
    for frame, ms in pushes:
        await obs.on_push_frame(_push(frame, ms * MS))
    obs.record(EventKind.AUDIO_OUT, 2519 * MS)
    t = derive_timing(obs.since(0), speech_end_ns=1000 * MS)
    assert (t.ttft_ms, t.ttfa_ms) == (300.0, 1519.0)
    assert t.stages_ms["output"] == 53.0
    assert reply_text(obs.events, t) == "I'm sorry."
    assert [e.kind for e in obs.since(2400 * MS)] == [
        EventKind.TTS_REQUEST,
        EventKind.TTS_AUDIO,
        EventKind.AUDIO_OUT,
        EventKind.BOT_STOPPED,
    ]


async def test_a_retracted_frame_stays_retracted_even_when_its_push_is_seen_late():
    # Observers run in their own tasks: a frame may be dropped (and retracted) before its push
    # reaches the observer. Earlier turns are let go of at a turn's start.
    obs = TimingObserver()
    old, dropped, kept = LLMTextFrame("old"), LLMTextFrame("never heard"), LLMTextFrame("Oh.")
    await obs.on_push_frame(_push(old, 100 * MS))
    obs.retract([dropped])
    await obs.on_push_frame(_push(dropped, 1200 * MS))
    await obs.on_push_frame(_push(kept, 1300 * MS))
    assert [e.text for e in obs.since(0)] == ["old", "Oh."]
    obs.forget_before(1000 * MS)
    assert [e.text for e in obs.events] == ["Oh."]
    assert [e.text for e in obs.since(0)] == ["Oh."]


def test_request_time_is_when_the_http_request_left_when_the_client_reports_it():
    events = [
        ev(EventKind.TRANSCRIPT, 1000, "I lost my job."),
        ev(EventKind.LLM_REQUEST, 1001),
        ev(EventKind.LLM_SENT, 1003.5),
        ev(EventKind.LLM_TOKEN, 1303.5, "Oh."),
        ev(EventKind.AUDIO_OUT, 1500),
    ]
    t = derive_timing(events, speech_end_ns=0)
    assert t.llm_request_ns == int(1003.5 * MS)

    assert t.ttft_ms == 300.0
    assert t.stages_ms["turn_end"] == 3.5
    # Without the wire stamp, the pipeline's request frame is the request time.
    t2 = derive_timing([e for e in events if e.kind is not EventKind.LLM_SENT], speech_end_ns=0)
    assert t2.llm_request_ns == 1001 * MS and t2.ttft_ms == 302.5


def test_a_held_first_token_is_timed_when_it_arrived_and_the_hold_is_its_own_stage():
    # Speculation: the LLM is asked at the early VAD stop, its first token arrives 250 ms
    # later and is held until the turn is confirmed at 2,000 ms; a withdrawn earlier guess
    # left its own events behind.
    events = [
        ev(EventKind.VAD_STOP, 900),
        ev(EventKind.TRANSCRIPT, 1200, "I feel lost"),
        ev(EventKind.LLM_SENT, 1201),
        ev(EventKind.LLM_TOKEN_RECEIVED, 1451),
        ev(EventKind.LLM_REQUEST, 2000),
        ev(EventKind.LLM_TOKEN, 2000, "That "),
        ev(EventKind.LLM_TOKEN, 2000, "hurts."),
        ev(EventKind.LLM_END, 2000),
        ev(EventKind.TTS_REQUEST, 2010),
        ev(EventKind.TTS_AUDIO, 2200),
        ev(EventKind.AUDIO_OUT, 2220),
    ]
    t = derive_timing(events, speech_end_ns=700 * MS)
    assert t.llm_request_ns == 1201 * MS and t.ttft_ms == 250.0
    assert t.stages_ms["llm_ttft"] == 250.0 and t.stages_ms["turn_hold"] == 549.0
    assert t.stages_ms["text_aggregation"] == 10.0
    assert (
        sum(v for v in t.stages_ns().values() if v is not None) == t.audio_out_ns - t.speech_end_ns
    )
    # Without the arrival event (a service that reports no metrics) nothing is held apart.
    plain = derive_timing(
        [e for e in events if e.kind is not EventKind.LLM_TOKEN_RECEIVED], speech_end_ns=700 * MS
    )
    assert plain.ttft_ms == 799.0 and plain.stages_ms["turn_hold"] == 0.0


def test_a_run_log_of_schema_1_still_loads_with_no_hold_stage():
    t = TurnTiming.model_validate(
        {
            "speech_end_ns": 0,
            "llm_request_ns": 100 * MS,
            "llm_first_token_ns": 400 * MS,
            "tts_request_ns": 450 * MS,
            "audio_out_ns": 600 * MS,
        }
    )
    assert t.ttft_ms == 300.0 and t.stages_ms["turn_hold"] is None
    assert sum(v for v in t.stages_ms.values() if v is not None) == t.ttfa_ms
