"""A report of runs that played scenarios: report.json carries each group's figures, the page
shows the scenario and overlap tables and the SNR curves, in real headless Chromium."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from chromium import Browser, find_chromium
from synthetic_runs import make_run
from test_browser import PAGE_FACTS

from voicebench.dialogues import BUILTIN_DIALOGUES, load_dialogues
from voicebench.reporting import build_report
from voicebench.runlog import ScenarioOutcome

CHROMIUM = find_chromium()


def noise(kind: str, snr: float) -> ScenarioOutcome:
    return ScenarioOutcome(name="noise", params={"kind": kind, "snr_db": snr}, snr_db=snr)


PLAYED = [
    None,
    noise("pink", 20.0),
    noise("pink", 10.0),
    noise("pink", 5.0),
    noise("babble", 10.0),
    ScenarioOutcome(
        name="barge-in",
        params={"delay_ms": 700.0},
        agent_speaking=True,
        stop_ms=180.0,
        yielded=True,
        talk_over_s=0.18,
        answered=True,
    ),
    ScenarioOutcome(
        name="backchannel",
        params={"words": "yeah", "delay_ms": 700.0},
        agent_speaking=True,
        false_yield=True,
        lost_s=1.2,
    ),
    ScenarioOutcome(name="pause", params={"pause_ms": 900.0}, premature=False),
]


@pytest.fixture
def report_dir(tmp_path: Path) -> Path:
    items = load_dialogues(BUILTIN_DIALOGUES)[:12]
    runs = [
        make_run(tmp_path, name, items, ttfa, all_turns=True, scenarios=PLAYED)
        for name, ttfa in (("fast", [600, 700, 650]), ("slow", [900, 1100, 1000]))
    ]
    return build_report(runs, tmp_path / "report").out_dir


def test_report_json_has_every_scenarios_figures(report_dir: Path):
    report = json.loads((report_dir / "report.json").read_text())
    assert "scenario_snr" in report["figures"]
    for agent in report["agents"]:
        groups = {g["group"]: g for g in agent["scenarios"]}
        assert set(groups) == {
            "clean",
            "noise pink 20 dB",
            "noise pink 10 dB",
            "noise pink 5 dB",
            "noise babble 10 dB",
            "barge-in",
            "backchannel",
            "pause",
        }
        pink = groups["noise pink 10 dB"]
        assert pink["snr_db"] == 10.0 and pink["kind"] == "pink"
        # 4 turns in 4 dialogues: its value, and too few dialogues for an interval
        assert pink["ttfa_p50_ms"][1:] == [None, None]
        barge = groups["barge-in"]
        assert barge["stop_p50_ms"][0] == 180.0 and barge["yielded"] == [1.0, None, None]
        assert groups["backchannel"]["false_yield"][0] == 1.0
        assert groups["pause"]["premature"][0] == 0.0
    md = (report_dir / "report.md").read_text()
    assert "## Scenarios" in md and "stop latency p50 (ms)" in md
    assert (report_dir / "figures" / "scenario_snr.svg").exists()


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed")
async def test_the_scenario_section_in_headless_chromium(report_dir: Path):
    async with Browser(CHROMIUM) as browser:
        await browser.open(report_dir / "index.html")
        facts = json.loads(await browser.evaluate(PAGE_FACTS))
        errors = browser.errors()
    assert errors == [], errors
    images = {i["id"]: i["ok"] for i in facts["images"]}
    assert images["fig-scenario_snr"] is True
    assert facts["rows"]["scenarios"] == 2 * 8  # two agents, eight groups
    # barge-in: 5 measures, backchannel: 2, pause: 2; for each agent
    assert facts["rows"]["overlap"] == 2 * 9
    assert "When the seeker spoke over the agent, or paused" in facts["text"]
