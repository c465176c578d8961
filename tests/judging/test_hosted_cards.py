"""The hosted judges measured as the offline one is: on the held-out pairs of real replies and
of the written gold set, through judge-check, their cards written beside the specs in
``judges/cards/`` (commit them). Paid: runs only with VOICEBENCH_LIVE_API=1 and the key set."""

from __future__ import annotations

import asyncio
import os

import pytest

from voicebench import builtin
from voicebench.judging.cards import find_card
from voicebench.judging.check import check_judge
from voicebench.judging.gold import load_gold

pytestmark = [pytest.mark.slow, pytest.mark.live_api]


@pytest.mark.parametrize(
    ("spec", "key"), [("openai", "OPENAI_API_KEY"), ("anthropic", "ANTHROPIC_API_KEY")]
)
def test_a_hosted_judge_is_measured_on_real_and_written_pairs(spec: str, key: str):
    if not os.environ.get(key):
        pytest.skip(f"{key} is not set")
    for gold in (builtin.PAIRS_REAL, builtin.PAIRS_GOLD):
        result = asyncio.run(check_judge(builtin.JUDGES / f"{spec}.toml", gold, split="holdout"))
        card = result.card
        assert card.pairs == len(load_gold(gold).select("holdout"))
        assert card.failed_verdicts <= card.verdicts // 10
        assert result.path.parent == builtin.JUDGES / "cards"
    shown = find_card(builtin.JUDGES / f"{spec}.toml")
    assert shown is not None and shown.real_replies and shown.written is not None
