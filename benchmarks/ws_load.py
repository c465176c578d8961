"""Self-check of the measuring side under load: TTFA against a scripted WebSocket agent whose
response delay is known, at 1 caller and at many.

The scripted agent (its own process) reads the end of each utterance off the stream and
places its reply's first audible sample exactly ``--delay-ms`` later; the harness measures
TTFA from the true end of speech to the first audible sample it plays. (On a phone stream the
agent hears some utterances end up to 0.2 s early, their last fricative being above the 4 kHz
the line carries; that known shift, ``heard_end_shift_ms``, is taken off.) The difference is
the harness's error: its own pacing and receive lag, plus loopback. The agent takes each frame's
arrival from the kernel's stamp on it, so its own event loop's lateness with many calls is not
counted as the harness's. Targets: |error| p99 <= 5 ms at 1 caller and <= 10 ms at 50 on
voicebench's own protocol; <= 10 ms at both on a Twilio media stream (JSON events, base64
8 kHz mu-law, both ways). Over SIP (``--protocol sip``: G.711 over RTP, the caller playing
through a phone's jitter buffer) the buffer's depth (``SIP_JITTER_MS``) is part of what the
caller hears and is taken off the error, and the target is one 20 ms frame at both. The signed
error's median (a bias) and its 1st and 99th percentiles (its spread) are printed apart, with
the harness process's CPU time per caller and the machine's CPU steal over the run.

    .venv/bin/python benchmarks/ws_load.py [--protocol pcm twilio sip] [--callers 1 50]
        [--duration 60] [--delay-ms 800]

The harness's own limit: ``--find-limit`` steps the callers up (``--callers`` as the steps,
e.g. ``25 50 75 100 150 200``) and stops at the first level whose |error| p99 is over 10 ms;
the last one within is the most callers one process on this machine times within the bound
(the per-worker cap of ``voicebench load --backend ray``, ``PER_WORKER_CALLERS``). On Ray:
``--backend ray --workers 1 2`` runs the same callers on a local Ray instance with one worker,
then two, and prints the error of each; the driver and workers share this machine's cores.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from machine import CpuSteal

from voicebench.agentspec import AgentSpec, RemoteSpec
from voicebench.dialogues import BUILTIN_DIALOGUES, load_dialogues
from voicebench.fixtures import BUILTIN_FIXTURES, lookup_fixture, read_wav, synthesize_fixtures
from voicebench.live import run_load
from voicebench.remotespec import SIP_JITTER_MS
from voicebench.testing.scripted_voice import ScriptedVoiceAgent
from voicebench.testing.scripted_voice_agent import heard_end_shift_ms

TARGETS = {
    "pcm": {1: 5.0, 50: 10.0},
    "twilio": {1: 10.0, 50: 10.0},
    "telnyx": {1: 10.0, 50: 10.0},
    "sip": {1: 20.0, 50: 20.0},
}


async def one_level(
    protocol: str, callers: int, args, items, manifest, workers: int | None = None
) -> dict:
    async with ScriptedVoiceAgent(delay_ms=args.delay_ms, protocol=protocol) as agent:
        spec = AgentSpec(
            name="scripted-voice",
            family="scripted",
            remote=RemoteSpec(url=agent.url, protocol=protocol, quiet_secs=1.0),
        )
        cpu0, wall0 = time.process_time(), time.monotonic()
        with tempfile.TemporaryDirectory() as tmp:
            turns = await run_load(
                spec,
                items,
                manifest,
                BUILTIN_FIXTURES,
                Path(tmp),
                callers=callers,
                ramp_s=args.ramp,
                duration_s=args.duration,
                turn_timeout_s=20.0,
                **({"backend": "ray", "workers": workers} if workers else {}),
            )
        cpu, wall = time.process_time() - cpu0, time.monotonic() - wall0
        answered = agent.turns()
    ok = [t for t in turns if t.turn.error is None]
    # On a phone line the agent hears some utterances end early (a final fricative above 4 kHz
    # never arrives): its delay runs from there, TTFA from the true end.
    shift = {
        text: heard_end_shift_ms(
            read_wav(BUILTIN_FIXTURES / lookup_fixture(manifest, text).path), protocol
        )
        for text in {t.turn.user_text for t in ok}
    }
    # Where an error comes from, matching each turn to the agent's log by the end of speech:
    # send lag (the agent heard the end late), agent lag (it replied late), receive lag.
    ends = np.array([a["speech_end_ns"] for a in answered], dtype=np.int64)
    parts = []
    buffer_ms = SIP_JITTER_MS if protocol == "sip" else 0
    for t in ok:
        timing = t.turn.timing
        if ends.size == 0:
            break
        heard_end = timing.speech_end_ns - int(shift[t.turn.user_text] * 1e6)
        a = answered[int(np.argmin(np.abs(ends - heard_end)))]
        parts.append(
            (
                (a["speech_end_ns"] - heard_end) / 1e6,
                (a["first_audio_sent_ns"] - a["speech_end_ns"]) / 1e6 - args.delay_ms,
                (timing.audio_out_ns - a["first_audio_sent_ns"]) / 1e6 - buffer_ms,
            )
        )
    parts = np.array(parts) if parts else np.zeros((0, 3))
    if args.verbose:
        for t, (send, reply, receive) in zip(ok, parts, strict=False):
            if max(send, reply, receive) > 5:
                print(
                    f"  at {t.offset_s:6.1f} s, {t.concurrency} calls: send {send:.1f}, "
                    f"agent {reply:.1f}, receive {receive:.1f} ms"
                )
    # a SIP caller hears a packet when its jitter buffer plays it: the buffer's depth later
    err = np.array(
        [t.turn.timing.ttfa_ms - args.delay_ms + shift[t.turn.user_text] - buffer_ms for t in ok]
    )
    return {
        "callers": callers,
        "turns": len(turns),
        "failed": len(turns) - len(ok),
        "max_concurrency": max((t.concurrency for t in turns), default=0),
        "err_p50": float(np.percentile(np.abs(err), 50)) if err.size else float("nan"),
        "err_p99": float(np.percentile(np.abs(err), 99)) if err.size else float("nan"),
        "err_mean": float(err.mean()) if err.size else float("nan"),
        "err_median": float(np.median(err)) if err.size else float("nan"),
        "err_p1": float(np.percentile(err, 1)) if err.size else float("nan"),
        "err_p99_signed": float(np.percentile(err, 99)) if err.size else float("nan"),
        "cpu_per_caller": cpu / wall / callers,
        "lag_p99": [
            float(np.percentile(parts[:, k], 99)) if len(parts) else float("nan") for k in range(3)
        ],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--protocol", nargs="+", default=["pcm", "twilio"], choices=sorted(TARGETS))
    parser.add_argument("--callers", type=int, nargs="+", default=[1, 50])
    parser.add_argument("--duration", type=float, default=60.0)
    parser.add_argument("--ramp", type=float, default=10.0)
    parser.add_argument("--delay-ms", type=float, default=800.0)
    parser.add_argument("--verbose", action="store_true", help="list turns with a part > 5 ms")
    parser.add_argument(
        "--find-limit", action="store_true", help="stop at the first level over 10 ms p99"
    )
    parser.add_argument("--backend", choices=["local", "ray"], default="local")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="with ray")
    args = parser.parse_args()
    items = load_dialogues(BUILTIN_DIALOGUES)
    manifest = synthesize_fixtures(items, BUILTIN_FIXTURES).manifest
    print(f"injected delay {args.delay_ms:g} ms; error = measured TTFA - injected delay")
    print(
        f"{'protocol':>8} {'callers':>7} {'max conc':>8} {'turns':>6} {'failed':>6} "
        f"{'median err':>10} {'p1 err':>8} {'p99 err':>8} {'|err| p99':>10} {'target p99':>10} "
        f"{'CPU/caller':>10}"
    )
    levels = [
        (p, c, w)
        for p in args.protocol
        for c in args.callers
        for w in (args.workers if args.backend == "ray" else [None])
    ]
    within: dict[str, int] = {}
    with CpuSteal() as steal:
        for protocol, callers, workers in levels:
            if args.find_limit and protocol in within and within[protocol] < 0:
                continue  # this protocol's limit was found
            r = asyncio.run(one_level(protocol, callers, args, items, manifest, workers))
            if workers:
                print(f"{'':>16} on Ray, {workers} worker(s):")
            if args.find_limit:
                if r["err_p99"] <= 10.0 and r["failed"] == 0:
                    within[protocol] = callers
                else:
                    within[protocol] = -within.get(protocol, 0) or -1
            target = TARGETS[protocol].get(callers)
            verdict = (
                "-"
                if target is None
                else (f"<= {target:g} " + ("ok" if r["err_p99"] <= target else "MISSED"))
            )
            print(
                f"{protocol:>8} {r['callers']:>7} {r['max_concurrency']:>8} {r['turns']:>6} "
                f"{r['failed']:>6} {r['err_median']:>+8.2f}ms {r['err_p1']:>+6.2f}ms "
                f"{r['err_p99_signed']:>+6.2f}ms {r['err_p99']:>8.2f}ms {verdict:>10} "
                f"{100 * r['cpu_per_caller']:>9.2f}%",
                flush=True,
            )
            send, reply, receive = r["lag_p99"]
            print(
                f"{'':>16} p99 of its parts: send lag {send:.2f} ms, agent lag {reply:.2f} ms, "
                f"receive lag {receive:.2f} ms",
                flush=True,
            )
    for protocol, n in within.items():
        if n > 0:
            print(f"{protocol}: every level tried was within 10 ms p99, up to {n} callers")
        else:
            print(f"{protocol}: the most callers within 10 ms p99: {-n if n != -1 else 'none'}")
    print(steal)


if __name__ == "__main__":
    main()
