"""What the demo and a campaign print once the replies are judged and rated: the ranking only
under a judge whose card clears the trust bars; under any other, on one screen, the latency
table, the judge's card and how to bring a judge that can rank."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from demo_folders import demo_folder, demo_plan
from synthetic_runs import judge_card, make_judging, verdict

from voicebench.api.views import CampaignPlan, JudgeCard, RatingTable, card_line, own_family_of
from voicebench.cli.common import Steps, out
from voicebench.cli.present.job import ShownJob
from voicebench.judging.cards import CARD_FILE
from voicebench.judging.combine import judge_health, pair_results
from voicebench.judging.families import FamilyTally
from voicebench.judging.run import JudgingResult
from voicebench.judging.store import read_replies, read_verdicts
from voicebench.rating import rate_judging

SCREEN = (40, 100)
"""A terminal screen: lines, columns."""


def judged(
    tmp_path: Path, card: JudgeCard | None, *, own: bool = False
) -> tuple[CampaignPlan, Path]:
    """A demo's folder of two scripted agents, ``fast`` and ``slow``, on two items, judged
    (``fast`` beats the human reference, which beats ``slow``) under ``card``, none when
    None; with ``own``, by a judge of ``fast``'s family (qwen)."""
    plan = demo_plan(tmp_path / "demo")
    demo_folder(tmp_path / "demo")
    items = plan.cells[0].items
    verdicts = []
    for d in items:
        for a, b in (("fast", "human/reference"), ("human/reference", "slow"), ("fast", "slow")):
            verdicts += [verdict(d.id, a, b, "A"), verdict(d.id, b, a, "B")]
    folder = make_judging(
        plan.out_dir / "judging",
        [plan.run_dir(c) for c in plan.cells],
        items,
        ("fast", "slow", "human/reference"),
        verdicts,
        families={"fast": "qwen", "slow": "smollm", "human/reference": "human"} if own else None,
        judge_families={"j/1": "qwen"} if own else None,
    )
    if card is not None:
        (folder / CARD_FILE).write_text(card.model_dump_json())
    return plan, folder


def result_of(folder: Path, card: JudgeCard | None) -> JudgingResult:
    """What judging the folder returned."""
    verdicts = read_verdicts(folder)
    return JudgingResult(
        out_dir=folder,
        replies=read_replies(folder),
        verdicts=verdicts,
        pairs=pair_results(verdicts),
        health=judge_health(verdicts),
        skipped_pairs=0,
        smoke=False,
        asked=0,
        spec_path="local",
        card=card,
        own_family=own_family_of(folder),
    )


def summary(plan: CampaignPlan, folder: Path, card: JudgeCard | None, capsys) -> str:
    """What the job prints from the end of judging to the end of rating."""
    table: RatingTable = rate_judging(folder)
    with Steps("demo") as steps:
        job = ShownJob(steps, plan)
        job.judged(result_of(folder, card))
        job.rated(table, None)
    return capsys.readouterr().out


@pytest.fixture
def screen(monkeypatch):
    monkeypatch.setattr(out, "width", SCREEN[1])


UNTRUSTED = judge_card(
    spec_name="local",
    correct=28,
    accuracy=0.7,
    accuracy_low=0.55,
    accuracy_high=0.82,
    real_replies=True,
)

"""Right on 70% of real replies: below the 75% bar."""
AS_LONGER = judge_card(
    spec_name="local",
    correct=32,
    accuracy=0.8,
    accuracy_low=0.65,
    accuracy_high=0.9,
    real_replies=True,
    margin=judge_card().margin.model_copy(
        update={"difference": 0.0, "difference_low": -0.1, "difference_high": 0.1}
    ),
)
"""Right on 80%, as often as "the longer reply": short of the bar over the trivial rules."""


@pytest.mark.parametrize(
    "card", [UNTRUSTED, AS_LONGER, None], ids=["below-75%", "as-the-longer-reply", "unmeasured"]
)
def test_an_untrusted_judge_s_ranking_is_withheld_for_its_card_and_how_to_rank(
    tmp_path: Path, card: JudgeCard | None, capsys, screen
):
    plan, folder = judged(tmp_path, card)
    shown = summary(plan, folder, card, capsys)
    lines = shown.splitlines()
    # No ranking: no leaderboard, no Elo, no record of wins.
    assert "leaderboard" not in shown and "Elo" not in shown and "win" not in shown
    assert "contestants (pairs decided" not in shown
    # The latency table as the rating has it: the agents by their median TTFA.
    rows = [line for line in lines if line.startswith("│ fast") or line.startswith("│ slow")]
    assert [r.split()[1] for r in rows] == ["fast", "slow"]
    assert [r.split()[5] for r in rows] == ["900", "1,300"]  # TTFA p50 ms
    assert not any(line.startswith("│ human/reference") for line in lines)
    # Withheld, and why: the card and the bar it falls short of.
    withheld = lines.index(
        "quality ranking withheld: a judge ranks at 75% right, 10 points over the best trivial "
        "rule; this one's card:"
    )
    card_lines = card_line(card, "local").splitlines()
    assert lines[withheld + 1 : withheld + 1 + len(card_lines)] == card_lines
    # How to bring a judge that can rank, and the commands that judge the same runs again.
    assert "openai-compatible: a bigger model on your own server" in shown
    assert "qwen2.5-7b-instruct at http://127.0.0.1:8000/v1" in shown
    assert "openai (gpt-4o-mini; set OPENAI_API_KEY)" in shown
    assert "anthropic (claude-haiku-4-5; set ANTHROPIC_API_KEY)" in shown
    runs = " ".join(str(plan.run_dir(c)) for c in plan.cells)
    again = plan.out_dir / "rejudged"
    assert lines[-4:-1] == [
        "  voicebench judge-check --judge SPEC --gold real",
        f"  voicebench judge {runs} --judge SPEC --out {again}",
        f"  voicebench report {again} --out {plan.out_dir}/report-rejudged",
    ]
    # Where the ranking it withholds is kept, as indicative only.
    assert lines[-1] == f"its ranking, indicative only: voicebench rate {folder}, and the report"
    # All on one screen.
    assert sum(max(1, math.ceil(len(line) / SCREEN[1])) for line in lines) <= SCREEN[0], shown


def test_a_trusted_judge_s_ranking_is_printed_as_before(tmp_path: Path, capsys, screen):
    card = judge_card(spec_name="local")
    assert card.trusted
    plan, folder = judged(tmp_path, card)
    shown = summary(plan, folder, card, capsys)
    assert "HEART leaderboard" in shown and "quality and latency" in shown
    assert "contestants (pairs decided by the judges)" in shown
    lines = shown.splitlines()
    start = next(k for k, line in enumerate(lines) if "HEART leaderboard" in line)
    board = [line.split()[1] for line in lines[start:] if line.startswith("│ ")]
    assert board[:3] == ["fast", "human/reference", "slow"]  # the leaderboard, by Elo
    assert "withheld" not in shown and "voicebench judge-check" not in shown


def test_the_commands_to_judge_again_carry_the_campaign_s_own_settings(
    tmp_path: Path, capsys, screen
):
    plan = demo_plan(
        tmp_path / "demo",
        seed=7,
        judging={"pairs_per_item": 1},
        budgets={"ttfa_ms": 800, "ttft_ms": 500},
    )
    _, folder = judged(tmp_path, None)
    table = rate_judging(folder, budget_ttfa_ms=800, budget_ttft_ms=500)
    with Steps("campaign") as steps:
        ShownJob(steps, plan).rated(table, None)
    lines = capsys.readouterr().out.splitlines()
    assert lines[-3].endswith("/rejudged --pairs-per-item 1 --seed 7")
    assert lines[-2].endswith("/report-rejudged --budget-ttfa-ms 800")
    assert f"voicebench rate {folder} --budget-ttfa-ms 800," in lines[-1]


ON_QWEN = {"qwen": FamilyTally(pairs=20, correct=11, rules={"longer": 13, "asks": 9})}
"""The judge's card on the pairs with a qwen reply: right on 11 of 20."""
OWN_LINE = (
    "\u2020 j/1 (qwen) rated fast, its own family: on the 20 pairs with a qwen reply (holdout) "
    "it is right on 55% (95% CI 34%-74%), 'the longer reply' on 65% of them; against 70% on "
    "all 40 pairs"
)


def test_a_withheld_ranking_shows_the_judge_s_card_on_its_own_family_s_agent(
    tmp_path: Path, capsys, screen
):
    card = UNTRUSTED.model_copy(update={"by_family": ON_QWEN})
    plan, folder = judged(tmp_path, card, own=True)
    shown = summary(plan, folder, card, capsys)
    lines = shown.splitlines()
    assert "may favour its own family" not in shown
    # the agent's row is marked, and beside the card, the judge's figure on its family
    rows = [line.split()[1:3] for line in lines if line.startswith(("│ fast", "│ slow"))]
    assert rows == [["fast", "\u2020"], ["slow", "│"]]
    card_lines = card_line(card, "local").splitlines()
    after = lines.index(card_lines[-1]) + 1
    assert " ".join(lines[after : after + 2]).startswith(OWN_LINE)
    assert sum(max(1, math.ceil(len(line) / SCREEN[1])) for line in lines) <= SCREEN[0], shown


def test_a_leaderboard_marks_the_contestant_its_judge_s_family_rated(
    tmp_path: Path, capsys, screen
):
    card = judge_card(spec_name="local", accuracy=0.7, by_family=ON_QWEN)
    card = card.model_copy(update={"accuracy": 0.9})  # trusted: it ranks
    plan, folder = judged(tmp_path, card, own=True)
    shown = summary(plan, folder, card, capsys)
    own = OWN_LINE.replace("70% on all", "90% on all")
    flat = " ".join(line.strip(" │") for line in shown.splitlines())
    assert own in flat  # after the judging, and in the leaderboard's caption
    start = shown.index("HEART leaderboard")
    board = [line.split()[1:3] for line in shown[start:].splitlines() if line.startswith("│ ")]
    assert board[0] == ["fast", "\u2020"] and board[1][0] == "human/reference"
    # with no figure on the family, it says so
    plan, folder = judged(tmp_path / "unnamed", judge_card(spec_name="local"), own=True)
    shown = summary(plan, folder, judge_card(spec_name="local"), capsys)
    flat = " ".join(line.strip(" │") for line in shown.splitlines())
    assert (
        "j/1 (qwen) rated fast, its own family: its card is unmeasured on qwen replies (its "
        "gold pairs do not say which family wrote each reply)"
    ) in flat
