"""Support strategies: labelling judged replies with HEART's 15 strategies, and how varied
each contestant's repertoire is."""

import asyncio
from pathlib import Path
from typing import Any

from voicebench.errors import InputError
from voicebench.strategies.diversity import (
    Diversity,
    StrategySummary,
    diversity,
    diversity_rows,
    summarize_labels,
)
from voicebench.strategies.label import (
    LABELS_FILE,
    ReplyStrategies,
    label_judging,
    read_labels,
)
from voicebench.strategies.taxonomy import LABELS, STRATEGIES, parse_labels


def run_labelling(folder: Path, judge_spec: Path, **kwargs: Any) -> StrategySummary:
    """Label a judging folder's replies (``label_judging``, from synchronous code) and
    summarize the labels; InputError when the folder has no usable reply."""
    result = asyncio.run(label_judging(folder, judge_spec, **kwargs))
    summary = summarize_labels(result.labels)
    if summary is None:
        raise InputError("no usable replies to label", file=folder)
    return summary


__all__ = [
    "LABELS",
    "LABELS_FILE",
    "STRATEGIES",
    "Diversity",
    "ReplyStrategies",
    "StrategySummary",
    "diversity",
    "diversity_rows",
    "label_judging",
    "parse_labels",
    "read_labels",
    "run_labelling",
    "summarize_labels",
]
