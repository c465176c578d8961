"""A gold set: pairs of replies where a careful person knows which is better.

One JSON object per line (``judges/pairs-gold.jsonl`` is the shipped one)::

    {"id": "gold-001",
     "turns": [{"role": "seeker", "text": "..."}, {"role": "supporter", "text": "..."}, ...],
     "reply_a": "...", "reply_b": "...", "better": "a",
     "category": "longer-worse", "dimensions": "HEA", "why": "...",
     "families": ["human", "qwen"]}

``id``, ``turns`` (ending on a seeker turn), ``reply_a``, ``reply_b`` and ``better`` are
required; ``category``, ``dimensions`` (letters from H E A R T), ``why``, ``conversation``
and ``families`` (the model family that wrote ``reply_a`` and ``reply_b``'s, as agent specs
name families, ``human`` for a person's) are optional. A judge card counts its pairs by the
families in them, so that a judge that rates its own family shows how it does on that
family's replies. A bad line stops the whole file with one error naming the file, the line and
the field.

Each pair belongs to a split by a hash of its ``conversation`` where it names one, else of its
id: ``dev`` (about half) is for tuning a judge's method, ``holdout`` for reporting on pairs
the tuning never saw. Pairs that share a conversation share its split.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, StringConstraints, field_validator

from voicebench._jsonl import read_models, write_atomic
from voicebench._model import FrozenModel, read_utf8
from voicebench.errors import InputError
from voicebench.judging.models import DIMENSIONS

SPLITS = ("all", "dev", "holdout")
Split = Literal["all", "dev", "holdout"]
DEFAULT_SPLIT: Split = "holdout"
"""What ``judge-check`` measures unless told: the pairs no tuning saw, as leaderboards quote."""
Family = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9._-]*$", max_length=80)]
"""A model family as agent and judge specs name one (``human`` for people)."""


class GoldTurn(FrozenModel):
    role: Literal["seeker", "supporter"]
    text: str = Field(min_length=1)


class GoldPair(FrozenModel):
    """Two candidate replies to one conversation, and which one is better."""

    id: str = Field(min_length=1, max_length=200)
    turns: tuple[GoldTurn, ...] = Field(min_length=1)
    reply_a: str = Field(min_length=1)
    reply_b: str = Field(min_length=1)
    better: Literal["a", "b"]
    category: str | None = Field(default=None, min_length=1, max_length=80)
    dimensions: str | None = Field(default=None, pattern=r"^[HEART]{1,5}$")
    """The HEART dimensions the pair is about."""
    why: str | None = None
    conversation: str | None = Field(default=None, min_length=1, max_length=200)
    """The conversation the pair was drawn from, where several pairs share one: the split is
    then the conversation's, so that no conversation is in both dev and holdout."""
    families: tuple[Family, Family] | None = None
    """The families that wrote ``reply_a`` and ``reply_b`` (``JudgeCard.by_family`` counts
    the pairs with a reply of each); None where the file does not say."""

    @field_validator("turns")
    @classmethod
    def _ends_on_seeker(cls, turns: tuple[GoldTurn, ...]) -> tuple[GoldTurn, ...]:
        if turns[-1].role != "seeker":
            raise ValueError("the conversation must end on a seeker turn")
        return turns

    @property
    def longer_is_worse(self) -> bool:
        worse, better = (
            (self.reply_b, self.reply_a) if self.better == "a" else (self.reply_a, self.reply_b)
        )
        return len(worse.split()) > len(better.split())

    @property
    def dimension_letters(self) -> tuple[str, ...]:
        return tuple(d for d in DIMENSIONS if d in (self.dimensions or ""))

    @property
    def split(self) -> Literal["dev", "holdout"]:
        return split_of(self.conversation or self.id)


def length_matched(pairs: Iterable[GoldPair]) -> list[GoldPair]:
    """Pairs on which "the longer reply" is right exactly half of the time: every pair whose
    longer reply (in words) is the worse one and as many whose longer reply is the better,
    those first by a hash of their ids (or the other way round when the first are more);
    pairs of replies of one length are left out."""

    def words(text: str) -> int:
        return len(text.split())

    def order(pair: GoldPair) -> str:
        return hashlib.sha256(pair.id.encode("utf-8")).hexdigest()

    worse: list[GoldPair] = []
    better: list[GoldPair] = []
    for p in pairs:
        a, b = words(p.reply_a), words(p.reply_b)
        if a != b:
            (worse if p.longer_is_worse else better).append(p)
    keep = min(len(worse), len(better))
    return sorted(worse, key=order)[:keep] + sorted(better, key=order)[:keep]


def split_of(pair_id: str) -> Literal["dev", "holdout"]:
    """``holdout`` for about half of all ids, fixed by the id alone."""
    digest = hashlib.sha256(pair_id.encode("utf-8")).hexdigest()
    return "holdout" if int(digest[:8], 16) % 2 else "dev"


class GoldSet(FrozenModel):
    path: str
    sha256: str
    """Of the file's bytes: a card made on another version of the file is not reused."""
    pairs: tuple[GoldPair, ...]

    def select(self, split: Split) -> list[GoldPair]:
        return [p for p in self.pairs if split == "all" or p.split == split]


def gold_sha256(path: str | Path) -> str:
    """A gold file's hash, as its cards record it (``GoldSet.sha256``)."""
    return _text_sha256(read_utf8(Path(path)))


def _text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def save_gold(pairs: Iterable[GoldPair], path: str | Path) -> None:
    """Write gold pairs atomically, one JSON object per line, unset fields left out."""
    lines = [json.dumps(p.model_dump(exclude_none=True), ensure_ascii=False) for p in pairs]
    write_atomic(Path(path), "".join(line + "\n" for line in lines))


def load_gold(path: str | Path) -> GoldSet:
    """Every pair of a gold file; nothing is returned unless every line is valid."""
    path = Path(path)
    text = read_utf8(path)
    pairs = read_models(path, GoldPair, hand_written=True)
    if not pairs:
        raise InputError("no gold pairs in the file", file=path)
    seen: dict[str, int] = {}
    for n, pair in enumerate(pairs, start=1):
        if pair.id in seen:
            raise InputError(
                f"id {pair.id!r} is also pair {seen[pair.id]}",
                file=path,
                record=f"pair {n}",
                field="id",
            )
        seen[pair.id] = n
    return GoldSet(path=str(path), sha256=_text_sha256(text), pairs=tuple(pairs))


def _asks(text: str) -> bool:
    return "?" in text


def _words(text: str) -> int:
    return len(text.split())


def _by_question(pair: GoldPair, then_shorter: bool) -> Literal["a", "b"]:
    a, b = _asks(pair.reply_a), _asks(pair.reply_b)
    if a != b:
        return "a" if a else "b"
    shorter_a = _words(pair.reply_a) <= _words(pair.reply_b)
    return "a" if shorter_a == then_shorter else "b"


SURFACE_CUES: dict[str, Callable[[GoldPair], Literal["a", "b"]]] = {
    "reply A": lambda p: "a",
    "the shorter reply": lambda p: "a" if _words(p.reply_a) <= _words(p.reply_b) else "b",
    "the longer reply": lambda p: "a" if _words(p.reply_a) > _words(p.reply_b) else "b",
    "the reply asking a question, else the shorter": lambda p: _by_question(p, True),
    "the reply asking a question, else the longer": lambda p: _by_question(p, False),
}
"""Rules that read no meaning, only the surface of the replies. A gold set that can tell
judges apart keeps each of them near chance, so that no judge scores by following one."""


def cue_accuracy(pairs: list[GoldPair]) -> dict[str, float]:
    """The share of ``pairs`` each surface cue gets right."""
    return {
        name: sum(rule(p) == p.better for p in pairs) / len(pairs) if pairs else 0.0
        for name, rule in SURFACE_CUES.items()
    }
