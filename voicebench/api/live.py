"""``serve`` an agent over WebSocket and ``load`` one with many callers at once, from Python."""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from voicebench import builtin
from voicebench.agentspec import AgentSpec, load_agent_spec
from voicebench.api.results import PathLike
from voicebench.budgets import LOAD_TURN_TIMEOUT_S, TTFA_BUDGET_MS
from voicebench.errors import InputError
from voicebench.live import LoadSummary, LoadTurn, load_target, load_test, read_load
from voicebench.live import serve as serve_agent
from voicebench.live.load import load_pattern
from voicebench.live.patterns import PATTERNS
from voicebench.live.serve import default_max_calls
from voicebench.pipeline.speech_api import LocalModels
from voicebench.pipeline.speech_api import serve as serve_speech_endpoints
from voicebench.remotespec import PROTOCOLS
from voicebench.runlog import TurnRecord, folder_stamp

ARRIVALS = ("fixed", "poisson")
BACKENDS = ("local", "ray")
MIN_TOKEN_CHARS = 16


@dataclass(frozen=True)
class Serving:
    """A served agent, once it listens: where, with which token, how many calls at once."""

    agent: AgentSpec
    url: str
    protocol: str
    token: str
    token_env: str | None
    max_calls: int
    allowed_origins: tuple[str, ...]


def serve(
    agent: PathLike = builtin.DEFAULT_AGENT,
    *,
    port: int = 8765,
    protocol: str = "pcm",
    token_env: str | None = None,
    allowed_origins: Sequence[str] = (),
    max_calls: int | None = None,
    on_ready: Callable[[Serving], None] | None = None,
    on_call: Callable[[str, int], None] | None = None,
    on_refused: Callable[[str], None] | None = None,
) -> None:
    """Serve an agent on 127.0.0.1 over WebSocket (``protocol``: pcm, pipecat, twilio, telnyx;
    webrtc over HTTP; sip over UDP, the token as the digest password) until Ctrl-C. Callers
    present a token: the one in the environment variable ``token_env`` (at least 16 characters),
    else a new one, given to ``on_ready``."""
    if protocol not in PROTOCOLS:
        raise InputError(f"must be one of {', '.join(PROTOCOLS)}", field="protocol")
    if token_env is not None:
        token = os.environ.get(token_env, "")
        if len(token) < MIN_TOKEN_CHARS:
            raise InputError(
                f"environment variable {token_env} must hold a token of at least "
                f"{MIN_TOKEN_CHARS} characters",
                field="token_env",
            )
    else:
        token = secrets.token_urlsafe(24)
    spec = load_agent_spec(builtin.spec_path("agents", agent))
    limit = max_calls or default_max_calls()

    def ready(url: str) -> None:
        if on_ready is not None:
            on_ready(Serving(spec, url, protocol, token, token_env, limit, tuple(allowed_origins)))

    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C is how a server stops
        asyncio.run(
            serve_agent(
                spec,
                port=port,
                token=token,
                protocol=protocol,
                allowed_origins=tuple(allowed_origins),
                max_calls=limit,
                on_ready=ready,
                on_call=on_call,
                on_refused=on_refused,
            )
        )


def serve_speech(
    *,
    port: int = 8000,
    stt_model: str = "tiny.en",
    voice: str | None = None,
    on_ready: Callable[[str], None] | None = None,
) -> None:
    """Serve OpenAI-compatible speech endpoints on 127.0.0.1 until Ctrl-C: faster-whisper
    behind ``/v1/audio/transcriptions`` and Piper behind ``/v1/audio/speech``
    (``voicebench.pipeline.speech_api``); ``on_ready`` gets the base URL."""

    async def run() -> None:
        models = LocalModels(stt_model=stt_model, voice=voice)
        await serve_speech_endpoints(models, port=port, ready=on_ready)

    with contextlib.suppress(KeyboardInterrupt):
        try:
            asyncio.run(run())
        except OSError as exc:
            raise InputError(f"cannot serve on 127.0.0.1:{port}: {exc}", field="port") from None


@dataclass(frozen=True)
class Load:
    """A load folder: the agent called, its summary by concurrency band, every turn."""

    path: Path
    agent: AgentSpec
    summary: LoadSummary

    @property
    def turns(self) -> list[TurnRecord]:
        """Every turn the callers played, in the order they finished."""
        return [t.turn for t in read_load(self.path)[1]]


def load(
    agent: str,
    *,
    callers: int = 4,
    pattern: str = "ramp",
    ramp_s: float = 10.0,
    duration_s: float = 60.0,
    arrivals: str = "fixed",
    step_callers: int | None = None,
    step_hold_s: float | None = None,
    spike_callers: int | None = None,
    spike_at_s: float | None = None,
    spike_s: float | None = None,
    protocol: str = "pcm",
    token_env: str | None = None,
    out: PathLike | None = None,
    dialogues: PathLike = builtin.DIALOGUES,
    fixtures: PathLike = builtin.FIXTURES,
    budget_ttfa_ms: float = TTFA_BUDGET_MS,
    turn_timeout_s: float = LOAD_TURN_TIMEOUT_S,
    scenarios: Sequence[str] = (),
    seed: int = 0,
    backend: str = "local",
    address: str | None = None,
    workers: int | None = None,
    failure_budget: float = 0.05,
    record_calls: bool = False,
    on_start: Callable[[str, Path], None] | None = None,
    on_status: Callable[[str], None] | None = None,
    progress: Callable[[LoadTurn], None] | None = None,
) -> Load:
    """Many callers at once against a remote agent (a ws:// URL, or a spec with ``[remote]``),
    or many sessions of a LiveKit agent (``[livekit]``) in this process, in a load pattern
    (ramp, step, spike or soak); ``on_start`` is told the pattern in words and the folder
    before the first call; ``record_calls`` writes each call as it happened in ``calls/``
    (one process only). Returns the folder and its summary: TTFA and failures by
    concurrency band with intervals, and the breaking point."""
    if arrivals not in ARRIVALS:
        raise InputError(f"must be {' or '.join(ARRIVALS)}", field="arrivals")
    if pattern not in PATTERNS:
        raise InputError(f"must be one of {', '.join(PATTERNS)}", field="pattern")
    if backend not in BACKENDS:
        raise InputError(f"must be {' or '.join(BACKENDS)}", field="backend")
    if backend == "local" and (address is not None or workers is not None):
        raise InputError("address and workers go with the ray backend", field="backend")
    shape = load_pattern(
        kind=pattern,
        callers=callers,
        ramp_s=ramp_s,
        duration_s=duration_s,
        arrivals=arrivals,
        step_callers=step_callers,
        step_hold_s=step_hold_s,
        spike_callers=spike_callers,
        spike_at_s=spike_at_s,
        spike_s=spike_s,
    )
    spec = load_target(agent, protocol, token_env)
    target = Path(out) if out is not None else Path("reports") / "load" / folder_stamp()
    if on_start is not None:
        on_start(shape.describe(), target)
    summary = load_test(
        spec,
        builtin.dialogue_set(dialogues),
        Path(fixtures),
        target,
        budget_ttfa_ms=budget_ttfa_ms,
        turn_timeout_s=turn_timeout_s,
        pattern=shape,
        backend=backend,
        address=address,
        workers=workers,
        on_status=on_status,
        seed=seed,
        failure_budget=failure_budget,
        progress=progress,
        scenarios=tuple(scenarios),
        record_calls=record_calls,
    )
    return Load(target, spec, summary)
