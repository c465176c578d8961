"""People beside the judges: answers in a judging folder's human/ files give a ladder,
agreement with the judges, agreement between people and each rater's consistency, all of
them figures worked out by hand below."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from synthetic_runs import make_judging, make_run, verdict
from typer.testing import CliRunner

from voicebench.cli import app
from voicebench.dialogues import BUILTIN_DIALOGUES, load_dialogues
from voicebench.rating import rate_judging, to_elo
from voicebench.rating.agreement import fleiss_kappa
from voicebench.rating.bt import fit

H = "human/reference"
# (rater, item number, shown as A, shown as B, rating toward A, repeat)
ANSWERS = [
    ("r1", 0, "fast", "slow", -2, False),  # slow much better
    ("r2", 0, "slow", "fast", 1, False),  # slow slightly
    ("r3", 0, "fast", "slow", 0, False),  # same
    ("r1", 1, "slow", "fast", -1, False),  # fast slightly
    ("r2", 1, "fast", "slow", 2, False),  # fast much
    ("r3", 1, "fast", "slow", -1, False),  # slow slightly
    ("r1", 2, "fast", "slow", -1, False),  # slow slightly
    ("r2", 2, "slow", "fast", 1, False),  # slow slightly
    ("r1", 3, "fast", "slow", 0, False),  # same: one rater, no majority
    ("r1", 0, "fast", H, -2, False),  # human much
    ("r2", 0, H, "fast", 1, False),  # human slightly
    ("r1", 0, "slow", "fast", 1, True),  # repeat: slow again, consistent
    ("r2", 1, "slow", "fast", 0, True),  # repeat: same, where it said fast
]


@pytest.fixture
def rated(tmp_path: Path) -> Path:
    items = [d for d in load_dialogues(BUILTIN_DIALOGUES) if not d.adversarial][:4]
    runs = [make_run(tmp_path, "fast", items, 800), make_run(tmp_path, "slow", items, 1600)]
    verdicts = []
    for d in items:  # the judge: slow beats fast (strengths 4 and 2), both beat the human (3)
        verdicts += [verdict(d.id, "slow", "fast", "A", 4), verdict(d.id, "fast", "slow", "B", 2)]
        for c in ("fast", "slow"):
            verdicts += [verdict(d.id, c, H, "A"), verdict(d.id, H, c, "B")]
    judged = make_judging(tmp_path / "judged", runs, items, ("fast", "slow", H), verdicts)
    (judged / "human").mkdir()
    for rater, k, a, b, rating, repeat in ANSWERS:
        line = {
            "item_id": items[k].id,
            "contestant_a": a,
            "contestant_b": b,
            "rating": rating,
            "rater": rater,
            "repeat": repeat,
            "comment": f"{rater} on {k}",
        }
        with (judged / "human" / f"{rater}.jsonl").open("a") as fh:
            fh.write(json.dumps(line) + "\n")
    (judged / "human" / "r4.jsonl").write_text("")  # a rater who has not answered yet
    return judged


def test_people_figures_from_the_human_folder(rated: Path):
    people = rate_judging(rated, rounds=200, seed=1).people
    assert people is not None
    assert people.raters == ("r1", "r2", "r3") and people.judgments == 13
    assert people.repeats == 2 and people.pairs == 5
    # Majorities: item 0 slow (judge agrees), 1 fast (judge says slow), 2 slow (agrees),
    # item 0 fast vs human: human (judge says fast); item 3 has none.
    assert people.judge_agreement["ensemble"][0] == 0.5
    assert people.judge_agreement["ensemble"][3] == 4
    assert people.judge_agreement["j/1"][:1] == (0.5,) and list(people.judge_agreement)[-1] == (
        "ensemble"
    )
    # Rater pairs: item 0 1 of 3 agree, item 1 1 of 3, item 2 1 of 1, fast-human 1 of 1.
    assert people.inter_rater[0] == 0.5 and people.inter_rater[3] == 8
    # Categories (first, same, second) per pair with two raters or more.
    counts = np.array([[0, 1, 2], [2, 0, 1], [0, 0, 2], [0, 0, 2]])
    p_i = np.array([2 / 6, 2 / 6, 1, 1])
    p_e = 0.2**2 + 0.1**2 + 0.7**2
    assert people.fleiss_kappa == round((p_i.mean() - p_e) / (1 - p_e), 4) == 0.2754
    assert fleiss_kappa(counts) == pytest.approx(0.27536, abs=1e-5)
    # Coincidences: 4 of 10 disagree; expected 2 (7*1 + 7*2 + 1*2) / (10 * 9).
    assert people.krippendorff_alpha == round(1 - 0.4 / (46 / 90), 4) == 0.2174
    consistency = {c.rater: (c.judgments, c.repeats, c.consistent) for c in people.consistency}
    assert consistency == {"r1": (6, 1, 1.0), "r2": (5, 1, 0.0), "r3": (2, 0, None)}
    # The ladder: slow beat fast with weight 2+1+1+1 (+1 from item 1), fast beat slow 1+2,
    # the human beat fast 2+1; "same" adds nothing.
    W = np.zeros((3, 3))  # fast, human, slow
    W[2, 0], W[0, 2], W[1, 0] = 6, 3, 3
    elo = dict(zip(("fast", H, "slow"), to_elo(fit(W)), strict=True))
    ladder = {r.contestant: r for r in people.ladder}
    assert [r.contestant for r in people.ladder] == sorted(elo, key=lambda c: -elo[c])
    for name, value in elo.items():
        assert ladder[name].elo == round(float(value), 1)
    assert (ladder["fast"].votes, ladder["fast"].wins) == (9, 2)
    assert (ladder["slow"].votes, ladder["slow"].wins) == (7, 5)
    assert (ladder[H].votes, ladder[H].win_rate) == (2, 1.0)
    # The surest disagreement first: fast vs human (mean -1.5, strength 3) before item 1
    # (mean +2/3 toward fast, strength 3).
    d = people.disagreements
    assert [(x.first, x.second, x.people_winner, x.judge_winner) for x in d] == [
        ("fast", H, H, "fast"),
        ("fast", "slow", "fast", "slow"),
    ]
    assert d[0].people == {"first": 0, "same": 0, "second": 2} and d[0].people_score == -1.5
    assert d[0].rationale == "r" and d[0].judge_strength == 3
    assert d[1].people_score == pytest.approx(0.667) and d[1].first_reply == "hi"


def test_rate_prints_the_people(rated: Path):
    result = CliRunner().invoke(app, ["rate", str(rated), "--rounds", "200", "--seed", "1"])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "people's ladder" in text
    ci = r"\(95% CI [\d.]+\u2013[\d.]+\)"
    assert re.search(rf"People vs ensemble: 50\.0% {ci} over 4 pairs", text)
    assert "(HEART: 78.7%)" in text
    assert re.search(rf"Between people: 50\.0% {ci} over 8 rater pairs", text)
    assert "Fleiss' kappa 0.275 (HEART: 0.673); Krippendorff's alpha 0.217" in text
    assert "Rater r1: 6 answers; same answer on 100% of 1 repeated pairs" in text
    assert "Rater r2: 5 answers; same answer on 0% of 1 repeated pairs" in text
    rows = {line.split("│")[1].strip(): line for line in result.output.splitlines() if "│" in line}
    assert re.search(r"│\s+9\s+│\s+22\s+│", rows["fast"])  # votes, win %
    assert "where people and judges disagree most" in text


def test_an_answer_changes_the_ratings_inputs(rated: Path):
    from voicebench.rating import current_ratings

    rate_judging(rated, rounds=50)
    assert current_ratings(rated, rounds=50).people.judgments == 13
    first = json.loads((rated / "human" / "r1.jsonl").read_text().split("\n")[0])
    line = {"item_id": first["item_id"], "contestant_a": "fast", "contestant_b": H, "rating": 2}
    with (rated / "human" / "r3.jsonl").open("a") as fh:
        fh.write(json.dumps({**line, "rater": "r3"}) + "\n")
    assert current_ratings(rated, rounds=50).people.judgments == 14
