"""Provider faults through a real pipeline: each is recorded on its turn with a kind and a
reason naming the stage, retried where the client retries, and counted in the run summary and
the report. The LLM is the scripted server over HTTP, told what to do request by request; the
TTS is Piper; the ASR is Whisper hearing real audio, and once hearing silence."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from voicebench.agentspec import load_agent_spec
from voicebench.cli.present.runs import summary_table
from voicebench.fixtures import lookup_fixture, write_wav
from voicebench.fixtures.manifest import (
    Manifest,
    file_sha256,
    load_manifest,
    save_manifest,
)
from voicebench.metrics import summarize
from voicebench.replaying import replay
from voicebench.reporting.build import build_report
from voicebench.runlog import read_turns
from voicebench.testing import ScriptedLLMServer

pytestmark = pytest.mark.slow

ITEMS = ("short-tired", "short-test")  # 3 + 4 short spoken turns (tests/helpers/short_set.py)
TURN_TIMEOUT_S = 8.0


def fixtures_with_a_silent_turn(
    folder: Path, source: Path, dialogues, silent: tuple[str, int]
) -> Path:
    """The fixtures of ``dialogues`` in ``source``, with one turn's speech replaced by silence."""
    builtin = load_manifest(source)
    entries = []
    for d in dialogues:
        for k in d.seeker_turn_indices:
            entry = lookup_fixture(builtin, d.turns[k].text)
            (folder / entry.path).parent.mkdir(parents=True, exist_ok=True)
            if (d.id, k) == silent:
                write_wav(folder / entry.path, np.zeros(entry.num_samples, np.int16), 16_000)
                entry = entry.model_copy(update={"sha256": file_sha256(folder / entry.path)})
            else:
                shutil.copyfile(source / entry.path, folder / entry.path)
            entries.append(entry)
    save_manifest(folder, Manifest(entries=tuple(entries)))
    return folder


async def test_each_provider_fault_is_recorded_on_its_turn_and_counted(tmp_path: Path, short_set):
    dialogues = [short_set.item(i) for i in ITEMS]
    silent = (ITEMS[1], dialogues[1].seeker_turn_indices[2])  # the sixth turn
    fixtures = fixtures_with_a_silent_turn(
        tmp_path / "fixtures", short_set.fixtures_dir, dialogues, silent
    )
    with ScriptedLLMServer(ttft_ms=80, token_delay_ms=5, reply="I hear you. Tell me more.") as llm:
        # One entry per request, in order. The silent turn sends none.
        for content, fault in [
            (None, "429"),
            (None, None),  # turn 1: retried, fine
            (None, "500"),
            (None, "500"),
            (None, "500"),  # 2: gives up
            (None, "truncate"),  # 3: stream breaks off
            (None, "empty"),  # 4: no tokens at all
            ("...", None),  # 5: nothing to speak
            (None, "hang"),
        ]:  # 7: never answers
            llm.enqueue(content, fault=fault)
        spec_path = tmp_path / "agent.toml"
        spec_path.write_text(
            'name = "faulty"\nfamily = "scripted"\n[stt]\nprovider = "whisper"\n'
            'model = "tiny.en"\n[llm]\nprovider = "openai-compatible"\nmodel = "scripted-llm"\n'
            f'base_url = "{llm.base_url}"\n[tts]\nprovider = "piper"\nvoice = "en_US-joe-medium"\n'
        )
        records = await replay(
            load_agent_spec(spec_path),
            spec_path=spec_path,
            dialogues=dialogues,
            dialogues_path=short_set.dialogues_path,
            fixtures_dir=fixtures,
            out_dir=tmp_path / "run",
            turn_timeout_s=TURN_TIMEOUT_S,
        )
        faults = [r.fault for r in llm.requests()]
    assert faults.count("500") == 3 and faults.count("429") == 1

    kinds = [(r.error.kind if r.error else None) for r in records]
    assert kinds == [
        None,
        "llm_error",
        "llm_error",
        "no_reply",
        "no_audio",
        "no_transcript",
        "timeout",
    ]
    ok, gave_up, broke, empty, unspoken, unheard, hung = records
    assert ok.llm_calls == 2 and ok.timing.ttfa_ms is not None  # the 429 was retried
    assert ok.timing.ttft_ms > 1000  # ... after the Retry-After second, which TTFT includes
    assert (
        "500" in gave_up.error.reason and "3 requests: the client retried" in gave_up.error.reason
    )
    assert gave_up.llm_calls == 3
    assert broke.error.reason.startswith("the reply stream broke off after 1 token(s)")
    assert broke.timing.ttft_ms is not None
    assert empty.error.reason == "the LLM returned no tokens" and empty.reply_text == ""
    assert unspoken.error.reason == "the TTS yielded no audio for the reply '...'"
    assert unspoken.audio_path is None
    assert unheard.error.reason == "the agent's VAD heard no speech in the seeker's audio"
    assert unheard.llm_requests == 0 and unheard.user_transcript == ""
    assert hung.error.reason == f"the LLM sent no token within {TURN_TIMEOUT_S:g} s"
    # Every failed turn rebuilt the pipeline, so the next turn is cold.
    assert [r.cold for r in records] == [True, False, True, True, True, True, True]
    assert read_turns(tmp_path / "run") == records

    summary = summarize(records)
    assert summary.failed_by_kind == {
        "llm_error": 2,
        "no_audio": 1,
        "no_reply": 1,
        "no_transcript": 1,
        "timeout": 1,
    }
    assert "6 failed (llm_error 2, no_audio 1" in summary_table(summary, "t").caption

    built = build_report([tmp_path / "run"], tmp_path / "report")
    agent = json.loads((built.out_dir / "report.json").read_text())["agents"][0]
    assert agent["failed"] == 6 and agent["failed_by_kind"] == summary.failed_by_kind
    assert agent["censored_at_ms"] == TURN_TIMEOUT_S * 1000
    markdown = (built.out_dir / "report.md").read_text()
    assert "6 (llm\\_error 2, no\\_audio 1, no\\_reply 1, no\\_transcript 1, timeout 1)" in markdown
    assert "the reply stream broke off" in markdown
