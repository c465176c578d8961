"""`voicebench demo` end to end, offline, on the embedded default, as a user runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

pytest.importorskip("llama_cpp", reason="the 'local' extra (make setup) is not installed")
pytestmark = pytest.mark.slow


def _servers(mark: str) -> set[str]:
    """The LLM servers started by the command run with ``mark`` in its environment (servers of
    anything else on the machine are not this test's business)."""
    out = subprocess.run(["pgrep", "-f", "llama_cpp.server"], capture_output=True, text=True)
    ours = set()
    for pid in out.stdout.split():
        try:
            if mark.encode() in Path(f"/proc/{pid}/environ").read_bytes():
                ours.add(pid)
        except OSError:
            pass  # gone meanwhile
    return ours


def test_demo_replays_judges_three_contestants_and_leaves_nothing_running(tmp_path: Path):
    from voicebench.llm.local import split_model_available

    offline = split_model_available("qwen2.5-coder-1.5b") and split_model_available(
        "qwen2.5-coder-0.5b"
    )
    agents = ["local-smollm2", "local-qwen-0.5b"] if offline else ["local-smollm2"]
    mark = f"demo-test-{uuid.uuid4()}"
    out = tmp_path / "demo"
    result = subprocess.run(
        [
            *(sys.executable, "-m", "voicebench", "demo", "--limit", "1", "--out", str(out)),
            *("--scenario", "noise:kind=pink,snr_db=20", "--seed", "1"),
        ],
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "VOICEBENCH_TEST_MARK": mark},
    )
    assert result.returncode == 0, result.stderr[-2000:]
    for agent in agents:
        records = [
            json.loads(line) for line in (out / agent / "turns.jsonl").read_text().splitlines()
        ]
        assert len(records) >= 2
        # --scenario reaches every agent's run: each turn heard the seeker through noise.
        assert all(r["scenario"]["name"] == "noise" for r in records)
        for r in records:
            assert r["error"] is None, r["error"]
            assert r["reply_text"].strip()
            assert r["timing"]["ttft_ms"] > 0 and r["timing"]["ttfa_ms"] > r["timing"]["ttft_ms"]
            # Both local agents speculate and hold the audio: each hold is a stage of its own
            # (the text's is about zero), and the stages add up to TTFA.
            stages = r["timing"]["stages_ms"]
            assert stages["turn_hold"] is not None and stages["audio_hold"] is not None
            assert stages["model_audio"] is None  # (a speech-to-speech model's stage)
            assert sum(v for v in stages.values() if v is not None) == pytest.approx(
                r["timing"]["ttfa_ms"], abs=1e-6
            )
        assert f"run log: {out / agent}/turns.jsonl" in result.stdout
    assert "TTFA" in result.stdout and "llm_ttft" in result.stdout
    # The final replies are judged against each other and the human reference.
    verdicts = [
        json.loads(line) for line in (out / "judging" / "verdicts.jsonl").read_text().splitlines()
    ]
    contestants = {*agents, "human/reference"}
    pairs = len(contestants) * (len(contestants) - 1) // 2
    assert len(verdicts) == 2 * pairs  # one item, every pair, both orders
    assert {c for v in verdicts for c in (v["contestant_a"], v["contestant_b"])} == contestants
    report = json.loads((out / "report" / "report.json").read_text())
    assert {a["agent_name"] for a in report["agents"]} == set(agents)
    if offline:
        # The offline judge, whose card is shipped and printed beside the leaderboard.
        assert {v["judge"] for v in verdicts} == {"local/qwen2.5-coder-1.5b"}
        assert "judge local:" in result.stdout and "pairs of real replies" in result.stdout
        assert "catches plain defects:" in result.stdout  # the written set's card, second
        assert report["judging"]["card"]["spec_name"] == "local"
        assert report["judging"]["card"]["real_replies"] is True
        assert "HEART leaderboard" in result.stdout
        assert "shares a family with local-qwen-0.5b" in result.stdout
    else:
        assert "offline judge unavailable" in result.stderr
        assert "second agent skipped" in result.stderr
    # It ends by writing the report and printing where it is.
    assert f"report: {out}/report/index.html" in result.stdout
    # The demo is a campaign of its agents, one cell each, its plan kept as a campaign's is.
    plan = json.loads((out / "campaign.json").read_text())
    assert [Path(c["run_dir"]) for c in plan["cells"]] == [out / a for a in agents]
    assert plan["campaign"]["scenarios"] == [["noise:kind=pink,snr_db=20"]]
    assert all(c["judged"] for c in plan["cells"]) and plan["file"] is None
    assert {"latency_ecdf", "waterfall"} <= set(report["figures"])
    assert _servers(mark) == set()
