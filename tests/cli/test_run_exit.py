"""What ``run``, ``converse`` and ``demo`` exit with when turns fail: 1 when no turn
succeeded, and with ``--fail-on-error`` when any failed; 0 otherwise (the failures are
recorded and counted either way)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from faulty_agent import faulty
from typer.testing import CliRunner

from voicebench.cli import app
from voicebench.replaying import folder
from voicebench.testing.scripted_server import ScriptedLLMServer

runner = CliRunner()
REPORT = {"intensity_before": 4, "intensity_after": 3, "felt_heard": 4, "would_call_again": True}
RUN = ["run", "--agent", "scripted", "--final-only", "--limit", "2"]


def run(tmp_path: Path, monkeypatch, failing, *options: str):
    monkeypatch.setattr(folder, "agent_class", lambda spec: faulty(failing))
    return runner.invoke(app, [*RUN, "--out", str(tmp_path / "run"), *options])


def test_a_run_whose_every_turn_failed_exits_1(tmp_path: Path, monkeypatch):
    result = run(tmp_path, monkeypatch, ["tts"])
    out = " ".join(result.output.split())
    assert "2 turns, 2 failed (tts_error 2)" in out
    assert "no turn succeeded: 2 of 2 failed" in out
    assert result.exit_code == 1


def test_a_run_with_one_turn_answered_exits_0(tmp_path: Path, monkeypatch):
    result = run(tmp_path, monkeypatch, ["tts", None])
    assert "2 turns, 1 failed (tts_error 1)" in " ".join(result.output.split())
    assert result.exit_code == 0


@pytest.mark.parametrize(("failing", "code"), [(["tts", None], 1), ([None], 0)])
def test_fail_on_error_exits_1_on_any_failed_turn(tmp_path: Path, monkeypatch, failing, code):
    result = run(tmp_path, monkeypatch, failing, "--fail-on-error")
    assert result.exit_code == code
    if code:
        assert "1 of 2 turns failed (--fail-on-error)" in " ".join(result.output.split())


def test_a_resumed_run_is_decided_on_all_its_turns(tmp_path: Path, monkeypatch):
    """Run again on a finished folder: nothing is replayed, and the exit says what the run's
    turns say."""
    assert run(tmp_path, monkeypatch, ["tts"]).exit_code == 1
    again = run(tmp_path, monkeypatch, [None])
    assert again.exit_code == 1
    assert "2 turns, 2 failed" in " ".join(again.output.split())


def test_the_demo_exits_1_when_an_agent_had_no_turn_succeed(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(folder, "agent_class", lambda spec: faulty(["tts"]))
    result = runner.invoke(
        app,
        ["demo", "--agent", "scripted", "--no-judge", "-n", "1", "--out", str(tmp_path / "d")],
    )
    assert "scripted-300ms: no turn succeeded: 1 of 1 failed" in " ".join(result.output.split())
    assert result.exit_code == 1
    assert (tmp_path / "d" / "report" / "index.html").is_file()  # the report is written first


@pytest.mark.slow  # Piper speaks the caller's line, Whisper is loaded to hear the agent
def test_converse_exits_1_when_no_agent_turn_succeeded(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(folder, "agent_class", lambda spec: faulty(["tts"]))
    with ScriptedLLMServer(ttft_ms=5) as seeker:
        seeker.enqueue(json.dumps(REPORT))
        spec = tmp_path / "seeker.toml"
        spec.write_text(
            f'name = "scripted-seeker"\n[llm]\nprovider = "openai-compatible"\n'
            f'model = "scripted-llm"\nbase_url = "{seeker.base_url}"\n'
        )
        result = runner.invoke(
            app,
            [
                *("converse", "--agent", "scripted", "--id", "adv-linear-ramp-01"),
                *("--seeker", str(spec), "--out", str(tmp_path / "calls")),
            ],
        )
    out = " ".join(result.output.split())
    assert "scripted-300ms: no turn succeeded: 1 of 1 failed" in out
    assert result.exit_code == 1
