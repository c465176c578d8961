"""A load on a local Ray instance: callers spread over two workers, one of which is killed
mid-run. Its calls in progress are counted as lost, the other worker's callers carry on, the
run finishes, and nothing recorded before the kill changes. No Ray process is left."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from processes import ROOT, complete_lines, ray_processes, voicebench

from voicebench._jsonl import read_models
from voicebench.live import read_load
from voicebench.live.load import CALLS_FILE, TURNS_FILE
from voicebench.live.load_summary import CallSpan
from voicebench.testing.scripted_voice import ScriptedVoiceAgent

pytest.importorskip("ray")
pytestmark = pytest.mark.slow
GOING_S = 420
ANCHOR_MS = 1_000
"""Late by more than this, a turn was timed from the wrong moment, not by a busy worker."""


def ray_log_tail(lines: int = 40) -> str:
    """The last lines of the latest local Ray session's raylet log (why a worker did not
    start), or what stands in for them."""
    log = Path(tempfile.gettempdir()) / "ray" / "session_latest" / "logs" / "raylet.out"
    try:
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
    except OSError as exc:
        return f"(no raylet log: {exc})"


def test_a_load_over_two_ray_workers_survives_losing_one(tmp_path: Path, short_set):
    assert not ray_processes(), "a Ray instance is already running here"
    out = tmp_path / "load"
    with ScriptedVoiceAgent(delay_ms=700) as agent:
        assert agent.url is not None
        run = subprocess.Popen(
            voicebench(
                "load",
                "--agent",
                agent.url,
                "--backend",
                "ray",
                "--workers",
                "2",
                "--pattern",
                "step",
                "--callers",
                "4",
                "--step-callers",
                "2",
                "--step-hold",
                "3",
                "--ramp",
                "1",
                "--duration",
                # long enough that a machine slow to start the workers still has calls in
                # progress when worker 1 is killed (worker 0's go on until it is over)
                "30",
                "--dialogues",
                str(short_set.dialogues_path),
                "--fixtures",
                str(short_set.fixtures_dir),
                "--out",
                str(out),
            ),
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        # A hang guard, not a timing: on a quiet machine the third turn comes after about
        # 30 s, beside two CPU-bound loops too; a CI run with other tests' models loading
        # beside it once took more than 240 s.
        deadline = time.monotonic() + GOING_S
        while complete_lines(out / TURNS_FILE) < 3 and run.poll() is None:
            if time.monotonic() > deadline:
                run.send_signal(signal.SIGINT)  # the load stops its Ray instance
                said = run.communicate(timeout=120)[0]
                raise AssertionError(
                    f"the load had {complete_lines(out / TURNS_FILE)} turns after {GOING_S} s;"
                    f" it said: {said[-3000:]}\nRay said: {ray_log_tail()}"
                )
            time.sleep(0.1)
        if run.poll() is not None:
            said = run.communicate()[0]
            raise AssertionError(f"the load was over before a worker could be lost: {said[-3000:]}")
        clocks = read_load(out)[0].clocks
        before = (out / TURNS_FILE).read_bytes()
        spans_before = (out / CALLS_FILE).read_bytes()
        os.kill(clocks[1].pid, signal.SIGKILL)  # worker 1: callers 1 and 3
        shown, _ = run.communicate(timeout=300)
        answered = [a for a in agent.turns() if a["first_audio_sent_ns"] is not None]
    assert run.returncode == 0, shown[-3000:]
    shown = " ".join(shown.split())
    assert "starting 2 Ray workers" in shown and "worker 1 was lost with" in shown

    header, turns = read_load(out)
    # One timeline: both workers' clocks were measured against the driver's, on loopback to
    # well under a millisecond.
    assert [c.worker for c in clocks] == [0, 1] and header.backend == "ray"
    assert all(abs(c.offset_ms) <= c.uncertainty_ms + 1 for c in clocks)
    # Nothing written before the kill changed; the files only grew.
    assert (out / TURNS_FILE).read_bytes().startswith(before)
    assert (out / CALLS_FILE).read_bytes().startswith(spans_before)
    spans = read_models(out / CALLS_FILE, CallSpan)
    lost = [s for s in spans if s.lost]
    assert lost and {s.worker for s in lost} == {1} and {s.caller % 2 for s in lost} == {1}
    # Worker 0's callers went on after the kill, and every turn was timed as before.
    killed_at = max(s.end_s for s in lost)
    assert any(t.caller % 2 == 0 and t.offset_s > killed_at for t in turns)
    assert all(t.turn.error is None for t in turns)
    for t in turns:
        # timed as the agent answered it: from the end of speech to its first audio sent (a
        # busy machine can make it answer late), the answer found by both moments
        timing = t.turn.timing
        a = min(
            answered,
            key=lambda a: (
                abs(a["speech_end_ns"] - timing.speech_end_ns)
                + abs(a["first_audio_sent_ns"] - timing.audio_out_ns)
            ),
        )
        did = (a["first_audio_sent_ns"] - a["speech_end_ns"]) / 1e6
        # Never before the agent sent it; later only by how late the worker woke to it (on a
        # shared CPU a worker was seen 35 ms, and once 106 ms, after what the agent logged),
        # not by an anchoring mistake (the start of speech, a clock not aligned: seconds off).
        # How close it comes on a quiet machine is benchmarks/ws_load.py's to say.
        assert did >= 700 and -5 <= timing.ttfa_ms - did < ANCHOR_MS, (timing.ttfa_ms, did)
    # Concurrency counts both workers' calls: 3 and 4 were reached with 2 callers each.
    assert max(t.concurrency for t in turns) >= 3
    summary = json.loads((out / "summary.json").read_text())
    assert summary["lost_calls"] == len(lost) and summary["turns"] == len(turns)

    # (a machine busy with other work was seen to take more than 20 s to end Ray's workers)
    deadline = time.monotonic() + 120
    while ray_processes() and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not ray_processes()
