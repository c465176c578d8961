"""`rate` from a judging folder: run logs give the latency, verdicts the ratings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from synthetic_runs import make_judging, make_run, verdict
from typer.testing import CliRunner

from voicebench.cli import app
from voicebench.dialogues import BUILTIN_DIALOGUES, load_dialogues
from voicebench.errors import InputError
from voicebench.rating import rate_judging


@pytest.fixture
def judged(tmp_path: Path) -> Path:
    dialogues = load_dialogues(BUILTIN_DIALOGUES)
    regular = [d for d in dialogues if not d.adversarial][:4]
    adversarial = [d for d in dialogues if d.adversarial][:2]
    items = regular + adversarial
    runs = [make_run(tmp_path, "fast", items, 800), make_run(tmp_path, "slow", items, 1600)]
    verdicts = []
    for d in items:
        # "slow" beats "fast" on regular items, loses on adversarial ones; both beat the human.
        win = "slow" if d in regular else "fast"
        lose = "fast" if win == "slow" else "slow"
        verdicts += [verdict(d.id, win, lose, "A", 4), verdict(d.id, lose, win, "B", 2)]
        for c in ("fast", "slow"):
            verdicts += [
                verdict(d.id, c, "human/reference", "A"),
                verdict(d.id, "human/reference", c, "B"),
            ]
    return make_judging(
        tmp_path / "judged", runs, items, ("fast", "slow", "human/reference"), verdicts
    )


def test_rating_table_from_a_judging_folder(judged: Path):
    table = rate_judging(judged, rounds=200, seed=1)
    by = {r.contestant: r for r in table.ratings}
    assert [r.contestant for r in table.ratings] == ["slow", "fast", "human/reference"]
    assert table.decided == 18 and table.undecided == 0 and table.items == 6
    assert by["slow"].wins == 4 + 6 and by["slow"].decided == 12
    assert by["slow"].win_rate_regular == pytest.approx(8 / 8)
    assert by["slow"].win_rate_adversarial == pytest.approx(2 / 4)
    assert by["fast"].win_rate_adversarial == pytest.approx(4 / 4)
    assert by["human/reference"].win_rate == 0.0
    assert by["slow"].dimension_win_rates["E"] == pytest.approx(10 / 12, abs=1e-4)
    assert by["slow"].dimension_win_rates["A"] is None
    lo, hi = by["slow"].elo_ci_bootstrap
    assert lo <= by["slow"].elo <= hi
    # Budget: TTFA 800 ms is within 1,000 ms, 1,600 ms is not.
    assert by["fast"].goodput == 1.0 and by["slow"].goodput == 0.0
    assert by["fast"].ttfa_p50_ms == 800.0 and by["slow"].ttft_p50_ms == 300.0
    assert by["slow"].elo_within_budget is None and by["fast"].elo_within_budget is not None
    assert by["slow"].elo_latency_adjusted is not None and table.latency_comparisons == 6
    saved = json.loads((judged / "ratings.json").read_text())
    assert saved["ratings"][0]["contestant"] == "slow"


def test_rate_command_prints_the_leaderboard(judged: Path):
    result = CliRunner().invoke(app, ["rate", str(judged), "--rounds", "100"])
    assert result.exit_code == 0, result.output
    assert "HEART leaderboard" in result.output and "human/reference" in result.output
    assert f"ratings: {judged}/ratings.json" in result.output


def test_a_folder_without_judging_is_refused(tmp_path: Path):
    with pytest.raises(InputError, match="not a judging folder"):
        rate_judging(tmp_path)
