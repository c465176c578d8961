"""Records read back whatever text they hold, a killed writer's last line is skipped, files are
replaced through a temporary file of their own and fsynced, and deeply nested input is one
error line naming the file."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import numpy as np
import pytest
from synthetic_runs import load_header, make_judging, make_run, verdict

from voicebench._jsonl import append_record, read_models, write_atomic
from voicebench.dialogues import BUILTIN_DIALOGUES, load_dialogues, save_dialogues
from voicebench.errors import InputError
from voicebench.fixtures.audio import read_wav, write_wav
from voicebench.judging import read_replies, read_verdicts
from voicebench.judging.gold import load_gold
from voicebench.judging.replies import load_human_replies
from voicebench.rating.agreement import HumanJudgment, load_human_judgments
from voicebench.runlog import TurnError, read_turns

# Line and paragraph separators, and NEL: str.splitlines() ends a line at each of them.
ODD = "one\u2028two\u2029three\u0085four\x1cfive\x1dsix\x1eseven\x0beight\x0cend"
ITEMS = load_dialogues(BUILTIN_DIALOGUES)[:2]


def test_text_with_line_separators_round_trips_through_every_reader(tmp_path: Path):
    # A run's turns: what the agent said, and a failure's reason.
    run = make_run(
        tmp_path,
        "alpha",
        ITEMS,
        900,
        reply_text=ODD,
        failures={
            (ITEMS[1].id, ITEMS[1].final_turn_index): TurnError(kind="agent_error", reason=ODD)
        },
    )
    turns = read_turns(run)
    assert [t.reply_text for t in turns] == [ODD, ODD] and turns[1].error.reason == ODD

    # A judging folder: replies as heard, and a verdict's rationale.
    v = verdict(ITEMS[0].id, "alpha", "beta", "A")
    v = v.model_copy(update={"answer": v.answer.model_copy(update={"rationale": ODD})})
    judged = make_judging(tmp_path / "judged", [run], ITEMS, ["alpha", "beta"], [v], heard=ODD)
    assert {r.heard for r in read_replies(judged)} == {ODD}
    assert read_verdicts(judged)[0].answer.rationale == ODD

    # People's answers, written as annotate writes them.
    path = tmp_path / "human.jsonl"
    said = HumanJudgment(
        item_id=ITEMS[0].id, contestant_a="alpha", contestant_b="beta", rating=1, comment=ODD
    )
    append_record(path, said)
    append_record(path, said.model_copy(update={"rater": "r2"}))
    assert [h.comment for h in load_human_judgments(path)] == [ODD, ODD]

    # A load's turns, a strategy labelling's failure and an adversarial rewrite's rejection.
    from voicebench.dialogues.adversarial import Rejected
    from voicebench.live import LoadTurn, read_load
    from voicebench.strategies.label import LABELS_FILE, ReplyStrategies, read_labels

    load = tmp_path / "load"
    load.mkdir()
    (load / "load.json").write_text(load_header([ITEMS[0].id]))
    append_record(
        load / "turns.jsonl", LoadTurn(caller=0, call=0, concurrency=1, offset_s=0, turn=turns[0])
    )
    assert read_load(load)[1][0].turn.reply_text == ODD
    labels = ReplyStrategies(
        key="k", item_id="i", contestant="c", classifier="j/1", failure=ODD, raw=ODD
    )
    append_record(tmp_path / LABELS_FILE, labels)
    assert read_labels(tmp_path)[0].raw == ODD
    append_record(tmp_path / "rejected.jsonl", Rejected(id="i", profile="linear-ramp", reason=ODD))
    assert read_models(tmp_path / "rejected.jsonl", Rejected)[0].reason == ODD

    # Dialogue sets, human replies and gold pairs: hand-written files.
    dialogues = tmp_path / "set.jsonl"
    first = ITEMS[0]
    changed = first.model_copy(
        update={"turns": (first.turns[0].model_copy(update={"text": ODD}), *first.turns[1:])}
    )
    save_dialogues([changed, ITEMS[1]], dialogues)
    assert load_dialogues(dialogues)[0].turns[0].text == ODD
    replies = tmp_path / "replies.jsonl"
    replies.write_text(
        json.dumps({"item_id": first.id, "name": "ana", "reply": ODD}, ensure_ascii=False),
        encoding="utf-8",
    )
    assert load_human_replies(replies, {first.id})[0].reply == ODD
    gold_src = Path(__file__).resolve().parents[1] / "judges" / "pairs-gold.jsonl"
    pair = json.loads(gold_src.read_text().splitlines()[0])
    pair["reply_a"] = ODD
    gold = tmp_path / "gold.jsonl"
    gold.write_text(json.dumps(pair, ensure_ascii=False) + "\n", encoding="utf-8")
    assert load_gold(gold).pairs[0].reply_a == ODD


def test_a_killed_raters_last_line_is_skipped_and_a_hand_written_one_kept(tmp_path: Path):
    line = json.dumps({"item_id": "i", "contestant_a": "a", "contestant_b": "b", "rating": 1})
    path = tmp_path / "ann.jsonl"
    path.write_text(line + "\n" + line[:25])  # the second answer was being written
    assert len(load_human_judgments(path)) == 1
    path.write_text(line + "\n" + line)  # a hand-written file without the last newline
    assert len(load_human_judgments(path)) == 2


def test_write_atomic_uses_a_temporary_file_of_its_own_and_fsyncs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    synced: list[str] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        synced.append("folder" if os.path.isdir(f"/proc/self/fd/{fd}") else "file")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    target = tmp_path / "run.json"
    write_atomic(target, "{}\n")
    assert target.read_text() == "{}\n" and synced == ["file", "folder"]
    write_wav(tmp_path / "a.wav", np.arange(160, dtype=np.int16), 16_000)
    assert read_wav(tmp_path / "a.wav").tolist() == list(range(160))
    assert synced[2:] == ["file", "folder"]
    monkeypatch.setattr(os, "fsync", real_fsync)

    # Many writers of one file at once: every result is one writer's whole content.
    def write(k: int) -> None:
        for _ in range(40):
            write_atomic(target, json.dumps({"writer": k, "pad": "x" * 5000}))

    threads = [threading.Thread(target=write, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert json.loads(target.read_text())["writer"] in range(6)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.wav", "run.json"]  # no leftovers

    # A failed rename leaves the old content and no temporary file.
    def broken(*_args):
        raise OSError("disk gone")

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(OSError):
        write_atomic(target, "new")
    assert json.loads(target.read_text())["writer"] in range(6)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.wav", "run.json"]


DEEP_JSON = "[" * 100_000 + "]" * 100_000
DEEP_TOML = "a = " + "[" * 100_000 + "]" * 100_000 + "\n"


def test_deeply_nested_input_is_one_error_naming_the_file(tmp_path: Path):
    from voicebench._model import read_model
    from voicebench.agentspec import load_agent_spec
    from voicebench.campaign import load_campaign
    from voicebench.fixtures.manifest import load_manifest
    from voicebench.judging.cards import JudgeCard
    from voicebench.judging.spec import load_judge_spec
    from voicebench.rating.agreement import HumanJudgment as Human

    jsonl = tmp_path / "deep.jsonl"
    jsonl.write_text(DEEP_JSON + "\n")
    toml = tmp_path / "deep.toml"
    toml.write_text(DEEP_TOML)
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "manifest.json").write_text(DEEP_JSON)
    cases = [
        lambda: load_dialogues(jsonl),
        lambda: load_human_judgments(jsonl),
        lambda: load_human_replies(jsonl, {"x"}),
        lambda: read_models(jsonl, Human),
        lambda: load_gold(jsonl),
        lambda: read_model(JudgeCard, jsonl),
        lambda: load_manifest(tmp_path / "m"),
        lambda: load_agent_spec(toml),
        lambda: load_judge_spec(toml),
        lambda: load_campaign(toml),
    ]
    for case in cases:
        with pytest.raises(InputError) as err:
            case()
        message = str(err.value)
        assert ("deep." in message or "manifest.json" in message) and "\n" not in message
        assert "nested too deeply" in message or "not valid" in message, message
