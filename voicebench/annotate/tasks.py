"""What each rater is asked: a plan of tasks drawn once, from a seed stored with the answers.

A judging folder's ``human/`` holds::

    annotate.json       AnnotateSettings: the seed every rater's plan is drawn from
    plans/RATER.json    RaterPlan: the rater's tasks in order, each with the side every
                        contestant is shown on
    RATER.jsonl         the rater's answers, one line each (format: voicebench.rating.agreement)

A task is one item and one pair of its contestants (every two contestants whose replies were
judged). Drawing a new rater's plan:

- Spread: the pairs fewest other raters have in their plans come first (ties broken by a
  draw), so with R raters of N tasks each over P pairs every pair has R N / P raters, give or
  take one.
- Order and sides: the chosen pairs are shuffled and each is shown with a drawn side for A.
  The draws come from the stored seed and the rater's name: another rater gets another order,
  and a plan once drawn is kept, so a rater who comes back resumes it.
- Repeats: about 5% of the pairs (one for 10 to 29 tasks, and one more per 20 tasks) come back
  later, at least three tasks after the first showing, with the sides swapped, to measure
  the rater's consistency.
- Task ids are opaque: a hash of the seed, the rater and the position.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
import secrets
from collections import Counter
from collections.abc import Sequence
from itertools import combinations
from pathlib import Path

import numpy as np
from pydantic import Field, model_validator

from voicebench._jsonl import write_atomic
from voicebench._model import FrozenModel, read_model
from voicebench.errors import InputError
from voicebench.judging import Reply
from voicebench.rating import HUMAN_DIR

RATER_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,40}$"
SETTINGS_FILE = "annotate.json"
PLANS_DIR = "plans"
DEFAULT_PER_RATER = 40
REPEAT_SHARE = 0.05
REPEAT_GAP = 3

Pair = tuple[str, str, str]
"""(item id, first contestant, second contestant), the contestants sorted."""


class AnnotateSettings(FrozenModel):
    seed: int = Field(ge=0)
    """Every plan's draws start from it."""
    created_at: str


class AnnotationTask(FrozenModel):
    id: str = Field(pattern=r"^[0-9a-f]{16}$")
    """Opaque: all the page ever names a task by."""
    item_id: str
    first: str
    second: str
    shown_a: str
    """The contestant whose reply is "A"."""
    repeat: bool = False
    """A second showing of a pair earlier in the plan, sides swapped."""

    @property
    def pair(self) -> Pair:
        return (self.item_id, self.first, self.second)

    @property
    def shown_b(self) -> str:
        return self.second if self.shown_a == self.first else self.first

    @model_validator(mode="after")
    def _sides(self) -> AnnotationTask:
        if self.shown_a not in (self.first, self.second):
            raise ValueError("shown_a must be one of the pair")
        return self


class RaterPlan(FrozenModel):
    rater: str = Field(pattern=RATER_PATTERN)
    seed: int
    created_at: str
    tasks: tuple[AnnotationTask, ...]

    def task(self, task_id: str) -> AnnotationTask | None:
        return next((t for t in self.tasks if t.id == task_id), None)


def judged_pairs(replies: Sequence[Reply]) -> list[Pair]:
    """Every two contestants with a usable reply on the same item."""
    by_item: dict[str, set[str]] = {}
    for r in replies:
        if r.failed is None:
            by_item.setdefault(r.item_id, set()).add(r.contestant)
    return [
        (item, a, b)
        for item, names in sorted(by_item.items())
        for a, b in combinations(sorted(names), 2)
    ]


def check_rater(name: str) -> str:
    if not re.fullmatch(RATER_PATTERN, name):
        raise InputError(
            "a rater name is 1-41 letters, digits, '.', '_' or '-', starting with a letter "
            f"or digit (it names the rater's file); got {name!r}",
            field="--rater",
        )
    return name


def settings(judging_dir: Path, seed: int | None = None) -> AnnotateSettings:
    """The folder's stored seed; the first rater's call stores it (``seed``, or a random one)."""
    path = judging_dir / HUMAN_DIR / SETTINGS_FILE
    if path.exists():
        stored = read_model(AnnotateSettings, path)
        if seed is not None and seed != stored.seed:
            raise InputError(
                f"this folder's plans were drawn with seed {stored.seed}; leave --seed out "
                "or give that one",
                file=path,
                field="seed",
            )
        return stored
    made = AnnotateSettings(
        seed=secrets.randbelow(2**31) if seed is None else seed,
        created_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, made.model_dump_json(indent=2) + "\n")
    return made


def _rng(seed: int, rater: str) -> np.random.Generator:
    digest = hashlib.sha256(f"{seed}|{rater}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "big"))


def _task_id(seed: int, rater: str, position: int) -> str:
    return hashlib.sha256(f"{seed}|{rater}|{position}".encode()).hexdigest()[:16]


def repeats_for(n: int) -> int:
    """How many pairs of ``n`` come back: about 5%, at least one from 10 tasks."""
    return 0 if n < 10 else max(1, round(n * REPEAT_SHARE))


def draw_plan(
    pairs: Sequence[Pair],
    rater: str,
    seed: int,
    per_rater: int,
    taken: Counter[Pair] | None = None,
) -> RaterPlan:
    """A new rater's plan over ``pairs``; ``taken`` counts the pairs in other raters' plans."""
    rng = _rng(seed, rater)
    taken = taken or Counter()
    tiebreak = rng.random(len(pairs))
    ranked = sorted(range(len(pairs)), key=lambda k: (taken[pairs[k]], tiebreak[k]))
    chosen = [pairs[k] for k in ranked[: min(per_rater, len(pairs))]]
    chosen = [chosen[k] for k in rng.permutation(len(chosen))]
    rows: list[tuple[Pair, str, bool]] = [
        (p, p[1] if rng.random() < 0.5 else p[2], False) for p in chosen
    ]
    for k in sorted(rng.choice(len(chosen), repeats_for(len(chosen)), replace=False)):
        original = next(n for n, row in enumerate(rows) if row[0] == chosen[k] and not row[2])
        p, shown, _ = rows[original]
        lo = original + 1 + REPEAT_GAP
        at = int(rng.integers(lo, len(rows) + 1)) if lo <= len(rows) else len(rows)
        rows.insert(at, (p, p[2] if shown == p[1] else p[1], True))
    return RaterPlan(
        rater=rater,
        seed=seed,
        created_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        tasks=tuple(
            AnnotationTask(
                id=_task_id(seed, rater, n),
                item_id=p[0],
                first=p[1],
                second=p[2],
                shown_a=shown,
                repeat=repeat,
            )
            for n, (p, shown, repeat) in enumerate(rows)
        ),
    )


def plan_path(judging_dir: Path, rater: str) -> Path:
    return judging_dir / HUMAN_DIR / PLANS_DIR / f"{check_rater(rater)}.json"


def rater_plan(
    judging_dir: Path,
    rater: str,
    replies: Sequence[Reply],
    *,
    per_rater: int = DEFAULT_PER_RATER,
    seed: int | None = None,
) -> tuple[RaterPlan, bool]:
    """The rater's plan, and whether it was drawn just now (else it was stored)."""
    path = plan_path(judging_dir, rater)
    seed_value = settings(judging_dir, seed).seed
    if path.exists():
        return read_model(RaterPlan, path), False
    pairs = judged_pairs(replies)
    if not pairs:
        raise InputError(
            "no item has two judged replies to compare", file=judging_dir / "replies.jsonl"
        )
    taken: Counter[Pair] = Counter()
    for other in sorted(path.parent.glob("*.json")) if path.parent.exists() else []:
        taken.update(t.pair for t in read_model(RaterPlan, other).tasks if not t.repeat)
    plan = draw_plan(pairs, rater, seed_value, per_rater, taken)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, plan.model_dump_json(indent=2) + "\n")
    return plan, True
