"""The built-in judge methods that read log-probabilities (``letter-margin``, ``pointwise``,
``checklist``), the learned ``scorer``, and the registration of every built-in method
(``voicebench.judging.methods`` says what a method is)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from pathlib import Path
from typing import ClassVar

from voicebench.judging.clients import CalibratedLetter, Structured, in_process_model
from voicebench.judging.logprob import (
    ChecklistJudge,
    LetterMarginJudge,
    PointwiseJudge,
    answer_text,
)
from voicebench.judging.methods import JudgeMethod, Settings, register_method
from voicebench.judging.prompt import parts_of
from voicebench.judging.questions import FEATURES
from voicebench.judging.scorer import (
    Conversation,
    Encoder,
    head_sha256,
    load_head,
    reply_features,
)
from voicebench.judging.spec import JudgeModelSpec
from voicebench.llm import ChatClient, connect
from voicebench.llm.retry import ChatText


class _Margins(JudgeMethod):
    """Asks for one token and reads its log-probabilities, over HTTP or of a local model
    loaded in the judging process."""

    logprobs = True
    judge: ClassVar[type[LetterMarginJudge | PointwiseJudge]]

    async def client(self, spec: JudgeModelSpec, stack: contextlib.AsyncExitStack) -> ChatClient:
        model = await in_process_model(spec) if spec.loaded_in_process else None
        if model is not None:
            margins = self.judge(spec, model=model)
        else:
            conn = await connect(spec, stack)
            margins = self.judge(spec, base_url=conn.base_url, key=conn.key)
        stack.push_async_callback(margins.aclose)
        return margins


def _turns(spec: Settings) -> str:
    return f"turns={spec.history_turns or 'all'}"


class LetterMargin(_Margins):
    """Both replies shown; one letter's margin, both orders summed."""

    name = "letter-margin"
    tuned = True
    judge = LetterMarginJudge

    def variant(self, spec: Settings) -> str:
        return (
            f"letter-margin;{_turns(spec)};phrasings={spec.phrasings}"
            f";dimensions={int(spec.ask_dimensions)}"
        )


class Pointwise(_Margins):
    """Each reply alone; Yes/No margins to its questions, their mean its score."""

    name = "pointwise"
    judge = PointwiseJudge

    def variant(self, spec: Settings) -> str:
        # Not a checklist's weights: they are applied to the recorded margins, asking nothing.
        return f"{self.name};{_turns(spec)};questions={','.join(self.asked(spec))}"


class Checklist(Pointwise):
    """As pointwise, each question's margin weighed by the spec's ``weights``."""

    name = "checklist"
    weighed = True
    judge = ChecklistJudge

    def questions(self) -> tuple[str, ...]:
        return FEATURES


class ScorerJudge:
    """Scores each reply alone with the encoder and the spec's head; the pair's margin is A's
    score minus B's (``voicebench.judging.scorer``)."""

    def __init__(self, spec: JudgeModelSpec) -> None:
        assert spec.head is not None  # the spec requires it of a scorer
        self._head = load_head(Path(spec.head))
        self._encoder = Encoder()

    def _margin(self, context: str, reply_a: str, reply_b: str) -> float:
        conversation = Conversation.of_context(context)
        groups = self._head.groups
        a = reply_features(self._encoder, conversation, reply_a, groups)
        b = reply_features(self._encoder, conversation, reply_b, groups)
        return self._head.score(a) - self._head.score(b)

    async def ask(self, messages: list[dict[str, str]]) -> ChatText:
        start = time.perf_counter_ns()
        context, reply_a, reply_b = parts_of(messages[-1]["content"])
        margin = await asyncio.to_thread(self._margin, context, reply_a, reply_b)
        text = answer_text(margin, {}, "scorer")
        return ChatText(text, (time.perf_counter_ns() - start) / 1e6)

    async def aclose(self) -> None:
        """Nothing to release."""


class Scorer(JudgeMethod):
    """Each reply scored alone by a head fitted on read pairs; asks no model."""

    name = "scorer"

    def variant(self, spec: Settings) -> str:
        head = getattr(spec, "head", None)
        if head is None or not Path(head).is_file():
            return self.name
        return f"{self.name};head={head_sha256(head)[:12]}"

    async def client(self, spec: JudgeModelSpec, stack: contextlib.AsyncExitStack) -> ChatClient:
        return await asyncio.to_thread(ScorerJudge, spec)


for method in (
    Structured(),
    CalibratedLetter(),
    LetterMargin(),
    Pointwise(),
    Checklist(),
    Scorer(),
):
    register_method(method)
