"""A reply's place in its call's recording, on the report page: the recording copied beside
the page once, the player starting a few seconds before the caller's end of speech, the moments
the caller stopped and the agent answered written beside it; played in headless Chromium."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from chromium import Browser, find_chromium
from synthetic_runs import MS, make_judging, make_run, verdict

from voicebench.dialogues import BUILTIN_DIALOGUES, load_dialogues
from voicebench.fixtures.audio import write_wav
from voicebench.judging.models import Reply
from voicebench.reporting import build_report
from voicebench.runlog import CallRef, read_turns

CHROMIUM = find_chromium()
S = 1000 * MS


def _with_calls(run: Path) -> None:
    """Each final turn gets its reply's audio and its call: the caller's end of speech 10 s
    into a 14 s two-channel recording (the turn's clock starts at its end of speech)."""
    turns = []
    for n, t in enumerate(read_turns(run)):
        name = f"calls/{t.dialogue_id}.wav"
        stereo = np.full((14 * 16_000, 2), n, np.int16)  # each call its own
        write_wav(run / name, stereo, 16_000)
        write_wav(run / f"audio/{t.dialogue_id}.wav", np.full(800, 900, np.int16), 16_000)
        turns.append(
            t.model_copy(
                update={
                    "audio_path": f"audio/{t.dialogue_id}.wav",
                    "call": CallRef(path=name, start_ns=-10 * S),
                }
            )
        )
    (run / "turns.jsonl").write_text("".join(t.model_dump_json() + "\n" for t in turns))


def _replies_from(judged: Path, run: Path) -> None:
    """The run's replies as judging records them: by run folder and audio path."""
    lines = []
    for line in (judged / "replies.jsonl").read_text().splitlines():
        r = Reply.model_validate_json(line)
        if r.contestant == "fast":
            r = r.model_copy(update={"run_dir": str(run), "audio_path": f"audio/{r.item_id}.wav"})
        lines.append(r.model_dump_json() + "\n")
    (judged / "replies.jsonl").write_text("".join(lines))


async def test_a_reply_plays_from_its_moment_in_the_call(tmp_path: Path):
    items = load_dialogues(BUILTIN_DIALOGUES)[:2]
    run = make_run(tmp_path, "fast", items, 1200)
    _with_calls(run)
    verdicts = [verdict(d.id, "fast", "human/reference", "A") for d in items]
    judged = make_judging(
        tmp_path / "judged", [run], items, ("fast", "human/reference"), verdicts, audio=True
    )
    _replies_from(judged, run)
    built = build_report([judged], tmp_path / "report")

    moments = [r.moment for item in built.report.replies for r in item.replies]
    fast = [m for m in moments if m is not None]
    assert len(fast) == len(items) and moments.count(None) == len(items)  # the human's: none
    for m in fast:
        assert (m.turn.from_s, m.turn.said_end_s, m.turn.first_audio_s) == (7.0, 10.0, 11.2)
        assert (built.out_dir / m.audio).is_file()
    assert len({m.audio for m in fast}) == len(items)  # one copy per call, named by content
    if CHROMIUM is None:
        pytest.skip("Chromium is not installed: the page was not played")
    async with Browser(CHROMIUM) as browser:
        await browser.open(built.out_dir / "index.html")
        facts = json.loads(
            await browser.evaluate(
                """(() => { const a = document.querySelector('#replies audio.call');
                  const note = a.closest('td').textContent;
                  return a.play().then(() => new Promise(done => setTimeout(() =>
                    done(JSON.stringify({at: a.currentTime, note})), 300))); })()"""
            )
        )
        errors = browser.errors()
    assert errors == []
    assert 7.0 <= facts["at"] < 9.0  # it plays from the turn's moment
    assert "the caller stops at 10.00 s, the agent answers at 11.20 s" in facts["note"]


async def test_a_run_report_lists_its_calls_to_play_with_each_turns_moments(tmp_path: Path):
    items = load_dialogues(BUILTIN_DIALOGUES)[:3]
    run = make_run(tmp_path, "fast", items, [900, 1500])
    _with_calls(run)
    built = build_report([run], tmp_path / "report")
    calls = built.report.recordings
    assert [c.dialogue_id for c in calls] == [d.id for d in items]
    assert built.report.recordings_left_out == 0
    for c in calls:
        (turn,) = c.turns
        assert (turn.from_s, turn.said_end_s) == (7.0, 10.0)
        assert turn.first_audio_s == pytest.approx(10.0 + turn.ttfa_ms / 1000)
        assert (built.out_dir / c.audio).is_file() and built.out_dir / c.audio in built.files
    markdown = (built.out_dir / "report.md").read_text()
    assert "## Calls to play" in markdown and "the agent answers at 10.90 s" in markdown
    if CHROMIUM is None:
        pytest.skip("Chromium is not installed: the page was not opened")
    async with Browser(CHROMIUM) as browser:
        await browser.open(built.out_dir / "index.html")
        facts = json.loads(
            await browser.evaluate(
                """JSON.stringify({
                  players: document.querySelectorAll('#recordings audio.call').length,
                  moments: Array.from(document.querySelectorAll('#recordings a.moment'))
                    .map(a => a.getAttribute('href'))})"""
            )
        )
        errors = browser.errors()
    assert errors == [] and facts["players"] == len(items)
    assert facts["moments"] == [f"{c.audio}#t=7.0" for c in calls]
