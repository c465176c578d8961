"""A judged pair of runs whose text tries to break out of the page, with a key in the
environment."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from synthetic_runs import make_judging, make_run, verdict

from voicebench.dialogues import BUILTIN_DIALOGUES, load_dialogues
from voicebench.runlog import TurnError

HOSTILE = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2"> | *bold*'
SECRET = "sk-test-9f8e7d6c5b4a3928171615141312"
KEY_VARIABLE = "VOICEBENCH_TEST_REPORT_KEY"
SAID = {
    "fast": "that sounds exhausting, tell me more",
    "slow": "you have every reason to feel this way",
    "human/reference": "it makes sense that this weighs on you",
}


@pytest.fixture
def secret(monkeypatch) -> str:
    monkeypatch.setenv(KEY_VARIABLE, SECRET)
    return SECRET


@pytest.fixture
def judged(tmp_path: Path, secret: str) -> Path:
    dialogues = load_dialogues(BUILTIN_DIALOGUES)
    items = [d for d in dialogues if not d.adversarial][:3] + [
        d for d in dialogues if d.adversarial
    ][:1]
    failed = (items[0].id, items[0].seeker_turn_indices[1])
    runs = [
        make_run(
            tmp_path,
            "fast",
            items,
            [1400, 800, 850, 900, 950],
            ttft_ms=250,
            all_turns=True,
            api_key_env=KEY_VARIABLE,
            user_text=HOSTILE,
            failures={
                failed: TurnError(
                    kind="pipeline_error", reason=f"401 Incorrect API key provided: {secret}"
                )
            },
        ),
        make_run(tmp_path, "slow", items, [2600, 1500, 1600, 1700], ttft_ms=900, all_turns=True),
    ]
    verdicts = []
    for d in items:
        verdicts += [verdict(d.id, "slow", "fast", "A", 4), verdict(d.id, "fast", "slow", "B", 4)]
        for c in ("fast", "slow"):
            verdicts += [
                verdict(d.id, "human/reference", c, "A"),
                verdict(d.id, c, "human/reference", "B"),
            ]
    judged = make_judging(
        tmp_path / "judged",
        runs,
        items,
        ("fast", "slow", "human/reference"),
        verdicts,
        heard=HOSTILE,
        heard_by={c: f"{HOSTILE} {c} says: {SAID[c]}" for c in SAID},
        audio=True,
    )
    (judged / "human").mkdir()
    with (judged / "human" / "ann.jsonl").open("w") as fh:
        for n, d in enumerate(items):
            for a, b, rating in (("fast", "slow", 1), ("human/reference", "fast", 2)):
                line = {
                    "item_id": d.id,
                    "contestant_a": a,
                    "contestant_b": b,
                    "rating": rating if n else -rating,
                    "rater": "ann",
                    "comment": f"{HOSTILE} comment {n}",
                }
                fh.write(json.dumps(line) + "\n")
    return judged
