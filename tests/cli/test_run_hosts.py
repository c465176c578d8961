"""The terminal names the machine a run measured on and warns, at the end of the run and in
``summary``, when it was busy. The machine's readings are a fake sampler's: nothing loads the
CPU."""

from __future__ import annotations

import json
from pathlib import Path

from faulty_agent import faulty
from hosts import QUIET
from synthetic_runs import make_run
from typer.testing import CliRunner

from voicebench.cli import app
from voicebench.dialogues import BUILTIN_DIALOGUES, load_dialogues
from voicebench.host import HostSampler, Machine, Reading
from voicebench.replaying import folder

runner = CliRunner()
MACHINE = Machine("Test CPU", 2, "Linux-test", "3.11.7", "0.1.0", "1.14.0")
WARNING = (
    "warning: scripted-300ms was measured on a busy machine: CPU steal 20.0% of its CPU time "
    "(bound 10%); load average 1.50 per CPU (bound 1.00). Its latencies include time spent "
    "waiting for a CPU."
)


def flat(text: str) -> str:
    return " ".join(text.split())


def sampler(*readings: Reading):
    """A sampler that reads ``readings`` (at the start, then at the stop: its thread waits an
    hour between readings, longer than any test)."""
    queue = list(readings)
    return lambda: HostSampler(interval_s=3600, read=lambda: queue.pop(0), machine=MACHINE)


def run(tmp_path: Path, monkeypatch, *readings: Reading):
    monkeypatch.setattr(folder, "agent_class", lambda spec: faulty([None]))
    monkeypatch.setattr(folder, "HostSampler", sampler(*readings))
    out = tmp_path / "run"
    args = ["run", "--agent", "scripted", "--final-only", "--limit", "2", "--out", str(out)]
    return runner.invoke(app, args), out


def test_a_run_on_a_busy_machine_ends_with_a_warning_and_records_its_host(tmp_path, monkeypatch):
    # Load 3 on 2 CPUs; 200 of 1,000 CPU ticks stolen between the two readings.
    result, out = run(tmp_path, monkeypatch, Reading(3.0, 100, 10_000), Reading(3.0, 300, 11_000))
    assert result.exit_code == 0, result.output
    text = flat(result.output)
    assert (
        "host: Test CPU, 2 CPUs; Linux-test; Python 3.11.7, voicebench 0.1.0, pipecat 1.14.0"
        in text
    )
    assert text.endswith(WARNING)
    (h,) = json.loads((out / "run.json").read_text())["hosts"]
    assert (h["cpu_model"], h["cpu_count"], h["pipecat"]) == ("Test CPU", 2, "1.14.0")
    assert h["load"] | {"seconds": 0} == {
        "samples": 2,
        "seconds": 0,
        "load_mean": 3.0,
        "load_max": 3.0,
        "steal_pct": 20.0,
        "steal_max_pct": 20.0,
    }
    again = runner.invoke(app, ["summary", str(out)])
    assert flat(again.output).endswith(WARNING)


def test_a_run_on_a_quiet_machine_says_its_host_and_no_warning(tmp_path, monkeypatch):
    result, _ = run(tmp_path, monkeypatch, Reading(0.5, 0, 10_000), Reading(0.7, 0, 11_000))
    text = flat(result.output)
    assert "host: Test CPU, 2 CPUs;" in text
    assert "load average 0.60 (at most 0.70), CPU steal 0.0% (at most 0.0%)" in text
    assert "warning" not in text


def test_summary_of_a_run_made_before_hosts_says_none_was_recorded(tmp_path: Path):
    items = load_dialogues(BUILTIN_DIALOGUES)[:2]
    old = runner.invoke(app, ["summary", str(make_run(tmp_path, "old", items, 900))])
    assert "host: not recorded (a run made before voicebench recorded hosts)" in flat(old.output)
    quiet = runner.invoke(app, ["summary", str(make_run(tmp_path, "q", items, 900, hosts=[QUIET]))])
    assert "host: Test CPU @ 3.0GHz, 8 CPUs;" in flat(quiet.output)
    assert "warning" not in quiet.output
