"""Judge clients: a judge model asked through the LLM layer (``voicebench.llm``).

A judge is asked for a HEART verdict in the structured form its provider takes (see
``voicebench.llm.chat``), or, by ``method``, for answers whose log-probabilities decide
(``voicebench.judging.logprob``: letter margins, pointwise yes/no scores) or, for the smoke
judge, one calibrated letter (``CalibratedLetterJudge``).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
import time
from typing import TYPE_CHECKING

from voicebench.judging.methods import JudgeMethod, get_method
from voicebench.judging.prompt import (
    JSON_INSTRUCTION,
    answer_schema,
    context_of,
    user_message,
)
from voicebench.judging.spec import JudgeModelSpec
from voicebench.llm import AnswerFormat, ChatClient, ChatText, classify, connect, open_chat

if TYPE_CHECKING:
    from voicebench.judging.runtime import NextTokenModel


def verdict_format() -> AnswerFormat:
    """A HEART verdict; a grammar holds a small local model's rationale to 300 characters."""
    return AnswerFormat(
        "heart_verdict", answer_schema(), grammar_schema=answer_schema(rationale_max_chars=300)
    )


LETTER_INSTRUCTION = "Which reply is better for this seeker? Answer with one letter: A or B."
BLANK = "(no reply)"


class CalibratedLetterJudge:
    """A smoke judge for tiny local models, which pick a slot rather than a reply.

    Each comparison asks for one token and reads the log-probabilities of "A" and "B"; the
    same prompt with both replies blanked out gives the model's bias for each slot on that
    conversation (asked once per conversation, then cached). The winner is the side whose
    log-probability rose most above its blank baseline (contextual calibration); strength
    grows with the margin, 1 per 0.5 nats up to 5. Dimensions are not judged (null).
    """

    def __init__(self, spec: JudgeModelSpec, *, base_url: str | None) -> None:
        import openai

        self._sdk = openai
        self._spec = spec
        self._client = openai.AsyncOpenAI(
            base_url=base_url,
            api_key="local",
            max_retries=0,
            timeout=spec.timeout_s or openai.DEFAULT_TIMEOUT,
        )
        self._baseline: dict[str, tuple[float, float]] = {}

    async def _letters(self, messages: list[dict[str, str]], question: str) -> tuple[float, float]:
        asked = [*messages[:-1], {"role": "user", "content": question}]
        try:
            resp = await self._client.chat.completions.create(
                model=self._spec.model,
                messages=asked,  # type: ignore[arg-type]
                temperature=0.0,
                max_tokens=1,
                logprobs=True,
                top_logprobs=20,
            )
        except self._sdk.OpenAIError as exc:
            raise classify(exc, None, self._sdk) from None
        logprobs = resp.choices[0].logprobs
        tops = logprobs.content[0].top_logprobs if logprobs and logprobs.content else []
        floor = min((t.logprob for t in tops), default=-30.0) - 1.0
        found: dict[str, float] = {}
        for t in tops:
            letter = t.token.strip().upper()
            if letter in ("A", "B") and letter not in found:
                found[letter] = t.logprob
        return found.get("A", floor), found.get("B", floor)

    async def ask(self, messages: list[dict[str, str]]) -> ChatText:
        start = time.perf_counter_ns()
        user = messages[-1]["content"]
        context = context_of(user)
        if context not in self._baseline:
            blank = user_message(context, BLANK, BLANK, LETTER_INSTRUCTION)
            self._baseline[context] = await self._letters(messages, blank)
        a0, b0 = self._baseline[context]
        a, b = await self._letters(messages, user.replace(JSON_INSTRUCTION, LETTER_INSTRUCTION))
        margin = (a - a0) - (b - b0)
        answer = {
            "winner": "A" if margin >= 0 else "B",
            "strength": max(1, min(5, 1 + int(abs(margin) / 0.5))),
            "dimensions": {d: None for d in ("H", "E", "A", "R", "T")},
            "rationale": f"calibrated letter log-probability margin {margin:+.2f} nats",
        }
        return ChatText(json.dumps(answer), (time.perf_counter_ns() - start) / 1e6)

    async def aclose(self) -> None:
        await self._client.close()


async def in_process_model(spec: JudgeModelSpec) -> NextTokenModel | None:
    """The local judge's model loaded here (only the next token's logits are computed: see
    ``voicebench.judging.runtime``); None for a model without a chat template of its own,
    which the llama.cpp server answers instead."""
    from voicebench.errors import MissingExtraError
    from voicebench.judging.runtime import NextTokenModel, NoChatTemplate
    from voicebench.llm.local import resolve_gguf

    if importlib.util.find_spec("llama_cpp") is None:
        raise MissingExtraError("local", "llama-cpp-python")

    path = await asyncio.to_thread(resolve_gguf, spec.model)
    try:
        return await asyncio.to_thread(
            NextTokenModel, path, n_ctx=spec.n_ctx, n_threads=spec.n_threads
        )
    except NoChatTemplate:
        return None


async def open_judge(
    spec: JudgeModelSpec, stack: contextlib.AsyncExitStack, answer: AnswerFormat | None = None
) -> ChatClient:
    """A ready client for ``spec`` asking for ``answer`` (default: a HEART verdict, asked in
    the spec's method); what it needs (a local server) is released by ``stack``."""
    if answer is not None and answer.name != verdict_format().name:
        return await open_chat(spec, stack, answer)  # not a verdict: asked as a chat
    return await get_method(spec.method).client(spec, stack)


class Structured(JudgeMethod):
    """The judge writes the JSON answer itself."""

    name = "structured"

    async def client(self, spec: JudgeModelSpec, stack: contextlib.AsyncExitStack) -> ChatClient:
        return await open_chat(spec, stack, verdict_format())


class CalibratedLetter(JudgeMethod):
    """One letter, its log-probabilities compared with the blanked prompt's (local smoke
    judges)."""

    name = "calibrated-letter"
    smoke_only = True

    async def client(self, spec: JudgeModelSpec, stack: contextlib.AsyncExitStack) -> ChatClient:
        conn = await connect(spec, stack)
        letters = CalibratedLetterJudge(spec, base_url=conn.base_url)
        stack.push_async_callback(letters.aclose)
        return letters
