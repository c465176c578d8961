"""The offline smoke judge on the real local model: calibrated one-letter answers."""

from __future__ import annotations

import contextlib

import pytest

from voicebench.judging import load_judge_spec, parse_answer
from voicebench.judging.clients import CalibratedLetterJudge, open_judge
from voicebench.judging.prompt import judge_messages

pytest.importorskip("llama_cpp", reason="the 'local' extra (make setup) is not installed")
pytestmark = pytest.mark.slow


async def test_the_smoke_judge_answers_in_the_schema_and_calibrates_once_per_conversation():
    spec, rubric = load_judge_spec("judges/local-smoke.toml")
    (judge,) = spec.judges
    assert judge.smoke and judge.method == "calibrated-letter"
    context = "Seeker: I failed my exam again and I feel like giving up."
    async with contextlib.AsyncExitStack() as stack:
        client = await open_judge(judge, stack)
        assert isinstance(client, CalibratedLetterJudge)
        first = await client.ask(judge_messages(rubric.text, context, "That sounds so hard.", "ok"))
        second = await client.ask(
            judge_messages(rubric.text, context, "ok", "That sounds so hard.")
        )
        assert len(client._baseline) == 1  # the blank-reply baseline is asked once per conversation
    for text in (first.text, second.text):
        answer = parse_answer(text)
        assert answer.winner in ("A", "B") and 1 <= answer.strength <= 5
        assert "margin" in answer.rationale
        assert all(getattr(answer.dimensions, d) is None for d in "HEART")
