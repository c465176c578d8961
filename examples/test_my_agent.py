"""A voice agent's own test suite, checking it with voicebench: `pytest examples/`.

Replays the agent over the first items of the built-in HEART dialogues as speech, then holds
it to a latency budget and to the human reference on quality. Point it at your agent with
VOICEBENCH_AGENT (a spec file, or a shipped name such as `local`); the gate and the number of
items can be changed the same way. A failing gate names the figure, its value and its 95%
interval (or that there are too few dialogues for one: 6 for a p50, 30 for a p90), and pytest
prints the run folder, kept for a look. The quality test is skipped, saying why, when fewer
than 6 items were judged or the judge is below the trust bar (`pytest -rs` shows it).
"""

import os

import pytest

from voicebench.pytest_plugin import expect, expect_not_below

AGENT = os.environ.get("VOICEBENCH_AGENT", "scripted")
ITEMS = int(os.environ.get("VOICEBENCH_ITEMS", "6"))
MAX_TTFA_P90_MS = float(os.environ.get("VOICEBENCH_MAX_TTFA_P90_MS", "2500"))
JUDGE = os.environ.get("VOICEBENCH_JUDGE", "local")
DIALOGUES = os.environ.get("VOICEBENCH_DIALOGUES")  # unset: the built-in set
FIXTURES = os.environ.get("VOICEBENCH_FIXTURES")  # the audio of another set's seeker turns


@pytest.mark.voicebench(
    agent=AGENT, dialogues=DIALOGUES, fixtures=FIXTURES, limit=ITEMS, judge=JUDGE
)
def test_answers_within_budget(voicebench_run):
    expect(voicebench_run, max_ttfa_p90_ms=MAX_TTFA_P90_MS, max_failed_pct=0)


@pytest.mark.voicebench(
    agent=AGENT, dialogues=DIALOGUES, fixtures=FIXTURES, limit=ITEMS, judge=JUDGE
)
def test_not_clearly_worse_than_people(voicebench_run, voicebench_judging):
    expect_not_below(voicebench_judging, voicebench_run.agent, reference="human")
