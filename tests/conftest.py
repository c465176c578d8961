"""Shared test set-up: no hub access, pipecat's per-frame logging kept out of test output, the
heaviest tests first, and the short set (``tests/helpers/short_set.py``) for tests that replay
only to check bookkeeping. The helpers every test folder shares are in ``tests/helpers/``."""

from __future__ import annotations

import os
import sys

import pytest
from short_set import ShortSet, make_short_set

os.environ.setdefault("HF_HUB_OFFLINE", "1")

try:
    from loguru import logger

    logger.remove()
    logger.add(sys.stderr, level="WARNING")
except ImportError:  # pragma: no cover
    pass


HEAVIEST = (
    "test_wheel.py",
    "test_overlap_replay.py",
    "test_serve.py",
    "test_webrtc.py",
    "test_remote.py",
    "test_s2s.py",
    "test_campaign_run.py",
    "test_pytest_plugin.py",
    "test_ci_example.py",
    "test_judge_killed.py",
    "test_converse.py",
    "test_converse_killed.py",
    "test_replay.py",
    "test_run_killed.py",
)
"""The test files that take longest (a minute or more each in ``--durations``), longest first."""


def _order(item: pytest.Item) -> tuple[int, int]:
    name = item.path.name
    if name in HEAVIEST:
        return 0, HEAVIEST.index(name)
    return (1 if item.get_closest_marker("slow") else 2), 0


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The heaviest test files first, longest first, then the other slow tests, then the rest.
    The processes take a file at a time in this order (``--no-loadscope-reorder``), so the
    quick ones fill in at the end and the two finish about together. A test that calls a real
    paid API (``live_api``) runs only with ``VOICEBENCH_LIVE_API=1``."""
    items.sort(key=_order)
    if os.environ.get("VOICEBENCH_LIVE_API") != "1":
        paid = pytest.mark.skip(reason="calls a real paid API: set VOICEBENCH_LIVE_API=1")
        for item in items:
            if item.get_closest_marker("live_api"):
                item.add_marker(paid)


@pytest.fixture(scope="session")
def short_set(tmp_path_factory) -> ShortSet:
    """The short set, its audio synthesized with Piper once per session."""
    return make_short_set(tmp_path_factory.mktemp("short-fixtures"))
