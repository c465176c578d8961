"""A run killed with SIGKILL at random moments, and started again with the same command each
time, ends with the same run log as a run never interrupted: no finished turn redone or
duplicated, none lost, every turn's audio on disk, and no helper server left running."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from processes import KILL_AGENT, kill_seeds, kill_until_done, voicebench

from voicebench._jsonl import complete_lines
from voicebench.fixtures import read_wav
from voicebench.runlog import read_header, read_turns

pytestmark = pytest.mark.slow

SEEDS = kill_seeds((11, 12, 13))
ITEM = "short-tired"  # three short spoken turns (tests/helpers/short_set.py)


def _lines(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "turns.jsonl").read_text().splitlines()]


def _comparable(record: dict) -> tuple:
    """What must match an uninterrupted run; timings and clock times may differ."""
    return (
        record["dialogue_id"],
        record["turn_index"],
        record["final"],
        record["user_text"],
        record["reply_text"],
        record["error"],
        record["audio_path"],
    )


@pytest.fixture(scope="module")
def agent(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("agent") / "kill-test.toml"
    path.write_text(KILL_AGENT)
    return path


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory, agent, short_set) -> tuple[list[dict], float]:
    """The run log of the same command never interrupted, and how long it took."""
    run = tmp_path_factory.mktemp("whole") / "run"
    log = kill_until_done(
        voicebench(
            "run", "--agent", str(agent), "--id", ITEM, *short_set.options(), "--out", str(run)
        ),
        0,
        window_s=(0, 0),
        max_kills=0,
        log_dir=run.parent,
    )
    return _lines(run), log.final_wall_s


@pytest.mark.parametrize("seed", SEEDS)
def test_a_run_killed_at_random_moments_resumes_to_the_uninterrupted_log(
    seed, tmp_path, agent, uninterrupted, short_set
):
    run = tmp_path / "run"
    command = voicebench(
        "run", "--agent", str(agent), "--id", ITEM, *short_set.options(), "--out", str(run)
    )
    expected, whole_s = uninterrupted
    # Kill points anywhere in the first 90% of an uninterrupted run, start-up included.
    log = kill_until_done(
        command,
        seed,
        window_s=(1.0, 0.9 * whole_s),
        max_kills=3,
        log_dir=tmp_path,
        done=lambda: len(complete_lines(run / "turns.jsonl")),
    )
    print(
        f"seed {seed}: SIGKILL at {log.kills_at_s} s after each start, "
        f"with {log.done_at_kill} turns finished"
    )

    assert log.kills_at_s, "the run ended before its first kill"
    assert log.helpers_seen >= 1, (
        "the scripted LLM server should have been killed mid-run at least once"
    )
    assert log.left_running == [], "helper processes outlived their killed parent"
    assert "3/3" in log.final_stderr
    records = _lines(run)
    assert [_comparable(r) for r in records] == [_comparable(r) for r in expected]
    assert all(t.timing is not None and t.timing.ttfa_ms is not None for t in read_turns(run))
    for r in records:
        assert read_wav(run / r["audio_path"], expect_rate=16_000).size > 8_000
    assert read_header(run).dialogue_ids == (ITEM,)
    assert records[0]["cold"] is True
