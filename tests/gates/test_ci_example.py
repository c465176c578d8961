"""The example CI workflow's commands, run as written on the scripted agent, and two real runs
that differ only by 100 ms of LLM time to first token: on runs this small `compare` measures the
change but says there are too few turns to tell (exit 4 with --fail-on-regression), and `check`
passes one by its value (exit 4: too few dialogues for an interval) and fails the other. Both
replay the short set (``tests/helpers/short_set.py``), which the workflow's `voicebench run`
reads from VOICEBENCH_DIALOGUES and VOICEBENCH_FIXTURES."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml
from processes import ROOT, voicebench

pytestmark = pytest.mark.slow

WORKFLOW = ROOT / "docs" / "ci-example.yml"


def workflow_commands() -> list[str]:
    """The workflow's shell steps after the set-up, in order."""
    steps = yaml.safe_load(WORKFLOW.read_text())["jobs"]["voice-agent"]["steps"]
    return [s["run"] for s in steps if "run" in s and s["run"].strip() != "make setup"]


def call(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(voicebench(*args), cwd=ROOT, capture_output=True, text=True, env=env)


@pytest.mark.alone
def test_the_example_workflow_and_a_100_ms_slower_llm(tmp_path: Path, short_set):
    slower = tmp_path / "scripted-400ms.toml"
    spec = (ROOT / "agents" / "scripted.toml").read_text()
    slower.write_text(spec.replace("ttft_ms = 300", "ttft_ms = 400"))
    assert slower.read_text() != spec
    baseline = tmp_path / "slow"
    # The baseline: the first item of the short set (three turns) at 400 ms.
    made = call(
        "run", "--agent", str(slower), "--limit", "1", *short_set.options(), "--out", str(baseline)
    )
    assert made.returncode == 0, made.stderr[-2000:]

    out = tmp_path / "ci"
    env = {
        **os.environ,
        "AGENT": "agents/scripted.toml",
        "LIMIT": "2",
        "OUT": str(out),
        "BASELINE": str(baseline),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "VOICEBENCH_DIALOGUES": str(short_set.dialogues_path),
        "VOICEBENCH_FIXTURES": str(short_set.fixtures_dir),
    }
    here = f"{shlex.quote(sys.executable)} -m voicebench"
    commands = workflow_commands()
    assert any("--gates docs/ci-gates.toml" in c for c in commands)
    # The shipped gates' time bounds are the scripted agent's on a machine doing nothing else;
    # a busy one measures later, which the gates rightly fail. The workflow is checked with
    # the same gates, their time bounds out of any machine's reach: the test is of the
    # workflow, not of this machine's speed.
    gates = tmp_path / "ci-gates.toml"
    shipped = (ROOT / "docs" / "ci-gates.toml").read_text()
    gates.write_text(
        shipped.replace("max_ttft_p50_ms = 350", "max_ttft_p50_ms = 60000").replace(
            "max_ttfa_p90_ms = 2500", "max_ttfa_p90_ms = 60000"
        )
    )
    assert gates.read_text().count("60000") == 2
    for command in commands:
        command = command.replace("docs/ci-gates.toml", str(gates))
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", command.replace(".venv/bin/voicebench", here)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, (command, done.stdout[-2000:], done.stderr[-2000:])
    # The gates passed, and the job summary and the report are where the workflow keeps them.
    junit = ET.parse(out / "junit.xml").getroot()
    assert junit.findall(".//testcase") and not junit.findall(".//failure")
    assert "gates passed" in (tmp_path / "summary.md").read_text()
    assert (out / "report" / "index.html").is_file()
    # Against the slower baseline, this build's LLM is about 100 ms faster; but the runs are
    # too small (3 and 5 turns, 1 and 2 dialogues) for any verdict, and the comparison says so.
    compared = json.loads((out / "compare" / "compare.json").read_text())
    assert compared["headline"].startswith("too few turns to tell (n=")
    faster = next(c for c in compared["changes"] if c["key"] == "stage_llm_ttft_p50_ms")
    assert faster["verdict"] == "too few to tell" and -110 < faster["change"] < -90

    # The other way round: the LLM stage is slower by about 100 ms, its interval excluding
    # zero, and it is the stage named first. The other stages run real models (ASR, TTS) on a
    # shared machine, so their medians over a few turns move between two runs by tens of
    # milliseconds (ASR +54 ms and turn end -40 ms were seen): how far is not asserted.
    result = call("compare", str(out / "run"), str(baseline), "--out", str(tmp_path / "back"))
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.startswith("too few turns to tell (n=")
    back = call("compare", str(out / "run"), str(baseline), "--fail-on-regression")
    assert back.returncode == 4, back.stdout[-2000:]  # nothing regressed: too few to tell
    changes = json.loads((tmp_path / "back" / "compare.json").read_text())["changes"]
    llm = next(c for c in changes if c["key"] == "stage_llm_ttft_p50_ms")
    assert llm["verdict"] == "too few to tell" and 90 < llm["change"] < 110 and llm["low"] is None
    assert {c["key"] for c in changes if c["kind"] == "stage"} > {"stage_llm_ttft_p50_ms"}

    # check --max-ttft-p50-ms 350: the 300 ms run passes by its value (exit 4: too few
    # dialogues for an interval), the 400 ms one fails with exit 1.
    assert call("check", str(out / "run"), "--max-ttft-p50-ms", "350").returncode == 4
    junit_path = tmp_path / "slow.xml"
    failed = call("check", str(baseline), "--max-ttft-p50-ms", "350", "--junit", str(junit_path))
    assert failed.returncode == 1, failed.stdout
    (case,) = ET.parse(junit_path).getroot().findall(".//testcase")
    failure = case.find("failure")
    assert case.get("name") == "max_ttft_p50_ms" and failure is not None
    assert "<= 350.0 ms" in failure.get("message", "")
