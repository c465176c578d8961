"""Every command's --help reads as a user needs it: defaults are shipped names or paths
inside the shipped data (never this install's own folders, a long site-packages path), and
judge-check says where its card is written."""

from __future__ import annotations

import pytest
import typer
from typer.core import TyperGroup
from typer.testing import CliRunner

from voicebench import builtin
from voicebench.cli import app

runner = CliRunner()


def commands(group: TyperGroup, path: list[str]) -> list[list[str]]:
    """Every command under ``group``, as the words that call it, subcommands included."""
    ctx = group.make_context("voicebench", [], resilient_parsing=True)
    out = []
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if isinstance(command, TyperGroup):
            out += commands(command, [*path, name])
        else:
            out.append([*path, name])
    return out


MAIN = typer.main.get_command(app)
assert isinstance(MAIN, TyperGroup)
EVERY = commands(MAIN, [])
INSTALLED = [str(p) for p in (builtin.DATA, builtin.AGENTS, builtin.JUDGES, builtin.FIXTURES)]


def help_text(command: list[str]) -> str:
    result = runner.invoke(app, [*command, "--help"], env={"COLUMNS": "400"})
    assert result.exit_code == 0, result.output
    return " ".join(result.output.replace("│", " ").split())


@pytest.mark.parametrize("command", EVERY, ids=" ".join)
def test_help_names_no_folder_of_the_install(command: list[str]):
    text = help_text(command)
    assert "site-packages" not in text
    for folder in INSTALLED:
        assert folder not in text, folder


def test_defaults_are_shown_by_their_shipped_names():
    assert "[default: (shipped audio_fixtures/dialogues.jsonl)]" in help_text(["run"])
    assert "[default: (shipped audio_fixtures)]" in help_text(["synth"])
    judge_check = help_text(["judge-check"])
    assert "[default: (local-smoke)]" in judge_check and "[default: (written)]" in judge_check
    assert "[default: (local-smoke)]" in help_text(["strategies"])
    assert "[default: (local)]" in help_text(["serve"])


def test_judge_check_says_where_its_card_goes():
    text = help_text(["judge-check"])
    assert "reports/judge-cards/" in text
    assert "cards/ beside it" in text
