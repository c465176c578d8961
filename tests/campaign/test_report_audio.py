"""A campaign's or the demo's report keeps its audio as the campaign says: ``[report] audio =
"opus"`` (``voicebench demo --audio opus``) encodes the calls' recordings and the replies as
Opus in Ogg, about a tenth of the size; ``voicebench report`` on the folder does the same
unless told otherwise. The run folders keep their WAV recordings as they were made."""

from __future__ import annotations

from pathlib import Path

import soundfile as sf
from demo_folders import demo_folder
from typer.testing import CliRunner

from voicebench import api
from voicebench.campaign.spec import CampaignSpec
from voicebench.cli import app

runner = CliRunner()


def recordings(report: Path) -> list[Path]:
    return sorted((report / "audio").glob("call-*"))


def test_a_demo_folder_reported_as_opus_as_its_campaign_says(tmp_path: Path):
    demo = demo_folder(tmp_path / "demo", report={"audio": "opus"})
    built = api.report([demo], out=tmp_path / "report")
    calls = recordings(built.out_dir)
    assert len(calls) == len(built.report.recordings) == 4
    for path in calls:
        info = sf.info(path)
        assert path.suffix == ".ogg" and (info.format, info.subtype) == ("OGG", "OPUS")
        assert abs(info.duration - 3.0) < 0.03
    wav = api.report([demo], out=tmp_path / "wav", audio_format="wav")
    big = sum(p.stat().st_size for p in recordings(wav.out_dir))
    assert sum(p.stat().st_size for p in calls) < big / 4
    assert all(p.suffix == ".wav" for p in (demo / "fast" / "calls").iterdir())


def test_the_report_command_takes_the_folder_s_audio_unless_told(tmp_path: Path):
    demo = demo_folder(tmp_path / "demo", report={"audio": "opus"})
    told = runner.invoke(app, ["report", str(demo), "--audio", "wav", "-o", str(tmp_path / "w")])
    assert told.exit_code == 0, told.output
    assert {p.suffix for p in recordings(tmp_path / "w")} == {".wav"}
    own = runner.invoke(app, ["report", str(demo), "-o", str(tmp_path / "o")])
    assert own.exit_code == 0, own.output
    assert {p.suffix for p in recordings(tmp_path / "o")} == {".ogg"}


def test_the_demo_takes_audio_opus(tmp_path: Path, monkeypatch):
    planned: list[CampaignSpec] = []

    def run_demo(plan, hooks):
        planned.append(plan.spec)
        raise KeyboardInterrupt  # stop before anything runs

    monkeypatch.setattr(api, "run_demo", run_demo)
    agent = ["--agent", "scripted", "--no-judge", "--out", str(tmp_path / "d")]
    result = runner.invoke(app, ["demo", *agent, "--audio", "opus"])
    assert result.exit_code == 130, result.output
    assert planned[0].report.audio == "opus"
    runner.invoke(app, ["demo", *agent])
    assert planned[1].report.audio == "wav"
