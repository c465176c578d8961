"""Judge methods: how a judge model is asked for a verdict, one registered class per
``method`` of a judge spec. A method says what it needs of its provider (log-probabilities),
which settings it takes and which questions it asks, how its verdicts are keyed in the cache
(``variant``), and makes the client that asks (``client``). The built-in ones register
themselves beside their clients: ``structured`` and ``calibrated-letter`` in
``voicebench.judging.clients``, ``letter-margin``, ``pointwise`` and ``checklist`` in
``voicebench.judging.logprob``; a plugin adds one with ``register_method``."""

from __future__ import annotations

import contextlib
from typing import Any, ClassVar, Protocol

from voicebench.judging.questions import QUESTIONS
from voicebench.llm import ChatClient


class Settings(Protocol):
    """What a method reads of a judge spec (``voicebench.judging.spec.JudgeModelSpec``)."""

    @property
    def questions(self) -> tuple[str, ...]: ...
    @property
    def weights(self) -> dict[str, float] | None: ...
    @property
    def history_turns(self) -> int | None: ...
    @property
    def phrasings(self) -> int: ...
    @property
    def ask_dimensions(self) -> bool: ...


TUNING = ("history_turns", "phrasings", "ask_dimensions")
"""The settings of a method that shows part of the conversation and asks several phrasings."""


class JudgeMethod:
    """A way of asking a judge model for a verdict on a pair of replies."""

    name: ClassVar[str]
    logprobs: ClassVar[bool] = False
    """It reads the log-probabilities of answer tokens: its provider's wire API must give
    them, and a ``local`` judge may load its model in the judging process."""
    smoke_only: ClassVar[bool] = False
    """For offline smoke judges on the ``local`` provider only."""
    tuned: ClassVar[bool] = False
    """It takes the ``TUNING`` settings."""
    weighed: ClassVar[bool] = False
    """It takes (and needs) ``weights`` over its questions."""

    def questions(self) -> tuple[str, ...]:
        """The question names a spec may ask of it."""
        return tuple(QUESTIONS)

    def asked(self, spec: Settings) -> tuple[str, ...]:
        """The questions each reply is asked."""
        return tuple(spec.weights or ()) if self.weighed else spec.questions

    def variant(self, spec: Settings) -> str:
        """The settings that change what the judge is asked, part of every verdict's cache key
        ("" when nothing beyond the judge's id does)."""
        return ""

    async def client(self, spec: Any, stack: contextlib.AsyncExitStack) -> ChatClient:
        """A ready client asking the judge spec's model for HEART verdicts in this method;
        what it needs (a server, a loaded model) is released by ``stack``."""
        raise NotImplementedError


_METHODS: dict[str, JudgeMethod] = {}


def register_method(method: JudgeMethod) -> JudgeMethod:
    """Make a judge method available by its name (a later registration replaces an earlier
    one)."""
    _METHODS[method.name] = method
    return method


def get_method(name: str) -> JudgeMethod:
    """The method registered as ``name``; ValueError naming the known ones otherwise."""
    if name not in _METHODS:
        raise ValueError(f"unknown judge method {name!r} (known: {', '.join(methods())})")
    return _METHODS[name]


def methods() -> tuple[str, ...]:
    """Every registered method's name."""
    return tuple(sorted(_METHODS))
