"""What the LLM is given before each spoken turn, in both replay modes."""

from __future__ import annotations

from voicebench.dialogues import Dialogue, Turn
from voicebench.replaying.play import turn_history
from voicebench.replaying.run import plan_turns, select_dialogues
from voicebench.runlog import ReplayMode, TurnRecord

DIALOGUE = Dialogue(
    id="d1",
    problem_type="job crisis",
    emotion_type="anxiety",
    situation="Lost a job.",
    turns=[
        Turn(role="supporter", text="Hi, what is on your mind?"),
        Turn(role="seeker", text="I lost my job."),
        Turn(role="supporter", text="That must be a shock."),
        Turn(role="seeker", text="I cannot tell my family."),
    ],
    reference_reply="It makes sense to dread that talk.",
)


def rec(k: int, heard: str, reply: str) -> TurnRecord:
    return TurnRecord(
        run_id="r",
        contestant="c/m",
        agent_name="a",
        dialogue_id="d1",
        turn_index=k,
        final=False,
        user_text=DIALOGUE.turns[k].text,
        user_transcript=heard,
        reply_text=reply,
        started_at="t",
    )


def test_teacher_forced_history_is_the_original_text_before_the_turn():
    assert turn_history(DIALOGUE, 3, ReplayMode.TEACHER_FORCED, {}) == [
        {"role": "assistant", "content": "Hi, what is on your mind?"},
        {"role": "user", "content": "I lost my job."},
        {"role": "assistant", "content": "That must be a shock."},
    ]
    assert turn_history(DIALOGUE, 1, ReplayMode.TEACHER_FORCED, {}) == [
        {"role": "assistant", "content": "Hi, what is on your mind?"},
    ]


def test_free_running_history_is_what_the_agent_heard_and_said():
    earlier = {1: rec(1, "I lost my job", "Oh no. How are you holding up?")}
    assert turn_history(DIALOGUE, 3, ReplayMode.FREE_RUNNING, earlier) == [
        {"role": "assistant", "content": "Hi, what is on your mind?"},
        {"role": "user", "content": "I lost my job"},
        {"role": "assistant", "content": "Oh no. How are you holding up?"},
    ]


def test_every_seeker_turn_is_planned_and_selection_keeps_order():
    assert plan_turns([DIALOGUE]) == [(DIALOGUE, 1), (DIALOGUE, 3)]
    # --final-only: the turn whose reply is judged, on its written history
    assert plan_turns([DIALOGUE], final_only=True) == [(DIALOGUE, 3)]
    other = DIALOGUE.model_copy(update={"id": "d2"})
    assert select_dialogues([DIALOGUE, other], limit=1) == [DIALOGUE]
    assert select_dialogues([DIALOGUE, other], limit=None, ids=["d2"]) == [other]


def test_a_turn_is_done_only_once_the_reply_to_the_last_words_was_played():
    from voicebench.pipeline.agent import _turn_done
    from voicebench.timing import EventKind, TurnEvent

    s = 1_000_000_000

    def e(kind, t):
        return TurnEvent(kind, int(t * s))

    cut_short = [
        e(EventKind.VAD_STOP, 1),
        e(EventKind.LLM_REQUEST, 1.5),
        e(EventKind.LLM_END, 1.6),
        e(EventKind.VAD_STOP, 3),
    ]
    # The first request was talked over: its end says nothing about the turn.
    assert not _turn_done(cut_short, now_ns=10 * s)
    answered = [
        *cut_short,
        e(EventKind.LLM_REQUEST, 3.5),
        e(EventKind.LLM_END, 3.9),
        e(EventKind.TTS_AUDIO, 3.8),
        e(EventKind.TTS_AUDIO, 4.2),
    ]
    assert not _turn_done(answered, now_ns=5 * s)
    assert _turn_done([*answered, e(EventKind.BOT_STOPPED, 6)], now_ns=6 * s)
    silent_reply = [*cut_short, e(EventKind.LLM_REQUEST, 3.5), e(EventKind.LLM_END, 3.9)]
    assert not _turn_done(silent_reply, now_ns=int(4.5 * s))
    assert _turn_done(silent_reply, now_ns=6 * s)
    # A TTS that took the reply is waited for, however slow, until it says it has nothing.
    slow_tts = [*silent_reply, e(EventKind.TTS_REQUEST, 3.95)]
    assert not _turn_done(slow_tts, now_ns=10 * s)
    assert not _turn_done([*slow_tts, e(EventKind.TTS_AUDIO, 10)], now_ns=11 * s)
    assert _turn_done([*slow_tts, e(EventKind.ERROR, 7)], now_ns=int(7.1 * s))
    assert _turn_done(slow_tts, now_ns=20 * s)  # ... or for QUIET_TTS_S


def test_final_only_is_for_teacher_forced_runs(tmp_path):
    import pytest

    from voicebench import replay
    from voicebench.errors import InputError

    with pytest.raises(InputError, match="teacher-forced only"):
        replay("scripted", out=tmp_path / "run", mode="free-running", final_only=True)
    assert not (tmp_path / "run").exists()


def test_a_final_only_run_is_not_resumed_as_a_full_one(tmp_path):
    import pytest

    from voicebench.errors import RunError
    from voicebench.runlog.store import _check_resumable

    header = _header(tmp_path)
    _check_resumable(header, header, tmp_path / "run.json")
    with pytest.raises(RunError, match="final_only differs"):
        _check_resumable(header, header.model_copy(update={"final_only": True}), tmp_path)
    # a full run's header keeps the fields it always had
    assert "final_only" not in header.model_dump()
    assert header.model_copy(update={"final_only": True}).model_dump()["final_only"] is True


def _header(tmp_path):
    from voicebench.agentspec import load_agent_spec
    from voicebench.builtin import spec_path
    from voicebench.replaying.folder import run_header
    from voicebench.runlog import ReplayMode

    dialogues = tmp_path / "d.jsonl"
    dialogues.write_text(DIALOGUE.model_dump_json() + "\n")
    path = spec_path("agents", "scripted")
    return run_header(
        load_agent_spec(path),
        out_dir=tmp_path / "run",
        spec_path=path,
        dialogues=[DIALOGUE],
        dialogues_path=dialogues,
        mode=ReplayMode.TEACHER_FORCED,
        fixtures_dir=tmp_path,
        turn_timeout_s=60.0,
        scenarios=(),
        seed=0,
    )
