"""The report names the machine each run measured on (the Method section's Hosts table) and
flags, at its top, a run measured on a busy machine; report.json carries both."""

from __future__ import annotations

import json
from pathlib import Path

from hosts import BUSY, QUIET
from synthetic_runs import make_run
from typer.testing import CliRunner

from voicebench.cli import app
from voicebench.dialogues import BUILTIN_DIALOGUES, load_dialogues
from voicebench.reporting import build_report

ITEMS = load_dialogues(BUILTIN_DIALOGUES)[:4]
BANNER = (
    "busy was measured on a busy machine: CPU steal 25.0% of its CPU time (bound 10%); load "
    "average 2.50 per CPU (bound 1.00). Its latencies include time spent waiting for a CPU."
)


def test_a_busy_run_is_flagged_at_the_top_and_every_host_is_listed(tmp_path: Path):
    runs = [
        make_run(tmp_path, "quiet", ITEMS, 900, hosts=[QUIET]),
        make_run(tmp_path, "busy", ITEMS, 900, hosts=[QUIET, BUSY]),  # resumed on a busy machine
        make_run(tmp_path, "old", ITEMS, 900),  # made before hosts were recorded
    ]
    result = CliRunner().invoke(app, ["report", *map(str, runs), "--out", str(tmp_path / "r")])
    assert result.exit_code == 0, result.output
    assert f"warning: {BANNER}" in " ".join(result.output.split())
    data = json.loads((tmp_path / "r" / "report.json").read_text())
    by = {a["agent_name"]: a for a in data["agents"]}
    assert [len(by[n]["hosts"]) for n in ("quiet", "busy", "old")] == [1, 2, 0]
    assert [b["figure"] for b in by["busy"]["busy"]] == ["steal_pct", "load_per_cpu"]
    assert by["quiet"]["busy"] == [] and by["busy"]["hosts"][1]["load"]["steal_pct"] == 25.0
    page = (tmp_path / "r" / "index.html").read_text()
    top = page.index('id="summary"')
    assert page.index(f'<p class="banner">{BANNER}</p>') > top
    assert page.count('class="banner">') == 1
    hosts = page[page.index('<table class="sortable" id="hosts"') :].split("</table>")[0]
    assert hosts.count("<tr>") == 1 + 3  # the header, then a row per sitting
    assert "busy (busy)" in hosts and "Test CPU @ 3.0GHz" in hosts
    assert "20.00 (at most 21.00)" in hosts and "25.0% (at most 30.0%)" in hosts
    md = (tmp_path / "r" / "report.md").read_text()
    assert f"> **{BANNER}**" in md and "### Hosts" in md


def test_runs_without_hosts_have_no_hosts_table(tmp_path: Path):
    built = build_report([make_run(tmp_path, "old", ITEMS, 900)], tmp_path / "r")
    assert built.report.agents[0].hosts == () and built.report.agents[0].busy == ()
    page = (built.out_dir / "index.html").read_text()
    assert 'id="hosts"' not in page and "busy machine" not in page
