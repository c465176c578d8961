"""Live-agent commands: ``serve`` and ``load``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from voicebench import api
from voicebench.api import LOAD_TURN_TIMEOUT_S, TTFA_BUDGET_MS
from voicebench.api.views import LoadTurn
from voicebench.cli.common import (
    DEFAULT_AGENT,
    DEFAULT_DIALOGUES,
    DEFAULT_FIXTURES,
    DialoguesOpt,
    FixturesOpt,
    ScenarioOpt,
    Steps,
    TTFABudgetOpt,
    VerboseOpt,
    agent_spec,
    commands,
    on_interrupt,
    out,
    plain,
    quiet_libraries,
    say,
    shipped_default,
    show,
)
from voicebench.cli.present.load import load_table
from voicebench.cli.present.runs import show_scenarios

app = commands()


@app.command()
def serve(
    agent: Annotated[
        Path,
        typer.Option(
            "--agent",
            "-a",
            envvar="VOICEBENCH_AGENT",
            parser=agent_spec,
            help="Agent spec to serve, a file or a shipped name.",
            show_default=shipped_default(DEFAULT_AGENT),
        ),
    ] = DEFAULT_AGENT,
    port: Annotated[
        int, typer.Option(min=0, max=65535, help="Port on 127.0.0.1 (0: any free port).")
    ] = 8765,
    protocol: Annotated[
        str,
        typer.Option(
            help="pcm (voicebench's protocol), pipecat (pipecat's protobuf frames), twilio / "
            "telnyx (the agent's side of a phone platform's media stream), webrtc (pipecat's "
            "SmallWebRTC transport: offers taken at http://127.0.0.1:PORT/api/offer), or sip "
            "(calls to sip:agent@127.0.0.1:PORT over UDP, the token as the digest password)."
        ),
    ] = "pcm",
    token_env: Annotated[
        str | None,
        typer.Option(
            help="Environment variable holding the token callers must present (at least 16 "
            "characters). Default: a token drawn now and printed.",
        ),
    ] = None,
    allow_origin: Annotated[
        list[str] | None,
        typer.Option(
            help="A browser origin allowed to call (repeatable), e.g. https://app.example; "
            "handshakes from any other origin are refused.",
        ),
    ] = None,
    max_calls: Annotated[
        int | None,
        typer.Option(min=1, max=1000, help="Calls at once (default: two per core)."),
    ] = None,
    verbose: VerboseOpt = False,
) -> None:
    """Serve an agent as a WebSocket voice agent on 127.0.0.1 (or WebRTC, or SIP): one
    pipeline per call, helper servers shared. Callers present a token (Authorization: Bearer
    TOKEN, or ?token=TOKEN; over SIP, as the digest password). Test a remote-agent spec
    against it, or let others benchmark it."""
    quiet_libraries(verbose)

    def ready(s: api.Serving) -> None:
        agent = f"{s.agent.name} ({s.agent.id})"
        show(f"serving {agent} on {s.url}, protocol {s.protocol}; Ctrl-C stops")
        how = (
            "answer the digest challenge with it as the password, any user name"
            if s.protocol == "sip"
            else "present it as 'Authorization: Bearer TOKEN' or ?token=TOKEN"
        )
        show(f"token from {s.token_env}" if s.token_env else f"token {s.token} ({how})")
        say(
            f"at most {s.max_calls} calls at once; browser origins allowed: "
            + (", ".join(s.allowed_origins) or "none")
        )

    api.serve(
        agent,
        port=port,
        protocol=protocol,
        token_env=token_env,
        allowed_origins=allow_origin or (),
        max_calls=max_calls,
        on_ready=ready,
        on_call=lambda event, n: say(f"call {event} ({n} in progress)"),
        on_refused=lambda why: say(f"call refused: {why}"),
    )
    say("stopped")


@app.command("serve-speech")
def serve_speech(
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port on 127.0.0.1.")] = 8000,
    stt_model: Annotated[
        str,
        typer.Option(help="Whisper model: tiny.en (packaged) or a CTranslate2 model folder."),
    ] = "tiny.en",
    verbose: VerboseOpt = False,
) -> None:
    """Serve OpenAI's speech API on 127.0.0.1 with the packaged models: faster-whisper behind
    /v1/audio/transcriptions, Piper behind /v1/audio/speech (each of OpenAI's formats: mp3, the
    default, opus, aac, flac, wav, pcm), so any agent built on an OpenAI client (a LiveKit
    agent's openai.STT and openai.TTS, as LiveKit's quick-start writes them) runs offline. No
    key is checked."""
    quiet_libraries(verbose)
    api.serve_speech(
        port=port,
        stt_model=stt_model,
        on_ready=lambda url: show(
            f"speech endpoints on {url} (Whisper {stt_model}, Piper); Ctrl-C stops"
        ),
    )
    say("stopped")


def _load_line(t: LoadTurn) -> str:
    r = t.turn
    what = (
        f"[red]{r.error.kind}: {plain(r.error.reason)}[/]"
        if r.error
        else f"TTFA {r.timing.ttfa_ms:,.0f} ms"
        if r.timing and r.timing.ttfa_ms is not None
        else "no TTFA"
    )
    return (
        f"[{t.offset_s:6.1f} s, {t.concurrency} calls] caller {t.caller} "
        f"{r.dialogue_id} turn {r.turn_index}  {what}"
    )


@app.command()
def load(
    agent: Annotated[
        str,
        typer.Option(
            "--agent",
            "-a",
            help="A ws:// URL, an agent spec with [remote], or one with [livekit] (its "
            "sessions run in this process).",
        ),
    ],
    callers: Annotated[
        int,
        typer.Option(
            min=1,
            help="Simulated callers (at the peak): up to 200 in one process, more on Ray "
            "workers (--backend ray, 100 a worker).",
        ),
    ] = 4,
    pattern: Annotated[
        str,
        typer.Option(
            help="ramp (arrive over --ramp, stay), step (--step-callers more every "
            "--step-hold s), spike (--spike-callers more at --spike-at for --spike-length s) "
            "or soak (a ramp held for a long --duration; TTFA by quarter shows drift)."
        ),
    ] = "ramp",
    step_callers: Annotated[int | None, typer.Option(min=1, help="step: callers per step.")] = None,
    step_hold: Annotated[
        float | None, typer.Option(min=0.1, help="step: seconds each step is held.")
    ] = None,
    spike_callers: Annotated[
        int | None, typer.Option(min=1, help="spike: callers that arrive together.")
    ] = None,
    spike_at: Annotated[float | None, typer.Option(min=0.0, help="spike: when, in s.")] = None,
    spike_length: Annotated[
        float | None, typer.Option(min=0.1, help="spike: how long they stay, in s.")
    ] = None,
    ramp: Annotated[float, typer.Option(min=0.0, help="Seconds over which callers arrive.")] = 10.0,
    duration: Annotated[
        float,
        typer.Option(
            min=1.0, max=3600.0, help="Seconds after the first arrival during which calls start."
        ),
    ] = 60.0,
    arrivals: Annotated[str, typer.Option(help="fixed (evenly spaced) or poisson.")] = "fixed",
    protocol: Annotated[
        str, typer.Option(help="With a URL: pcm, pipecat, twilio, telnyx or webrtc.")
    ] = "pcm",
    token_env: Annotated[
        str | None,
        typer.Option(
            help="With a URL: the environment variable holding the token to present "
            "(Authorization: Bearer), e.g. the one voicebench serve --token-env reads."
        ),
    ] = None,
    out_dir: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Load folder (default reports/load/TIMESTAMP)."),
    ] = None,
    dialogues: DialoguesOpt = DEFAULT_DIALOGUES,
    fixtures: FixturesOpt = DEFAULT_FIXTURES,
    budget_ttfa_ms: TTFABudgetOpt = TTFA_BUDGET_MS,
    turn_timeout: Annotated[
        float,
        typer.Option(
            min=1.0, max=300.0, help="Seconds a turn may take; failed turns count as this long."
        ),
    ] = LOAD_TURN_TIMEOUT_S,
    scenario: ScenarioOpt = None,
    seed: Annotated[
        int, typer.Option(help="Seed for poisson arrivals and for what each turn's scenario draws.")
    ] = 0,
    backend: Annotated[
        str,
        typer.Option(help="local (one process) or ray (callers spread over Ray workers)."),
    ] = "local",
    address: Annotated[
        str | None,
        typer.Option(help="ray: the cluster (HOST:6379); without it a local instance is started."),
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option(min=1, help="ray: workers (default: as many as the callers need, 100 each)."),
    ] = None,
    failure_budget: Annotated[
        float,
        typer.Option(
            min=0.0, max=1.0, help="A band is over when more than this share of its turns fail."
        ),
    ] = 0.05,
    record_calls: Annotated[
        bool,
        typer.Option(
            "--record-calls",
            help="Write each call as it happened, a two-channel WAV in LOAD_DIR/calls (the "
            "caller left, the agent right; one process only).",
        ),
    ] = False,
) -> None:
    """Many callers at once against a remote voice agent, in a load pattern: TTFA percentiles
    and failure shares by concurrency band with intervals, failures by kind, and the breaking
    point (where TTFA p90 or the failure share crosses its budget) with its interval. A caller
    whose call is not answered waits before dialling again; when no call is answered in the
    first 5 s the load stops (exit 1), keeping what it measured."""
    quiet_libraries(False)

    def started(pattern: str, target: Path) -> None:
        say(f"load: {pattern} -> {target}")
        on_interrupt(f"finished turns are in {target}/turns.jsonl")

    with Steps("turns") as s:
        result = api.load(
            agent,
            callers=callers,
            pattern=pattern,
            ramp_s=ramp,
            duration_s=duration,
            arrivals=arrivals,
            step_callers=step_callers,
            step_hold_s=step_hold,
            spike_callers=spike_callers,
            spike_at_s=spike_at,
            spike_s=spike_length,
            protocol=protocol,
            token_env=token_env,
            out=out_dir,
            dialogues=dialogues,
            fixtures=fixtures,
            budget_ttfa_ms=budget_ttfa_ms,
            turn_timeout_s=turn_timeout,
            scenarios=scenario or (),
            seed=seed,
            backend=backend,
            address=address,
            workers=workers,
            failure_budget=failure_budget,
            record_calls=record_calls,
            on_start=started,
            on_status=s.status,
            progress=lambda t: s.line(_load_line(t)),
        )
    spec, target = result.agent, result.path
    url = spec.remote.url if spec.remote is not None else spec.id
    out.print(load_table(result.summary, f"{spec.name} ({url}) under load"))
    if scenario:
        show_scenarios(result.turns)
    show(f"turns: {target}/turns.jsonl; summary: {target}/summary.json")
