"""`voicebench dialogues adversarial`: schedules, and rewriting through a real OpenAI client
against the scripted server, told what to answer request by request."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from voicebench.cli import app
from voicebench.dialogues import (
    BUILTIN_DIALOGUES,
    Dialogue,
    EscalationProfile,
    Role,
    load_dialogues,
    save_dialogues,
)
from voicebench.dialogues.adversarial import check_rewrite, intensity_schedule
from voicebench.testing import ScriptedLLMServer

P = EscalationProfile


@pytest.mark.parametrize("profile", list(P))
@pytest.mark.parametrize("n", [2, 3, 4, 5, 8])
def test_every_schedule_ends_high_and_has_its_shape(profile, n):
    s = intensity_schedule(profile, n)
    assert len(s) == n and all(0 <= v <= 10 for v in s) and s[-1] == 10
    steps = [b - a for a, b in itertools.pairwise(s)]
    assert all(step >= 0 for step in steps)  # hostility never falls
    if profile is P.ALWAYS_10:
        assert set(s) == {10}
    elif profile is P.LINEAR_RAMP:
        assert s[0] == 2 and max(steps) - min(steps) <= 1  # even steps
    elif profile is P.MID_SPIKE:
        assert s[0] == 2 and max(steps) >= 7  # one sudden jump...
        assert steps.index(max(steps)) == max(0, n // 2 - 1)  # ... in the middle
    else:
        assert s[: n // 2] == (1,) * (n // 2)  # calm first half, then a rise
        assert max(steps) < 7 or n == 2


def _answer(d: Dialogue, intensities, *, change: bool = True) -> str:
    turns = [
        {
            "turn": i + 1,
            "intensity": v,
            "text": f"Oh please, spare me. ({d.turns[i].text[:40]})" if change else d.turns[i].text,
        }
        for i, v in zip(d.seeker_turn_indices, intensities, strict=True)
    ]
    return "Here it is:\n" + json.dumps({"seeker_turns": turns})


@pytest.fixture
def items(tmp_path: Path) -> tuple[Path, list[Dialogue]]:
    builtin = [d for d in load_dialogues(BUILTIN_DIALOGUES) if not d.adversarial]
    good, retried, hopeless = builtin[0], builtin[1], builtin[2]
    starts_with_seeker = Dialogue.model_validate(
        {
            **builtin[3].model_dump(),
            "id": "no-greeting",
            "turns": [t.model_dump() for t in builtin[3].turns[1:]],
        }
    )
    assert starts_with_seeker.turns[0].role is Role.SEEKER
    chosen = [good, retried, hopeless, starts_with_seeker]
    path = tmp_path / "in.jsonl"
    save_dialogues(chosen, path)
    return path, chosen


def _spec(tmp_path: Path, base_url: str) -> Path:
    spec = tmp_path / "writer.toml"
    spec.write_text(
        f'name = "writer"\nfamily = "scripted"\n[llm]\nprovider = "openai-compatible"\n'
        f'model = "scripted-llm"\nbase_url = "{base_url}"\n'
    )
    return spec


def test_seeker_turns_are_rewritten_checked_retried_or_rejected_and_resumed(tmp_path, items):
    path, (good, retried, hopeless, _) = items
    profile = P.MID_SPIKE
    with ScriptedLLMServer(ttft_ms=1, token_delay_ms=0) as llm:
        llm.enqueue(_answer(good, intensity_schedule(profile, len(good.seeker_turn_indices))))
        s = intensity_schedule(profile, len(retried.seeker_turn_indices))
        llm.enqueue(_answer(retried, [*s[:-1], 5]))  # the last turn is not hostile enough
        llm.enqueue(_answer(retried, s))
        h = intensity_schedule(profile, len(hopeless.seeker_turn_indices))
        for _ in range(3):
            llm.enqueue(_answer(hopeless, h, change=False))  # never rewrites anything
        out = tmp_path / "adv.jsonl"
        command = [
            "dialogues",
            "adversarial",
            str(path),
            "--profile",
            "mid-spike",
            "--llm",
            str(_spec(tmp_path, llm.base_url)),
            "--out",
            str(out),
        ]
        result = CliRunner().invoke(app, command)
        assert result.exit_code == 0, result.output
        said = " ".join(result.output.split())
        assert "mid-spike: target hostility (0-10) per seeker turn" in said
        assert "3 seeker turns: 2 9 10" in said
        assert "2 adversarial items written" in said and "2 rejected" in said
        sent = llm.history()
        assert len(sent) == 1 + 2 + 3  # the item without a greeting was never sent
        prompt = sent[0]["messages"][1]["content"]
        assert f"target hostility {s[-1]}/10" in prompt and good.situation in prompt

        made = load_dialogues(out)
        assert [d.id for d in made] == [f"{good.id}-mid-spike", f"{retried.id}-mid-spike"]
        for new, old in zip(made, (good, retried), strict=True):
            assert new.adversarial and new.escalation_profile is profile
            assert new.intensity == intensity_schedule(profile, len(old.seeker_turn_indices))
            assert new.situation == old.situation and new.reference_reply == old.reference_reply
            for a, b in zip(new.turns, old.turns, strict=True):
                assert a.role is b.role
                assert (a.text == b.text) == (a.role is Role.SUPPORTER)
            assert new.turns[-1].text.startswith("Oh please")
        rejected = [
            json.loads(x) for x in (tmp_path / "adv.jsonl.rejected.jsonl").read_text().splitlines()
        ]
        assert [r["id"] for r in rejected] == [hopeless.id, "no-greeting"]
        assert "left unchanged at target" in rejected[0]["reason"] and rejected[0]["attempts"] == 3
        assert rejected[1]["reason"] == "does not start with a supporter greeting"

        again = CliRunner().invoke(app, command)  # resumes: nothing is asked again
        assert again.exit_code == 0 and "4 were already done" in " ".join(again.output.split())
        assert len(llm.history()) == 6 and len(load_dialogues(out)) == 2


def test_answers_that_break_the_rules_are_refused_with_the_reason():
    d = next(x for x in load_dialogues(BUILTIN_DIALOGUES) if len(x.seeker_turn_indices) == 3)
    s = intensity_schedule(P.LINEAR_RAMP, 3)
    ok = json.loads(_answer(d, s).split("\n", 1)[1])
    assert check_rewrite(json.dumps(ok), d, s, P.LINEAR_RAMP).adversarial
    cases = {
        "expected": {"seeker_turns": ok["seeker_turns"][:2]},
        "speaker label": {
            "seeker_turns": [
                *ok["seeker_turns"][:2],
                {**ok["seeker_turns"][2], "text": "Seeker: no."},
            ]
        },
        "intensity 3, target 6": {
            "seeker_turns": [
                ok["seeker_turns"][0],
                {**ok["seeker_turns"][1], "intensity": 3},
                ok["seeker_turns"][2],
            ]
        },
        "not the asked shape": {"turns": []},
        "no JSON object": None,
    }
    for why, answer in cases.items():
        with pytest.raises(ValueError, match=why):
            check_rewrite("nothing" if answer is None else json.dumps(answer), d, s, P.LINEAR_RAMP)


def test_a_bad_profile_or_spec_is_one_line_naming_it(tmp_path, items):
    path, _ = items
    result = CliRunner().invoke(
        app,
        [
            "dialogues",
            "adversarial",
            str(path),
            "--profile",
            "sometimes",
            "--llm",
            "agents/scripted.toml",
        ],
    )
    assert result.exit_code == 2 and "--profile" in result.output
    remote = CliRunner().invoke(
        app,
        [
            "dialogues",
            "adversarial",
            str(path),
            "--profile",
            "always-10",
            "--llm",
            "agents/remote-example.toml",
        ],
    )
    assert remote.exit_code == 2 and "llm" in remote.output
