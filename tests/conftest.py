"""Shared test set-up: no hub access, and pipecat's per-frame logging kept out of test output."""

from __future__ import annotations

import os
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")

try:
    from loguru import logger

    logger.remove()
    logger.add(sys.stderr, level="WARNING")
except ImportError:  # pragma: no cover
    pass
