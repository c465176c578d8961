"""The built-in judge methods that read log-probabilities (``letter-margin``, ``pointwise``,
``checklist``), and the registration of every built-in method (``voicebench.judging.methods``
says what a method is)."""

from __future__ import annotations

import contextlib
from typing import ClassVar

from voicebench.judging.clients import CalibratedLetter, Structured, in_process_model
from voicebench.judging.logprob import ChecklistJudge, LetterMarginJudge, PointwiseJudge
from voicebench.judging.methods import JudgeMethod, Settings, register_method
from voicebench.judging.questions import FEATURES
from voicebench.judging.spec import JudgeModelSpec
from voicebench.llm import ChatClient, connect


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


for method in (Structured(), CalibratedLetter(), LetterMargin(), Pointwise(), Checklist()):
    register_method(method)
