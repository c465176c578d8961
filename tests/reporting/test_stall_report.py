"""How replies played and sound, in the report and the gates: a reply that stalled (the
budget table's stalled share and longest stall, and under the reply's player where the caller
heard nothing), and their speaking rate, loudness, clipping and clicks."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from synthetic_runs import make_judging, make_run, verdict
from test_call_moments import _replies_from
from typer.testing import CliRunner

from voicebench.cli import app
from voicebench.dialogues import BUILTIN_DIALOGUES, load_dialogues
from voicebench.fixtures.audio import write_wav
from voicebench.reporting import build_report
from voicebench.runlog import read_turns
from voicebench.timing.sound import Sound
from voicebench.timing.stalls import Playback, Stall

STALLED = Playback(audio_ms=2000.0, stalls=(Stall(at_ms=600, audio_ms=600, ms=300.0),))


CLICKED = Sound(words_per_minute=150.0, loudness_lufs=-20.0, clipped_share=0.01, clicks_ms=(5.0,))
CLEAN = Sound(words_per_minute=170.0, loudness_lufs=-24.0, clipped_share=0.0)


def _judged_run(tmp_path: Path, items, sounds=(CLICKED, CLEAN), heard: str = "hi") -> Path:
    """A judged run of ``items``: the first reply stalled and clicked, the second clean."""
    run = make_run(
        tmp_path,
        "fast",
        items,
        900,
        playbacks=[STALLED, Playback(audio_ms=2000.0)],
        sounds=list(sounds),
    )
    turns = []
    for t in read_turns(run):  # each reply with its audio, as a replay writes it
        write_wav(run / f"audio/{t.dialogue_id}.wav", np.full(32_000, 900, np.int16), 16_000)
        turns.append(t.model_copy(update={"audio_path": f"audio/{t.dialogue_id}.wav"}))
    (run / "turns.jsonl").write_text("".join(t.model_dump_json() + "\n" for t in turns))
    verdicts = [verdict(d.id, "fast", "human/reference", "A") for d in items]
    judged = make_judging(
        tmp_path / "judged",
        [run],
        items,
        ("fast", "human/reference"),
        verdicts,
        audio=True,
        heard=heard,
    )
    _replies_from(judged, run)
    return judged


def test_a_stalled_reply_shows_where_it_stalled_and_its_agent_how_much(tmp_path: Path):
    items = load_dialogues(BUILTIN_DIALOGUES)[:2]
    built = build_report([_judged_run(tmp_path, items)], tmp_path / "report")

    stalls = {
        item.item_id: r.stalls
        for item in built.report.replies
        for r in item.replies
        if r.contestant == "fast"
    }
    assert stalls == {items[0].id: STALLED.stalls, items[1].id: ()}
    (agent,) = built.report.agents
    assert agent.stalls is not None
    assert (agent.stalls.stalled, agent.stalls.replies, agent.stalls.longest_ms) == (1, 2, 300)
    page = (built.out_dir / "index.html").read_text()
    assert page.count("The caller heard nothing for 300 ms at 0.60 s of this audio") == 1
    # and on a bar as long as the player, a mark where it is: 600 ms into 2,000
    assert page.count('<span title="300 ms" style="left:30.0%"></span>') == 1
    assert "6.5%; 1 of 2 replies, longest 300 ms" in page  # 300 of 2,300 ms, and 0
    markdown = (built.out_dir / "report.md").read_text()
    assert "stalled 300 ms at 0.60 s" in markdown


def test_how_the_replies_sound_is_in_the_report_and_the_gates(tmp_path: Path):
    items = load_dialogues(BUILTIN_DIALOGUES)[:2]
    built = build_report([_judged_run(tmp_path, items)], tmp_path / "report")
    (agent,) = built.report.agents
    assert agent.sound is not None
    assert (agent.sound.words_per_minute, agent.sound.loudness_lufs) == (160.0, -22.0)
    assert (agent.sound.clipped_share, agent.sound.clicks, agent.sound.clicked) == (0.005, 1, 1)
    page = (built.out_dir / "index.html").read_text()
    assert "160 wpm; -22.0 LUFS; 0.50% clipped; 1 clicks in 1 replies" in page
    assert "150 wpm, -20.0 LUFS, 1.00% clipped, clicks at 0.01 s" in page
    run = tmp_path / "fast"
    for gates, code in (
        (["--min-speaking-rate-wpm", "140", "--max-speaking-rate-wpm", "180"], 0),
        (["--max-speaking-rate-wpm", "150"], 1),
        (["--max-clipped-pct", "0.1"], 1),
    ):
        result = CliRunner().invoke(app, ["check", str(run), *gates])
        assert result.exit_code in (code, 4 if code == 0 else code), result.output
        assert ("FAIL" in result.output) == (code == 1), result.output


def test_a_black_boxs_speaking_rate_is_counted_from_the_words_heard(tmp_path: Path):
    """An agent that sends audio alone gives no text to count in the run; once judging has
    transcribed its replies back, the report counts the words heard over the audible time."""
    items = load_dialogues(BUILTIN_DIALOGUES)[:2]
    unrated = Sound(loudness_lufs=-20.0, clipped_share=0.0, audible_ms=2400.0)
    judged = _judged_run(tmp_path, items, (unrated, unrated), heard="I hear you, that is hard.")
    built = build_report([judged], tmp_path / "report")
    (agent,) = built.report.agents
    assert agent.sound is not None and agent.sound.words_per_minute == 150.0  # 6 words, 2.4 s
    rows = [r.sound for item in built.report.replies for r in item.replies if r.sound]
    assert [s.words_per_minute for s in rows] == [150.0, 150.0]
    # the run itself, read without its judging, has none
    result = CliRunner().invoke(
        app, ["check", str(tmp_path / "fast"), "--min-speaking-rate-wpm", "100"]
    )
    assert "speaking_rate_wpm" in result.output and result.exit_code != 0, result.output
