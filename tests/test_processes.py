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

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[1]


def _descendants(pid: int) -> set[int]:
    out: set[int] = set()
    todo = [pid]
    while todo:
        found = subprocess.run(["pgrep", "-P", str(todo.pop())], capture_output=True, text=True)
        for child in map(int, found.stdout.split()):
            out.add(child)
            todo.append(child)
    return out


def _alive(pid: int) -> bool:
    try:
        return "\nState:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False


def test_ctrl_c_mid_run_stops_helpers_and_keeps_finished_turns(tmp_path: Path):
    out = tmp_path / "run"
    command = [sys.executable, "-m", "voicebench", "run", "--agent", "agents/scripted.toml",
               "--id", "reg-job-crisis-01", "--out", str(out)]
    proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    helpers: set[int] = set()
    # Wait for the first finished turn, then interrupt the second one mid-way.
    for line in proc.stderr:
        helpers |= _descendants(proc.pid)
        if line.startswith("[1/"):
            break
    time.sleep(3.0)
    helpers |= _descendants(proc.pid)
    proc.send_signal(signal.SIGINT)
    rest = proc.stderr.read()
    code = proc.wait(timeout=60)
    assert code == 130, rest[-2000:]
    assert "interrupted; finished turns are kept" in rest
    assert helpers, "the scripted LLM server should have been running"
    deadline = time.monotonic() + 10
    while any(_alive(p) for p in helpers) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not [p for p in helpers if _alive(p)]
    kept = [json.loads(line) for line in (out / "turns.jsonl").read_text().splitlines()]
    assert len(kept) == 1 and kept[0]["error"] is None
    # The same command resumes: the finished turn is not redone.
    again = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr[-2000:]
    assert "1/" in again.stderr and "turns already done" in again.stderr
    records = [json.loads(line) for line in (out / "turns.jsonl").read_text().splitlines()]
    assert records[0] == kept[0] and len({(r["dialogue_id"], r["turn_index"]) for r in records}) \
        == len(records) > 1
