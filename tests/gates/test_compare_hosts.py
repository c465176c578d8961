"""`check` and `compare` say which machine a run measured on: check flags a run measured on a
busy machine (in its table's output and the Markdown summary, its exit unchanged), compare
says when the runs come from different machines or software, or one was busy."""

from __future__ import annotations

import json
from pathlib import Path

from hosts import BUSY, QUIET, host
from synthetic_runs import make_run
from typer.testing import CliRunner

from voicebench import api
from voicebench.cli import app
from voicebench.dialogues import BUILTIN_DIALOGUES, load_dialogues

ITEMS = load_dialogues(BUILTIN_DIALOGUES)[:6]
runner = CliRunner()


def run(tmp_path: Path, name: str, *hosts) -> Path:
    return make_run(tmp_path, name, ITEMS, [900, 1000, 1100], hosts=hosts)


def flat(text: str) -> str:
    return " ".join(text.split())


def test_check_flags_a_run_measured_on_a_busy_machine(tmp_path: Path):
    busy = run(tmp_path, "busy", BUSY)
    summary = tmp_path / "gates.md"
    result = runner.invoke(
        app, ["check", str(busy), "--max-failed-pct", "5", "--summary-md", str(summary)]
    )
    assert result.exit_code == 0  # a flag beside the gates, not a gate
    out = flat(result.output)
    assert "1/1 gates passed" in out
    assert "host: Test CPU @ 3.0GHz, 8 CPUs; Linux-6.1.0-test-x86_64-with-glibc2.36" in out
    assert (
        "warning: the run was measured on a busy machine: CPU steal 25.0% of its CPU time "
        "(bound 10%); load average 2.50 per CPU (bound 1.00). Its latencies include time spent "
        "waiting for a CPU." in out
    )
    assert "measured on a busy machine: CPU steal 25.0%" in summary.read_text()
    assert [b.figure for b in api.check(busy, max_failed_pct=5).busy] == [
        "steal_pct",
        "load_per_cpu",
    ]


def test_check_on_a_quiet_machine_shows_the_host_and_no_warning(tmp_path: Path):
    result = runner.invoke(
        app, ["check", str(run(tmp_path, "quiet", QUIET)), "--max-failed-pct", "5"]
    )
    out = flat(result.output)
    assert "load average 0.50 (at most 1.50), CPU steal 0.0% (at most 5.0%) over 55 s" in out
    assert "warning" not in out and result.exit_code == 0


def test_compare_says_the_runs_came_from_different_machines_and_which_was_busy(tmp_path: Path):
    base = run(tmp_path, "base", QUIET)
    new = run(tmp_path, "new", host(cpu_model="Other CPU", cpu_count=2, steal_pct=30.0))
    result = runner.invoke(app, ["compare", str(base), str(new), "--out", str(tmp_path / "c")])
    out = flat(result.output)
    assert (
        "warning: hosts: the runs were measured on different machines (CPU Test CPU @ 3.0GHz "
        "-> Other CPU, CPUs 8 -> 2); a change may be the machine's, not the agent's" in out
    )
    assert "warning: the new run was measured on a busy machine: CPU steal 30.0%" in out
    saved = json.loads((tmp_path / "c" / "compare.json").read_text())["hosts"]
    assert saved["differs"] == ["cpu_model", "cpu_count"] and saved["base_busy"] == []
    assert [b["figure"] for b in saved["new_busy"]] == ["steal_pct"]
    page = (tmp_path / "c" / "index.html").read_text()
    assert '<p class="banner host">hosts: the runs were measured on different machines' in page


def test_compare_on_one_machine_says_so_and_names_other_software(tmp_path: Path):
    base = run(tmp_path, "base", QUIET)
    same = runner.invoke(app, ["compare", str(base), str(run(tmp_path, "same", QUIET))])
    assert "hosts: the same machine and software (Test CPU @ 3.0GHz, 8 CPUs;" in flat(same.output)
    assert "warning" not in same.output
    other = runner.invoke(
        app, ["compare", str(base), str(run(tmp_path, "upgraded", host(pipecat="1.15.0")))]
    )
    assert "hosts: the same machine, with other software (pipecat 1.14.0 -> 1.15.0)" in flat(
        other.output
    )


def test_compare_with_a_run_made_before_hosts_says_it_cannot_tell(tmp_path: Path):
    result = runner.invoke(
        app, ["compare", str(run(tmp_path, "old")), str(run(tmp_path, "new", QUIET))]
    )
    assert (
        "hosts: the base run has none recorded (made before voicebench recorded hosts), so "
        "whether the runs share a machine is unknown" in flat(result.output)
    )
