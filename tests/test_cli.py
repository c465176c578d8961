"""The CLI: one-line errors with exit codes, and the commands that need no pipeline."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from voicebench.cli import app

runner = CliRunner()
DATA = Path(__file__).resolve().parent / "data" / "esconv"


def test_import_esconv_writes_a_loadable_set(tmp_path: Path):
    dest = tmp_path / "items.jsonl"
    result = runner.invoke(
        app, ["dialogues", "import", "esconv", str(DATA / "conversations.json"), "--out", str(dest)]
    )
    assert result.exit_code == 0, result.output
    assert "items from" in result.output
    check = runner.invoke(app, ["dialogues", "check", str(dest)])
    assert check.exit_code == 0
    lines = dest.read_text().splitlines()
    assert lines and all(json.loads(line)["source"].startswith("esconv:") for line in lines)


def test_bad_esconv_gives_one_line_naming_file_conversation_and_field(tmp_path: Path):
    bad = tmp_path / "bad.json"
    bad.write_text(
        json.dumps(
            [
                {
                    "emotion_type": "anxiety",
                    "problem_type": "job crisis",
                    "situation": "s",
                    "dialog": [{"speaker": "robot", "content": "hi"}],
                }
            ]
        )
    )
    dest = tmp_path / "out.jsonl"
    result = runner.invoke(app, ["dialogues", "import", "esconv", str(bad), "--out", str(dest)])
    assert result.exit_code == 2
    assert "bad.json: conversation 0: dialog[0].speaker" in result.output
    assert "Traceback" not in result.output
    assert not dest.exists()


def test_a_dialogue_ending_on_a_supporter_turn_is_refused(tmp_path: Path):
    bad = tmp_path / "d.jsonl"
    bad.write_text(
        json.dumps(
            {
                "id": "x1",
                "problem_type": "p",
                "emotion_type": "e",
                "situation": "s",
                "turns": [{"role": "seeker", "text": "help"}, {"role": "supporter", "text": "ok"}],
                "reference_reply": "r",
            }
        )
        + "\n"
    )
    result = runner.invoke(app, ["dialogues", "check", str(bad)])
    assert result.exit_code == 2
    assert "d.jsonl: line 1 (x1):" in result.output
    assert "the last turn must be a seeker turn" in result.output


def test_run_with_a_missing_spec_fails_cleanly(tmp_path: Path):
    result = runner.invoke(
        app, ["run", "--agent", str(tmp_path / "nope.toml"), "--out", str(tmp_path / "r")]
    )
    assert result.exit_code == 2
    assert "nope.toml: agent spec not found" in result.output
