"""Run directories made for judging tests: real Piper speech of known replies, real run logs."""

from __future__ import annotations

from pathlib import Path

import pytest

from voicebench.agentspec import AgentSpec, LLMSpec
from voicebench.dialogues import BUILTIN_DIALOGUES, load_dialogues
from voicebench.fixtures.audio import write_wav
from voicebench.judging.replies import HumanVoice
from voicebench.runlog import RunHeader, RunStore, TurnError, TurnRecord

ITEMS = ("reg-job-crisis-01", "reg-ongoing-depression-01")


@pytest.fixture(scope="session")
def voice() -> HumanVoice:
    return HumanVoice()


@pytest.fixture(scope="session")
def dialogues():
    by_id = {d.id: d for d in load_dialogues(BUILTIN_DIALOGUES)}
    return [by_id[i] for i in ITEMS]


def make_run(
    root: Path, name: str, family: str, replies: dict[str, str | None], voice, dialogues
) -> Path:
    """A finished teacher-forced run whose final turns said ``replies`` (None: the turn failed)."""
    run = root / name
    store = RunStore(run)
    store.open(
        RunHeader(
            run_id=name,
            created_at="2026-01-01T00:00:00+00:00",
            voicebench_version="0.1.0",
            agent=AgentSpec(name=name, family=family, llm=LLMSpec(provider="scripted", model=name)),
            agent_spec_path=f"agents/{name}.toml",
            dialogues_path=str(BUILTIN_DIALOGUES),
            dialogues_sha256="0" * 64,
            dialogue_ids=tuple(d.id for d in dialogues),
            fixtures_dir="audio_fixtures",
        )
    )
    for d in dialogues:
        text = replies[d.id]
        audio_path = None
        if text is not None:
            audio_path = f"audio/{d.id}__t{d.final_turn_index:02d}.wav"
            write_wav(run / audio_path, voice(text), 16_000)
        store.append(
            TurnRecord(
                run_id=name,
                contestant=f"scripted/{name}",
                agent_name=name,
                dialogue_id=d.id,
                turn_index=d.final_turn_index,
                final=True,
                user_text=d.turns[-1].text,
                reply_text=text or "",
                audio_path=audio_path,
                error=None if text is not None else TurnError(kind="timeout", reason="no answer"),
                started_at="2026-01-01T00:00:00+00:00",
            )
        )
    return run
