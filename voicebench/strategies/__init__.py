"""Support strategies: labelling judged replies with HEART's 15 strategies, and how varied
each contestant's repertoire is."""

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
    "summarize_labels",
]
