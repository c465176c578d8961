"""Nothing is left running: a run interrupted with Ctrl-C mid-turn stops its helper servers,
keeps its finished turns, and resumes where it stopped."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from processes import ROOT, as_in_a_terminal, descendants, survivors, voicebench

pytestmark = pytest.mark.slow


def test_ctrl_c_mid_run_stops_helpers_and_keeps_finished_turns(tmp_path: Path, short_set):
    out = tmp_path / "run"
    command = [
        sys.executable,
        "-m",
        "voicebench",
        "run",
        "--agent",
        "agents/scripted.toml",
        "--id",
        "short-tired",  # three short turns (tests/helpers/short_set.py)
        *short_set.options(),
        "--out",
        str(out),
    ]
    proc = subprocess.Popen(
        command,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=as_in_a_terminal,
    )
    helpers: set[int] = set()
    # Wait for the first finished turn, then interrupt the second one mid-way.
    for line in proc.stderr:
        helpers |= descendants(proc.pid)
        if line.startswith("[1/"):
            break
    time.sleep(3.0)
    helpers |= descendants(proc.pid)
    proc.send_signal(signal.SIGINT)
    rest = proc.stderr.read()
    code = proc.wait(timeout=60)
    assert code == 130, rest[-2000:]
    assert "interrupted; finished turns are kept" in rest
    assert helpers, "the scripted LLM server should have been running"
    assert not survivors(helpers)
    kept = [json.loads(line) for line in (out / "turns.jsonl").read_text().splitlines()]
    assert len(kept) == 1 and kept[0]["error"] is None
    # The same command resumes: the finished turn is not redone.
    again = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr[-2000:]
    assert "1/" in again.stderr and "turns already done" in again.stderr
    records = [json.loads(line) for line in (out / "turns.jsonl").read_text().splitlines()]
    assert (
        records[0] == kept[0]
        and len({(r["dialogue_id"], r["turn_index"]) for r in records}) == len(records) > 1
    )


def test_a_run_failing_after_its_helper_started_leaves_nothing_running(tmp_path: Path):
    """The scripted LLM server is up before the TTS is built; an unknown voice then stops the
    run with one line and exit 1, and the server goes with it."""
    agent = tmp_path / "bad-voice.toml"
    agent.write_text(
        (ROOT / "agents" / "scripted.toml")
        .read_text()
        .replace('voice = "en_US-joe-medium"', 'voice = "en_GB-nobody-low"')
    )
    proc = subprocess.Popen(
        voicebench("run", "--agent", str(agent), "--limit", "1", "--out", str(tmp_path / "run")),
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    helpers: set[int] = set()
    while proc.poll() is None:
        helpers |= descendants(proc.pid)
        time.sleep(0.05)
    stderr = proc.stderr.read()
    assert proc.returncode == 1, stderr
    assert helpers, "the scripted LLM server should have been started"
    assert not survivors(helpers)
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert lines[-1].startswith("error: ") and "en_GB-nobody-low" in lines[-1], stderr
    assert "Traceback" not in stderr
