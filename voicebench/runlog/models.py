"""The run log: the only input of every later stage (judging, ratings, reports).

A run directory holds::

    run.json       RunHeader: what was run, with which agent spec, on which dialogues
    turns.jsonl    one TurnRecord per line, appended and flushed as each turn finishes
    audio/         the bot's output audio per turn, DIALOGUE__tNN.wav (16 kHz mono; a later
                   pass of a repeated run's DIALOGUE__tNN__rK.wav)
    calls/         each dialogue as it happened, DIALOGUE.wav (16 kHz, the caller on the left,
                   the agent on the right, on the turns' clock; ``voicebench.recordings.calls``)

``schema_version`` is bumped on any incompatible change; readers refuse versions they do
not know. Specs are stored as loaded: they name the environment variable holding an API
key, never the key.

Versions:

- 4, later: a turn may carry its reply's ``playback``: the stalls after its first audio
  (``voicebench.timing.stalls``), and its ``sound``: speaking rate, loudness, clipping and
  clicks (``voicebench.timing.sound``); logs without them have none measured.
- 4, later: a run folder may have ``openings.jsonl``, what the agent said when a call started,
  before the caller said anything (``voicebench.runlog.openings``), each a turn record with
  ``opening`` set; runs without the file had none recorded.
- 4, later: the header may have ``hosts``, the machine and software each sitting of the run
  measured with and how busy the machine was (``voicebench.host``); logs without it have no
  host recorded.
- 4, later: a turn may name its place in its call's recording (``call``); logs without it
  have none.
- 4, later: a run replayed K times (``--repeat``) has ``repeats`` in its header and each
  turn's ``repeat`` (0 to K-1); both are left out when there is one pass, so logs without them
  read as one pass.
- 4: a turn may carry the ``scenario`` it played (``--scenario``: its name, the values it drew
  and what was measured), and the header the scenarios asked for and their ``seed``. Earlier
  logs load as they are: no scenario was played.
- 3: the timing may have ``audio_release_ns`` (the ``audio_hold`` stage of an agent that holds a
  speculative reply's audio), and the agent spec has ``turn.hold`` and ``tts.trim_lead``.
  Version 2 logs load as they are: no audio was held, and their agent's TTS did not trim its
  lead-in (``read_header`` sets ``tts.trim_lead = false`` where the spec lacks it).
- 2: the timing has ``llm_release_ns``. ``llm_first_token_ns`` is when the provider's first
  token arrived, so TTFT is the model's own; a speculative reply's wait for the turn to be
  confirmed is the ``turn_hold`` stage.
- 1 (read as it is): ``llm_first_token_ns`` was the first token *released*, so in a
  speculating agent's turns TTFT included the hold. Such records load unchanged: their
  ``turn_hold`` is empty (unknown) and their TTFT keeps its old meaning; the waterfall still
  sums to TTFA.
"""

from __future__ import annotations

from enum import StrEnum
from typing import ClassVar

from pydantic import Field

from voicebench._model import FrozenModel, Versioned
from voicebench.agentspec import AgentSpec
from voicebench.budgets import TURN_TIMEOUT_S
from voicebench.host import Host
from voicebench.timing import ReportedLatency, TurnTiming
from voicebench.timing.sound import Sound
from voicebench.timing.stalls import Playback

RUNLOG_SCHEMA_VERSION = 4
READABLE_SCHEMA_VERSIONS = (1, 2, 3, 4)


class ReplayMode(StrEnum):
    """How the history before each spoken turn is formed."""

    TEACHER_FORCED = "teacher-forced"
    """The dialogue's original turns, as text; only the current seeker turn is spoken."""
    FREE_RUNNING = "free-running"
    """The agent's own earlier replies form the history."""
    SIMULATED = "simulated"
    """A simulated seeker says each line in answer to the agent (``voicebench converse``)."""
    RECORDED = "recorded"
    """Turns read off recordings of calls (``voicebench recordings analyze``)."""


REPLAY_MODES = (ReplayMode.TEACHER_FORCED, ReplayMode.FREE_RUNNING)
"""The modes a replay of a dialogue set takes (a simulated call is not a replay)."""


class TurnError(FrozenModel):
    """Why a turn failed; the turn is kept and counted, never dropped."""

    kind: str
    """Short machine-readable class: ``timeout``, ``llm_error``, ``no_audio``,
    ``no_transcript``..."""
    reason: str
    """What happened, for a person."""


class ScenarioOutcome(FrozenModel):
    """The scenario a turn played (``voicebench.scenarios``): what it drew and what it did."""

    name: str
    """``noise``, ``phone-line``, ... (``ivr`` on a SIP call's opening)"""
    params: dict[str, float | str]
    """The values this turn drew from the scenario's settings (fixed by the run's seed)."""
    snr_db: float | None = None
    """noise: the SNR of the speech the agent heard, measured on the mix."""
    uplink_loss_pct: float | None = None
    """phone-line: packets of the seeker's speech that never played at the agent."""
    downlink_loss_pct: float | None = None
    """phone-line: packets of the agent's reply that never played at the caller."""
    line_delay_ms: float | None = None
    """phone-line: the jitter buffers' delay, both ways. The samples keep their times, so TTFA
    is the agent's own; the caller hears the answer this much later."""
    agent_speaking: bool | None = None
    """barge-in, backchannel: the agent was talking when the seeker's first sound came (if
    not, its reply had already ended and nothing below was measured)."""
    at_ms: float | None = None
    """barge-in, backchannel: the seeker's first sound, after the start of the agent's talk."""
    stop_ms: float | None = None
    """barge-in: the seeker's first sound to the agent's last audible sample (the stop
    latency); read on frames in-process, off the audio for a remote agent
    (``voicebench.scenarios.overlap``)."""
    yielded: bool | None = None
    """barge-in: the agent stopped for the seeker within 2 s."""
    talk_over_s: float | None = None
    """barge-in: seconds both spoke at once."""
    answered: bool | None = None
    """barge-in: the agent answered the interruption (its reply is this turn's reply)."""
    false_yield: bool | None = None
    """backchannel: the agent stopped for a word that asked nothing of it."""
    lost_s: float | None = None
    """backchannel, after a false yield: its stop to when it spoke again (or the turn's end)."""
    premature: bool | None = None
    """pause: the agent spoke before the true end of the seeker's speech."""
    early_ms: float | None = None
    """pause, premature: how long before the true end of speech the agent began."""
    prompts_ms: tuple[float, ...] | None = None
    """ivr (a SIP call's menus, ``[[remote.sip.ivr]]``): when each menu's prompt began to
    play, from the INVITE."""
    pressed_ms: tuple[float, ...] | None = None
    """ivr: when each menu's last key was let go, from the INVITE."""


class CallRef(FrozenModel):
    """Where a turn lies in its call's two-channel recording (``voicebench.recordings.calls``)."""

    path: str
    """The recording, relative to the run directory: ``calls/DIALOGUE.wav``."""
    start_ns: int
    """The clock reading of the recording's first sample: a milestone ``ns`` of this turn is
    its sample ``(ns - start_ns) * rate // 1e9`` (``sample``)."""

    def sample(self, ns: int, rate: int = 16_000) -> int:
        return (ns - self.start_ns) * rate // 1_000_000_000

    def seconds(self, ns: int) -> float:
        """Where ``ns`` is in the recording, in seconds from its start."""
        return (ns - self.start_ns) / 1e9


class TurnRecord(Versioned):
    """One spoken seeker turn and the agent's answer to it, or (``opening``) what the agent
    said when its call started, before the seeker said anything."""

    READABLE: ClassVar[tuple[int, ...]] = READABLE_SCHEMA_VERSIONS
    VERSION_REQUIRED: ClassVar[bool] = True
    schema_version: int = RUNLOG_SCHEMA_VERSION
    run_id: str
    """The run this turn belongs to."""
    contestant: str
    """The agent's id, ``provider/model``."""
    agent_name: str
    """The agent's display name."""
    dialogue_id: str
    """Which dialogue."""
    turn_index: int = Field(ge=0)
    """Index of the spoken seeker turn in the dialogue's turns; of an opening, the seeker turn
    played after it."""
    opening: bool = Field(default=False, exclude_if=lambda v: not v)
    """The agent's opening (a greeting): what it said when its call started, before the seeker
    said anything. Its TTFA runs from the call's start (``timing.speech_end_ns`` is that
    moment); ``user_text`` is empty. Kept in ``openings.jsonl``, never among the turns."""
    final: bool
    """Whether this is the item's last seeker turn, the one whose reply is judged."""
    adversarial: bool = False
    """Whether the dialogue is adversarial."""
    user_text: str
    """What the seeker said (the fixture's text)."""
    user_transcript: str = ""
    """What the agent's ASR heard."""
    asr_wer: float | None = None
    """Word error rate of ``user_transcript`` against ``user_text``."""
    reply_text: str = ""
    """The LLM's reply text."""
    llm_requests: int = 0
    """LLM replies started in the turn; more than one means the turn ended early and was
    re-asked."""
    llm_calls: int | None = None
    """HTTP requests sent to the LLM in the turn, including speculative ones that were withdrawn
    unheard; absent when the provider does not report its requests."""
    audio_path: str | None = None
    """The bot's output audio for this turn, relative to the run directory."""
    call: CallRef | None = Field(default=None, exclude_if=lambda v: v is None)
    """Where the turn lies in its call's recording; None where none was written."""
    timing: TurnTiming | None = None
    """Milestones and derived latencies; absent when the turn failed before any."""
    reported: ReportedLatency | None = Field(default=None, exclude_if=lambda v: v is None)
    """What the agent's own framework reported for the turn (a LiveKit agent); None for
    every other agent."""
    playback: Playback | None = Field(default=None, exclude_if=lambda v: v is None)
    """How the reply played after its first audio: its stalls (``timing.stalls``). None
    where nothing audible played, or in logs written before it was measured."""
    sound: Sound | None = Field(default=None, exclude_if=lambda v: v is None)
    """How the reply sounds: speaking rate, loudness, clipping, clicks (``timing.sound``);
    None where nothing audible played, or in logs written before it was measured."""
    error: TurnError | None = None
    """Set when the turn failed."""
    scenario: ScenarioOutcome | None = None
    """The scenario this turn played, if the run asked for any."""
    repeat: int = Field(default=0, ge=0, exclude_if=lambda v: v == 0)
    """Which pass over the items this turn belongs to, in a run replayed several times
    (``--repeat``); 0 in a run of one pass."""
    cold: bool | None = None
    """The first turn the agent answered after it was (re)started: its models were loaded and
    its connections opened just before. None in logs that did not record it."""
    started_at: str
    """Wall-clock time the turn started (ISO 8601, UTC), for people; never used for latency."""

    def within_budgets(self, ttfa_ms: float, ttft_ms: float) -> bool:
        """Answered, with both its TTFA and its TTFT measured and inside their budgets."""
        t = self.timing
        return (
            self.error is None
            and t is not None
            and t.ttfa_ms is not None
            and t.ttft_ms is not None
            and t.ttfa_ms <= ttfa_ms
            and t.ttft_ms <= ttft_ms
        )


class RunHeader(Versioned):
    """What a run is: written once as ``run.json`` when the run starts."""

    READABLE: ClassVar[tuple[int, ...]] = READABLE_SCHEMA_VERSIONS
    VERSION_REQUIRED: ClassVar[bool] = True
    schema_version: int = RUNLOG_SCHEMA_VERSION
    run_id: str
    """The run directory's name."""
    created_at: str
    """When the run was first started (ISO 8601, UTC)."""
    voicebench_version: str
    """Version of voicebench that made it."""
    agent: AgentSpec
    """The agent spec as loaded (names key variables, never keys)."""
    agent_spec_path: str
    """Where the spec was read from."""
    dialogues_path: str
    """The dialogue set replayed."""
    dialogues_sha256: str
    """SHA-256 of that file when the run started; a resume refuses a changed file."""
    dialogue_ids: tuple[str, ...]
    """The items selected for this run, in order."""
    mode: ReplayMode = ReplayMode.TEACHER_FORCED
    """How histories are formed."""
    fixtures_dir: str
    """The audio fixture folder used."""
    turn_timeout_s: float = TURN_TIMEOUT_S
    """Seconds a turn may take before it is recorded as a timeout."""
    scenarios: tuple[str, ...] = ()
    """The ``--scenario`` options as given; each turn plays one of them."""
    seed: int = 0
    """Fixes what each turn draws from its scenario, and the noise and losses it gets."""
    repeats: int = Field(default=1, ge=1, exclude_if=lambda v: v == 1)
    """How many times every item was replayed (``--repeat``); each pass draws its scenarios
    with its own seed (``repeat_seed``)."""
    final_only: bool = Field(default=False, exclude_if=lambda v: not v)
    """Only each item's final seeker turn was replayed (the one whose reply is judged), its
    history given as text as for every teacher-forced turn."""
    # Left out of a dump when unset, so replays' logs keep the fields they always had.
    seeker: str | None = Field(default=None, exclude_if=lambda v: v is None)
    """A simulated call's seeker LLM (``provider/model``)."""
    hosts: tuple[Host, ...] = Field(default=(), exclude_if=lambda v: not v)
    """The machine each sitting of the run measured on (its start, then each resume that
    finished a turn), with its software and how busy it was; rewritten as each turn finishes.
    Empty in logs made before hosts were recorded."""
