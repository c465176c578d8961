"""`voicebench demo` end to end, offline, on the embedded default, as a user runs it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("llama_cpp", reason="the 'local' extra (make setup) is not installed")
pytestmark = pytest.mark.slow


def _servers() -> set[str]:
    out = subprocess.run(["pgrep", "-f", "llama_cpp.server"], capture_output=True, text=True)
    return set(out.stdout.split())


def test_demo_replays_through_the_local_agent_and_leaves_nothing_running(tmp_path: Path):
    before = _servers()
    out = tmp_path / "demo"
    result = subprocess.run(
        [sys.executable, "-m", "voicebench", "demo", "--limit", "1", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    records = [json.loads(line) for line in (out / "turns.jsonl").read_text().splitlines()]
    assert len(records) >= 2
    for r in records:
        assert r["error"] is None, r["error"]
        assert r["contestant"] == "local/smollm2-135m"
        assert r["reply_text"].strip()
        assert r["timing"]["ttft_ms"] > 0 and r["timing"]["ttfa_ms"] > r["timing"]["ttft_ms"]
    assert "TTFA" in result.stdout and "llm_ttft" in result.stdout
    assert f"run log: {out}/turns.jsonl" in result.stdout
    # The final reply is judged against the human reference by the offline smoke judge.
    verdicts = [
        json.loads(line) for line in (out / "judging" / "verdicts.jsonl").read_text().splitlines()
    ]
    assert len(verdicts) == 2  # one pair, both orders
    assert {v["judge"] for v in verdicts} == {"local/smollm2-135m"} and all(
        v["smoke"] for v in verdicts
    )
    assert {frozenset((v["contestant_a"], v["contestant_b"])) for v in verdicts} == {
        frozenset(("local-smollm2", "human/reference"))
    }
    assert "offline smoke judge" in result.stdout
    assert ("HEART leaderboard (SMOKE JUDGE" in result.stdout) or (
        "no leaderboard" in result.stdout
    )
    # It ends by writing the report and printing where it is.
    report = json.loads((out / "report" / "report.json").read_text())
    assert f"report: {out}/report/index.html" in result.stdout
    assert report["agents"][0]["agent_name"] == "local-smollm2" and report["judging"]["smoke"]
    assert {"latency_ecdf", "waterfall"} <= set(report["figures"])
    assert "not meaningful" in (out / "report" / "index.html").read_text()
    assert _servers() <= before
