"""``--scenario`` settings: defaults, overrides, clear errors, and draws fixed by the seed."""

from __future__ import annotations

import pytest

from voicebench.errors import InputError
from voicebench.scenarios.spec import SCENARIO_NAMES, draw_turn, parse_scenario


def test_every_scenario_has_defaults_and_draws_within_them():
    for name in SCENARIO_NAMES:
        assert parse_scenario(name).settings
    barge = parse_scenario("barge-in")
    for t in range(50):
        drawn = draw_turn([barge], 0, "item", t)
        assert drawn is not None and drawn.name == "barge-in"
        assert 300.0 <= drawn.params["delay_ms"] <= 1500.0
    noise = parse_scenario("noise")
    draws = [draw_turn([noise], 0, "item", t).params for t in range(60)]  # type: ignore[union-attr]
    assert {d["kind"] for d in draws} == {"white", "pink", "babble"}
    assert {d["snr_db"] for d in draws} == {20.0, 10.0, 5.0}


def test_settings_given_replace_the_defaults():
    s = parse_scenario("noise:snr_db=10, kind=pink")
    assert s.settings == {"kind": ("pink",), "snr_db": 10.0}
    assert draw_turn([s], 3, "x", 1).params == {"kind": "pink", "snr_db": 10.0}  # type: ignore[union-attr]
    line = parse_scenario("phone-line:loss_pct=2-4,jitter_ms=30")
    assert line.settings["loss_pct"] == (2.0, 4.0) and line.settings["jitter_ms"] == 30.0
    words = parse_scenario("backchannel:words=mm-hmm/yeah")
    assert words.settings["words"] == ("mm-hmm", "yeah")  # a hyphen in a word is not a range


def test_a_turn_draws_the_same_whatever_ran_before_it():
    scenarios = [parse_scenario("barge-in"), parse_scenario("backchannel")]
    first = [draw_turn(scenarios, 7, "item-a", t) for t in range(10)]
    again = [draw_turn(scenarios, 7, "item-a", t) for t in reversed(range(10))][::-1]
    assert first == again
    assert {d.name for d in first if d} == {"barge-in", "backchannel"}
    assert first != [draw_turn(scenarios, 8, "item-a", t) for t in range(10)]
    assert draw_turn([], 7, "item-a", 0) is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("thunder", r"unknown scenario 'thunder'; known: barge-in, backchannel"),
        ("noise:snr=10", r"--scenario noise: 'snr=10' is not key=value with a key of kind, snr_db"),
        ("pause:pause_ms=long", r"--scenario pause: pause_ms: 'long' is not a number"),
        ("barge-in:delay_ms=900-300", r"the range '900-300' runs backwards"),
        ("noise:snr_db=0-20", r"snr_db takes values \(A/B/C\), not a range"),
    ],
)
def test_a_bad_scenario_is_refused_naming_what_is_wrong(text: str, message: str):
    with pytest.raises(InputError, match=message):
        parse_scenario(text)
