"""The shipped pytest example (examples/test_my_agent.py) against the scripted agent, through
the installed plugin: it passes (its quality test skipped, saying why: one item, the smoke
judge), and a gate tightened below the measured figure fails with the figure, its interval and
the kept run folder named."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from processes import ROOT, USER_PYTEST, user_env

pytestmark = pytest.mark.slow


def _pytest(folder: Path, short_set, **env: str) -> subprocess.CompletedProcess[str]:
    settings = user_env(VOICEBENCH_AGENT="scripted", VOICEBENCH_ITEMS="1")
    # the first item of the short set: three seeker turns
    settings |= {
        "VOICEBENCH_DIALOGUES": str(short_set.dialogues_path),
        "VOICEBENCH_FIXTURES": str(short_set.fixtures_dir),
    }
    # the smoke judge keeps it quick: the test is of the plugin's plumbing
    settings |= {"VOICEBENCH_JUDGE": "local-smoke", **env}
    example = ROOT / "examples" / "test_my_agent.py"
    return subprocess.run(
        [*USER_PYTEST, "--voicebench-dir", str(folder), str(example)],
        cwd=folder.parent,
        env=settings,
        capture_output=True,
        text=True,
        timeout=900,
    )


def test_the_example_fails_readably_then_passes(tmp_path, short_set):
    folder = tmp_path / "kept"
    tight = _pytest(folder, short_set, VOICEBENCH_MAX_TTFA_P90_MS="1")
    assert tight.returncode == 1, tight.stdout[-3000:] + tight.stderr[-2000:]
    out = tight.stdout
    # the quality test: one item and the smoke judge say nothing, and it says so
    assert "1 failed, 1 skipped" in out
    assert "voicebench gates failed in" in out
    # one dialogue of 3 turns: no interval, so the gate is decided by the value and says so
    gate = re.search(r"ttfa_p90_ms = ([\d,.]+) ms \(no interval\), bound <= 1\.0 ms", out)
    assert gate and float(gate.group(1).replace(",", "")) > 1, out[-3000:]
    assert "too few to tell (n=3 turns in 1 dialogue): decided by the value" in out
    kept = re.search(r"kept for a look: (\S+)", out)
    assert kept, out[-3000:]
    run = Path(kept.group(1))
    assert (run / "run.json").is_file() and len((run / "turns.jsonl").read_text().splitlines()) == 3
    # the passing test's own folder (the judging) is gone; the failed test's run stays
    assert sorted(p.name for p in folder.iterdir()) == [run.name]

    # the same suite with a bound the run meets: passes, resuming the kept run (a bound no
    # machine misses, not the shipped 2,500 ms: a busy machine's TTFA can be over that)
    fine = _pytest(folder, short_set, PYTEST_ADDOPTS="-rs", VOICEBENCH_MAX_TTFA_P90_MS="600000")
    assert fine.returncode == 0, fine.stdout[-3000:] + fine.stderr[-2000:]
    assert "1 passed, 1 skipped" in fine.stdout
    said = " ".join(fine.stdout.split())
    # one item, whether or not the smoke judge's two orders agreed on it
    assert re.search(r"too few to tell: [+-]?\d+ on [01] judged items?, an interval needs 6", said)
    assert "untrusted judge: judge no better than chance" in said
    assert not folder.exists() or not any(folder.iterdir())


def test_a_misspelt_agent_fails_in_one_line_naming_the_test(tmp_path, short_set):
    result = _pytest(tmp_path / "kept", short_set, VOICEBENCH_AGENT="scriptd")
    assert result.returncode == 1, result.stdout[-3000:]
    said = [line for line in result.stdout.splitlines() if "voicebench marker:" in line]
    assert said and "scriptd: no such file, and no shipped agent of that name" in said[0]
    assert "Traceback" not in result.stdout and "no running event loop" not in result.stdout


REPEATED = """
import os

import pytest

from voicebench.pytest_plugin import expect

MARK = pytest.mark.voicebench(
    agent="scripted",
    dialogues=os.environ["VOICEBENCH_DIALOGUES"],
    fixtures=os.environ["VOICEBENCH_FIXTURES"],
    limit=1,
    repeat=2,
)


@MARK
def test_every_pass_answers(voicebench_run):
    assert sorted({r.repeat for r in voicebench_run.records}) == [0, 1]
    expect(voicebench_run, every_repeat=True, max_failed_pct=0, max_ttft_p50_ms=5000)


@MARK
def test_every_pass_within_one_ms(voicebench_run):
    expect(voicebench_run, every_repeat=True, max_ttfa_p50_ms=1)
"""


def test_a_marker_asks_for_repeats_and_expect_for_every_one(tmp_path, short_set):
    """``repeat=2`` on the marker replays the item twice (one replay for both tests), and
    ``expect(..., every_repeat=True)`` holds every pass to the gate, naming the passes that
    missed it."""
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "test_repeated.py").write_text(REPEATED)
    settings = user_env(
        VOICEBENCH_DIALOGUES=str(short_set.dialogues_path),
        VOICEBENCH_FIXTURES=str(short_set.fixtures_dir),
    )
    result = subprocess.run(
        [*USER_PYTEST, "--voicebench-dir", str(tmp_path / "kept"), str(suite)],
        cwd=tmp_path,
        env=settings,
        capture_output=True,
        text=True,
        timeout=900,
    )
    out = result.stdout
    assert result.returncode == 1 and "1 failed, 1 passed" in out, out[-3000:] + result.stderr
    said = " ".join(out.split())
    assert (
        "ttfa_p50_ms (every repeat), bound <= 1.0 ms: not within the bound in pass 1, 2 of 2"
        in (said)
    ), out[-3000:]
    (kept,) = (tmp_path / "kept").iterdir()
    assert len((kept / "turns.jsonl").read_text().splitlines()) == 6  # 3 turns, twice
