"""A judging job killed with SIGKILL at random moments, and started again with the same command
each time, ends with the same replies and verdicts as a job never interrupted: no verdict asked
twice into the file, none lost."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import pytest
from judging_fixtures import ITEMS, make_run
from processes import (
    ROOT,
    as_in_a_terminal,
    descendants,
    kill_seeds,
    kill_until_done,
    survivors,
    voicebench,
)

from voicebench._jsonl import complete_lines
from voicebench.testing import ScriptedLLMServer

pytestmark = pytest.mark.slow

SEEDS = kill_seeds((21, 22, 23))
ANSWER = {
    "winner": "B",
    "strength": 3,
    "dimensions": {"H": "B", "E": "B", "A": None, "R": None, "T": "A"},
    "rationale": "B asks what the seeker needs.",
}
REPLIES = {
    "alpha": {
        ITEMS[0]: "Ten years in one place, and now this. What worries you most right now?",
        ITEMS[1]: "That heaviness sounds exhausting. When did it start to feel this way?",
    },
    "beta": {
        ITEMS[0]: "You will find a new job soon, I am sure of it.",
        ITEMS[1]: "Have you tried going for a walk every morning?",
    },
    "gamma": {
        ITEMS[0]: "I am sorry. Losing work you cared about is a real loss.",
        ITEMS[1]: "It makes sense to feel worn down after so long.",
    },
}


@pytest.fixture(scope="module")
def setup(tmp_path_factory, voice, dialogues):
    root = tmp_path_factory.mktemp("judged")
    runs = [
        make_run(root, name, f"fam-{name}", replies, voice, dialogues)
        for name, replies in REPLIES.items()
    ]
    with ScriptedLLMServer(ttft_ms=400, token_delay_ms=0, reply=json.dumps(ANSWER)) as server:
        spec = root / "judge.toml"
        (root / "rubric.md").write_text("Judge which reply supports the seeker better.\n")
        spec.write_text(
            f'name = "kill-test"\nrubric = "rubric.md"\n[[judges]]\n'
            f'provider = "openai-compatible"\nmodel = "scripted-llm"\n'
            f'family = "scripted"\nbase_url = "{server.base_url}"\n'
        )
        yield runs, spec


def _command(setup, out: Path) -> list[str]:
    runs, spec = setup
    return voicebench(
        "judge", *map(str, runs), "--judge", str(spec), "--out", str(out), "--concurrency", "1"
    )


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _verdicts(out: Path) -> dict[str, tuple]:
    lines = _records(out / "verdicts.jsonl")
    by_key = {
        v["key"]: (v["item_id"], v["contestant_a"], v["contestant_b"], v["answer"], v["failure"])
        for v in lines
    }
    assert len(by_key) == len(lines), "a verdict was written twice"
    return by_key


def _replies(out: Path) -> list[tuple]:
    lines = _records(out / "replies.jsonl")
    keyed = {(r["contestant"], r["item_id"]): r["heard"] for r in lines}
    assert len(keyed) == len(lines), "a reply was transcribed into the file twice"
    return sorted(keyed.items())


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory, setup) -> tuple[Path, float]:
    """The judging folder of the same command never interrupted, and how long it took."""
    out = tmp_path_factory.mktemp("whole") / "judging"
    log = kill_until_done(_command(setup, out), 0, window_s=(0, 0), max_kills=0, log_dir=out.parent)
    return out, log.final_wall_s


@pytest.mark.parametrize("seed", SEEDS)
def test_a_judging_job_killed_at_random_moments_resumes_to_the_uninterrupted_verdicts(
    seed, tmp_path, setup, uninterrupted
):
    out = tmp_path / "judging"
    whole, whole_s = uninterrupted
    # Kill points anywhere in the first 90% of an uninterrupted job, start-up included.
    log = kill_until_done(
        _command(setup, out),
        seed,
        window_s=(1.0, 0.9 * whole_s),
        max_kills=3,
        log_dir=tmp_path,
        done=lambda: len(complete_lines(out / "verdicts.jsonl")),
    )
    print(
        f"seed {seed}: SIGKILL at {log.kills_at_s} s after each start, "
        f"with {log.done_at_kill} verdicts written"
    )

    assert log.kills_at_s, "the job ended before its first kill"
    expected = _verdicts(whole)
    assert len(expected) == 2 * 2 * 6  # 2 items x 6 pairs of 4 contestants x both orders
    assert _verdicts(out) == expected
    assert all(v[3] is not None for v in expected.values())
    assert _replies(out) == _replies(whole)
    assert (out / "pairs.jsonl").read_text() == (whole / "pairs.jsonl").read_text()


def test_ctrl_c_mid_judging_stops_the_local_judge_and_keeps_its_verdicts(tmp_path, setup):
    runs, _ = setup
    out = tmp_path / "judging"
    # One run against the human reference: one pair, both orders, two items.
    command = voicebench(
        "judge",
        str(runs[0]),
        "--judge",
        "judges/local-smoke.toml",
        "--out",
        str(out),
        "--concurrency",
        "1",
    )
    proc = subprocess.Popen(
        command,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=as_in_a_terminal,
    )
    helpers: set[int] = set()
    for line in proc.stderr:
        helpers |= descendants(proc.pid)
        if line.startswith("[1/"):  # the llama.cpp server is up and verdicts are coming
            break
    proc.send_signal(signal.SIGINT)
    rest = proc.stderr.read()
    assert proc.wait(timeout=60) == 130, rest[-2000:]
    assert "interrupted; decided verdicts are kept" in " ".join(rest.split())
    assert helpers, "the llama.cpp server should have been running"
    assert not survivors(helpers)
    kept = _records(out / "verdicts.jsonl")
    assert 1 <= len(kept) < 4
    again = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-2000:]
    assert f"({len(kept)} already decided)" in " ".join(again.stderr.split())
    final = _records(out / "verdicts.jsonl")
    assert final[: len(kept)] == kept and len({v["key"] for v in final}) == len(final) == 4
