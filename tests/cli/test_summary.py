"""``voicebench summary`` takes what ``voicebench report`` takes: run folders, a judging
folder (its runs) and a campaign's or the demo's folder (its runs), found by the same code."""

from __future__ import annotations

from pathlib import Path

from demo_folders import demo_folder
from synthetic_runs import make_load
from typer.testing import CliRunner

from voicebench import api
from voicebench.cli import app

runner = CliRunner()


def test_summary_takes_the_demo_s_folder_as_report_does(tmp_path: Path):
    demo = demo_folder(tmp_path / "demo")
    assert [p.name for p in api.run_folders([demo])] == ["fast", "slow"]
    result = runner.invoke(app, ["summary", str(demo)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    out = " ".join(result.output.split())
    for name in ("fast", "slow"):
        assert f"{name} (scripted/{name}) - {demo / name}" in out
    assert out.count("2 turns, 0 failed") == 2
    report = runner.invoke(app, ["report", str(demo), "--out", str(tmp_path / "report")])
    assert report.exit_code == 0, report.output


def test_summary_of_a_run_folder_is_unchanged(tmp_path: Path):
    demo = demo_folder(tmp_path / "demo")
    result = runner.invoke(app, ["summary", str(demo / "slow")], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "slow (scripted/slow)" in result.output and "fast (" not in result.output


def test_a_folder_summary_cannot_read_is_one_line(tmp_path: Path):
    load = make_load(tmp_path / "load")
    result = runner.invoke(app, ["summary", str(load)])
    assert result.exit_code == 2
    assert "a load folder: voicebench report" in result.output
    assert "Traceback" not in result.output
    empty = runner.invoke(app, ["summary", str(tmp_path)], env={"COLUMNS": "300"})
    assert empty.exit_code == 2 and empty.output.count("\n") == 1
    assert "nor a campaign's or the demo's folder (campaign.json)" in empty.output
