"""Checking a strategy classifier against replies with known labels.

``judges/strategy-gold.jsonl`` holds replies written for this project to one seeker turn each,
with the strategies each one uses (every other strategy is absent)::

    {"id": "gold-01", "seeker": "...", "reply": "...", "present": ["affirmation"]}

A classifier labels every gold reply through the same labelling code and cache as judged
replies; a strategy it marks ``uncertain`` counts as not present, and a reply it failed to
label counts as having none. Per strategy, precision, recall and F1 of "present"; the macro
F1 is their unweighted mean over the 15 strategies (HEART reports 0.86 for its classifier
against human consensus).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import Field, field_validator

from voicebench import builtin
from voicebench._jsonl import drop_partial_line, read_models
from voicebench._model import FrozenModel
from voicebench.errors import InputError
from voicebench.strategies.label import LabelTask, ReplyStrategies, label, read_labels
from voicebench.strategies.taxonomy import LABELS, label_key

GOLD_SET = builtin.STRATEGY_GOLD


class GoldReply(FrozenModel):
    id: str = Field(min_length=1)
    seeker: str = Field(min_length=1)
    reply: str = Field(min_length=1)
    present: tuple[str, ...]

    @field_validator("present")
    @classmethod
    def _known(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        unknown = [v for v in value if v not in LABELS]
        if unknown:
            raise ValueError(f"unknown strategies {unknown}; known: {', '.join(LABELS)}")
        return value

    @property
    def context(self) -> str:
        return f"Seeker: {self.seeker}"


def load_gold(path: Path = GOLD_SET) -> list[GoldReply]:
    gold = read_models(path, GoldReply)
    if not gold:
        raise InputError("no labelled replies", file=path)
    ids = [g.id for g in gold]
    if len(set(ids)) != len(ids):
        raise InputError("reply ids repeat", file=path, field="id")
    return gold


@dataclass(frozen=True)
class LabelScore:
    label: str
    tp: int
    fp: int
    fn: int

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def f1(self) -> float:
        return 2 * self.tp / (2 * self.tp + self.fp + self.fn) if self.tp else 0.0


@dataclass(frozen=True)
class GoldScore:
    classifier: str
    labels: tuple[LabelScore, ...]
    replies: int
    failed: int
    """Gold replies the classifier failed to label (scored as having no strategy)."""

    @property
    def macro_f1(self) -> float:
        return sum(s.f1 for s in self.labels) / len(self.labels)


def score(
    gold: Sequence[GoldReply], predicted: dict[str, set[str]], classifier: str, failed: int = 0
) -> GoldScore:
    """Per-strategy counts of ``predicted`` (reply id to strategies present) against ``gold``."""
    scores = []
    for k in LABELS:
        tp = sum(k in g.present and k in predicted.get(g.id, set()) for g in gold)
        fp = sum(k not in g.present and k in predicted.get(g.id, set()) for g in gold)
        fn = sum(k in g.present and k not in predicted.get(g.id, set()) for g in gold)
        scores.append(LabelScore(k, tp, fp, fn))
    return GoldScore(classifier, tuple(scores), len(gold), failed)


async def classify_gold(
    gold: Sequence[GoldReply],
    judge,
    client,
    cache: Path,
    *,
    concurrency: int = 4,
    progress: Callable[[ReplyStrategies, int, int], None] | None = None,
) -> GoldScore:
    """Label ``gold`` with ``judge`` through ``client`` (cached in ``cache``) and score it."""
    tasks = {
        g.id: LabelTask(
            g.id,
            "gold",
            False,
            g.context,
            g.reply,
            label_key(classifier=judge.id, context=g.context, reply=g.reply),
        )
        for g in gold
    }
    cache.parent.mkdir(parents=True, exist_ok=True)
    drop_partial_line(cache)
    have = {r.key for r in read_labels_file(cache) if r.marks is not None}
    pending = [t for t in tasks.values() if t.key not in have]
    if pending:
        await label(pending, judge, client, cache, concurrency=concurrency, progress=progress)
    by_key = {r.key: r for r in read_labels_file(cache)}
    predicted = {gid: by_key[t.key].present() for gid, t in tasks.items() if t.key in by_key}
    failed = sum(by_key.get(t.key) is None or by_key[t.key].marks is None for t in tasks.values())
    return score(gold, predicted, judge.id, failed)


def read_labels_file(path: Path) -> list[ReplyStrategies]:
    """The latest labelling per key in one labels file."""
    return read_labels(path.parent, name=path.name)
