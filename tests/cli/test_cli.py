"""The CLI: one-line errors with exit codes, and the commands that need no pipeline."""

from __future__ import annotations

import json
import re
from pathlib import Path

from typer.testing import CliRunner

from voicebench.cli import app

runner = CliRunner()
DATA = Path(__file__).resolve().parents[1] / "data" / "esconv"


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


BAD_INPUT = [
    (["synth", "--dialogues", "{tmp}/none.jsonl"], "none.jsonl: file not found"),
    (["summary", "{tmp}"], "neither a run directory (run.json), a judging folder"),
    (["judge", "{tmp}", "--judge", "{tmp}/none.toml"], "none.toml: file not found"),
    (["rate", "{tmp}"], "not a judging folder"),
    (["strategies", "{tmp}"], "not a judging folder"),
    (["report", "{tmp}"], "neither a run directory"),
    (
        ["serve", "--protocol", "carrier-pigeon"],
        "--protocol: must be one of pcm, pipecat, twilio, telnyx, webrtc, sip",
    ),
    (["load", "--agent", "ws://127.0.0.1:1", "--arrivals", "burst"], "--arrivals"),
    (["demo", "--agent", "{tmp}/none.toml"], "none.toml: agent spec not found"),
    (
        ["run", "--agent", "agents/scripted.toml", "--out", "{tmp}/r", "--scenario", "noise:snr=3"],
        "--scenario noise: 'snr=3' is not key=value with a key of kind, snr_db",
    ),
    (
        ["demo", "--no-judge", "--out", "{tmp}/d", "--scenario", "thunder"],
        "--scenario: unknown scenario 'thunder'",
    ),
    (
        ["demo", "--no-judge", "--out", "{tmp}/d", "--scenario", "barge-in"],
        "--scenario: a barge-in talks over the reply to the turn before",
    ),
    (
        [
            "load",
            "--agent",
            "ws://127.0.0.1:1",
            "--out",
            "{tmp}/l",
            "--scenario",
            "pause:pause_ms=x",
        ],
        "--scenario pause: pause_ms: 'x' is not a number",
    ),
    (["check", "{tmp}", "--max-ttft-p50-ms", "350"], "neither a run folder"),
    (["check", "{tmp}", "--gates", "{tmp}/none.toml"], "none.toml: gates file not found"),
    (["compare", "{tmp}", "{tmp}"], "not a run folder (no run.json)"),
    (["campaign", "{tmp}/none.toml"], "none.toml: campaign file not found"),
    (
        ["campaign", "campaigns/example.toml", "--workers", "2"],
        "--backend: address and workers need the ray backend",
    ),
    (["judge-check", "--judge", "{tmp}/none.toml"], "none.toml: file not found"),
    (["judge-check", "--gold", "{tmp}/none.jsonl"], "none.jsonl: file not found"),
    (["judge-check", "--split", "test"], "--split"),
    (
        ["dialogues", "adversarial", "{tmp}/x.jsonl", "--profile", "x", "--llm", "{tmp}/a.toml"],
        "--profile: must be one of",
    ),
]


def test_every_command_turns_bad_input_into_one_line_and_exit_2(tmp_path: Path):
    for args, message in BAD_INPUT:
        result = runner.invoke(app, [a.format(tmp=tmp_path) for a in args])
        assert result.exit_code == 2, (args, result.output)
        errors = [line for line in result.output.splitlines() if line.startswith("error:")]
        assert len(errors) == 1 and message in " ".join(result.output.split()), (args, errors)
        assert "Traceback" not in result.output


def test_a_checkout_path_away_from_the_checkout_names_the_shipped_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # where a user of the installed wheel runs the docs' commands
    for args, hint in [
        (["run", "--agent", "agents/scripted.toml"], "name it --agent scripted"),
        (["judge-check", "--judge", "judges/local.toml"], "name it --judge local"),
        (["judge-check", "--gold", "judges/pairs-real.jsonl"], "name it --gold real"),
        (["dialogues", "check", "audio_fixtures/dialogues.jsonl"], "the default of --dialogues"),
    ]:
        result = runner.invoke(app, args)
        assert result.exit_code == 2, (args, result.output)
        assert hint in " ".join(result.output.split()), (args, result.output)
    # a path that names nothing shipped gets no hint
    result = runner.invoke(app, ["dialogues", "check", "agents/mine.jsonl"])
    assert result.exit_code == 2 and "ships" not in result.output


def test_version():
    from voicebench import __version__

    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.output.strip() == f"voicebench {__version__}"


def test_progress_is_a_bar_with_lines_above_it_on_a_terminal(monkeypatch):
    import io

    from rich.console import Console

    from voicebench.cli import common

    screen = io.StringIO()
    monkeypatch.setattr(common, "err", Console(file=screen, force_terminal=True, width=100))
    with common.Steps("turns") as steps:
        assert steps._bar is not None
        steps.advance(1, 2, "[1/2] first turn  TTFA 812 ms")
        steps.advance(2, 2, None)
        steps.line("all done")
    shown = screen.getvalue()
    assert "[1/2] first turn  TTFA 812 ms" in shown and "all done" in shown
    assert "2/2" in shown  # the bar's count


def test_progress_off_a_terminal_is_plain_lines(monkeypatch):
    import io

    from rich.console import Console

    from voicebench.cli import common

    log = io.StringIO()
    monkeypatch.setattr(common, "err", Console(file=log, force_terminal=False, width=100))
    with common.Steps("turns") as steps:
        assert steps._bar is None
        steps.advance(1, 2, "[1/2] first turn")
        steps.advance(2, 2, None)
    assert log.getvalue() == "[1/2] first turn\n"


MARKUP = "closed [/] by [bold]peer[/bold] [type=value_error, input_value='x']"


def test_text_from_outside_prints_as_it_is(tmp_path: Path):
    """Square brackets in a reason, a path or an error are printed, never read as markup: a
    stray closing tag would crash the command, and [type=...] would vanish."""
    from rich.console import Console

    from voicebench.cli.judge import verdict_line
    from voicebench.cli.live import _load_line
    from voicebench.cli.run import turn_line
    from voicebench.live import LoadTurn
    from voicebench.replaying.run import RunProgress
    from voicebench.runlog import TurnError, TurnRecord

    record = TurnRecord(
        run_id="r",
        contestant="x/y",
        agent_name="y",
        dialogue_id="d",
        turn_index=1,
        final=True,
        user_text="hi",
        started_at="2026-01-01T00:00:00+00:00",
        error=TurnError(kind="agent_error", reason=MARKUP),
    )
    failed = judging_verdict_failed(MARKUP)
    lines = [
        turn_line(RunProgress(1, 2, record)),
        _load_line(LoadTurn(caller=0, call=0, concurrency=1, offset_s=0.0, turn=record)),
        verdict_line(failed, 1, 1),
    ]
    for line in lines:
        console = Console(record=True, width=300)
        console.print(line)
        assert MARKUP in console.export_text(), line

    bad = tmp_path / "[/]agent.toml"
    result = runner.invoke(app, ["run", "--agent", str(bad), "--out", str(tmp_path / "r")])
    assert result.exit_code == 2, result.output
    assert f"error: {bad}: agent spec not found" in " ".join(result.output.split())

    # every status and result line prints as written, in its style when it has one
    from voicebench.cli import common

    for print_line, name in ((common.say, "err"), (common.show, "out")):
        console = Console(record=True, width=300)
        original = getattr(common, name)
        setattr(common, name, console)
        try:
            print_line(f"{MARKUP} in {bad}")
            print_line(MARKUP, style="yellow")
        finally:
            setattr(common, name, original)
        assert console.export_text() == f"{MARKUP} in {bad}\n{MARKUP}\n"
    # and so does what the library says while a job runs (its on_status lines)
    console = Console(record=True, width=300)
    original = common.err
    common.err = console
    try:
        with common.Steps("steps") as steps:
            steps.status(f"{MARKUP} in {bad}")
    finally:
        common.err = original
    # after the time since the job began, as M:SS
    assert re.fullmatch(r"\[0:0\d\] " + re.escape(f"{MARKUP} in {bad}\n"), console.export_text())


def judging_verdict_failed(failure: str):
    from voicebench.judging import Verdict

    return Verdict(
        key="k",
        item_id="i",
        judge="j/1",
        rubric_sha256="h",
        contestant_a="a",
        contestant_b="b",
        failure=failure,
    )


def test_the_demo_s_hints_are_printed_as_written(tmp_path: Path, monkeypatch):
    """With the extra's models missing, the demo says which and how to install them, the
    extra's name in brackets intact; with --no-judge it names no judge."""
    import voicebench.api.campaigns

    missing = lambda spec: ["qwen2.5-coder-x"]  # noqa: E731
    monkeypatch.setattr(voicebench.api.campaigns, "missing_models", missing)
    stop = ["--out", str(tmp_path / "d"), "--scenario", "thunder"]  # refused once planned
    shown = " ".join(runner.invoke(app, ["demo", *stop]).output.split())
    assert "second agent skipped: qwen2.5-coder-x is not installed" in shown
    assert "pip install 'voicebench-heart[offline-judge]'" in shown
    assert "judging with the smoke judge" in shown
    quiet = " ".join(runner.invoke(app, ["demo", "--no-judge", *stop]).output.split())
    assert "second agent skipped" in quiet and "smoke judge" not in quiet


def documented_commands() -> list[tuple[str, list[str]]]:
    """Every ``voicebench ...`` line in the README's and the docs' code blocks (a line ending
    in a backslash continued), with its comment taken off."""
    import shlex

    root = Path(__file__).resolve().parents[2]
    found = []
    for page in [root / "README.md", *sorted((root / "docs").glob("*.md"))]:
        in_block, pending = False, ""
        for line in page.read_text().splitlines():
            if line.startswith("```"):
                in_block = not in_block
                continue
            line = f"{pending} {line.strip()}" if pending else line
            pending = ""
            if not in_block or not line.startswith("voicebench "):
                continue
            text = line.split("  #")[0].split(" # ")[0].rstrip()
            if text.endswith("\\"):
                pending = text[:-1]
                continue
            found.append((page.name, shlex.split(text)[1:]))
    return found


def test_the_documented_commands_parse_from_an_empty_folder(tmp_path, monkeypatch):
    """As a user runs them after pip install: every command and option exists, every value
    parses, every shipped spec is named as shipped (not by a checkout path, which is not there
    after an install). Files of the reader's own (my-judge.toml) are what the docs say."""
    from typer.main import get_command

    from voicebench import builtin

    monkeypatch.chdir(tmp_path)
    (tmp_path / "my-judge.toml").write_text("")
    group = get_command(app)

    def parse(args: list[str]) -> None:
        command, ctx = group, None
        while True:
            ctx = command.make_context("voicebench", list(args), parent=ctx)
            if not hasattr(command, "resolve_command"):
                return
            _, command, args = command.resolve_command(ctx, ctx._protected_args + ctx.args)

    commands = documented_commands()
    assert len(commands) > 40
    for page, args in commands:
        if "--help" in args:
            continue
        parse(args)  # raises on an unknown option or a value that does not parse
        checkout_paths = [a for a in args if builtin.shipped_hint(a)]
        assert checkout_paths == [], (page, args)
