"""Whole simulated calls judged pairwise: the judge is told who the caller is and reads both
calls as heard; invalid calls are left out; the ratings are fitted on them like replies'."""

from __future__ import annotations

from pathlib import Path

import pytest
from synthetic_runs import WordJudge, make_calls, make_run, word_judge_spec

from voicebench.dialogues import BUILTIN_DIALOGUES, load_dialogues
from voicebench.errors import InputError
from voicebench.judging import judge_runs, read_judging_header, read_replies, read_verdicts
from voicebench.rating import rate_judging

WARM = "I hear how heavy this is. What part of it weighs on you most tonight?"
COLD = "Okay. Anything else?"


@pytest.fixture
def items():
    dialogues = load_dialogues(BUILTIN_DIALOGUES)
    return [d for d in dialogues if not d.adversarial][:2] + [
        d for d in dialogues if d.adversarial
    ][:1]


def two_agents(root: Path, items) -> list[Path]:
    """'warm' and 'cold' called by the same callers; the third caller broke role with 'cold'."""
    return [
        make_calls(
            root, "warm", items, {d.id: [WARM, WARM, WARM] for d in items}, [1400, 400, 400]
        ),
        make_calls(
            root,
            "cold",
            items,
            {d.id: [COLD, COLD] for d in items},
            [400],
            invalid=[items[2].id],
        ),
    ]


async def test_whole_calls_are_judged_as_heard_and_rated(tmp_path: Path, items):
    runs = two_agents(tmp_path, items)
    judge = WordJudge("hear")
    out = tmp_path / "judged"
    result = await judge_runs(runs, word_judge_spec(tmp_path), out, client_factory=judge.client)

    header = read_judging_header(out)
    assert header.unit == "call"
    # The spec names no call rubric: the built-in one is used, and hashed into every key.
    assert Path(header.rubric_path).name == "rubric-call.md"
    assert judge.asked[0][0]["content"].startswith("You are judging two whole phone calls")
    # Two valid pairs (the third caller's call with 'cold' is invalid), both orders.
    assert len(judge.asked) == 4 and result.asked == 4
    replies = {(r.contestant, r.item_id): r for r in read_replies(out)}
    assert replies[("cold", items[2].id)].failed == "invalid call: the caller broke role"
    assert not any(r.contestant.startswith("human/") for r in replies.values())
    # The judge was told who the caller is and how the call opened, then read both calls turn
    # by turn as heard.
    user = judge.asked[0][-1]["content"]
    first = items[0]
    seeker_lines = [first.turns[k].text for k in first.seeker_turn_indices]
    assert "The caller: " in user and f"Supporter: {first.turns[0].text}" in user
    warm = replies[("warm", first.id)].heard
    assert warm.splitlines() == [
        line for said in seeker_lines[:3] for line in (f"Seeker: {said}", f"Supporter: {WARM}")
    ]
    assert warm in user and replies[("cold", first.id)].heard in user
    assert replies[("warm", first.id)].audio_path == f"calls/{first.id}.wav"
    assert all(v.winner == "warm" for v in read_verdicts(out))

    table = rate_judging(out, rounds=50)
    elo = {r.contestant: r for r in table.ratings}
    assert table.unit == "call" and elo["warm"].elo > elo["cold"].elo
    # A call is within budget when every turn of it is: warm's first answers took 1.4 s, so
    # no pair has both calls within budget (by final turns alone, every pair would).
    assert elo["warm"].elo_within_budget is None and elo["cold"].elo_within_budget is None

    # Again: every verdict is cached, nothing is asked.
    again = WordJudge("hear")
    rerun = await judge_runs(runs, word_judge_spec(tmp_path), out, client_factory=again.client)
    assert again.asked == [] and rerun.asked == 0


async def test_calls_judged_together_must_share_their_caller(tmp_path: Path, items):
    warm, cold = two_agents(tmp_path, items)
    other = make_calls(tmp_path, "other", items, {d.id: [COLD] for d in items}, [400], seeker="x/y")
    replayed = make_run(tmp_path, "replayed", items, 900)
    spec = word_judge_spec(tmp_path)
    with pytest.raises(InputError, match="calls compared must share their caller") as exc:
        await judge_runs([warm, other], spec, tmp_path / "j1")
    assert exc.value.field == "seeker" and exc.value.file == str(other / "run.json")
    with pytest.raises(InputError, match=r"judge simulated calls .* apart") as exc:
        await judge_runs([warm, replayed], spec, tmp_path / "j2")
    assert exc.value.field == "mode"
    with pytest.raises(InputError, match="a judging of whole calls has none"):
        await judge_runs([warm, cold], spec, tmp_path / "j3", human_files=[tmp_path / "h.jsonl"])
