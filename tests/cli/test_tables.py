"""The terminal's tables at 80 and 100 columns: every agent's name and every interval is
shown whole, never cut short (``local-qwe…``) nor broken across lines, and a path in a title
folds only after a ``/``."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console
from rich.table import Table

from voicebench import builtin
from voicebench.api.views import LoadSummary, RatingTable, ScenarioFigures, summarize
from voicebench.campaign.plan import lay_out
from voicebench.campaign.spec import CampaignSpec
from voicebench.cli import campaign
from voicebench.cli.present.load import load_table
from voicebench.cli.present.rating import latency_board, leaderboard
from voicebench.cli.present.runs import overlap_table, scenario_table, summary_table
from voicebench.rating.table import ContestantRating

WIDTHS = (80, 100)


def demo_folder_spec() -> CampaignSpec:
    """Two variants of the scripted agent on two built-in items."""
    scripted = str(builtin.spec_path("agents", "scripted"))
    return CampaignSpec.model_validate(
        {
            "name": "two speeds",
            "agents": [{"spec": scripted, "name": n} for n in ("fast", "slow")],
            "dialogues": [{"path": str(builtin.DIALOGUES), "limit": 2}],
        }
    )


NAMES = ("local-qwen-0.5b", "human/reference", "local-smollm2")


def rendered(table: Table, width: int) -> list[str]:
    console = Console(width=width, record=True, color_system=None)
    console.print(table)
    return console.export_text().splitlines()


def whole(lines: list[str], text: str) -> bool:
    """``text`` stands on one line, uncut."""
    return any(text in line for line in lines)


def rating(name: str, k: int) -> ContestantRating:
    rate = {"H": 0.55, "E": 0.6, "A": 0.4, "R": None, "T": 1.0}
    return ContestantRating(
        contestant=name,
        kind="human" if name.startswith("human") else "agent",
        elo=1523.4 - 100 * k,
        elo_ci_asymptotic=(1400.2 - 100 * k, 1650.7 - 100 * k),
        elo_ci_bootstrap=(1391.0 - 100 * k, 1812.0 - 100 * k),
        decided=36,
        wins=18,
        win_rate=0.5,
        win_rate_regular=0.52,
        win_rate_adversarial=1.0,
        dimension_win_rates=rate,
        dimension_win_rates_regular=rate,
        dimension_win_rates_adversarial=rate,
        ttft_p50_ms=1183.0,
        ttfa_p50_ms=1996.0,
        goodput=0.5,
        elo_within_budget=1508.0,
        elo_latency_adjusted=1490.0,
    )


TABLE = RatingTable(
    created_at="2026-11-24T09:30:00+00:00",
    judging_dir="reports/runs/demo/judging",
    judges=("local/qwen2.5-coder-1.5b",),
    smoke=False,
    rubric_sha256="0" * 64,
    prior=1.0,
    bootstrap_rounds=1000,
    seed=0,
    budget_ttfa_ms=1000.0,
    budget_ttft_ms=500.0,
    items=6,
    decided=36,
    undecided=0,
    ratings=tuple(rating(n, k) for k, n in enumerate(NAMES)),
)


@pytest.mark.parametrize("width", WIDTHS)
def test_the_leaderboard_shows_names_and_intervals_whole(width: int):
    lines = rendered(leaderboard(TABLE), width)
    assert all(len(line) <= width for line in lines)
    for k, name in enumerate(NAMES):
        assert whole(lines, name), name
        assert whole(lines, f"{1391 - 100 * k:,}-{1812 - 100 * k:,}"), lines
        assert whole(lines, f"{1400 - 100 * k:,}-{1651 - 100 * k:,}"), lines
    assert not any("…" in line for line in lines)


@pytest.mark.parametrize("width", WIDTHS)
def test_the_latency_board_shows_names_and_figures_whole(width: int):
    lines = rendered(latency_board(TABLE), width)
    for name in NAMES:
        assert whole(lines, name), name
    assert whole(lines, "1,183") and whole(lines, "1,996")
    assert not any("…" in line for line in lines)


SCENARIOS = [
    ScenarioFigures(
        group="noise babble 10 dB",
        turns=12,
        failed=1,
        ttfa_p50_ms=(1234.0, 1100.0, 1400.0),
        wer=(0.123, 0.101, 0.145),
        measured="SNR 10.0 dB",
    ),
    ScenarioFigures(
        group="barge-in",
        turns=12,
        failed=0,
        ttfa_p50_ms=(1234.0, 1100.0, 1400.0),
        wer=(0.123, None, None),
        measured="-",
        overlapped=10,
        stop_p50_ms=(350.0, 300.0, 400.0),
        yielded=(0.8, 0.6, 0.9),
        talk_over_s=0.45,
        answered=(0.5, 0.3, 0.7),
    ),
    ScenarioFigures(
        group="phone-line",
        turns=12,
        failed=0,
        ttfa_p50_ms=(2345.0, 2100.0, 2600.0),
        wer=(0.123, 0.101, 0.145),
        measured="packets lost 2.9%, jitter 20 ms",
    ),
]


@pytest.mark.parametrize("width", WIDTHS)
def test_scenario_tables_keep_intervals_whole(width: int):
    lines = rendered(scenario_table(SCENARIOS, "by scenario"), width)
    for interval in ("[1,100-1,400]", "[10.1-14.5]", "[2,100-2,600]"):
        assert whole(lines, interval), (interval, lines)
    assert whole(lines, "barge-in") and whole(lines, "phone-line")
    overlap = overlap_table(SCENARIOS, "overlap")
    assert overlap is not None
    lines = rendered(overlap, width)
    for interval in ("[300-400]", "[60-90]", "[30-70]"):
        assert whole(lines, interval), (interval, lines)


@pytest.mark.parametrize("width", WIDTHS)
def test_the_load_table_keeps_intervals_whole(width: int):
    band = {
        "low": 1,
        "high": 4,
        "calls": 120,
        "turns": 480,
        "ttfa_p50_ms": 1234.0,
        "ttfa_p50_ci": (1100.0, 1400.0),
        "ttfa_p90_ms": 2234.0,
        "ttfa_p90_ci": (2100.0, 2400.0),
        "failure_share": 0.12,
        "failure_ci": (0.05, 0.2),
        "over": False,
    }
    summary = LoadSummary.model_validate(
        {
            "turns": 480,
            "failed": 58,
            "failures": {"timeout": 58},
            "calls": 120,
            "levels": [],
            "budget_ttfa_ms": 1000.0,
            "budget_breaks_at": None,
            "bands": [band],
        }
    )
    lines = rendered(load_table(summary, "local under load"), width)
    for interval in ("[1,100-1,400]", "[2,100-2,400]", "[5-20]"):
        assert whole(lines, interval), (interval, lines)


@pytest.mark.parametrize("width", (40, *WIDTHS))
def test_a_run_table_folds_its_folder_after_a_slash(width: int):
    path = "/tmp/pytest-of-someone/pytest-12/test_a_long_name0/reports/runs/local-20261124-093000"
    table = summary_table(summarize([]), f"local (local/smollm2-135m) - {path}")
    lines = rendered(table, width)
    title = [line.strip() for line in lines[: lines.index(next(x for x in lines if "┏" in x))]]
    assert "".join(title).replace(" - ", "").endswith(path)
    assert all(line.endswith(("/", "-", ")")) for line in title[:-1]), title
    for folder in path.strip("/").split("/"):
        assert whole(lines, folder), folder


def test_a_campaign_plan_folds_its_folder_after_a_slash(tmp_path: Path, monkeypatch):
    out = tmp_path / "a-campaign-folder-with-a-long-name" / "reports" / "campaign-20261124-0930"
    plan = lay_out(demo_folder_spec(), out, file=None)
    console = Console(width=80, record=True, color_system=None)
    monkeypatch.setattr(campaign, "out", console)
    campaign.show_plan(plan)
    lines = console.export_text().splitlines()
    for folder in out.parts[1:]:
        assert whole(lines, folder), (folder, lines)


@pytest.mark.parametrize("width", WIDTHS)
def test_a_judge_card_shows_the_judge_beside_the_trivial_rules_whole(width: int):
    from synthetic_runs import judge_card

    from voicebench.cli.present.judging import card_tables

    tables = card_tables(judge_card(spec_name="local"))
    rules = next(t for t in tables if t.title == "the judge and trivial rules on the same pairs")
    lines = rendered(rules, width)
    assert all(len(line) <= width for line in lines), lines
    for name in ("judge local", "the longer reply", "the reply sharing the seeker's words"):
        assert whole(lines, name), (name, lines)
    assert whole(lines, "36/40") and whole(lines, "90% (77%-96%)"), lines
    assert whole(lines, "the reply that asks a question") and whole(lines, "50% (35%-65%)")
    caption = " ".join(line.strip() for line in lines[-4:])
    assert "judge - the longer reply: +40.0 points (95% CI +22.0 to +54.0;" in caption, lines
