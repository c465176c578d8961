"""Agreement statistics against textbook values and hand-made judges."""

from __future__ import annotations

import json

import numpy as np
import pytest

from voicebench.errors import InputError
from voicebench.judging import JudgeAnswer, Verdict, pair_results
from voicebench.rating.agreement import (
    agreement_report,
    fleiss_kappa,
    krippendorff_alpha_nominal,
    load_human_judgments,
)


def test_fleiss_kappa_textbook_example():
    # Fleiss (1971) as reproduced in most references: 10 subjects, 14 raters, 5 categories.
    counts = np.array(
        [
            [0, 0, 0, 0, 14],
            [0, 2, 6, 4, 2],
            [0, 0, 3, 5, 6],
            [0, 3, 9, 2, 0],
            [2, 2, 8, 1, 1],
            [7, 7, 0, 0, 0],
            [3, 2, 6, 3, 0],
            [2, 5, 3, 2, 2],
            [6, 5, 2, 1, 0],
            [0, 2, 2, 3, 7],
        ]
    )
    assert fleiss_kappa(counts) == pytest.approx(0.210, abs=0.001)
    assert fleiss_kappa(np.array([[3, 0], [0, 3], [3, 0]])) == pytest.approx(1.0)


def test_krippendorff_alpha_hand_computed():
    # o_aa=2, o_ab=o_ba=1, o_bb=4; n_a=3, n_b=5: alpha = 1 - (2/8) / (30/56) = 0.5333
    assert krippendorff_alpha_nominal(
        [["a", "a"], ["a", "b"], ["b", "b"], ["b", "b"]]
    ) == pytest.approx(1 - 0.25 / (30 / 56))
    assert krippendorff_alpha_nominal([["a", "a"], ["b", "b", "b"], ["a"]]) == pytest.approx(1.0)


def verdicts_for(judge: str, item: str, winner: str) -> list[Verdict]:
    out = []
    for a, b in (("x", "y"), ("y", "x")):
        side = "A" if a == winner else "B"
        ans = JudgeAnswer(
            winner=side,
            strength=3,
            dimensions={d: side if d == "E" else None for d in "HEART"},
            rationale="r",
        )
        out.append(
            Verdict(
                key=f"{judge}{item}{a}",
                item_id=item,
                judge=judge,
                rubric_sha256="h",
                contestant_a=a,
                contestant_b=b,
                answer=ans,
            )
        )
    return out


def test_judges_agreement_three_way_and_human_majority(tmp_path):
    plan = {
        "i1": ("x", "x", "x"),
        "i2": ("x", "y", "x"),
        "i3": ("y", "y", "y"),
        "i4": ("y", "y", "x"),
    }
    verdicts = [
        v
        for item, ws in plan.items()
        for j, w in zip("pqr", ws, strict=True)
        for v in verdicts_for(f"j/{j}", item, w)
    ]
    pairs = pair_results(verdicts)
    humans = tmp_path / "humans.csv"
    humans.write_text(
        "item_id,contestant_a,contestant_b,rating,rater\n"
        "i1,x,y,A much better,h1\ni1,y,x,B slightly better,h2\n"
        "i2,x,y,B slightly better,h1\ni3,y,x,same,h1\ni4,x,y,-2,h1\n"
    )
    report = agreement_report(verdicts, pairs, humans=load_human_judgments(humans), rounds=200)
    assert report.pairwise["j/p | j/q"][0] == 0.75 and report.pairwise["j/p | j/q"][3] == 4
    assert report.pairwise["j/p | j/r"][0] == 0.75
    assert report.pairwise["j/q | j/r"][0] == 0.5
    lo, hi = report.pairwise["j/q | j/r"][1:3]
    assert 0.0 <= lo <= 0.5 <= hi <= 1.0
    assert report.three_way[0] == 0.5
    # Ensemble majority: i1 x, i2 x, i3 y, i4 y. Humans: i1 x, i2 y, i3 none, i4 y -> 2 of 3.
    assert report.human_agreement[0] == pytest.approx(2 / 3, abs=1e-4)
    assert report.human_agreement[3] == 3
    assert report.fleiss_kappa is not None and report.krippendorff_alpha is not None
    assert report.fleiss_kappa_by_dimension["H"] is None  # nobody marked H: undefined


def test_bad_human_rows_name_the_row_and_field(tmp_path):
    bad = tmp_path / "h.csv"
    bad.write_text("item_id,contestant_a,contestant_b,rating\ni1,x,y,A is nicer\n")
    with pytest.raises(InputError, match=r"h.csv: row 2: rating: .*unknown rating"):
        load_human_judgments(bad)
    nohead = tmp_path / "n.csv"
    nohead.write_text("item,a,b\n")
    with pytest.raises(InputError, match="missing columns"):
        load_human_judgments(nohead)


def test_a_broken_csv_and_odd_field_names_give_one_line_errors(tmp_path):
    bad = tmp_path / "h.csv"
    bad.write_bytes(b"item_id,contestant_a,contestant_b,rating\nx,a\rb,c,same\n")
    with pytest.raises(InputError, match="not valid CSV") as info:
        load_human_judgments(bad)
    assert str(bad) in str(info.value) and "\n" not in str(info.value)
    odd = tmp_path / "h.jsonl"
    odd.write_text(
        json.dumps({"item_id": "x", "contestant_a": "a", "contestant_b": "b", "rating": 1, "\n": 1})
        + "\n"
    )
    with pytest.raises(InputError) as info:
        load_human_judgments(odd)
    assert "'\\n'" in str(info.value) and "\n" not in str(info.value)
