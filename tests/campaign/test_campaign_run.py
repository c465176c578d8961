"""A campaign end to end on this machine: scripted agents at two speeds, clean and barge-in
cells, the offline smoke judge, one report; then a cell cut short is resumed and nothing
finished is done again."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

import pytest
from campaign_files import two_speeds, write_campaign
from chromium import Browser, find_chromium
from processes import ROOT, voicebench

from voicebench.calling import read_calls
from voicebench.judging import read_judging_header, read_verdicts
from voicebench.runlog import read_header, read_turns
from voicebench.testing.scripted_server import ScriptedLLMServer

pytestmark = pytest.mark.slow
CHROMIUM = find_chromium()


async def look(page: Path) -> tuple[list, dict[str, bool], str]:
    async with Browser(CHROMIUM) as browser:
        await browser.open(page)
        images = await browser.evaluate(
            "JSON.stringify(Object.fromEntries([...document.querySelectorAll('figure[id^=fig-]')]"
            ".map(f => [f.id, f.querySelector('img').complete "
            "&& f.querySelector('img').naturalWidth > 0])))"
        )
        text = await browser.evaluate("document.body.innerText")
        return browser.errors(), json.loads(images), text


def campaign(file: Path, out: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        voicebench("campaign", str(file), "--out", str(out)),
        cwd=ROOT,
        capture_output=True,
        text=True,
    )


def test_a_campaign_runs_judges_reports_and_resumes(tmp_path: Path, short_set):
    file = write_campaign(tmp_path, two_speeds(500, limit=1, short=short_set))
    out = tmp_path / "out"
    first = campaign(file, out)
    assert first.returncode == 0, first.stderr[-3000:]
    assert "4 cells" in first.stdout and "judge calls" in first.stdout
    # The smoke judge cannot rank: no ranking, its card instead (and how to rank, when there
    # were decided pairs to rate).
    assert "HEART leaderboard" not in first.stdout and "win rate" not in first.stdout
    assert "judge local-smoke:" in first.stdout, first.stdout
    rated = "quality ranking withheld" in first.stdout
    assert rated != ("no leaderboard: " in first.stdout), first.stdout
    assert rated == ("voicebench judge-check --judge SPEC --gold real" in first.stdout)
    plan = json.loads((out / "campaign.json").read_text())
    cells = {c["key"]: Path(c["run_dir"]) for c in plan["cells"]}
    assert len(cells) == 4
    turns = {k: read_turns(d) for k, d in cells.items()}
    assert all(t and all(r.error is None for r in t) for t in turns.values()), turns
    slow = turns["s-500--dialogues--clean"]
    assert all(r.timing.ttft_ms > 450 for r in slow)
    barged = [r for r in turns["s-300--dialogues--barge-in-delay_ms-600"] if r.scenario]
    assert barged and all(r.scenario.name == "barge-in" for r in barged)
    judged = out / "judging" / "local-smoke"
    verdicts = read_verdicts(judged)
    contestants = {v.contestant_a for v in verdicts} | {v.contestant_b for v in verdicts}
    assert {"s-300", "s-500"} <= contestants
    report = json.loads((out / "report" / "report.json").read_text())
    shown = {a["agent_name"]: a["judged_as"] for a in report["agents"]}
    assert shown == {
        "s-300": None,
        "s-500": None,
        "s-300 (barge-in:delay_ms=600)": "s-300",
        "s-500 (barge-in:delay_ms=600)": "s-500",
    }
    page = asyncio.run(look(out / "report" / "index.html")) if CHROMIUM else None
    if page is not None:  # the page a person opens: no errors, every figure drawn, every cell
        errors, images, text = page
        assert errors == [] and images and all(images.values()), (errors, images)
        assert {"fig-waterfall", "fig-latency_ecdf"} <= set(images)
        assert "s-500 (barge-in:delay_ms=600)" in text

    # A cell cut short (its last turn lost, as a kill would leave it) continues there; the
    # finished cells and the verdicts are kept as they were.
    cut = cells["s-500--dialogues--barge-in-delay_ms-600"]
    lines = (cut / "turns.jsonl").read_text().splitlines(keepends=True)
    (cut / "turns.jsonl").write_text("".join(lines[:-1]))
    again = campaign(file, out)
    assert again.returncode == 0, again.stderr[-3000:]
    for key, d in cells.items():
        now = read_turns(d)
        assert len(now) == len(turns[key])
        kept = now if d != cut else now[:-1]
        assert [r.started_at for r in kept] == [r.started_at for r in turns[key][: len(kept)]]
    assert (
        read_turns(cut)[-1].started_at
        != turns["s-500--dialogues--barge-in-delay_ms-600"][-1].started_at
    )
    assert len(read_verdicts(judged)) == len(verdicts)

    # The folder moved whole and reported from elsewhere: the report the campaign made.
    moved = tmp_path / "moved"
    out.rename(moved)
    again = subprocess.run(
        voicebench("report", "moved", "--out", "again"),
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert again.returncode == 0, again.stderr[-3000:]
    assert "Pipecat" not in again.stderr  # no library banner
    made = json.loads((moved / "report" / "report.json").read_text())
    remade = json.loads((tmp_path / "again" / "report.json").read_text())
    for r in (made, remade):
        del r["created_at"], r["judging"]["judging_dir"]
        for a in r["agents"]:
            a["run_dir"] = Path(a["run_dir"]).name
    assert remade == made


def test_a_simulated_campaign_converses_judges_whole_calls_and_reports(tmp_path: Path, short_set):
    """mode = "simulated": each cell is a converse folder; whole calls are judged."""
    line = "I guess that helps a little."
    verdict = json.dumps(
        {
            "winner": "A",
            "strength": 2,
            "dimensions": {"H": None, "E": "A", "A": None, "R": None, "T": None},
            "rationale": "Warmer.",
        }
    )
    with (
        ScriptedLLMServer(ttft_ms=20, reply=line) as seeker,
        ScriptedLLMServer(ttft_ms=5, reply=verdict) as judge,
    ):
        (tmp_path / "seeker.toml").write_text(
            'name = "s"\n[llm]\nprovider = "openai-compatible"\nmodel = "scripted-llm"\n'
            f'base_url = "{seeker.base_url}"\n'
        )
        (tmp_path / "judge.toml").write_text(
            'name = "j"\nrubric = "ROOT/judges/rubric-v1.md"\n[[judges]]\n'
            'provider = "openai-compatible"\nmodel = "scripted-llm"\nfamily = "testjudge"\n'
            f'base_url = "{judge.base_url}"\n'.replace("ROOT", str(ROOT))
        )
        body = two_speeds(500, limit=1, short=short_set)
        body = body.replace('scenarios = [[], ["barge-in:delay_ms=600"]]', 'mode = "simulated"')
        body = body.replace('judges = ["ROOT/judges/local-smoke.toml"]', 'judges = ["judge.toml"]')
        body += '\n[converse]\nturns = 2\nseeker = "seeker.toml"\n'
        file = write_campaign(tmp_path, body)
        done = campaign(file, tmp_path / "out")
    assert done.returncode == 0, done.stderr[-3000:]
    out = tmp_path / "out"
    plan = json.loads((out / "campaign.json").read_text())
    assert plan["campaign"]["mode"] == "simulated" and len(plan["cells"]) == 2
    for cell in plan["cells"]:
        run = Path(cell["run_dir"])
        (call,) = read_calls(run)
        assert [e.said for e in call.exchanges][1] == line and call.ended_by == "turns"
        assert len(read_turns(run)) == 2 and read_header(run).seeker.endswith("scripted-llm")
    judged = out / "judging" / "judge"
    assert read_judging_header(judged).unit == "call"
    assert len(read_verdicts(judged)) == 2  # one pair of calls, both orders
    report = json.loads((out / "report" / "report.json").read_text())
    assert report["call_judging"]["judging_dir"] == str(judged)
    assert {o["agent_name"] for o in report["calls"]} == {"s-300", "s-500"}
