"""A full disk stops a command with one line: what happened, the folder its finished work is
kept in and how to go on (the same command, once space is freed); never a traceback. The
records already written are whole, and the same command then resumes."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest
from demo_folders import demo_folder
from faulty_agent import faulty
from typer.testing import CliRunner

from voicebench.cli import app
from voicebench.cli.common import disk_full
from voicebench.replaying import folder
from voicebench.reporting import build
from voicebench.runlog import read_turns, store

runner = CliRunner()


def full_after(monkeypatch, turns: int) -> None:
    """The disk fills up once ``turns`` turn records are written."""
    write = store.append_record
    written = []

    def append(path: Path, record) -> None:
        if len(written) >= turns:
            raise OSError(errno.ENOSPC, "No space left on device")
        write(path, record)
        written.append(record)

    monkeypatch.setattr(store, "append_record", append)


@pytest.mark.parametrize("turns", [0, 1])
def test_a_run_on_a_full_disk_stops_in_one_line_and_resumes(tmp_path: Path, monkeypatch, turns):
    monkeypatch.setattr(folder, "agent_class", lambda spec: faulty([None]))
    out = tmp_path / "run"
    command = ["run", "--agent", "scripted", "--final-only", "--limit", "2", "--out", str(out)]
    with monkeypatch.context() as disk:
        full_after(disk, turns)
        result = runner.invoke(app, command, env={"COLUMNS": "300"})
    assert result.exit_code == 1, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert lines == [
        f"error: no space left on device; free some space, then: finished turns are kept in "
        f"{out}: run again with --out {out} to resume"
    ], result.output
    assert "Traceback" not in result.output and "OSError" not in result.output
    assert len(read_turns(out)) == turns
    again = runner.invoke(app, command)
    assert again.exit_code == 0, again.output
    assert len(read_turns(out)) == 2


def test_a_report_on_a_full_disk_names_the_file_and_the_way_on(tmp_path: Path, monkeypatch):
    demo = demo_folder(tmp_path / "demo")
    page = tmp_path / "report" / "report.json"

    def write_atomic(path: Path, content) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(page))

    monkeypatch.setattr(build, "write_atomic", write_atomic)
    result = runner.invoke(
        app, ["report", str(demo), "-o", str(page.parent)], env={"COLUMNS": "300"}
    )
    assert result.exit_code == 1
    assert result.output.splitlines()[-1] == (
        f"error: no space left on device writing {page}; free some space, then: run the same "
        "command again"
    )


def test_a_full_disk_inside_a_task_group_is_found():
    full = OSError(errno.ENOSPC, "No space left on device")
    group = ExceptionGroup("cells", [ValueError("x"), ExceptionGroup("cell", [full])])
    assert disk_full(group) is full
    assert disk_full(ExceptionGroup("cells", [OSError(errno.EACCES, "denied")])) is None
