"""A LiveKit plugin that fails is one line a failed turn, its kind and reason; LiveKit's own
tracebacks are shown with --verbose only. The agent's OpenAI LLM plugin is pointed at a
scripted server that answers 500 to everything, with no retry."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest
from livekit_run import HELPERS, scripted_servers

pytestmark = pytest.mark.slow

FAILED = "llm_error: APIStatusError: Error code: 500 - The server had an error (scripted)."


def spec(folder: Path) -> Path:
    folder.mkdir()
    path = folder / "lk.toml"
    path.write_text(
        'name = "lk-failing"\nfamily = "scripted"\n\n[livekit]\n'
        f'entrypoint = "livekit_scripted:build_failing"\npath = "{HELPERS}"\n'
    )
    return path


async def run(folder: Path, short_set, *options: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "voicebench", "run", "--agent", str(spec(folder))]
    command += [*short_set.options(), "--id", "short-dog", "--final-only"]
    command += ["--out", str(folder / "run")]
    return await asyncio.to_thread(
        subprocess.run,
        [*command, *options],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=300,
    )


async def test_a_failing_plugin_is_one_line_a_turn_and_its_traceback_only_when_verbose(
    tmp_path: Path, short_set, monkeypatch: pytest.MonkeyPatch
):
    async with scripted_servers(monkeypatch, faults=("500",) * 50):
        quiet = await run(tmp_path / "quiet", short_set)
        verbose = await run(tmp_path / "verbose", short_set, "--verbose")
    assert quiet.returncode == 1, quiet.stderr  # no turn succeeded
    lines = quiet.stderr.splitlines()
    failed = [line for line in lines if "llm_error" in line]
    assert [line.split("  ", 1)[0] for line in failed] == ["[1/1] short-dog turn 3"]
    assert failed[0].endswith(FAILED), failed
    # Nothing else speaks of the failure: no traceback, no log line of LiveKit's.
    assert [line for line in lines if "500" in line or "rror in" in line] == failed, lines
    assert "Traceback" not in quiet.stderr
    # --verbose shows what LiveKit logged as it failed.
    assert verbose.returncode == 1
    assert "Traceback (most recent call last)" in verbose.stderr
    assert "Error in _llm_inference_task" in verbose.stderr
