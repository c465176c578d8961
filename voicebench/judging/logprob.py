"""Judges that read log-probabilities instead of writing verdicts: for small local models,
which lean the right way more often than they can say so, and for any server that returns
``logprobs`` (``local``, ``openai``, ``openai-compatible`` such as llama.cpp or vLLM).

``LetterMarginJudge`` (``method = "letter-margin"``) shows both replies and reads the margin
log P("A") - log P("B") of its one-letter answer; the pair's two orders are summed (see
``voicebench.judging.combine``), which cancels a preference for a slot.

``PointwiseJudge`` (``method = "pointwise"``) never shows the two replies together: each reply
is asked about alone, after the conversation, and scored by the margin log P("Yes") -
log P("No") of the answer to each of its ``questions``, turned so that higher is better. A
reply's score is the mean of those; the pair's margin is A's score minus B's, so the two
orders are exact mirrors and there is no slot to prefer. Scores are cached per reply, so the
second order of a pair costs nothing. Each question that belongs to a HEART dimension marks
it for the reply that scored at least 0.5 nats higher on it.

``ChecklistJudge`` (``method = "checklist"``) asks as the pointwise judge does, and weighs
each question's margin by the spec's ``weights`` (a regularized logistic regression fitted
on the gold set's dev pairs, ``benchmarks/fit_checklist.py``). Its prompts put the rubric,
the conversation and the reply before the question, so every question after the first
reuses the server's cached prefix and costs its own few tokens. A checklist may also weigh
the reply's ``likelihood`` (in process only): log P(reply | this conversation) - log P(reply
| a neutral one), read from the logits of the reply's own positions, in the same prompt the
first question then reuses. The verdict records each question's margin
(``question_margins``); ``reweigh`` applies a spec's weights to verdicts already asked, so
fitting new weights asks nothing again.

Both build the verdict object in code, with ``margin`` (and per-dimension margins) recorded.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterable

from voicebench.judging.models import Verdict
from voicebench.judging.prompt import SPEAKERS, parse_answer, parts_of, user_message
from voicebench.judging.questions import (
    LIKELIHOOD,
    LIKELIHOOD_MEAN,
    LIKELIHOODS,
    NEUTRAL_CONTEXT,
    QUESTIONS,
)
from voicebench.judging.runtime import NextTokenModel, PromptTooLong
from voicebench.judging.spec import JudgeModelSpec
from voicebench.llm import ChatText, LLMCallError, classify

LETTERS = ("A", "B")
PHRASINGS = (
    "Which reply is better for this seeker? Answer with one letter: A or B.",
    "Which reply would a caring, careful listener rather this seeker heard next? "
    "Answer with one letter: A or B.",
    "Which reply answers more closely what this seeker actually said and needs? "
    "Answer with one letter: A or B.",
)
DIMENSION_QUESTIONS = {
    "H": "Which reply sounds more like a thoughtful, caring person talking, not a script?",
    "E": "Which reply better recognises and accepts what the seeker feels, without judging "
    "or minimising it?",
    "A": "Which reply responds more to this seeker's own details and words?",
    "R": "Which reply better helps the conversation move on in a useful, personal way?",
    "T": "Which reply better stays a peer supporter's reply: in scope, safe, and doing what "
    "the seeker asked?",
}


_ANSWER_RULES = "Answer with one JSON object"


def _option(token: str, options: tuple[str, str]) -> str | None:
    word = token.strip().strip("*\"'().:,").lower()
    return next((o for o in options if o.lower() == word), None)


Positions = list[list[tuple[str, float]]]
"""Per answer token: the most likely tokens there with their log-probabilities, the one
answered first."""


def margin_at(positions: Positions, options: tuple[str, str]) -> float:
    """log P(options[0]) - log P(options[1]) where the answer's choice is: the first answer
    token that is one of the options (a model may say "Reply A"), else the first. An option
    missing from that position's list gets a floor below the least likely one listed."""
    at = next((p for p in positions if _option(p[0][0], options)), positions[0])
    floor = min(lp for _, lp in at) - 1.0
    found: dict[str, float] = {}
    for token, lp in at:
        option = _option(token, options)
        if option and option not in found:
            found[option] = lp
    return found.get(options[0], floor) - found.get(options[1], floor)


async def choice_margin(
    client, sdk, model: str, messages: list[dict[str, str]], options: tuple[str, str]
) -> float:
    """``margin_at`` over HTTP: up to three answer tokens with their top 20."""
    try:
        resp = await client.chat.completions.create(
            model=model,
            messages=messages,
            temperature=0.0,
            max_tokens=3,
            logprobs=True,
            top_logprobs=20,
        )
    except sdk.OpenAIError as exc:
        raise classify(exc, None, sdk) from None
    logprobs = resp.choices[0].logprobs
    content = [p for p in (logprobs.content or []) if p.top_logprobs] if logprobs else []
    if not content:
        raise classify(ValueError("the server returned no log-probabilities"), None, sdk)
    # The token answered first, then the rest of its position's list.
    positions = [
        [(p.token, p.logprob)] + [(t.token, t.logprob) for t in p.top_logprobs] for p in content
    ]
    return margin_at(positions, options)


def recent_turns(context: str, keep: int | None) -> str:
    """The last ``keep`` turns of a ``dialogue_context`` (one turn per speaker line)."""
    if keep is None:
        return context
    lines = context.split("\n")
    starts = [i for i, line in enumerate(lines) if line.startswith(tuple(SPEAKERS.values()))]
    if len(starts) <= keep:
        return context
    return "\n".join(lines[starts[-keep] :])


def answer_text(
    margin: float, dims: dict[str, float], what: str, questions: dict[str, float] | None = None
) -> str:
    return json.dumps(
        {
            "winner": "A" if margin >= 0 else "B",
            "strength": max(1, min(5, 1 + int(abs(margin)))),
            "dimensions": {
                d: (None if d not in dims or abs(dims[d]) < 0.5 else "A" if dims[d] > 0 else "B")
                for d in ("H", "E", "A", "R", "T")
            },
            "rationale": f"{what} margin {margin:+.2f} nats (A over B)",
            "margin": round(margin, 4),
            "dimension_margins": {d: round(v, 4) for d, v in dims.items()} or None,
            "question_margins": {q: round(v, 4) for q, v in questions.items()}
            if questions
            else None,
        }
    )


class _LogprobJudge:
    """Asks over HTTP (``base_url``), or of ``model``, loaded in this process."""

    def __init__(
        self,
        spec: JudgeModelSpec,
        *,
        base_url: str | None = None,
        key: str = "",
        model: NextTokenModel | None = None,
    ) -> None:
        import openai

        self._sdk = openai
        self._spec = spec
        self._model = model
        self._client = openai.AsyncOpenAI(
            base_url=base_url,
            api_key=key or "none",
            max_retries=0,
            timeout=spec.timeout_s or openai.DEFAULT_TIMEOUT,
        )

    async def _margin(self, system: str, user: str, options: tuple[str, str]) -> float:
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        if self._model is not None:
            try:
                positions = await asyncio.to_thread(
                    self._model.top_answers, messages, lambda t: _option(t, options) is not None
                )
            except PromptTooLong as exc:  # as the server answers it: a bad request
                raise LLMCallError("bad_request", str(exc), retryable=False) from None
            return margin_at(positions, options)
        return await choice_margin(self._client, self._sdk, self._spec.model, messages, options)

    def _split(self, messages: list[dict[str, str]]) -> tuple[str, str, str, str]:
        """System prompt (the rubric without its JSON rules), context, reply A, reply B."""
        system = messages[0]["content"].split(_ANSWER_RULES)[0].strip()
        context, reply_a, reply_b = parts_of(messages[-1]["content"])
        return system, recent_turns(context, self._spec.history_turns), reply_a, reply_b

    async def aclose(self) -> None:
        await self._client.close()
        if self._model is not None:
            self._model.close()


class LetterMarginJudge(_LogprobJudge):
    """Both replies shown; one letter's margin per question (``phrasings`` wordings, and each
    HEART dimension when ``ask_dimensions``), averaged."""

    async def ask(self, messages: list[dict[str, str]]) -> ChatText:
        start = time.perf_counter_ns()
        system, context, reply_a, reply_b = self._split(messages)

        async def margin(question: str) -> float:
            return await self._margin(
                system, user_message(context, reply_a, reply_b, question), LETTERS
            )

        overall = [await margin(q) for q in PHRASINGS[: self._spec.phrasings]]
        dims: dict[str, float] = {}
        if self._spec.ask_dimensions:
            for d, q in DIMENSION_QUESTIONS.items():
                dims[d] = await margin(f"{q} Answer with one letter: A or B.")
        every = overall + list(dims.values())
        m = sum(every) / len(every)
        text = answer_text(m, dims, "letter log-probability")
        return ChatText(text, (time.perf_counter_ns() - start) / 1e6)


class PointwiseJudge(_LogprobJudge):
    """Each reply alone; Yes/No margins to ``questions``, turned so higher is better."""

    what = "pointwise yes/no"

    def __init__(self, spec: JudgeModelSpec, **where) -> None:
        super().__init__(spec, **where)
        self._scores: dict[tuple[str, str, str], dict[str, float]] = {}
        self._neutral: dict[tuple[str, str], float] = {}

    @staticmethod
    def _user(context: str, reply: str, question: str) -> str:
        return (
            f"Conversation so far:\n{context}\n\nThe supporter's next reply (as heard):\n"
            f"{reply.strip()}\n\n{question} Answer Yes or No."
        )

    async def _reply_logprob(self, system: str, context: str, reply: str) -> list[float]:
        """log P(token | the prompt up to it) for each of the reply's tokens, in the prompt
        the first question is asked in (so that question reuses it)."""
        assert self._model is not None  # the spec allows the likelihood in process only
        first = next((QUESTIONS[n].text for n in self._spec.asked if n in QUESTIONS), "")
        messages = [
            {"role": "system", "content": system},
            {"role": "user", "content": self._user(context, reply, first)},
        ]
        try:
            return await asyncio.to_thread(self._model.span_logprobs, messages, reply.strip())
        except PromptTooLong as exc:
            raise LLMCallError("bad_request", str(exc), retryable=False) from None

    async def _neutral_logprob(self, system: str, reply: str) -> float:
        key = (system, reply)
        if key not in self._neutral:
            self._neutral[key] = sum(await self._reply_logprob(system, NEUTRAL_CONTEXT, reply))
        return self._neutral[key]

    def _reads_likelihood(self) -> bool:
        return any(f in self._spec.asked for f in LIKELIHOODS)

    async def _score(self, system: str, context: str, reply: str) -> dict[str, float]:
        key = (system, context, reply)
        if key not in self._scores:
            scores = {}
            if self._reads_likelihood():
                neutral = await self._neutral_logprob(system, reply)
                here = await self._reply_logprob(system, context, reply)
                gain = sum(here) - neutral
                for name, value in ((LIKELIHOOD, gain), (LIKELIHOOD_MEAN, gain / len(here))):
                    if name in self._spec.asked:
                        scores[name] = value
            for name in self._spec.asked:
                if name in LIKELIHOODS:
                    continue
                q = QUESTIONS[name]
                user = self._user(context, reply, q.text)
                scores[name] = q.sign * await self._margin(system, user, ("Yes", "No"))
            self._scores[key] = scores
        return self._scores[key]

    def combined(self, questions: dict[str, float]) -> float:
        """The pair's margin from each question's (A's score minus B's): their mean."""
        return sum(questions.values()) / len(questions)

    async def ask(self, messages: list[dict[str, str]]) -> ChatText:
        start = time.perf_counter_ns()
        system, context, reply_a, reply_b = self._split(messages)
        if self._reads_likelihood():
            # Both neutral prompts first: they share everything up to the reply, and the
            # conversation is then evaluated once for both replies' questions.
            await self._neutral_logprob(system, reply_a)
            await self._neutral_logprob(system, reply_b)
        a = await self._score(system, context, reply_a)
        b = await self._score(system, context, reply_b)
        questions = {n: a[n] - b[n] for n in self._spec.asked}
        dims = dimension_margins(questions, self._spec.weights)
        text = answer_text(self.combined(questions), dims, self.what, questions)
        return ChatText(text, (time.perf_counter_ns() - start) / 1e6)


def dimension_margins(
    questions: dict[str, float], weights: dict[str, float] | None
) -> dict[str, float]:
    """Each HEART dimension's margin: what its questions add to the pair's margin (each
    question's margin times its weight, or alone when unweighed)."""
    dims: dict[str, float] = {}
    for n, diff in questions.items():
        d = QUESTIONS[n].dimension if n in QUESTIONS else None
        if d is not None:
            dims[d] = dims.get(d, 0.0) + diff * (weights[n] if weights else 1.0)
    return dims


def weighed(questions: dict[str, float], weights: dict[str, float]) -> float:
    """A checklist pair's margin: each question's margin times its weight, summed."""
    return sum(w * questions.get(name, 0.0) for name, w in weights.items())


class ChecklistJudge(PointwiseJudge):
    """Pointwise questions whose margins are weighed by the spec's ``weights``."""

    what = "checklist"

    def combined(self, questions: dict[str, float]) -> float:
        return weighed(questions, self._spec.weights or {})


def reweigh(verdicts: list[Verdict], matchups: Iterable) -> list[Verdict]:
    """The verdicts with each checklist judge's weights applied to its recorded question
    margins (``matchups``: what was asked, each with its ``key`` and ``judge`` spec), so that
    weights fitted after the asking take effect without asking again."""
    weights = {m.key: m.judge.weights for m in matchups if m.judge.weights is not None}
    return _reweighed(verdicts, lambda v: weights.get(v.key))


def reweigh_by_judge(
    verdicts: list[Verdict], weights: dict[str, dict[str, float]]
) -> list[Verdict]:
    """As ``reweigh``, with the weights of each judge id (a judging header's)."""
    return _reweighed(verdicts, lambda v: weights.get(v.judge))


def _reweighed(verdicts: list[Verdict], weights_of) -> list[Verdict]:
    out = []
    for v in verdicts:
        w = weights_of(v)
        if w is None or v.answer is None or not v.answer.question_margins:
            out.append(v)
            continue
        questions = v.answer.question_margins
        text = answer_text(
            weighed(questions, w), dimension_margins(questions, w), "checklist", questions
        )
        out.append(v.model_copy(update={"answer": parse_answer(text)}))
    return out
