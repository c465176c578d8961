"""The pytest plugin's decisions, quick: ``expect_not_below`` says when it cannot tell (too few
judged items, an untrusted judge) instead of passing; a shared run's folder is named after the
marker, not after the test that asked first; and voicebench raises no DeprecationWarning of
its own in a user's test output."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from processes import USER_PYTEST, user_env
from synthetic_runs import judge_card, make_judging, make_run, verdict

from voicebench.api import Judging
from voicebench.dialogues import BUILTIN_DIALOGUES, load_dialogues
from voicebench.judging.cards import CARD_FILE
from voicebench.pytest_plugin import expect_not_below

ITEMS = [d for d in load_dialogues(BUILTIN_DIALOGUES) if not d.adversarial]
TRUSTED = judge_card(accuracy=0.9, accuracy_low=0.8, accuracy_high=0.95)
UNTRUSTED = judge_card(accuracy=0.7, accuracy_low=0.6, accuracy_high=0.78)


def _judged(root: Path, wins: list[str], card=TRUSTED) -> Judging:
    """Agent ``alpha`` against the human reference on one item per entry of ``wins``: the
    side that won it, in both orders."""
    items = ITEMS[: len(wins)]
    run = make_run(root, "alpha", items, 900)
    verdicts = []
    for d, winner in zip(items, wins, strict=True):
        first = "A" if winner == "alpha" else "B"
        verdicts.append(verdict(d.id, "alpha", "human/reference", first))
        verdicts.append(verdict(d.id, "human/reference", "alpha", "B" if first == "A" else "A"))
    folder = make_judging(root / "judged", [run], items, ["alpha", "human/reference"], verdicts)
    if card is not None:
        (folder / CARD_FILE).write_text(card.model_dump_json())
    return Judging.load(folder)


def test_two_items_are_too_few_to_tell(tmp_path):
    judging = _judged(tmp_path, ["human/reference", "alpha"])
    with pytest.raises(pytest.skip.Exception) as said:
        expect_not_below(judging, "alpha", reference="human")
    assert "alpha's Elo against human/reference's" in str(said.value)
    assert "too few to tell: +0 on 2 judged items, an interval needs 6" in str(said.value)
    assert "untrusted" not in str(said.value)


def test_a_judge_below_the_trust_bar_is_named(tmp_path):
    judging = _judged(tmp_path, ["human/reference", "alpha"] * 4, card=UNTRUSTED)
    with pytest.raises(pytest.skip.Exception) as said:
        expect_not_below(judging, "alpha", reference="human")
    text = str(said.value)
    assert "untrusted judge: judge right on only 70% of gold pairs (below 75%)" in text
    assert "too few" not in text


def test_a_judge_no_better_than_the_longer_reply_is_named(tmp_path):
    rules = TRUSTED.trivial_rules or {}
    as_good = {**rules, "longer": rules["longer"].model_copy(update={"accuracy": 0.9})}
    margin = TRUSTED.margin.model_copy(update={"difference": 0.0}) if TRUSTED.margin else None
    card = TRUSTED.model_copy(update={"trivial_rules": as_good, "margin": margin})
    judging = _judged(tmp_path, ["human/reference", "alpha"] * 4, card=card)
    with pytest.raises(pytest.skip.Exception) as said:
        expect_not_below(judging, "alpha", reference="human")
    assert (
        "untrusted judge: judge right on 90% of gold pairs, no better than 'the longer reply' "
        "(90%): read the quality figures as indicative only"
    ) in str(said.value)


def test_an_unmeasured_judge_is_untrusted(tmp_path):
    judging = _judged(tmp_path, ["alpha"] * 8, card=None)
    with pytest.raises(pytest.skip.Exception, match="untrusted judge: unmeasured judge"):
        expect_not_below(judging, "alpha", reference="human")


def test_a_trusted_judge_on_enough_items_decides(tmp_path):
    below = _judged(tmp_path / "below", ["human/reference"] * 8)
    with pytest.raises(pytest.fail.Exception, match=r"is clearly below: -\d+ \(95% CI -\d+ to"):
        expect_not_below(below, "alpha", reference="human")
    even = _judged(tmp_path / "even", ["human/reference", "alpha"] * 4)
    assert expect_not_below(even, "alpha", reference="human") is None


def test_a_contestant_with_nothing_judged_fails_saying_so(tmp_path):
    items = ITEMS[:2]
    run = make_run(tmp_path, "alpha", items, 900)
    folder = make_judging(tmp_path / "judged", [run], items, ["human/reference"], [])
    with pytest.raises(pytest.fail.Exception) as said:
        expect_not_below(Judging.load(folder), "alpha", reference="human")
    assert str(said.value) == (
        f"nothing was judged in {folder}: alpha has no final reply in it "
        "(a final turn that failed is not judged)"
    )


SHARED = """
import os
from pathlib import Path
from types import SimpleNamespace

import pytest

import voicebench.api


@pytest.fixture(autouse=True)
def _no_replay(monkeypatch):
    def replay(agent, *, out, **kwargs):
        Path(out).mkdir(parents=True, exist_ok=True)
        return SimpleNamespace(path=Path(out))

    monkeypatch.setattr(voicebench.api, "replay", replay)


MARK = pytest.mark.voicebench(agent="agents/my-agent.toml", limit=2, seed=3)


@MARK
def test_first(voicebench_run):
    Path(os.environ["SEEN"], "first").write_text(voicebench_run.path.name)


@MARK
def test_second(voicebench_run):
    Path(os.environ["SEEN"], "second").write_text(voicebench_run.path.name)
    assert False  # keeps the folder
"""


def _suite(tmp_path: Path, *order: str) -> dict[str, str]:
    seen = tmp_path / "seen"
    seen.mkdir(parents=True, exist_ok=True)
    suite = tmp_path / "suite"
    suite.mkdir(exist_ok=True)
    (suite / "test_shared.py").write_text(SHARED)
    result = subprocess.run(
        [
            *USER_PYTEST,
            "--voicebench-dir",
            str(tmp_path / "kept"),
            *(f"test_shared.py::{t}" for t in order),
        ],
        cwd=suite,
        env=user_env(SEEN=str(seen)),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "1 failed, 1 passed" in result.stdout, result.stdout[-3000:] + result.stderr[-2000:]
    return {p.name: p.read_text() for p in seen.iterdir()}


def test_a_shared_run_is_named_after_the_marker_whatever_test_asks_first(tmp_path):
    one = _suite(tmp_path / "a", "test_first", "test_second")
    other = _suite(tmp_path / "b", "test_second", "test_first")
    assert one["first"] == one["second"] == other["first"] == other["second"]
    name = one["first"]
    assert name.startswith("run-my-agent-") and len(name) == len("run-my-agent-") + 12
    assert [p.name for p in (tmp_path / "a" / "kept").iterdir()] == [name]


NO_WARNINGS = """
import voicebench
import voicebench.remote.telephony
import voicebench.scenarios
import voicebench.timing.observer
from voicebench.pytest_plugin import expect


def test_uses_the_plugin(voicebench_replay):
    assert callable(voicebench_replay) and callable(expect)
    assert len(voicebench.scenarios.mulaw_encode(voicebench.scenarios.mulaw_decode(b"ab"))) == 2
"""


def test_voicebench_raises_no_deprecation_warning_of_its_own(tmp_path):
    """A user's suite that imports voicebench, its pipeline's timing (which loads pipecat)
    and its phone line, and takes the plugin's fixture, run with DeprecationWarnings shown."""
    (tmp_path / "test_user.py").write_text(NO_WARNINGS)
    result = subprocess.run(
        [*USER_PYTEST, "-W", "always::DeprecationWarning", "test_user.py"],
        cwd=tmp_path,
        env=user_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = result.stdout
    assert result.returncode == 0 and "1 passed" in out, out[-3000:] + result.stderr[-2000:]
    assert "audioop" not in out, out[-3000:]
    summary = out.split("warnings summary", 1)[-1] if "warnings summary" in out else ""
    assert "voicebench/" not in summary, summary[-3000:]
