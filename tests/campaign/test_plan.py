"""A campaign file is loaded, checked and laid out into cells before anything runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from campaign_files import ROOT, two_speeds, write_campaign

from voicebench.campaign.plan import ANSWER_S, plan_campaign
from voicebench.errors import InputError

GOOD = two_speeds(400, limit=2)
campaign = write_campaign


def test_the_cells_and_what_they_cost(tmp_path: Path):
    plan = plan_campaign(campaign(tmp_path, GOOD), tmp_path / "out")
    assert [c.key for c in plan.cells] == [
        "s-300--dialogues--clean",
        "s-300--dialogues--barge-in-delay_ms-600",
        "s-400--dialogues--clean",
        "s-400--dialogues--barge-in-delay_ms-600",
    ]
    assert [c.judged for c in plan.cells] == [True, False, True, False]
    assert [c.label for c in plan.cells] == [
        "s-300",
        "s-300 (barge-in:delay_ms=600)",
        "s-400",
        "s-400 (barge-in:delay_ms=600)",
    ]
    assert plan.cells[2].agent.llm.ttft_ms == 400 and plan.cells[0].agent.llm.ttft_ms == 300
    assert {c.cpus for c in plan.cells} == {2.0}
    per_cell = sum(len(d.seeker_turn_indices) for d in plan.cells[0].items)
    assert plan.turns == 4 * per_cell and len(plan.cells[0].items) == 2
    # At least the answers' time, plus the seekers' speech read off the fixtures.
    assert plan.audio_hours * 3600 > 4 * per_cell * ANSWER_S
    # Two variants and the human reference: 3 pairs, both orders, 2 items, 1 judge model.
    assert plan.judge_calls == 3 * 2 * 2 * 1
    assert plan.run_dir(plan.cells[0]) == tmp_path / "out" / "cells" / "s-300--dialogues--clean"

    twice = plan_campaign(campaign(tmp_path, "repeat = 2\n" + GOOD), tmp_path / "out2")
    assert {c.repeats for c in twice.cells} == {2} and twice.turns == 2 * plan.turns
    assert twice.audio_hours == pytest.approx(2 * plan.audio_hours)

    # Only the judged final turns: one an item, and the cells say so to the replay.
    noisy = "final_only = true\n" + GOOD.replace("barge-in:delay_ms=600", "noise")
    finals = plan_campaign(campaign(tmp_path, noisy), tmp_path / "out3")
    assert {c.final_only for c in finals.cells} == {True}
    assert finals.turns == 4 * len(plan.cells[0].items) < plan.turns
    assert finals.judge_calls == plan.judge_calls


def test_sets_shards_and_remote_agents(tmp_path: Path):
    # Two shards of one set, a remote agent's small CPU need, and fewer pairs an item.
    shards = []
    lines = (ROOT / "audio_fixtures" / "dialogues.jsonl").read_text().splitlines(keepends=True)
    for k in range(2):
        (tmp_path / f"part{k}").mkdir()
        shard = tmp_path / f"part{k}" / "set.jsonl"
        shard.write_text("".join(lines[k * 2 : k * 2 + 2]))
        shards.append(shard)
    (tmp_path / "remote.toml").write_text(
        'name = "far"\nfamily = "remote"\n[remote]\nurl = "ws://127.0.0.1:9"\n'
    )
    body = GOOD.replace(
        '[[dialogues]]\npath = "ROOT/audio_fixtures/dialogues.jsonl"\nlimit = 2\n',
        "".join(f'[[dialogues]]\npath = "{s}"\n' for s in shards),
    )
    body += '[[agents]]\nspec = "remote.toml"\n[judging]\npairs_per_item = 2\n'
    plan = plan_campaign(campaign(tmp_path, body), tmp_path / "out")
    keys = [c.key for c in plan.cells if c.variant == "far"]
    assert keys == [
        "far--set--clean",
        "far--set--barge-in-delay_ms-600",
        "far--set-2--clean",
        "far--set-2--barge-in-delay_ms-600",
    ]
    assert [c.label for c in plan.cells if c.variant == "far"][:3] == [
        "far",
        "far (set, barge-in:delay_ms=600)",
        "far (set-2, clean)",
    ]
    assert {c.cpus for c in plan.cells if c.variant == "far"} == {0.25}
    # Three variants and the human reference make 6 pairs; 2 are judged an item, both orders.
    assert plan.judge_calls == 2 * 2 * 4 * 1
    assert sum(c.judged for c in plan.cells) == 3 * 2


def test_both_shipped_sets_by_name_make_one_campaign_of_their_items(tmp_path: Path):
    body = GOOD.replace(
        '[[dialogues]]\npath = "ROOT/audio_fixtures/dialogues.jsonl"\nlimit = 2\n',
        '[[dialogues]]\npath = "builtin"\nlimit = 1\n[[dialogues]]\npath = "more"\nlimit = 1\n',
    )
    plan = plan_campaign(campaign(tmp_path, body), tmp_path / "out")
    cells = [c for c in plan.cells if c.variant == "s-300" and not c.scenarios]
    assert [c.key for c in cells] == ["s-300--dialogues--clean", "s-300--dialogues-more--clean"]
    assert [c.items[0].id for c in cells] == [
        "reg-ongoing-depression-01",
        "reg-ongoing-depression-101",
    ]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            ('name = "s-400"', 'name = "s-300"'),
            r"agents\.1\.name: agent name 's-300' is given twice",
        ),
        (("barge-in:delay_ms=600", "thunder"), "unknown scenario 'thunder'"),
        (
            ('agents/scripted.toml"\nname = "s-300"', 'agents/none.toml"\nname = "s-300"'),
            "agent spec not found",
        ),
        (("limit = 2", "limit = 0"), r"dialogues\.0\.limit"),
        (('name = "two speeds"', 'name = "two speeds"\nrepeat = 0'), r"repeat"),
        (
            ('name = "two speeds"', 'name = "two speeds"\nrepeat = 2\nmode = "simulated"'),
            "repeat: simulated calls are made once each",
        ),
        (
            ('name = "two speeds"', 'name = "two speeds"\nfinal_only = true\nmode = "simulated"'),
            "final_only: a simulated call has no written final turn",
        ),
        (
            ('name = "two speeds"', 'name = "two speeds"\nfinal_only = true'),
            "final_only: a barge-in",
        ),
        (("judges = [", "judges = 3\nx = ["), "judges"),
        (("limit = 2", "limit = 2\n[judging]\nproviders = { openai = 0 }"), "judging.providers"),
        (
            ('local-smoke.toml"]', 'local-smoke.toml", "ROOT/tests/local-smoke.toml"]'),
            r"judges\.1: two judges are named 'local-smoke'",
        ),
        # Names that differ only in what a folder name cannot hold would share a cell folder.
        (
            ('name = "s-400"', 'name = "s 300"'),
            r"agents\.1\.name: variants 's-300' and 's 300' would share the folder name 's-300'",
        ),
        (
            ('name = "s-400"', 'name = "S-300"'),
            r"agents\.1\.name: variants 's-300' and 'S-300' would share the folder name",
        ),
        (
            (
                '["barge-in:delay_ms=600"]]',
                '["barge-in:delay_ms=600"], ["barge-in: delay_ms=600"]]',
            ),
            r"scenarios\.2: scenario lists 1 and 2 would share the folder name",
        ),
    ],
)
def test_mistakes_are_named_before_anything_runs(tmp_path: Path, change, message):
    old, new = change
    assert old in GOOD
    with pytest.raises(InputError, match=message):
        plan_campaign(campaign(tmp_path, GOOD.replace(old, new, 1)), tmp_path / "out")


def test_sets_renamed_into_each_others_folder_are_refused(tmp_path: Path):
    lines = (ROOT / "audio_fixtures" / "dialogues.jsonl").read_text().splitlines(keepends=True)
    paths = []
    for k, (folder, name) in enumerate([("x", "a"), ("y", "a-3"), ("z", "a")]):
        (tmp_path / folder).mkdir()
        path = tmp_path / folder / f"{name}.jsonl"
        path.write_text(lines[k])
        paths.append(path)
    body = GOOD.replace(
        '[[dialogues]]\npath = "ROOT/audio_fixtures/dialogues.jsonl"\nlimit = 2\n',
        "".join(f'[[dialogues]]\npath = "{p}"\n' for p in paths),
    )
    with pytest.raises(InputError, match=r"dialogues\.2: sets .*a-3\.jsonl.* and .*a\.jsonl"):
        plan_campaign(campaign(tmp_path, body), tmp_path / "out")
