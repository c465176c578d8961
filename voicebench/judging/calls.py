"""Whole simulated calls as contestants (``voicebench converse`` folders).

Two agents that talked with the same caller (the same persona card, seeker model and seed) are
compared over the whole call, as the caller heard it: the judge is told who the caller is and
how the call opened, then reads each call turn by turn, the agent's side transcribed from its
audio. The calls of one item are a pair exactly as two final replies are, so scheduling, both
orders, the verdict cache and the ratings are the ones replies use; only the rubric
(``judges/rubric-call.md``, or a spec's ``call_rubric``) and what is shown differ. A call whose
caller broke role is never judged, nor one in which nothing the agent said was heard.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from voicebench.calling.records import CallRecord, read_calls
from voicebench.dialogues import Role
from voicebench.dialogues.personas import Persona
from voicebench.errors import InputError
from voicebench.judging.models import ContestantKind, Reply
from voicebench.judging.prompt import SPEAKERS
from voicebench.runlog import ReplayMode, read_header, read_turns
from voicebench.text import wer, word_diff

SILENCE = "..."
"""A supporter turn in which nothing was heard."""


def is_call_run(run_dir: Path) -> bool:
    return read_header(run_dir).mode is ReplayMode.SIMULATED


def call_context(call: CallRecord) -> str:
    """What the judge is told before the two calls: who the caller is, and the opening both
    calls share."""
    p = call.persona
    return (
        f"The caller: {p.who} {p.what_happened}\n"
        f"They feel {p.emotion} ({p.intensity} of 5) and want: {p.wants}\n"
        f"{SPEAKERS[Role.SUPPORTER]}: {call.greeting}"
    )


def call_transcript(call: CallRecord, replies: Sequence[str] | None = None) -> str:
    """The call turn by turn; the supporter's turns as heard (or ``replies``, one per
    exchange: what was meant to be said)."""
    said = replies if replies is not None else [e.heard for e in call.exchanges]
    lines = []
    for e, reply in zip(call.exchanges, said, strict=True):
        lines.append(f"{SPEAKERS[Role.SEEKER]}: {e.said.strip()}")
        lines.append(f"{SPEAKERS[Role.SUPPORTER]}: {reply.strip() or SILENCE}")
    return "\n".join(lines)


def check_call_runs(
    run_dirs: Sequence[Path],
) -> tuple[dict[str, str], dict[tuple[str, str], Path]]:
    """The context of each call id, and the run each (agent name, call id) call is in, after
    checking that the runs' calls can be compared: one seeker model and seed for all, one
    persona card per call id, and each agent's call with one caller in one run only (an
    agent's calls may span runs, a campaign's sets)."""
    first = read_header(run_dirs[0])
    contexts: dict[str, str] = {}
    cards: dict[str, Persona] = {}
    made: dict[tuple[str, str], Path] = {}
    for run_dir in run_dirs:
        header = read_header(run_dir)
        for field, mine, theirs in (
            ("seeker", header.seeker, first.seeker),
            ("seed", header.seed, first.seed),
        ):
            if mine != theirs:
                raise InputError(
                    f"this run's calls were made with {field} {mine!r}, {run_dirs[0]}'s with "
                    f"{theirs!r}; calls compared must share their caller",
                    file=run_dir / "run.json",
                    field=field,
                )
        name = header.agent.name
        for call in read_calls(run_dir):
            other = made.setdefault((name, call.call_id), run_dir)
            if other != run_dir:
                raise InputError(
                    f"agent name {name!r} called as {call.call_id!r} here and in {other}; "
                    "contestants need distinct names",
                    file=run_dir / "run.json",
                    field="agent.name",
                )
            if cards.setdefault(call.call_id, call.persona) != call.persona:
                raise InputError(
                    f"the caller of {call.call_id!r} has another persona card than in other runs",
                    file=run_dir / "calls.jsonl",
                    field="persona",
                )
            contexts.setdefault(call.call_id, call_context(call))
    return contexts, made


def call_replies(run_dir: Path, done: set[tuple[str, str]]) -> list[Reply]:
    """Each call of one converse folder not in ``done`` ((contestant, call id) pairs)."""
    header = read_header(run_dir)
    name, family = header.agent.name, header.agent.family
    turns = {(r.dialogue_id, r.turn_index): r for r in read_turns(run_dir)}
    out: list[Reply] = []
    for call in read_calls(run_dir):
        if (name, call.call_id) in done:
            continue
        meant = [
            (t.reply_text if (t := turns.get((call.call_id, e.turn_index))) else "") or ""
            for e in call.exchanges
        ]
        heard_words = " ".join(e.heard for e in call.exchanges).strip()
        meant_words = " ".join(meant).strip()
        failed = None
        if not call.valid:
            failed = "invalid call: the caller broke role"
        elif not heard_words:
            failed = "nothing the agent said in the call was heard"
        out.append(
            Reply(
                item_id=call.call_id,
                contestant=name,
                kind=ContestantKind.AGENT,
                family=family,
                heard=call_transcript(call),
                text=call_transcript(call, meant),
                word_diff=word_diff(meant_words, heard_words),
                heard_wer=round(wer(meant_words, heard_words), 4) if meant_words else None,
                audio_path=call.audio_path,
                run_dir=str(run_dir),
                failed=failed,
            )
        )
    return out
