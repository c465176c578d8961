"""Shared test set-up: no hub access, pipecat's per-frame logging kept out of test output, the
slow tests first, and the short set (``tests/short_set.py``) for tests that replay only to
check bookkeeping."""

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


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests marked slow first (in their order), then the rest: with several processes the
    quick ones fill in at the end, so they finish about together."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.fixture(scope="session")
def short_set(tmp_path_factory) -> ShortSet:
    """The short set, its audio synthesized with Piper once per session."""
    return make_short_set(tmp_path_factory.mktemp("short-fixtures"))
