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
