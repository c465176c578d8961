"""Agent specs: the voice agent under test, one TOML file in ``agents/``.

::

    name = "scripted"                 # shown in tables and reports
    family = "scripted"               # model family; judges do not rate their own family
    system_prompt = "..."             # optional; defaults to the HEART supportive-listener prompt

    [stt]                             # speech to text
    provider = "whisper"              # local faster-whisper; "openai": a transcription endpoint
    model = "tiny.en"                 # "tiny.en" is packaged; or a path to a CTranslate2 model dir
    beam_size = 1
    cpu_threads = 2
    window = "speech"                 # the utterance plus 1 s of silence (>= 12 s); "full": 30 s
    # base_url, api_key_env           # provider = "openai" only (model "whisper-1" if not given)

    [llm]                             # an endpoint: see voicebench/llm/endpoint.py
    provider = "openai-compatible"    # local | openai-compatible | openai | anthropic | scripted
    model = "gpt-4o-mini"             # for "local": "smollm2-135m" (packaged) or a path to a .gguf
    base_url = "http://127.0.0.1:8000/v1"   # openai-compatible only
    api_key_env = "OPENAI_API_KEY"    # the variable holding the key; keys never live in specs
    temperature = 0.0
    max_tokens = 120
    timeout_s = 60                    # per request (default: the SDK's)
    n_ctx = 2048                      # local only
    ttft_ms = 300                     # scripted only: injected time to first token
    token_delay_ms = 15               # scripted only

    [tts]
    provider = "piper"
    voice = "en_US-joe-medium"        # packaged voice
    first_chunk = "sentence"          # or "clause": speak the reply's first clause early
    trim_lead = true                  # cut a reply's silent lead-in (keep 10 ms before speech)

    [vad]
    stop_secs = 0.5                   # silence that ends a VAD speech segment
    start_secs = 0.2
    confidence = 0.7
    min_volume = 0.6                  # loudness floor for speech (0-1)

    [turn]
    user_speech_timeout = 0.35        # extra wait after the VAD stop before ending the turn
    wait_for_all_segments = true      # end the turn only once every speech segment is transcribed
    stop_timeout = 5.0                # give up waiting for a transcript after this long
    speculate = false                 # ask the LLM early, speak only once the turn has ended
    hold = "text"                     # what waits for the turn end: the reply's "text" or "audio"

The ``scripted`` LLM provider starts a local scripted server with the given delays: it is a
measuring instrument (known TTFT), not a model.

A running voice agent that voicebench did not build is reached over WebSocket and measured
as a black box; its spec has ``[remote]`` instead of ``[llm]`` (the other sections do not
apply)::

    name = "their-bot"
    family = "acme"

    [remote]
    url = "ws://127.0.0.1:8765"       # ws:// or wss:// (webrtc: the http(s):// offer endpoint)
    protocol = "pcm"                  # "pcm" (voicebench's protocol, voicebench/remote/wire.py),
                                      # "pipecat" (pipecat's protobuf frame serializer),
                                      # "twilio" / "telnyx" (the phone platforms' media streams),
                                      # or "webrtc" (a browser's call: voicebench/remote/webrtc.py)
    sample_rate = 16000               # of the PCM both ways (pcm, pipecat; a phone line is 8 kHz)
    quiet_secs = 1.5                  # after the agent's audio, this much quiet ends its turn
    jitter_ms = 20                    # webrtc: the caller's jitter buffer
    parameters = { campaign = "x" }   # twilio / telnyx: custom parameters of the call's start

    [remote.auth]                     # optional: for an agent that checks a token
    token_env = "AGENT_TOKEN"         # the variable holding the token, never the token
    header = "Authorization"          # sent in this header, after scheme ("Bearer TOKEN")
    scheme = "Bearer"                 # "" sends the token alone
    query = "token"                   # and/or as this query parameter (?token=TOKEN)

A speech-to-speech model as the agent (one model hears and speaks) has ``[s2s]`` instead:
its endpoint, voice and turn detection (``voicebench/llm/realtime.py``); ``[vad]`` and
``[turn]`` apply when its turn detection is ``local``, the other sections do not.

A LiveKit agent, written as LiveKit's docs write one, is run in this process with no room and
no server; its spec has ``[livekit]`` (``voicebench/livekit/``; the other sections do not
apply)::

    name = "my-livekit-agent"
    family = "openai"

    [livekit]
    entrypoint = "my_agent:build"     # MODULE:FUNCTION returning (Agent, AgentSession), or Agent
    path = "."                        # where MODULE is imported from, beside this file by default
    serve_speech = "tiny.en"          # optional: start the packaged Whisper and Piper behind
                                      # OpenAI's audio API; URL in VOICEBENCH_SPEECH_URL
    serve_llm = "smollm2-135m"        # optional: start the packaged LLM on llama.cpp; URL in
                                      # VOICEBENCH_LLM_URL
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator

from voicebench import builtin
from voicebench._model import FrozenModel, read_toml, validate_record
from voicebench.errors import InputError, MissingFileError, MissingSecretError
from voicebench.llm.endpoint import Endpoint, warn_if_sent_away
from voicebench.llm.realtime import RealtimeEndpoint
from voicebench.remotespec import RemoteSpec
from voicebench.speechspec import STTSpec, TTSSpec

HEART_SYSTEM_PROMPT = (
    "You are a supportive listener talking with someone who is going through a hard time. "
    "Reply in one to three short spoken sentences, about forty words at most. "
    "First acknowledge what they feel and what they told you, in plain warm words; "
    "then, when it helps, ask one gentle question or offer one small next step. "
    "Do not diagnose, lecture or give medical instructions, and do not use lists, "
    "headings or emoji: your words will be spoken aloud."
)


class LLMSpec(Endpoint):
    """The language model behind the agent: an endpoint (``voicebench.llm.Endpoint``) with the
    agent-only settings below."""

    provider: str = Field(min_length=1)
    """Which client talks to it (a registered provider): ``local`` starts a llama.cpp server
    on 127.0.0.1, ``scripted`` a scripted server with a known time to first token (a test
    double); ``openai``, ``anthropic``, ``openai-compatible``, or a plug-in's."""
    warmup: bool = True
    """Local provider only: evaluate the system prompt once before the first turn, as a
    deployed agent's server would have it cached."""
    ttft_ms: float = Field(default=300.0, ge=0.0)
    """Scripted provider only: injected time to first token."""
    token_delay_ms: float = Field(default=15.0, ge=0.0)
    """Scripted provider only: delay between tokens."""
    reply: str | None = None
    """Scripted provider only: a fixed reply (default: one derived from the user's words)."""


class VADSpec(FrozenModel):
    """Silero voice activity detection."""

    stop_secs: float = Field(default=0.5, gt=0.0, le=3.0)
    """Silence that ends a speech segment."""
    start_secs: float = Field(default=0.2, gt=0.0, le=3.0)
    """Speech that starts a segment."""
    confidence: float = Field(default=0.7, gt=0.0, lt=1.0)
    """Speech probability threshold."""
    min_volume: float = Field(default=0.6, ge=0.0, lt=1.0)
    """Loudness floor (pipecat's smoothed volume, 0-1) below which nothing counts as speech; a
    lower floor notices a soft first syllable after a pause sooner."""


class TurnSpec(FrozenModel):
    """When the user's turn is over."""

    user_speech_timeout: float = Field(default=0.35, ge=0.0, le=5.0)
    """Wait after the VAD stop for the user to go on before ending the turn. With the default
    VAD stop the turn ends after 0.85 s of silence: the synthesized seekers pause for up to
    about 0.6 s between sentences, and a window shorter than that answers half a turn."""
    unfinished_timeout: float | None = Field(default=None, gt=0.0, le=5.0)
    """Wait this long after the VAD stop instead, when the words so far stop mid-sentence
    (no full stop, question or exclamation mark, or a last word no sentence ends on, such as
    "and" or "the": ``voicebench.text.unfinished``). A caller searching for a word pauses
    longer than between sentences. Off by default; needs ``wait_for_all_segments``."""
    wait_for_all_segments: bool = True
    """End the turn only once every speech segment sent to the ASR has been transcribed;
    false uses pipecat's stock rule (the turn may end on the first segment's transcript)."""
    stop_timeout: float = Field(default=5.0, gt=0.0, le=30.0)
    """Give up waiting for a transcript after this long."""
    speculate: bool = False
    """Ask the LLM as soon as the VAD stop's transcripts are in, and hold its reply until the
    turn end (VAD stop + ``user_speech_timeout``) confirms it; pair with a short VAD stop.
    Needs ``wait_for_all_segments``."""
    hold: Literal["text", "audio"] = "text"
    """What of a speculative reply waits for the turn end: its ``text`` (pipecat's own hold in
    the LLM service: TTS starts once the turn is confirmed) or its ``audio`` (TTS speaks it
    during the silence and the audio waits: ``voicebench/pipeline/hold.py``). ``audio`` answers
    sooner and costs TTS work on withdrawn replies; it matters only with ``speculate``."""

    @model_validator(mode="after")
    def _speculation_needs_segments(self) -> TurnSpec:
        if self.speculate and not self.wait_for_all_segments:
            raise ValueError("speculate needs wait_for_all_segments = true")
        if self.unfinished_timeout is not None and not self.wait_for_all_segments:
            raise ValueError("unfinished_timeout needs wait_for_all_segments = true")
        return self


class LiveKitSpec(FrozenModel):
    """A LiveKit Agents agent run in-process (``voicebench.livekit``)."""

    entrypoint: str = Field(pattern=r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")
    """``MODULE:NAME`` in the user's code: their worker entrypoint as LiveKit's docs write it
    (``async def entrypoint(ctx: JobContext)``, run with a stand-in job whose room is
    voicebench's audio), their ``AgentServer``, or a function with no arguments that returns
    their ``Agent`` and ``AgentSession`` as a pair, or the ``Agent`` alone
    (``voicebench.livekit.entry``)."""
    path: str = "."
    """The folder ``MODULE`` is imported from; a relative path is read from the spec's folder
    (made absolute when the spec is loaded)."""
    serve_speech: str | None = None
    """Start voicebench's OpenAI-compatible speech endpoints for the agent (faster-whisper with
    this model, ``tiny.en`` packaged, and the packaged Piper voice); their base URL is put in
    ``VOICEBENCH_SPEECH_URL`` before the entrypoint is called."""
    speech_port: int | None = Field(default=None, ge=1, le=65535)
    """The port of 127.0.0.1 ``serve_speech`` serves on (a free one if not given), for code
    that names its URL (``base_url="http://127.0.0.1:8000/v1"``)."""
    serve_llm: str | None = None
    """Start the local llama.cpp server with this model (``smollm2-135m`` packaged, or a
    .gguf path); its base URL is put in ``VOICEBENCH_LLM_URL``. It answers any model name."""
    llm_port: int | None = Field(default=None, ge=1, le=65535)
    """The port of 127.0.0.1 ``serve_llm`` serves on (a free one if not given)."""


class AgentSpec(FrozenModel):
    """A voice agent under test: a pipeline voicebench builds (``llm`` and the stages), or a
    running agent reached over WebSocket (``remote``)."""

    name: str = Field(min_length=1, max_length=80, pattern=r"^[A-Za-z0-9][A-Za-z0-9._ /-]*$")
    """Display name."""
    family: str = Field(min_length=1)
    """Model family (e.g. ``openai``, ``anthropic``, ``smollm``)."""
    system_prompt: str = HEART_SYSTEM_PROMPT
    """Instructions given to the LLM."""
    stt: STTSpec = STTSpec()
    llm: LLMSpec | None = None
    tts: TTSSpec = TTSSpec()
    vad: VADSpec = VADSpec()
    turn: TurnSpec = TurnSpec()
    remote: RemoteSpec | None = None
    """A running agent reached over WebSocket instead of a pipeline built here."""
    s2s: RealtimeEndpoint | None = Field(default=None, exclude_if=lambda v: v is None)
    """A speech-to-speech model as the agent, built here around its realtime connection."""
    livekit: LiveKitSpec | None = Field(default=None, exclude_if=lambda v: v is None)
    """A LiveKit agent from the user's own code, run in this process."""

    @model_validator(mode="after")
    def _one_kind(self) -> AgentSpec:
        kinds = (self.llm, self.remote, self.s2s, self.livekit)
        if sum(x is not None for x in kinds) != 1:
            raise ValueError(
                "give one of [llm] (a pipeline voicebench builds), [s2s] (a speech-to-speech "
                "model), [remote] (a running agent over WebSocket) or [livekit] (a LiveKit "
                "agent from your code)"
            )
        return self

    @property
    def id(self) -> str:
        """``provider/model`` (``remote/NAME`` for a remote agent, ``livekit/NAME`` for a
        LiveKit one), the contestant id."""
        model = self.llm or self.s2s
        if self.livekit is not None:
            return f"livekit/{self.name}"
        if model is None:
            return f"remote/{self.name}"
        return f"{model.provider}/{model.model}"

    @property
    def key_variable(self) -> str | None:
        """The environment variable holding the model's key or the remote agent's token."""
        model = self.llm or self.s2s
        if model is not None:
            return model.api_key_env
        auth = self.remote.auth if self.remote is not None else None
        return auth.token_env if auth is not None else None

    @property
    def key_field(self) -> str:
        """Where ``key_variable`` is named in the spec."""
        if self.llm is not None:
            return "llm.api_key_env"
        return "s2s.api_key_env" if self.s2s is not None else "remote.auth.token_env"


def parse_override(text: str) -> tuple[str, object]:
    """``KEY=VALUE`` with a dotted key (``llm.ttft_ms=400``); the value is read as JSON
    (numbers, true/false, quoted strings) and otherwise kept as text."""
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise InputError(f"{text!r} is not KEY=VALUE (e.g. vad.stop_secs=0.3)", field="--set")
    try:
        value = json.loads(raw)
    except (json.JSONDecodeError, RecursionError):
        value = raw
    return key.strip(), value


def with_overrides(data: dict, overrides: Mapping[str, object]) -> dict:
    """A copy of a spec's table with each dotted key set (``{"llm.ttft_ms": 400}``)."""
    out = copy.deepcopy(data)
    for key, value in overrides.items():
        node = out
        *parents, leaf = key.split(".")
        for part in parents:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise InputError(f"{part} is not a section", field=key)
            node = child
        node[leaf] = value
    return out


def load_agent_spec(
    path: str | Path,
    *,
    require_secrets: bool = True,
    overrides: Mapping[str, object] | None = None,
) -> AgentSpec:
    """Read and validate an agent spec (a path, or a shipped spec's name), with ``overrides``
    (dotted keys) set over what the file says; a missing key variable fails here, naming it."""
    path = builtin.spec_path("agents", path)
    if not path.exists():
        raise MissingFileError("agent spec", path)
    data = with_overrides(read_toml(path), overrides or {})
    spec = validate_record(AgentSpec, data, file=path)
    if spec.livekit is not None:
        folder = (path.parent / spec.livekit.path).resolve()
        if not folder.is_dir():
            raise InputError(f"{folder} is not a folder", file=path, field="livekit.path")
        spec = spec.model_copy(
            update={"livekit": spec.livekit.model_copy(update={"path": str(folder)})}
        )
    var = spec.key_variable
    if require_secrets and var and not os.environ.get(var):
        raise MissingSecretError(path, spec.key_field, var)
    sip = spec.remote.sip if spec.remote is not None else None
    for name in ("username_env", "password_env"):
        variable = getattr(sip, name, None)
        if require_secrets and variable and not os.environ.get(variable):
            raise MissingSecretError(path, f"remote.sip.{name}", variable)
    for stage, speech in (("stt", spec.stt), ("tts", spec.tts)):
        if spec.llm is None or speech.provider != "openai":
            continue
        speech_var = speech.api_key_env
        if require_secrets and speech_var and not os.environ.get(speech_var):
            raise MissingSecretError(path, f"{stage}.api_key_env", speech_var)
        warn_if_sent_away(speech_var, speech.url, "openai", file=path, field=f"{stage}.base_url")
    if spec.llm is not None:
        warn_if_sent_away(var, spec.llm.url, spec.llm.provider, file=path, field="llm.base_url")
    elif spec.s2s is not None:
        warn_if_sent_away(var, spec.s2s.url, spec.s2s.provider, file=path, field="s2s.base_url")
    elif spec.remote is not None:
        warn_if_sent_away(var, spec.remote.url, "remote", file=path, field="remote.url")
    return spec


def api_key(spec: AgentSpec) -> str | None:
    """The key for the spec's LLM, or the remote agent's token, read from the environment at
    the moment it is needed."""
    model = spec.llm or spec.s2s
    if model is not None:
        return model.api_key()
    auth = spec.remote.auth if spec.remote is not None else None
    return auth.token() if auth is not None else None
